-- A row that crashes the worker on every attempt (claimed, never applied) still ends quarantined,
-- as crash_loop (no verdict since it was opened); one with a verdict on record as max_attempts.
begin;
select plan(14);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table recording_before as select * from messenger.call_recordings;
create temp table claims (n integer, action text, attempts integer);

-- Three claims with max_attempts 3, each followed by a "crash": no apply_outcome, time passes.
insert into claims select 1, action, attempts from tests.claim(p_max_attempts => 3);
select tests.make_due(:'rec');
insert into claims select 2, action, attempts from tests.claim(p_max_attempts => 3);
select tests.make_due(:'rec');
insert into claims select 3, action, attempts from tests.claim(p_max_attempts => 3);
select tests.make_due(:'rec');

select results_eq(
    'select n, action, attempts from claims order by n',
    $$values (1, 'reconcile', 1), (2, 'reconcile', 2), (3, 'reconcile', 3)$$,
    'each claim counts its attempt before the worker could crash'
);

create temp table fourth as select * from tests.claim(p_max_attempts => 3);

select results_eq(
    'select recording_id::text, action, detail, claim_token from fourth',
    format($$values (%L, 'quarantined', 'MaxAttemptsExceeded', null::uuid)$$, :'rec'),
    'the claim after max attempts quarantines the row instead of handing it out'
);
select is(
    (select count(*) from fourth where action = 'reconcile'), 0::bigint,
    'the exhausted row is not returned as reconcile'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'Quarantined',
    'the row is Quarantined'
);
select is(
    (select attempts from messenger.recording_finalize_attempts where recording_id = :'rec'),
    3,
    'quarantining does not count another attempt'
);
select is(
    (select quarantine_reason from messenger.recording_finalize_attempts
        where recording_id = :'rec'),
    'crash_loop',
    'no apply_outcome ever answered (last_outcome NULL): quarantine_reason crash_loop'
);
select is(
    tests.token(:'rec'), null,
    'the last handed-out claim token is revoked'
);
select matches(
    (select last_error from messenger.recording_finalize_attempts where recording_id = :'rec'),
    '^MaxAttemptsExceeded: 3 attempts',
    'last_error says why the row was quarantined'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_before',
    'the recording is left for a human: untouched'
);
select tests.make_due(:'rec');
select is(
    (select count(*) from tests.claim(p_max_attempts => 3)), 0::bigint,
    'a quarantined row is excluded from the claim even when due'
);
select is(
    (select count(*) from tests.claim(p_max_attempts => 100)), 0::bigint,
    'raising max attempts does not bring a quarantined row back: only requeue does'
);

-- The same exhaustion with a verdict on record (the last check was transient): max_attempts.
select tests.make_stuck(p_attempts => 3) as answered \gset
update messenger.recording_finalize_attempts
set last_outcome = 'transient', last_error = 'Transient: S3 503'
where recording_id = :'answered';
create temp table answered_claim as select * from tests.claim(p_max_attempts => 3);
select results_eq(
    'select action, detail, attempts from answered_claim',
    $$values ('quarantined', 'MaxAttemptsExceeded', 3)$$,
    'a row with a verdict on record is quarantined at max attempts too'
);
select results_eq(
    format($$select quarantine_reason, last_error from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'answered'),
    $$values ('max_attempts'::varchar,
        'MaxAttemptsExceeded: 3 attempts; last error: Transient: S3 503'::varchar)$$,
    'as max_attempts, its last error kept in the message'
);
select is(
    (select count(*) from answered_claim where claim_token is not null), 0::bigint,
    'and no claim token is handed out'
);

select * from finish();
rollback;
