-- check_policy: the driver's start-up check. Returns the resolved policy (every key, the
-- defaults filled in, durations in seconds) exactly as claim_due and apply_outcome resolve it,
-- itself a valid policy; raises what recording_finalize_internal.policy raises (RF001, RF009,
-- RF010); callable by the worker and the operator; read-only.
begin;
select plan(10);

create role rfr_pgtap_worker_login login in role recording_finalize_worker;
create role rfr_pgtap_operator_login login in role recording_finalize_operator;

select is(
    recording_finalize.check_policy('{}'),
    '{"topic": "pin.messenger.call-recording-available.v1", "max_attempts": 8,
      "sla_timeout_seconds": 1800, "backoff_base_seconds": 60, "backoff_factor": 2,
      "backoff_cap_seconds": 900, "backoff_jitter": 0.1, "upload_grace_seconds": 1800}'::jsonb,
    'the empty policy resolves to every default'
);
select is(
    recording_finalize.check_policy('{"max_attempts": 50, "sla_timeout_seconds": 1,
        "backoff_base_seconds": 0.2, "backoff_jitter": 0.2}'),
    '{"topic": "pin.messenger.call-recording-available.v1", "max_attempts": 50,
      "sla_timeout_seconds": 1, "backoff_base_seconds": 0.2, "backoff_factor": 2,
      "backoff_cap_seconds": 900, "backoff_jitter": 0.2, "upload_grace_seconds": 1}'::jsonb,
    'given keys are kept, the others defaulted (the grace follows the SLA)'
);
select is(
    recording_finalize.check_policy('{"upload_grace_seconds": 7200, "backoff_factor": 1.5,
        "backoff_cap_seconds": 120}')
        - 'topic' - 'max_attempts' - 'sla_timeout_seconds' - 'backoff_base_seconds'
        - 'backoff_jitter',
    '{"upload_grace_seconds": 7200, "backoff_factor": 1.5, "backoff_cap_seconds": 120}'::jsonb,
    'an upload grace, factor and cap given are kept'
);
select is(
    recording_finalize.check_policy(recording_finalize.check_policy('{"max_attempts": 3}')),
    recording_finalize.check_policy('{"max_attempts": 3}'),
    'the resolved policy is itself a valid policy, resolving to itself'
);
select is(
    (select array_agg(k order by k) from jsonb_object_keys(recording_finalize.check_policy('{}'))
        as k),
    array['backoff_base_seconds', 'backoff_cap_seconds', 'backoff_factor', 'backoff_jitter',
        'max_attempts', 'sla_timeout_seconds', 'topic', 'upload_grace_seconds'],
    'it names every policy key'
);

set local role rfr_pgtap_worker_login;
select lives_ok($$select recording_finalize.check_policy('{"max_attempts": 3}')$$,
    'the worker may call it');
select throws_ok($$select recording_finalize.check_policy('{"max_attempts": 0}')$$, 'RF001',
    null, 'RF001 reaches the worker');
select throws_ok(
    $$select recording_finalize.check_policy('{"topic": "pin.billing.invoice-paid.v1"}')$$,
    'RF009', null, 'RF009 reaches the worker');
reset role;
set local role rfr_pgtap_operator_login;
select throws_ok($$select recording_finalize.check_policy('{"backoff_jitter": 0.9}')$$, 'RF010',
    null, 'RF010 reaches the operator');
reset role;
select is(
    (select provolatile::text from pg_catalog.pg_proc
        where oid = 'recording_finalize.check_policy(jsonb,integer,interval)'::regprocedure),
    's', 'check_policy is STABLE (it writes nothing)'
);

select * from finish();
rollback;
