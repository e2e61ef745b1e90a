-- After a published event's outbox row is deleted, a duplicate ingest callback sends nothing.
begin;
select plan(6);

select tests.clean_slate();
delete from messenger.integration_outbox_pruned;
select tests.make_recording('Direct', tests.make_session()) as rec \gset
select messenger.recording_ingest_completed(:'rec', 'files/a', 10, 3, 'Ogg');
select is(tests.event_count(:'rec'), 1::bigint, 'the callback enqueued the event');

update messenger.integration_outbox set published_at = now() where dedupe_key = :'rec';
delete from messenger.integration_outbox where dedupe_key = :'rec';
delete from messenger.realtime_outbox where reference_id = :'rec';
select is(
    (select count(*) from messenger.integration_outbox_pruned where dedupe_key = :'rec'),
    1::bigint, 'deleting the published row left a marker'
);

select is(messenger.recording_ingest_completed(:'rec', 'files/a', 10, 3, 'Ogg'),
    'already_available', 'the duplicate callback is answered as before');
select is(tests.event_count(:'rec'), 0::bigint, 'and enqueues no second event');
select is((select count(*) from messenger.realtime_outbox where reference_id = :'rec'),
    0::bigint, 'nor a second realtime row');

-- An unpublished row deleted by hand never reached anyone: no marker, republish may redo it.
select tests.make_recording('Direct', tests.make_session()) as other \gset
select messenger.recording_ingest_completed(:'other', 'files/b', 10, 3, 'Ogg');
delete from messenger.integration_outbox where dedupe_key = :'other';
select is(
    (select count(*) from messenger.integration_outbox_pruned where dedupe_key = :'other'),
    0::bigint, 'an unpublished row leaves no marker'
);

select * from finish();
rollback;
