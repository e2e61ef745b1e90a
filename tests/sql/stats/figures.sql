-- stats: backlog, due, oldest age, quarantined and publish backlog on a known fixture.
begin;
select plan(5);

select tests.clean_slate();

select results_eq(
    'select * from recording_finalize.stats()',
    $$values (0::bigint, 0::bigint, 0::double precision, 0::bigint, 0::bigint,
        0::double precision)$$,
    'an empty table: all gauges are 0'
);

-- Pending: two due (created 2 h and 1 h ago), one in the future (created 10 min ago).
select tests.make_due_row(tests.make_recording('Direct', tests.make_session()), 0,
    now() - interval '1 minute', 'Pending', now() - interval '2 hours') is not null as p1 \gset
select tests.make_due_row(tests.make_recording('Direct', tests.make_session()), 3,
    now() - interval '5 seconds', 'Pending', now() - interval '1 hour') is not null as p2 \gset
select tests.make_due_row(tests.make_recording('Direct', tests.make_session()), 1,
    now() + interval '4 minutes', 'Pending', now() - interval '10 minutes') is not null as p3 \gset
-- Finished rows, however old, do not count; quarantined ones are counted apart.
select tests.make_due_row(tests.make_recording('Direct', tests.make_session(), 'Available'), 1,
    now() - interval '9 days', 'Done', now() - interval '10 days') is not null as d1 \gset
select tests.make_due_row(tests.make_recording('Direct', tests.make_session()), 8,
    now() - interval '1 day', 'Quarantined', now() - interval '3 days') is not null as q1 \gset
select tests.make_due_row(tests.make_recording('Direct', tests.make_session()), 8,
    now() - interval '1 day', 'Quarantined', now() - interval '4 days') is not null as q2 \gset
-- The product's outbox: three unpublished rows (oldest 5 min), one published. The service's own
-- unpublished events (its relay's backlog, a day old) are not the product's to count.
insert into recording_finalize.outbox (
    recording_id, topic, message_key, headers, payload, created_at, published_at
)
values
    (gen_random_uuid(), 'pin.messenger.call-recording-available.v1', 'k', '{}', '{}',
        now() - interval '5 minutes', null),
    (gen_random_uuid(), 'pin.messenger.call-recording-available.v1', 'k', '{}', '{}',
        now() - interval '1 minute', null),
    (gen_random_uuid(), 'pin.messenger.call-recording-available.v1', 'k', '{}', '{}', now(),
        null),
    (gen_random_uuid(), 'pin.messenger.call-recording-available.v1', 'k', '{}', '{}',
        now() - interval '1 day', now() - interval '1 hour');
insert into messenger.integration_outbox (
    topic, message_key, event_type, dedupe_key, payload, created_at, published_at
)
values
    ('pin.messenger.call-recording-available.v1', 'k', 'e', 'a', '{}', now() - interval '1 day',
        null),
    ('other.topic', 'k', 'e', 'a', '{}', now() - interval '1 day', null);

select results_eq(
    'select * from recording_finalize.stats()',
    $$values (3::bigint, 2::bigint, 7200::double precision, 2::bigint, 3::bigint,
        300::double precision)$$,
    'backlog 3, due 2, oldest Pending 7200 s, quarantined 2, publish backlog 3 (oldest 300 s)'
);
select throws_ok(
    $$select * from recording_finalize.stats('other.topic')$$, 'RF009', null,
    'another topic than the server''s is refused'
);
-- The owner moves the server's topic: the product's events are still its backlog (its relay
-- publishes them to the server's topic), the service's rows of the new topic never are.
update recording_finalize.settings set topic = 'other.topic';
select results_eq(
    $$select publish_backlog, oldest_unpublished_age_seconds from recording_finalize.stats()$$,
    $$values (3::bigint, 300::double precision)$$,
    'the publish figures are the product''s outbox, whatever the topic'
);
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v1';

update recording_finalize.outbox set published_at = now();
select results_eq(
    'select publish_backlog, oldest_unpublished_age_seconds from recording_finalize.stats()',
    $$values (0::bigint, 0::double precision)$$,
    'everything published: publish backlog 0'
);

select * from finish();
rollback;
