-- As the worker login: apply_outcome cannot write the event into another topic (RF009) nor take
-- a max attempts above the server's bound (RF010), both given in p_policy; either way nothing
-- changes and the claim stands.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
create temp table before as select tests.snapshot() as fingerprint;
create role rfr_pgtap_apply_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_apply_worker_login;
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'recordings/x', 10, 10,
            'Ogg', p_policy => '{"topic": "pin.billing.invoice-paid.v1"}')$$,
        :'rec', :'token'
    ),
    'RF009', null, 'found with another topic is refused'
);
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'transient',
            p_policy => '{"max_attempts": 100000}')$$,
        :'rec', :'token'
    ),
    'RF010', null, 'a max attempts above the server''s bound is refused'
);
reset role;
select matches(
    tests.error_of(format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'transient',
            p_policy => '{"max_attempts": 20001}')$$,
        :'rec', :'token'
    )),
    '^RF010: policy_out_of_bounds: max_attempts is 20001; the server''s bound is 1\.\.20000',
    'the message names the value and the bound'
);
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');

set local role rfr_pgtap_apply_worker_login;
select is(
    (select result from recording_finalize.apply_outcome(
        :'rec', :'token', 'found', 'recordings/x', 10, 10, 'Ogg',
        p_policy => '{"topic": "pin.messenger.call-recording-available.v1"}'
    )),
    'reconciled',
    'the server''s own topic, given explicitly, is accepted'
);
reset role;
select is(
    (select topic from recording_finalize.outbox where recording_id = :'rec'),
    'pin.messenger.call-recording-available.v1',
    'and the event is on the server''s topic'
);
select is(
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox), 1::bigint,
    'and nowhere else (nothing in the service''s outbox)'
);

select * from finish();
rollback;
