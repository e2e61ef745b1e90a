-- relay_claim and relay_mark_published: the service's own unpublished rows in
-- messenger.integration_outbox (its happy path's events, of the server's topic, under dedupe key
-- = recording id) are its own relay's business: never returned, never leased, never marked
-- published - even when their ids are handed to relay_mark_published. Only the product's own
-- outbox is relayed (one relay per table: a visitor never marks the host's rows).
begin;
select plan(6);

select tests.clean_slate();
create role rfr_pgtap_worker_login login in role recording_finalize_worker;
-- The product's one event, through the real path.
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as ours \gset
select recording_finalize.recording_ingest_completed(:'ours', 'recordings/o', 1, 1, 'Ogg')
    as ingested \gset
-- The service's own events, unpublished, of the server's topic.
select tests.make_recording('Direct', tests.make_session(), 'Available') as theirs \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as theirs2 \gset
select tests.make_service_event(:'theirs') as their_event \gset
select tests.make_service_event(:'theirs2') as their_event2 \gset
create temp table service_before as
select md5(string_agg(o::text, ',' order by o.id)) as rows from messenger.integration_outbox as o;

set local role rfr_pgtap_worker_login;
create temp table claimed as select * from recording_finalize.relay_claim(100, interval '1 minute');
reset role;

select is(
    (select array_agg(payload::jsonb ->> 'recordingId') from claimed), array[:'ours'],
    'only the product''s own event is returned'
);
select is(
    (select array_agg(o.recording_id) from recording_finalize.relay_leases as l
        join recording_finalize.outbox as o on o.id = l.outbox_id),
    array[:'ours'::uuid],
    'and only it is leased'
);

-- The worker hands every id of both tables, with its token, to relay_mark_published.
select min(lease_token::text) as token from claimed \gset
select array_agg(id)::text as all_ids from (select id from recording_finalize.outbox
    union select id from messenger.integration_outbox) as ids \gset
set local role rfr_pgtap_worker_login;
select is(
    recording_finalize.relay_mark_published(:'all_ids'::bigint[], :'token'),
    1,
    'relay_mark_published marks the product''s one leased event, nothing else'
);
reset role;
select is(
    (select md5(string_agg(o::text, ',' order by o.id)) from messenger.integration_outbox as o),
    (select rows from service_before),
    'the service''s outbox is exactly as it was: its rows unpublished, unchanged'
);
select is(
    (select count(*) from messenger.integration_outbox
        where id in (:their_event, :their_event2) and published_at is null),
    2::bigint,
    'both of the service''s events still wait for its own relay'
);
set local role rfr_pgtap_worker_login;
select is(
    (select count(*) from recording_finalize.relay_claim(100, interval '1 minute')), 0::bigint,
    'a later claim returns nothing: the service''s rows are never the product''s to relay'
);
reset role;

select * from finish();
rollback;
