-- relay_claim leases unpublished rows of the product's own outbox (recording_finalize.outbox) in
-- recording_finalize.relay_leases: a second claim skips live leases, an expired lease is taken
-- over, published rows are never returned, and neither is any row of the service's outbox
-- (its own events, of the server's topic or another): it is not even read.
begin;
select plan(13);

select tests.clean_slate();
-- Three events through the real path, then one marked published, and another topic's event.
create temp table recs as
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as id
from generate_series(1, 4);
select count(recording_finalize.recording_ingest_completed(id, 'recordings/' || id, 1, 1, 'Ogg'))
    as ingested from recs \gset
update recording_finalize.outbox set published_at = now() - interval '1 hour'
where id = (select max(id) from recording_finalize.outbox);
-- The service's own unpublished events (its relay's business), of the server's topic and another.
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('other.topic', 'k', 'call-recording-available', 'other-1', '{}'),
    ('pin.messenger.call-recording-available.v1', 'svc', 'call-recording-available', 'svc-1',
        '{}');
create temp table outbox_before as
select md5(string_agg(o::text, ',' order by o.id)) as rows from messenger.integration_outbox as o;

create temp table first_claim as
select * from recording_finalize.relay_claim(2, interval '1 minute');

select results_eq(
    'select id from first_claim order by id',
    $$select id from recording_finalize.outbox where published_at is null
    order by id limit 2$$,
    'p_limit 2: the two oldest unpublished rows of the product''s outbox, in id order'
);
select results_eq(
    $$select l.outbox_id, l.lease_token, l.leased_until, l.holder_pid, l.leased_at
    from recording_finalize.relay_leases as l order by l.outbox_id$$,
    $$select id, lease_token, now() + interval '1 minute', null::integer, now()
    from first_claim order by id$$,
    'each is leased in relay_leases for p_lease with the batch''s token, no holder'
);
select is(
    (select count(distinct lease_token) from first_claim), 1::bigint,
    'one lease token for the batch'
);

create temp table second_claim as
select * from recording_finalize.relay_claim(10, interval '1 minute');

select is(
    (select count(*) from second_claim), 1::bigint,
    'a second claim gets only the one row that is not leased'
);
select is_empty(
    'select id from first_claim intersect select id from second_claim',
    'live leases are skipped'
);
select isnt(
    (select min(lease_token::text) from second_claim),
    (select min(lease_token::text) from first_claim),
    'a new claim is a new token'
);
select is(
    (select count(*) from recording_finalize.relay_claim(10, interval '1 minute')), 0::bigint,
    'nothing is left: published rows and the service''s rows are never returned'
);

-- The first relay died without marking: its lease runs out.
update recording_finalize.relay_leases set leased_until = now() - interval '1 second'
where outbox_id in (select id from first_claim);
create temp table third_claim as
select * from recording_finalize.relay_claim(10, interval '30 seconds');
select set_eq(
    'select id from third_claim',
    'select id from first_claim',
    'an expired lease is taken over (at-least-once)'
);
select is(
    (select count(*) from recording_finalize.relay_leases
        where outbox_id in (select id from first_claim)
            and lease_token = (select min(lease_token::text)::uuid from third_claim)
            and leased_until = now() + interval '30 seconds'),
    2::bigint,
    'the taken-over leases carry the new token and lease'
);
-- A lease that ends exactly now is over.
update recording_finalize.relay_leases set leased_until = now()
where outbox_id in (select id from second_claim);
select is(
    (select count(*) from recording_finalize.relay_claim(10, interval '1 minute')), 1::bigint,
    'a lease ending now() is expired'
);

update recording_finalize.settings set topic = 'other.topic';
select is(
    (select count(*) from recording_finalize.relay_claim(10, interval '1 minute')), 0::bigint,
    'whatever the server''s topic, the service''s unpublished rows of it are never returned'
);
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v1';

select is(
    (select md5(string_agg(o::text, ',' order by o.id)) from messenger.integration_outbox as o),
    (select rows from outbox_before),
    'the service''s outbox was only read: every row is as it was'
);
select ok(
    not exists (select from recording_finalize.relay_leases as l
        join recording_finalize.outbox as o on o.id = l.outbox_id
        where o.published_at is not null),
    'the published row was never leased'
);

select * from finish();
rollback;
