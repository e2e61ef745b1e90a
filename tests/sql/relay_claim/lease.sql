-- relay_claim leases unpublished rows: a second claim skips them until the lease runs out.
begin;
select plan(9);

select tests.clean_slate();
-- Three events through the real path, one already published, one of another topic.
create temp table recs as
select tests.make_recording('Direct', tests.make_session(), 'Available') as id
from generate_series(1, 4);
select count(recording_finalize.enqueue_available(id, 'pin.messenger.call-recording-available.v1'))
    as enqueued from recs \gset
update messenger.integration_outbox set published_at = now() - interval '1 hour'
where id = (select max(id) from messenger.integration_outbox);
-- Written as the owner: no API function writes another topic's rows any more.
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('other.topic', 'k', 'call-recording-available', 'other-1', '{}');

create temp table first_claim as
select * from recording_finalize.relay_claim(2, interval '1 minute');

select results_eq(
    'select id from first_claim order by id',
    $$select id from messenger.integration_outbox
    where topic = 'pin.messenger.call-recording-available.v1' and published_at is null
    order by id limit 2$$,
    'p_limit 2: the two oldest unpublished rows of the topic, in id order'
);
select is(
    (select count(*) from messenger.integration_outbox
        where id in (select id from first_claim)
            and relay_lease_until = now() + interval '1 minute'),
    2::bigint,
    'both are leased for p_lease'
);

create temp table second_claim as
select * from recording_finalize.relay_claim(10, interval '1 minute');

select is(
    (select count(*) from second_claim), 1::bigint,
    'a second relay claim gets only the one row that is not leased'
);
select is_empty(
    'select id from first_claim intersect select id from second_claim',
    'leased rows are hidden from the second claim'
);
select is(
    (select count(*) from recording_finalize.relay_claim(10, interval '1 minute')), 0::bigint,
    'nothing is left: published rows and other topics are never returned'
);

-- The first relay died without marking: its lease runs out.
update messenger.integration_outbox set relay_lease_until = now() - interval '1 second'
where id in (select id from first_claim);
select set_eq(
    $$select id from recording_finalize.relay_claim(10, interval '30 seconds')$$,
    'select id from first_claim',
    'an expired lease makes the rows claimable again (at-least-once)'
);
update recording_finalize.settings set topic = 'other.topic';
select is(
    (select count(*) from recording_finalize.relay_claim(10, interval '1 minute')),
    1::bigint,
    'the server''s topic selects the rows'
);
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v1';
select is(
    (select count(*) from messenger.integration_outbox where published_at is not null),
    1::bigint,
    'claiming never marks anything published'
);
select is(
    (select count(*) from messenger.integration_outbox
        where published_at is not null and relay_lease_until is not null),
    0::bigint,
    'the published row was never leased'
);

select * from finish();
rollback;
