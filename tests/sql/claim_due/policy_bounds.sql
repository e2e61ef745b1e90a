-- As the worker login: claim_due refuses a policy outside the server's bounds with RF010
-- before it touches any row; the values the demo, chaos and bench runs use are admitted.
begin;
select plan(15);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table before as select tests.snapshot() as fingerprint;
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

create function pg_temp.claim_with(p_policy text)
returns text
language sql
as $$
    select format('select * from recording_finalize.claim_due(p_policy => %L)', p_policy)
$$;

set local role rfr_pgtap_worker_login;
select throws_ok(pg_temp.claim_with('{"max_attempts": 1000000}'), 'RF010', null,
    'max attempts above the bound (never quarantine) is refused');
select throws_ok(pg_temp.claim_with('{"sla_timeout_seconds": 864000}'), 'RF010', null,
    'an SLA above the bound (never finalize) is refused');
select throws_ok(pg_temp.claim_with('{"sla_timeout_seconds": 0.001}'), 'RF010', null,
    'an SLA below the bound (the happy path never gets its chance) is refused');
select throws_ok(
    pg_temp.claim_with('{"backoff_base_seconds": 0.000001, "backoff_cap_seconds": 60}'),
    'RF010', null, 'a backoff base below the bound (a hot retry loop) is refused');
select throws_ok(
    pg_temp.claim_with('{"backoff_base_seconds": 86400, "backoff_cap_seconds": 86400}'),
    'RF010', null, 'a backoff base above the bound is refused');
select throws_ok(pg_temp.claim_with('{"backoff_factor": 1000}'), 'RF010', null,
    'a backoff factor above the bound is refused');
select throws_ok(pg_temp.claim_with('{"backoff_cap_seconds": 31536000}'), 'RF010', null,
    'a backoff cap above the bound is refused');
select throws_ok(pg_temp.claim_with('{"backoff_jitter": 0.99}'), 'RF010', null,
    'a jitter above the bound is refused');
select throws_ok(pg_temp.claim_with('{"upload_grace_seconds": 31536000}'), 'RF010', null,
    'an upload grace above the bound is refused (checked by every worker call)');
reset role;
select is(
    tests.error_of(pg_temp.claim_with('{"max_attempts": 1000000}')),
    'RF010: policy_out_of_bounds: max_attempts is 1000000; the server''s bound is 1..20000 '
        || '(recording_finalize.settings)',
    'the message names the key, its value and the server''s bound'
);
select is(tests.snapshot(), (select fingerprint from before), 'no row was touched');

-- The owner tightens a bound: the worker follows at once.
update recording_finalize.settings set max_attempts_max = 5;
set local role rfr_pgtap_worker_login;
select throws_ok(pg_temp.claim_with('{"max_attempts": 8}'), 'RF010', null,
    'the bound is the server''s current one');
select throws_ok('select * from recording_finalize.claim_due()', 'RF010', null,
    'the policy''s default (8 attempts) is held to it too');
reset role;
update recording_finalize.settings set max_attempts_max = 20000;

-- make chaos, make demo and make bench: SLA 1 s, backoff 200 ms x2 up to 2 s, jitter 0.2,
-- 50 attempts; and the test suite's 20000 attempts.
set local role rfr_pgtap_worker_login;
select lives_ok(
    pg_temp.claim_with('{"max_attempts": 50, "sla_timeout_seconds": 1, '
        || '"backoff_base_seconds": 0.2, "backoff_factor": 2, "backoff_cap_seconds": 2, '
        || '"backoff_jitter": 0.2}'),
    'the chaos harness''s policy is admitted'
);
select lives_ok(
    pg_temp.claim_with('{"max_attempts": 20000, "sla_timeout_seconds": 1800}'),
    'the production defaults and 20000 attempts are admitted'
);
reset role;

select * from finish();
rollback;
