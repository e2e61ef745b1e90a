-- apply_outcome(missing) after a storage incident: deferred, attempt given back, domain untouched.
begin;
select plan(11);

select tests.clean_slate();
delete from messenger.storage_incidents;
select tests.make_stuck('Direct', '2 hours', p_attempts => 2) as rec \gset
select claim_token as token from tests.claim() \gset
insert into messenger.storage_incidents (source, started_at, ended_at, closed_by)
values ('worker', now() - interval '1 hour', now() - interval '10 minutes', 'worker')
returning id as incident \gset

create temp table applied as
select * from recording_finalize.apply_outcome(:'rec', :'token', 'missing',
    p_upload_grace => interval '30 minutes');

select results_eq('select result, finalize_status, attempts from applied',
    $$values ('deferred', 'Pending', 2)$$,
    'missing within the grace after an incident: deferred, Pending, the claim''s attempt back');
select results_eq(
    format($$select status, attempts, next_attempt_at, claim_token
        from messenger.recording_finalize_attempts where recording_id = %L$$, :'rec'),
    $$values ('Pending'::varchar, 2, now() + interval '20 minutes', null::uuid)$$,
    'the row is re-timed to incident end + grace, attempts as before the claim, token cleared');
select matches(
    (select last_error from messenger.recording_finalize_attempts where recording_id = :'rec'),
    format('^StorageIncident: worker incident %s ended ', :incident),
    'last_error names the incident that deferred the verdict');
select results_eq(
    format($$select status, version, failure_reason from messenger.call_recordings
        where id = %L$$, :'rec'),
    $$values ('Uploading'::varchar, 1, null::varchar)$$,
    'the recording is untouched: no Failed, no version bump');
select is(tests.realtime_count(:'rec', 'RecordingFailed'), 0::bigint, 'no RecordingFailed row');
select is_empty('select * from tests.claim()', 'the row is not due again before incident end + grace');

-- Once the grace is over (the incident moved back in time), the same 404 fails it as today.
update messenger.storage_incidents set started_at = now() - interval '3 hours',
    ended_at = now() - interval '31 minutes' where id = :incident;
update messenger.recording_finalize_attempts set next_attempt_at = now() - interval '1 second'
where recording_id = :'rec';
select claim_token as token2 from tests.claim() \gset
select results_eq(
    format($$select result, finalize_status, attempts from recording_finalize.apply_outcome(
        %L, %L, 'missing', p_upload_grace => interval '30 minutes')$$, :'rec', :'token2'),
    $$values ('failed', 'Done', 3)$$,
    'after the grace the 404 stands: failed, row Done');
select results_eq(
    format($$select status, failure_reason from messenger.call_recordings where id = %L$$,
        :'rec'),
    $$values ('Failed'::varchar, 'Timeout'::varchar)$$,
    'Failed (Timeout), exactly as without incidents');

-- An open incident defers every missing verdict by the grace from now; the default grace is 30 min.
select tests.make_stuck('Conference', '3 hours') as rec2 \gset
insert into messenger.storage_incidents (source, started_at, reason)
values ('recorder', now() - interval '5 minutes', 'recorders cannot reach S3');
select claim_token as token3 from tests.claim() \gset
select results_eq(
    format($$select result from recording_finalize.apply_outcome(%L, %L, 'missing')$$,
        :'rec2', :'token3'),
    $$values ('deferred')$$,
    'an open incident of any source defers the verdict');
select results_eq(
    format($$select attempts, next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'rec2'),
    $$values (0, now() + interval '30 minutes')$$,
    'open incident: due again after the default grace (30 min) from now, attempt given back');
update messenger.recording_finalize_attempts set next_attempt_at = now() - interval '1 second'
where recording_id = :'rec2';
select claim_token as token4 from tests.claim() \gset
select throws_ok(
    format($$select * from recording_finalize.apply_outcome(%L, %L, 'missing',
        p_upload_grace => interval '0')$$, :'rec2', :'token4'),
    'RF001', null, 'a zero upload grace is refused');

select * from finish();
rollback;
