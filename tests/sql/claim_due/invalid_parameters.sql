-- claim_due refuses a bad batch size with RF001 before it touches any row (the policy is the
-- stored one, checked when set_policy stored it: set_policy/).
begin;
select plan(6);

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
