-- apply_outcome never rewrites a recording that became terminal after the claim.
begin;
select plan(10);

select tests.clean_slate();
select tests.make_stuck() as went_available \gset
select tests.make_stuck() as went_failed \gset
create temp table claimed as select * from tests.claim();

-- After the claim, other writers (the messenger service writes these tables directly) finish
-- both recordings without touching the finalize rows.
update messenger.call_recordings
set status = 'Available', file_id = 'recordings/by-service', size_bytes = 7,
    duration_seconds = 3, format = 'Ogg', available_at = now(), version = version + 1
where id = :'went_available';
update messenger.call_recordings
set status = 'Failed', failure_reason = 'RecorderError', failed_at = now(), version = version + 1
where id = :'went_failed';
create temp table recordings_before as select * from messenger.call_recordings;

select results_eq(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'missing')$$,
        :'went_available', (select claim_token from claimed where recording_id = :'went_available')
    ),
    $$values ('terminal', 'Done', 1)$$,
    'missing for a recording that is Available by now: terminal, a no-op'
);
select results_eq(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'k', 1, 1, 'Mp4')$$,
        :'went_failed', (select claim_token from claimed where recording_id = :'went_failed')
    ),
    $$values ('terminal', 'Done', 1)$$,
    'found for a recording that is Failed by now: terminal, a no-op'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recordings_before',
    'neither recording was rewritten: status, metadata and version unchanged'
);
select is(
    (select status from messenger.call_recordings where id = :'went_available'), 'Available',
    'the Available recording did not become Failed'
);
select is(
    (select file_id from messenger.call_recordings where id = :'went_failed'), null,
    'the Failed recording did not adopt the late metadata'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts where status = 'Done'), 2::bigint,
    'both finalize rows are closed'
);
select is(
    tests.event_count(:'went_available'), 1::bigint,
    'the Available recording''s event is ensured (its writer may have crashed before it)'
);
select is(
    tests.realtime_count(:'went_available', 'RecordingFailed'), 0::bigint,
    'no RecordingFailed for the Available recording'
);
select is(
    tests.event_count(:'went_failed'), 0::bigint,
    'no event for the Failed recording'
);
select is(
    tests.realtime_count(:'went_failed', 'RecordingAvailable'), 0::bigint,
    'no RecordingAvailable for the Failed recording'
);

select * from finish();
rollback;
