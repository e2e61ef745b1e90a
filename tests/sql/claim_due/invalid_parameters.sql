-- claim_due refuses out-of-range settings with RF001 before it touches any row.
begin;
select plan(14);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table before as select tests.snapshot() as fingerprint;

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
select throws_ok(
    'select * from recording_finalize.claim_due(p_max_attempts => 0)', 'RF001', null,
    'max attempts 0 is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_sla_timeout => interval '0')$$,
    'RF001', null,
    'a zero SLA is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_sla_timeout => interval '-1 minute')$$,
    'RF001', null,
    'a negative SLA is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_backoff_base => interval '0')$$,
    'RF001', null,
    'a zero backoff base is refused'
);
select throws_ok(
    'select * from recording_finalize.claim_due(p_backoff_factor => 0.5)', 'RF001', null,
    'a backoff factor below 1 is refused'
);
select throws_ok(
    $$select * from recording_finalize.claim_due(p_backoff_cap => interval '30 seconds')$$,
    'RF001', null,
    'a cap below the base is refused'
);
select throws_ok(
    'select * from recording_finalize.claim_due(p_backoff_jitter => 1)', 'RF001', null,
    'jitter 1 is refused'
);
select throws_ok(
    'select * from recording_finalize.claim_due(p_backoff_jitter => -0.1)', 'RF001', null,
    'a negative jitter is refused'
);
select matches(
    tests.error_of('select * from recording_finalize.claim_due(p_batch_size => 0)'),
    'p_batch_size',
    'the message names the parameter'
);
select is(tests.snapshot(), (select fingerprint from before), 'no row was touched');
select is(
    (select count(*) from tests.claim()), 1::bigint,
    'the due row is still there for a correctly configured claim'
);

select * from finish();
rollback;
