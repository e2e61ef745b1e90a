-- As a worker login: relay_mark_published marks only rows of the product's own outbox leased
-- with the token it presents: an id of the service's outbox, a wrong or NULL token, a row
-- another relay took over are never marked, so no event is silently dropped.
begin;
select plan(9);

select tests.clean_slate();
create temp table recs as
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as id
from generate_series(1, 2);
select count(recording_finalize.recording_ingest_completed(id, 'recordings/' || id, 1, 1, 'Ogg'))
    as ingested from recs \gset
-- A row of the service's outbox, its id one the product's outbox does not hold (the two tables
-- draw ids from sequences of their own).
insert into messenger.integration_outbox (id, topic, message_key, event_type, dedupe_key, payload)
overriding system value
values ((select max(id) + 1000 from recording_finalize.outbox), 'pin.billing.invoice-paid.v1',
    'k', 'invoice-paid', 'inv-1', '{}');
select id as foreign_id from messenger.integration_outbox
where topic = 'pin.billing.invoice-paid.v1' \gset
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
create temp table claimed as select * from recording_finalize.relay_claim(1, interval '1 minute');
select min(lease_token::text) as token from claimed \gset
select is(
    recording_finalize.relay_mark_published(array[:foreign_id]::bigint[], :'token'), 0,
    'an id of the service''s outbox marks nothing, even with a valid token'
);
select is(
    recording_finalize.relay_mark_published(
        (select array_agg(id) from claimed), gen_random_uuid()
    ),
    0,
    'our own leased row with a wrong token marks nothing'
);
select is(
    recording_finalize.relay_mark_published((select array_agg(id) from claimed), null), 0,
    'nor with no token'
);
reset role;
select is(
    (select count(*) from recording_finalize.relay_leases where lease_token = :'token'),
    1::bigint,
    'the lease survives the refused marks'
);
set local role rfr_pgtap_worker_login;
select is(
    recording_finalize.relay_mark_published(
        array[0]::bigint[] || (select array_agg(id) from claimed),
        :'token'
    ),
    1,
    'the right token marks the row it leased'
);
reset role;

select ok(
    (select published_at is null from messenger.integration_outbox where id = :foreign_id),
    'the other service''s event is still unpublished'
);
select is(
    (select count(*) from recording_finalize.outbox where published_at is null),
    1::bigint,
    'our row that was never leased is still unpublished'
);

-- A relay whose lease ran out and was taken over cannot mark the new holder's rows.
set local role rfr_pgtap_worker_login;
create temp table first_lease as select * from recording_finalize.relay_claim(1);
select min(lease_token::text) as first_token from first_lease \gset
reset role;
update recording_finalize.relay_leases set leased_until = now() - interval '1 second'
where outbox_id in (select id from first_lease);
set local role rfr_pgtap_worker_login;
create temp table second_lease as select * from recording_finalize.relay_claim(1);
select is(
    recording_finalize.relay_mark_published((select array_agg(id) from first_lease),
        :'first_token'),
    0,
    'the first relay''s token no longer marks a row another relay took over'
);
select is(
    recording_finalize.relay_mark_published((select array_agg(id) from second_lease),
        (select min(lease_token::text)::uuid from second_lease)),
    1,
    'the new holder''s token does'
);
reset role;

select * from finish();
rollback;
