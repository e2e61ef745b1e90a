-- A late callback after the safety net failed the recording: already_failed, stays Failed.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
select result as failed_result from tests.apply(:'rec', 'missing') \gset
create temp table recording_failed as select * from messenger.call_recordings;

select is(:'failed_result'::text, 'failed', 'the safety net failed the recording (Timeout)');
select is(
    recording_finalize.recording_ingest_completed(:'rec', 'recordings/late', 10, 20, 'Ogg'),
    'already_failed',
    'the late callback answers already_failed'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_failed',
    'the recording stays Failed/Timeout with no metadata adopted and the same version'
);
select is(tests.event_count(:'rec'), 0::bigint, 'no integration event for a failed recording');
select is(
    tests.realtime_count(:'rec', 'RecordingAvailable'), 0::bigint,
    'no RecordingAvailable row'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'Done',
    'the finalize row stays Done'
);

-- A late callback while the row is still Pending (a transient verdict) closes it.
select tests.make_stuck() as other \gset
update messenger.call_recordings
set status = 'Failed', failure_reason = 'RecorderError', failed_at = now()
where id = :'other';
select recording_finalize.recording_ingest_completed(:'other', 'recordings/o', 1, 1, 'Ogg')
    as other_result \gset
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'other'),
    'Done',
    'a callback for a Failed recording closes its Pending finalize row'
);

select * from finish();
rollback;
