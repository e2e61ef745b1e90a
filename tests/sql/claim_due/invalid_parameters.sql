-- claim_due refuses a bad batch size or a policy its own rules refuse with RF001 (the policy
-- is checked once, by recording_finalize_internal.policy) before it touches any row.
begin;
select plan(22);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table before as select tests.snapshot() as fingerprint;

create function pg_temp.claim_with(p_policy text)
returns text
language sql
as $$
    select format('select * from recording_finalize.claim_due(p_policy => %L)', p_policy)
$$;

select throws_ok(
    'select * from recording_finalize.claim_due(p_batch_size => 0)', 'RF001', null,
    'batch size 0 is refused'
);
select throws_ok(
    'select * from recording_finalize.claim_due(p_batch_size => 10001)', 'RF001', null,
    'batch size above 10000 is refused'
);
select throws_ok(
    'select * from recording_finalize.claim_due(p_batch_size => null)', 'RF001', null,
    'a null batch size is refused'
);
select matches(
    tests.error_of('select * from recording_finalize.claim_due(p_batch_size => 0)'),
    'p_batch_size',
    'the message names the parameter'
);
select throws_ok(
    'select * from recording_finalize.claim_due(p_policy => null)', 'RF001', null,
    'a null policy is refused'
);
select throws_ok(pg_temp.claim_with('[]'), 'RF001', null, 'a policy that is not an object');
select throws_ok(pg_temp.claim_with('{"max_attempt": 8}'), 'RF001', null,
    'an unknown key (a typo) is refused, not ignored');
select throws_ok(pg_temp.claim_with('{"max_attempts": "8"}'), 'RF001', null,
    'a count given as a string is refused');
select throws_ok(pg_temp.claim_with('{"topic": 1}'), 'RF001', null,
    'a topic that is not a string is refused');
select throws_ok(pg_temp.claim_with('{"sla_timeout_seconds": null}'), 'RF001', null,
    'a JSON null is refused (leave the key out for the default)');
select throws_ok(pg_temp.claim_with('{"max_attempts": 0}'), 'RF001', null,
    'max attempts 0 is refused');
select throws_ok(pg_temp.claim_with('{"max_attempts": 2.5}'), 'RF001', null,
    'a fractional max attempts is refused');
select throws_ok(pg_temp.claim_with('{"sla_timeout_seconds": 0}'), 'RF001', null,
    'a zero SLA is refused');
select throws_ok(pg_temp.claim_with('{"sla_timeout_seconds": -60}'), 'RF001', null,
    'a negative SLA is refused');
select throws_ok(pg_temp.claim_with('{"backoff_base_seconds": 0}'), 'RF001', null,
    'a zero backoff base is refused');
select throws_ok(pg_temp.claim_with('{"backoff_factor": 0.5}'), 'RF001', null,
    'a backoff factor below 1 is refused');
select throws_ok(pg_temp.claim_with('{"backoff_cap_seconds": 30}'), 'RF001', null,
    'a cap below the base (60 s by default) is refused');
select throws_ok(pg_temp.claim_with('{"backoff_jitter": 1}'), 'RF001', null,
    'jitter 1 is refused');
select throws_ok(pg_temp.claim_with('{"backoff_jitter": -0.1}'), 'RF001', null,
    'a negative jitter is refused');
select throws_ok(pg_temp.claim_with('{"sla_timeout_seconds": 1e300}'), 'RF001', null,
    'a number no interval holds is RF001, not a cast error');
select is(tests.snapshot(), (select fingerprint from before), 'no row was touched');
select is(
    (select count(*) from tests.claim()), 1::bigint,
    'the due row is still there for a correctly configured claim'
);

select * from finish();
rollback;
