-- As the worker login: apply_outcome takes no topic and no policy of the caller's (both are the
-- server's: settings.topic, the stored policy), so the event goes to the server's topic and
-- nowhere else.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
create role rfr_pgtap_apply_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_apply_worker_login;
select is(
    (select result from recording_finalize.apply_outcome(
        :'rec', :'token', 'found', 'recordings/x', 10, 10, 'Ogg'
    )),
    'reconciled',
    'the worker reconciles'
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
