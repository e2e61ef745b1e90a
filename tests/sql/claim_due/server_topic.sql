-- As the worker login: claim_due takes no topic of the caller's (the policy is the stored one,
-- the topic the server's), so a republished event lands on the server's topic and no other.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_stuck(p_status => 'Available') as republish \gset
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
create temp table claimed as select * from recording_finalize.claim_due();
select is(
    (select action from claimed where recording_id = :'republish'), 'republished',
    'the claim republishes'
);
select is(
    (select count(*) from recording_finalize.relay_claim(10, interval '1 minute')), 1::bigint,
    'and the event is on the server''s topic'
);
reset role;
select is(
    (select array_agg(distinct topic) from recording_finalize.outbox),
    array['pin.messenger.call-recording-available.v1'],
    'no other topic got a row'
);

select * from finish();
rollback;
