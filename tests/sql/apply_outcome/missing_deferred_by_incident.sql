-- apply_outcome(missing) while a storage incident overlaps the upload window: deferred_by_incident,
-- the attempt given back, due at incident end + grace (at most now + upload_grace_max), the
-- recording untouched; once the grace is over the same 404 fails the recording.
begin;
select plan(14);

select tests.clean_slate();
select tests.make_stuck('Direct', '2 hours', p_attempts => 2) as rec \gset
select claim_token as token from tests.claim() \gset
insert into recording_finalize.storage_incidents (source, started_at, ended_at, closed_by)
values ('worker', now() - interval '1 hour', now() - interval '10 minutes', 'worker')
returning id as incident \gset

create temp table applied as
select * from tests.apply(:'rec', 'missing', p_upload_grace => interval '30 minutes');

select results_eq('select result, finalize_status, attempts from applied',
    $$values ('deferred_by_incident', 'Pending', 2)$$,
    'missing within the grace after an incident: deferred_by_incident, Pending, the claim''s '
    'attempt back');
select results_eq(
    format($$select status, attempts, next_attempt_at, claim_token, last_outcome
        from messenger.recording_finalize_attempts where recording_id = %L$$, :'rec'),
    $$values ('Pending'::varchar, 2, now() + interval '20 minutes', null::uuid,
        'missing'::varchar)$$,
    'the row is re-timed to incident end + grace, attempts as before the claim, token cleared');
select matches(
    (select last_error from messenger.recording_finalize_attempts where recording_id = :'rec'),
    format('^StorageIncident: worker incident %s ended ', :incident),
    'last_error names the incident that deferred the verdict');
select is((select detail from applied),
    (select last_error::text from messenger.recording_finalize_attempts
        where recording_id = :'rec'),
    'detail is the last_error written');
select results_eq(
    format($$select status, version, failure_reason from messenger.call_recordings
        where id = %L$$, :'rec'),
    $$values ('Uploading'::varchar, 1, null::varchar)$$,
    'the recording is untouched: no Failed, no version bump');
select is(tests.realtime_count(:'rec', 'RecordingFailed'), 0::bigint, 'no RecordingFailed row');
select is_empty('select * from tests.claim()',
    'the row is not due again before incident end + grace');

-- Once the grace is over (the incident moved back in time), the same 404 fails it as without
-- incidents.
update recording_finalize.storage_incidents set started_at = now() - interval '3 hours',
    ended_at = now() - interval '31 minutes' where id = :incident;
select tests.make_due(:'rec');
select claim_token as token2 from tests.claim() \gset
select results_eq(
    format($$select result, finalize_status, attempts from tests.apply(%L, 'missing',
        p_upload_grace => interval '30 minutes')$$, :'rec'),
    $$values ('failed', 'Done', 3)$$,
    'after the grace the 404 stands: failed, row Done');
select results_eq(
    format($$select status, failure_reason from messenger.call_recordings where id = %L$$,
        :'rec'),
    $$values ('Failed'::varchar, 'Timeout'::varchar)$$,
    'Failed (Timeout), exactly as without incidents');

-- An open incident of any source defers every missing verdict by the grace from now (the grace
-- defaults to the SLA, 30 min).
select tests.make_stuck('Conference', '3 hours') as rec2 \gset
insert into recording_finalize.storage_incidents (source, started_at, reason)
values ('recorders', now() - interval '5 minutes', 'recorders cannot reach S3');
select claim_token as token3 from tests.claim() \gset
select results_eq(
    format($$select result from tests.apply(%L, 'missing')$$, :'rec2'),
    $$values ('deferred_by_incident')$$,
    'an open incident of any source defers the verdict');
select results_eq(
    format($$select attempts, next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'rec2'),
    $$values (0, now() + interval '30 minutes')$$,
    'open incident: due again after the default grace (30 min) from now, attempt given back');
select matches(
    (select last_error from messenger.recording_finalize_attempts where recording_id = :'rec2'),
    '^StorageIncident: recorders incident [0-9]+ open since .*; a 404 is not trusted while '
    'storage is out, next check at ',
    'last_error says the incident is open and when the next check is');

-- An incident the owner recorded by hand as ending in ten days: the deferral is capped at
-- now + upload_grace_max (24 hours by default).
select tests.make_stuck('Direct', '2 hours') as rec3 \gset
update recording_finalize.storage_incidents set ended_at = now() + interval '10 days',
    closed_by = 'owner' where ended_at is null;
select claim_token as token4 from tests.claim() \gset
select results_eq(
    format($$select result from tests.apply(%L, 'missing')$$, :'rec3'),
    $$values ('deferred_by_incident')$$,
    'an incident ending in the future defers the 404');
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'rec3'),
    now() + interval '24 hours', 'but at most until now() + upload_grace_max (24 hours)'
);

select * from finish();
rollback;
