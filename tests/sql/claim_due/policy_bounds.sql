-- As the worker login: claim_due refuses a policy outside the server's bounds with RF010
-- before it touches any row; the values the demo, chaos and bench runs use are admitted.
begin;
select plan(14);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table before as select tests.snapshot() as fingerprint;
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
select throws_ok(
    'select * from recording_finalize.claim_due(p_max_attempts => 2147483647)', 'RF010', null,
    'max attempts above the bound (never quarantine) is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_sla_timeout => interval '100 years')$$,
    'RF010', null, 'an SLA above the bound (never finalize) is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_sla_timeout => interval '1 millisecond')$$,
    'RF010', null, 'an SLA below the bound (the happy path never gets its chance) is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_backoff_base => interval '1 microsecond',
        p_backoff_cap => interval '1 minute')$$,
    'RF010', null, 'a backoff base below the bound (a hot retry loop) is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_backoff_base => interval '10 years',
        p_backoff_cap => interval '10 years')$$,
    'RF010', null, 'a backoff base above the bound is refused'
);
select throws_ok(
    'select * from recording_finalize.claim_due(p_backoff_factor => 1000)', 'RF010', null,
    'a backoff factor above the bound is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_backoff_cap => interval '1 year')$$,
    'RF010', null, 'a backoff cap above the bound is refused'
);
select throws_ok(
    'select * from recording_finalize.claim_due(p_backoff_jitter => 0.99)', 'RF010', null,
    'a jitter above the bound is refused'
);
reset role;
select is(
    tests.error_of('select * from recording_finalize.claim_due(p_max_attempts => 2147483647)'),
    'RF010: policy_out_of_bounds: p_max_attempts is 2147483647; the server''s bound '
        || '(recording_finalize.settings) is at most 20000',
    'the message names the argument, its value and the server''s bound'
);
select is(tests.snapshot(), (select fingerprint from before), 'no row was touched');
select throws_ok(
    'select * from recording_finalize.claim_due(p_max_attempts => 0)', 'RF001', null,
    'a value the function''s own rule refuses is still RF001'
);

-- The owner tightens a bound: the worker follows at once.
update recording_finalize.settings set max_attempts_max = 5;
set local role rfr_pgtap_worker_login;
select throws_ok(
    'select * from recording_finalize.claim_due(p_max_attempts => 8)', 'RF010', null,
    'the bound is the server''s current one'
);
reset role;
update recording_finalize.settings set max_attempts_max = 20000;

-- make chaos, make demo and make bench: SLA 1 s, backoff 200 ms x2 up to 2 s, jitter 0.2,
-- 50 attempts; and the test suite's 20000 attempts.
set local role rfr_pgtap_worker_login;
select lives_ok(
    $$select * from recording_finalize.claim_due(p_batch_size => 1, p_max_attempts => 50,
        p_sla_timeout => interval '1 second', p_backoff_base => interval '200 milliseconds',
        p_backoff_factor => 2, p_backoff_cap => interval '2 seconds', p_backoff_jitter => 0.2)$$,
    'the chaos harness''s policy is admitted'
);
select lives_ok(
    $$select * from recording_finalize.claim_due(p_max_attempts => 20000,
        p_sla_timeout => interval '30 minutes')$$,
    'the production defaults and 20000 attempts are admitted'
);
reset role;

select * from finish();
rollback;
