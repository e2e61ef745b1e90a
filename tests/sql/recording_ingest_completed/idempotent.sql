-- recording_ingest_completed twice: already_available, nothing rewritten, still one event.
begin;
select plan(11);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select recording_finalize.recording_ingest_completed(:'rec', 'recordings/first', 10, 20, 'Ogg')
    as first_result \gset
create temp table recording_after_first as select * from messenger.call_recordings;

select is(
    recording_finalize.recording_ingest_completed(:'rec', 'recordings/second', 99, 99, 'Mp4'),
    'already_available',
    'a duplicated callback returns already_available'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_after_first',
    'the recording keeps the first metadata and version'
);
select is(tests.event_count(:'rec'), 1::bigint, 'no second integration event');
select is(
    tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint,
    'no second realtime row'
);

-- The event is gone (published, then removed from the product's outbox by an operator's
-- cleanup); the worker's row is closed. A late duplicate callback must not enqueue it again: the
-- relay would publish it twice.
delete from recording_finalize.outbox;
delete from messenger.realtime_outbox;
select is(
    recording_finalize.recording_ingest_completed(:'rec', 'recordings/first', 10, 20, 'Ogg'),
    'already_available',
    'a duplicate callback after the event was cleaned up answers already_available'
);
select is(
    tests.event_count(:'rec') + tests.realtime_count(:'rec', 'RecordingAvailable'), 0::bigint,
    'and enqueues nothing: the closed finalize row says the event went out'
);

-- An Available recording whose finalize row is still Pending (the writer that made it
-- Available crashed before its event): the callback makes sure of the event, once.
select tests.make_stuck() as open_row \gset
update messenger.call_recordings
set status = 'Available', file_id = 'recordings/by-writer', size_bytes = 1,
    duration_seconds = 1, format = 'Ogg', available_at = now(), version = version + 1
where id = :'open_row';
select is(
    recording_finalize.recording_ingest_completed(:'open_row', 'recordings/retried', 99, 99,
        'Mp4'),
    'already_available',
    'a callback for it answers already_available'
);
select results_eq(
    format($$select tests.event_count(%L), tests.realtime_count(%L, 'RecordingAvailable'),
        (select payload ->> 'fileId' from recording_finalize.outbox where recording_id = %L)$$,
        :'open_row', :'open_row', :'open_row'),
    $$values (1::bigint, 1::bigint, 'recordings/by-writer')$$,
    'and ensures its event and realtime row, built from the stored recording, not the arguments'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'open_row'),
    'Done', 'and closes the row'
);
select is(
    recording_finalize.recording_ingest_completed(:'open_row', 'recordings/retried', 99, 99,
        'Mp4'),
    'already_available', 'a third callback'
);
select is(tests.event_count(:'open_row'), 1::bigint, 'still one event');

select * from finish();
rollback;
