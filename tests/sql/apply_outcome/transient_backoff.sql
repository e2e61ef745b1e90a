-- apply_outcome(transient): the row stays Pending on the backoff the claim set; the next cycle
-- tries again.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table recording_before as select * from messenger.call_recordings;
select claim_token as token from tests.claim() \gset

create temp table applied as
select * from recording_finalize.apply_outcome(
    :'rec', :'token', 'transient', p_error => 'S3Timeout: read timed out after 10 s'
);

select results_eq(
    'select result, finalize_status, attempts from applied',
    $$values ('backoff', 'Pending', 1)$$,
    'transient below max attempts: backoff, Pending, attempt 1 counted'
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
select is(
    (select last_error from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'Transient: S3Timeout: read timed out after 10 s',
    'last_error keeps the error class and code'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_before',
    'the recording is untouched'
);
select is(
    (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint,
    'no outbox row'
);
select is((select count(*) from tests.claim()), 0::bigint, 'not due before its backoff ends');

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
select is(
    (select result from recording_finalize.apply_outcome(
        :'rec', (select claim_token from second_claim), 'found', 'recordings/r', 1, 1, 'M4a'
    )),
    'reconciled',
    'and succeeds once storage is back'
);

select * from finish();
rollback;
