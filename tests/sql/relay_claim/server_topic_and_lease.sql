-- As a worker login: relay_claim leases only the server's topic (another topic's rows are never
-- returned nor leased, another p_topic is RF009), caps the lease at the server's bound and
-- follows the owner's change of the bounds at once.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as rec \gset
select recording_finalize.recording_ingest_completed(:'rec', 'recordings/s', 1, 1, 'Ogg')
    as ingested \gset
-- Another service's event, written as the owner (the messenger service).
-- (Its id one the product's outbox does not hold: the tables draw ids from their own sequences.)
insert into messenger.integration_outbox (id, topic, message_key, event_type, dedupe_key, payload)
overriding system value
values ((select max(id) + 1000 from recording_finalize.outbox), 'pin.billing.invoice-paid.v1',
    'k', 'invoice-paid', 'inv-1', '{"secret": "payload"}');
select id as foreign_id from messenger.integration_outbox where dedupe_key = 'inv-1' \gset
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
select throws_ok(
    $$select * from recording_finalize.relay_claim(10, interval '1 minute', null,
        'pin.billing.invoice-paid.v1')$$,
    'RF009', null, 'as the worker: leasing another topic is refused'
);
create temp table claimed as
select * from recording_finalize.relay_claim(10000, interval '1 year');
reset role;

select is(
    (select array_agg(payload::jsonb ->> 'recordingId') from claimed), array[:'rec'],
    'only our topic''s row comes back'
);
select ok(
    not exists (select from recording_finalize.relay_leases where outbox_id = :foreign_id),
    'the other topic''s row was not leased'
);
select is(
    (select leased_until - now() from recording_finalize.relay_leases as l
        join recording_finalize.outbox as o on o.id = l.outbox_id
        where o.recording_id = :'rec'),
    interval '15 minutes',
    'a 1-year lease is capped at the server''s relay_lease_max'
);
select is(
    (select lease_token from claimed),
    (select l.lease_token from recording_finalize.relay_leases as l
        join claimed as c on c.id = l.outbox_id),
    'the lease token comes back with the row and is the stored lease''s'
);

-- The owner lowers the bounds: the worker follows at once.
update recording_finalize.settings set relay_batch_max = 100, relay_lease_max = '30 seconds';
delete from recording_finalize.relay_leases;
set local role rfr_pgtap_worker_login;
select throws_ok(
    $$select * from recording_finalize.relay_claim(101, interval '1 minute')$$,
    'RF010', null, 'a limit above the lowered relay_batch_max is refused'
);
create temp table again as select * from recording_finalize.relay_claim(100, interval '1 minute');
reset role;
select is(
    (select l.leased_until - now() from recording_finalize.relay_leases as l
        join again as a on a.id = l.outbox_id),
    interval '30 seconds',
    'the lease follows the server''s current bound'
);

select * from finish();
rollback;
