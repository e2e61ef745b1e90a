-- As the worker login: claim_due cannot write an event into another topic (RF009 from the
-- policy's topic, nothing touched); the server's topic, named or left out, is where the
-- republished event lands.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck(p_status => 'Available') as republish \gset
create temp table before as select tests.snapshot() as fingerprint;
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
select throws_ok(
    $$select * from recording_finalize.claim_due(
        p_policy => '{"topic": "pin.billing.invoice-paid.v1"}')$$,
    'RF009', null, 'claim_due with another topic is refused'
);
reset role;
select is(tests.snapshot(), (select fingerprint from before), 'and nothing was touched');
select matches(
    tests.error_of(
        $$select * from recording_finalize.claim_due(
            p_policy => '{"topic": "pin.billing.invoice-paid.v1"}')$$
    ),
    'pin\.billing\.invoice-paid\.v1.*pin\.messenger\.call-recording-available\.v1',
    'the message names both topics'
);

set local role rfr_pgtap_worker_login;
create temp table named as
select * from recording_finalize.claim_due(
    p_policy => '{"topic": "pin.messenger.call-recording-available.v1", "backoff_jitter": 0}');
select is(
    (select action from named where recording_id = :'republish'), 'republished',
    'the server''s topic, named, is admitted'
);
reset role;
select tests.make_stuck(p_status => 'Available') as omitted \gset
set local role rfr_pgtap_worker_login;
create temp table claimed as
select * from recording_finalize.claim_due(p_policy => '{"backoff_jitter": 0}');
select is(
    (select action from claimed where recording_id = :'omitted'), 'republished',
    'with the topic left out the claim runs'
);
select is(
    (select count(*) from recording_finalize.relay_claim(10, interval '1 minute')), 2::bigint,
    'and both events are on the server''s topic'
);
reset role;
select is(
    (select array_agg(distinct topic) from recording_finalize.outbox),
    array['pin.messenger.call-recording-available.v1'],
    'no other topic got a row'
);

select * from finish();
rollback;
