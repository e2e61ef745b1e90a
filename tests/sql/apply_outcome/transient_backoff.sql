-- apply_outcome(transient): the row stays Pending on the backoff the claim set; the next cycle
-- tries again.
begin;
select plan(10);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table recording_before as select * from messenger.call_recordings;
select claim_token as token from tests.claim() \gset

create temp table applied as
select * from tests.apply(:'rec', 'transient', p_error => 'S3Timeout: read timed out after 10 s');

select results_eq(
    'select result, finalize_status, attempts, detail from applied',
    $$values ('backoff', 'Pending', 1, 'Transient: S3Timeout: read timed out after 10 s')$$,
    'transient below max attempts: backoff, Pending, attempt 1 counted, detail says why'
);
select results_eq(
    format(
        $$select status, attempts, next_attempt_at, claim_token
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Pending'::varchar, 1, now() + interval '1 minute', null::uuid)$$,
    'Pending, Attempts++ (by the claim), NextAttemptAt moved by backoff(1), token spent'
);
select results_eq(
    format(
        $$select last_error, last_outcome, quarantine_reason
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Transient: S3Timeout: read timed out after 10 s'::varchar, 'transient'::varchar,
        null::varchar)$$,
    'last_error keeps the error class and code; last_outcome transient'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_before',
    'the recording is untouched'
);
select is(
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint,
    'no outbox row'
);
select is((select count(*) from tests.claim()), 0::bigint, 'not due before its backoff ends');

-- An incident of another source than the worker's own changes nothing for a transient answer.
insert into recording_finalize.storage_incidents (source, started_at, reason)
values ('recorders', now() - interval '5 minutes', 'recorders time out');

-- The next cycle, once the backoff ran out, repeats the check.
select tests.make_due(:'rec');
create temp table second_claim as select * from tests.claim();
select results_eq(
    'select recording_id::text, action, attempts from second_claim',
    format($$values (%L, 'reconcile', 2)$$, :'rec'),
    'the next cycle claims it again as reconcile, attempt 2'
);
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts where recording_id = :'rec'),
    now() + interval '2 minutes',
    'attempt 2 is scheduled backoff(2) = 2 minutes ahead'
);
select results_eq(
    format($$select result, attempts from tests.apply(%L, 'transient')$$, :'rec'),
    $$values ('backoff', 2)$$,
    'a second transient answer while the recorders'' incident is open: normal backoff, '
    'attempt 2 counted (only the worker''s own incident holds)'
);
select tests.make_due(:'rec');
select claim_token as third_token from tests.claim() \gset
select is(
    (select result from tests.apply(:'rec', 'found', 'recordings/r', 1, 1, 'M4a')),
    'reconciled',
    'and succeeds once storage is back'
);

select * from finish();
rollback;
