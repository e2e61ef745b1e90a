-- As the worker login: relay_claim leases only the server's topic (another topic's rows are
-- never returned, another p_topic is RF009), caps the lease at the server's bound, refuses a
-- limit above the server's relay batch bound and hands out one lease token per batch.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
select recording_finalize.enqueue_available(:'rec', null) as enqueued \gset
-- Another service's event, written as the owner (the messenger service).
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('pin.billing.invoice-paid.v1', 'k', 'invoice-paid', 'inv-1', '{"secret": "payload"}');
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
select throws_ok(
    $$select * from recording_finalize.relay_claim(10, interval '1 minute',
        'pin.billing.invoice-paid.v1')$$,
    'RF009', null, 'leasing another topic is refused'
);
create temp table claimed as
select * from recording_finalize.relay_claim(10000, interval '1 year');
reset role;

select is(
    (select array_agg(payload::jsonb ->> 'recordingId') from claimed), array[:'rec'],
    'only our topic''s row comes back'
);
select ok(
    (select relay_lease_until is null from messenger.integration_outbox
        where topic = 'pin.billing.invoice-paid.v1'),
    'the other topic''s row was not leased'
);
select is(
    (select relay_lease_until - now() from messenger.integration_outbox
        where dedupe_key = :'rec'),
    interval '15 minutes',
    'a 1-year lease is capped at the server''s relay_lease_max'
);
select ok(
    (select lease_token is not null from claimed)
        and (select lease_token from claimed) = (
            select relay_lease_token from messenger.integration_outbox where dedupe_key = :'rec'
        ),
    'the lease token comes back with the row and is stored on it'
);

-- The owner lowers the bounds: the worker follows at once.
update recording_finalize.settings set relay_batch_max = 100, relay_lease_max = '30 seconds';
update messenger.integration_outbox set relay_lease_until = null;
set local role rfr_pgtap_worker_login;
select throws_ok(
    $$select * from recording_finalize.relay_claim(101, interval '1 minute')$$,
    'RF010', null, 'a limit above the server''s relay_batch_max is refused'
);
create temp table again as select * from recording_finalize.relay_claim(100, interval '1 minute');
reset role;
select is(
    (select relay_lease_until - now() from messenger.integration_outbox
        where dedupe_key = :'rec'),
    interval '30 seconds',
    'the lease follows the server''s current bound'
);
select isnt(
    (select lease_token from again), (select lease_token from claimed),
    'a new claim is a new token'
);
select matches(
    tests.error_of($$select * from recording_finalize.relay_claim(101)$$),
    'p_limit is 101.*at most 100',
    'the message names the argument, its value and the bound'
);

select * from finish();
rollback;
