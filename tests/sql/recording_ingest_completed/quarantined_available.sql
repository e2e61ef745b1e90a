-- A duplicated callback for an Available recording whose worker row was quarantined and which
-- has no event: the callback enqueues it before it closes the row (closed without it, the event
-- would be lost: requeue refuses a Done row and audit_repair only opens orphans). A Done row
-- means the event was enqueued already, perhaps published and removed since: nothing again.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
select tests.make_due_row(:'rec', 8, p_status => 'Quarantined') as row_id \gset

select is(
    recording_finalize.recording_ingest_completed(:'rec', 'recordings/x', 10, 5, 'Ogg'),
    'already_available', 'the duplicated callback answers already_available');
select is(tests.event_count(:'rec'), 1::bigint, 'the missing event is enqueued');
select is((select status from messenger.recording_finalize_attempts where id = :'row_id'),
    'Done', 'and the row is closed');

select tests.make_recording('Direct', tests.make_session(), 'Available') as done_rec \gset
select tests.make_due_row(:'done_rec', 1, p_status => 'Done') is not null as done_row \gset
select is(
    recording_finalize.recording_ingest_completed(:'done_rec', 'recordings/x', 10, 5, 'Ogg'),
    'already_available', 'a callback for a recording whose row is Done');
select is(tests.event_count(:'done_rec'), 0::bigint,
    'enqueues nothing: a Done row means its event went out already');

select * from finish();
rollback;
