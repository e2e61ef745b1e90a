-- recording_ingest_completed twice: already_available, nothing rewritten, still one event.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select messenger.recording_ingest_completed(:'rec', 'recordings/first', 10, 20, 'Ogg')
    as first_result \gset
create temp table recording_after_first as select * from messenger.call_recordings;

select is(
    messenger.recording_ingest_completed(:'rec', 'recordings/second', 99, 99, 'Mp4'),
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

-- The crash between commit and publish: Available but the event row is missing.
delete from messenger.integration_outbox;
select is(
    messenger.recording_ingest_completed(:'rec', 'recordings/first', 10, 20, 'Ogg'),
    'already_available',
    'a retried callback after a lost event still answers already_available'
);
select is(tests.event_count(:'rec'), 1::bigint, 'and it ensures the event exists again');
select is(
    (select payload ->> 'fileId' from messenger.integration_outbox), 'recordings/first',
    'built from the stored recording, not from the retried arguments'
);
select is(
    tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint,
    'still one realtime row'
);

select * from finish();
rollback;
