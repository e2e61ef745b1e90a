-- apply_outcome never rewrites a recording that became terminal after the claim.
begin;
select plan(14);

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
    $$values ('terminal', 'Done', 1, null::text)$$,
    'missing for a recording that is Available by now: terminal, a no-op'
);
select results_eq(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'k', 1, 1, 'Mp4')$$,
        :'went_failed', (select claim_token from claimed where recording_id = :'went_failed')
    ),
    $$values ('terminal', 'Done', 1, null::text)$$,
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

select results_eq(
    $$select last_outcome, quarantine_reason, claim_token from messenger.recording_finalize_attempts
    order by last_outcome desc$$,
    $$values ('missing'::varchar, null::varchar, null::uuid), ('found', null, null)$$,
    'the verdicts are recorded as last_outcome, the tokens spent'
);
-- The guard lives in the functions now: the service's table carries no trigger of the product.
select is_empty(
    $$select tgname from pg_catalog.pg_trigger
    where tgrelid = 'messenger.call_recordings'::regclass and not tgisinternal$$,
    'no trigger on messenger.call_recordings (the product never triggers a service table)'
);
-- A recording that turned terminal before its event was written, for a second claim: the
-- event is made sure of once, never doubled.
select tests.make_stuck() as late \gset
select claim_token as late_token from tests.claim() where recording_id = :'late' \gset
update messenger.call_recordings
set status = 'Available', file_id = 'recordings/late', size_bytes = 7,
    duration_seconds = 3, format = 'Ogg', available_at = now(), version = version + 1
where id = :'late';
select recording_finalize_internal.enqueue_available(
    r, s, 'pin.messenger.call-recording-available.v1')
from recording_finalize_internal.recording_row(:'late') as r,
    recording_finalize_internal.session_of(r.session_kind, r.session_id) as s;
select is(
    (select result from tests.apply(:'late', 'found', 'recordings/worker', 1, 1, 'Mp4')),
    'terminal', 'a found verdict for an Available recording with its event: terminal'
);
select results_eq(
    format($$select tests.event_count(%L), tests.realtime_count(%L, 'RecordingAvailable'),
        (select payload ->> 'fileId' from recording_finalize.outbox where recording_id = %L)$$,
        :'late', :'late', :'late'),
    $$values (1::bigint, 1::bigint, 'recordings/late')$$,
    'one event, one realtime row, built from the stored recording (not the late metadata)'
);

select * from finish();
rollback;
