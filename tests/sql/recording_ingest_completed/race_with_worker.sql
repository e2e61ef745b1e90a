-- The callback commits Available between the worker's claim and its verdict: the verdict is a
-- no-op, the recording keeps the callback's metadata, and there is one event.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
select recording_finalize.recording_ingest_completed(
    :'rec', 'recordings/from-callback', 500, 30, 'Webm')
    as ingest_result \gset
create temp table recording_after_callback as select * from messenger.call_recordings;

select is(:'ingest_result'::text, 'available', 'the callback won the race');
select results_eq(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found',
            'recordings/from-worker', 999, 99, 'Mp4')$$,
        :'rec', :'token'
    ),
    $$values ('stale', 'Done', 1, null::text)$$,
    'the worker''s late found verdict is a no-op (the callback already settled the row)'
);
select is(
    (select result from recording_finalize.apply_outcome(:'rec', :'token', 'missing')),
    'stale',
    'a late missing verdict is a no-op too'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_after_callback',
    'the recording keeps the callback''s metadata and version'
);
select is(tests.event_count(:'rec'), 1::bigint, 'exactly one event');
select is(
    tests.realtime_count(:'rec', 'RecordingFailed'), 0::bigint,
    'no RecordingFailed row'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'Done',
    'the finalize row is Done'
);

select * from finish();
rollback;
