-- relay_mark_published marks acknowledged rows once; marking again is a no-op.
begin;
select plan(8);

select tests.clean_slate();
create temp table recs as
select tests.make_recording('Direct', tests.make_session(), 'Available') as id
from generate_series(1, 3);
select count(recording_finalize.enqueue_available(id, 'pin.messenger.call-recording-available.v1'))
    as enqueued from recs \gset
create temp table claimed as select * from recording_finalize.relay_claim(2);

select is(
    recording_finalize.relay_mark_published(
        (select array_agg(id) from claimed), (select min(lease_token::text)::uuid from claimed)
    ),
    2,
    'marks the two acknowledged rows and says so'
);
select is(
    (select count(*) from messenger.integration_outbox
        where id in (select id from claimed) and published_at = now()
            and relay_lease_until is null),
    2::bigint,
    'they are published now and their lease is cleared'
);
select is(
    (select count(*) from messenger.integration_outbox where published_at is null), 1::bigint,
    'the unacknowledged row stays unpublished'
);
update messenger.integration_outbox set published_at = now() - interval '1 minute'
where id in (select id from claimed);
select is(
    recording_finalize.relay_mark_published(
        (select array_agg(id) from claimed), (select min(lease_token::text)::uuid from claimed)
    ),
    0,
    'marking the same rows again marks nothing'
);
select is(
    (select count(*) from messenger.integration_outbox
        where published_at = now() - interval '1 minute'),
    2::bigint,
    'and keeps their first published_at'
);
select is(
    recording_finalize.relay_mark_published(
        array[-1, 0]::bigint[], (select min(lease_token::text)::uuid from claimed)
    ),
    0,
    'unknown ids mark nothing'
);
select is(
    recording_finalize.relay_mark_published(
        array[]::bigint[], (select min(lease_token::text)::uuid from claimed)
    ),
    0,
    'an empty batch marks nothing'
);
select is_empty(
    format(
        'select id from recording_finalize.relay_claim(10) where id = any(%L::bigint[])',
        (select array_agg(id) from claimed)
    ),
    'published rows are never claimed again'
);

select * from finish();
rollback;
