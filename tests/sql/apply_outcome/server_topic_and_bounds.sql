-- As the worker login: apply_outcome cannot write the event into another topic (RF009) nor
-- choose a max attempts above the server's bound (RF010); either way nothing changes.
begin;
select plan(6);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
create temp table before as select tests.snapshot() as fingerprint;
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'recordings/x', 10, 10,
            'Ogg', p_topic => 'pin.billing.invoice-paid.v1')$$,
        :'rec', :'token'
    ),
    'RF009', null, 'found with another topic is refused'
);
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'transient',
            p_max_attempts => 2147483647)$$,
        :'rec', :'token'
    ),
    'RF010', null, 'a max attempts above the server''s bound is refused'
);
reset role;
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');

set local role rfr_pgtap_worker_login;
select is(
    (select result from recording_finalize.apply_outcome(
        :'rec', :'token', 'found', 'recordings/x', 10, 10, 'Ogg'
    )),
    'reconciled',
    'with p_topic left out the verdict is recorded'
);
reset role;
select is(
    (select topic from messenger.integration_outbox where dedupe_key = :'rec'),
    'pin.messenger.call-recording-available.v1',
    'and the event is on the server''s topic'
);
select is(
    (select count(*) from messenger.integration_outbox), 1::bigint,
    'and nowhere else'
);

select * from finish();
rollback;
