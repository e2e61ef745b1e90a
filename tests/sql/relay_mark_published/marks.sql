-- relay_mark_published marks acknowledged rows once and drops their leases; marking again, or
-- marking ids it never leased, is a no-op.
begin;
select plan(9);

select tests.clean_slate();
create temp table recs as
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as id
from generate_series(1, 3);
select count(recording_finalize.recording_ingest_completed(id, 'recordings/' || id, 1, 1, 'Ogg'))
    as ingested from recs \gset
create temp table claimed as select * from recording_finalize.relay_claim(2);
select min(lease_token::text) as token from claimed \gset

select is(
    recording_finalize.relay_mark_published((select array_agg(id) from claimed), :'token'),
    2,
    'marks the two acknowledged rows and says so'
);
select is(
    (select count(*) from recording_finalize.outbox
        where id in (select id from claimed) and published_at = now()),
    2::bigint,
    'they are published now'
);
select is(
    (select count(*) from recording_finalize.relay_leases), 0::bigint,
    'and their leases are gone'
);
select is(
    (select count(*) from recording_finalize.outbox where published_at is null), 1::bigint,
    'the unacknowledged row stays unpublished'
);
update recording_finalize.outbox set published_at = now() - interval '1 minute'
where id in (select id from claimed);
select is(
    recording_finalize.relay_mark_published((select array_agg(id) from claimed), :'token'),
    0,
    'marking the same rows again marks nothing'
);
select is(
    (select count(*) from recording_finalize.outbox
        where published_at = now() - interval '1 minute'),
    2::bigint,
    'and keeps their first published_at'
);
select is(
    recording_finalize.relay_mark_published(array[-1, 0]::bigint[], :'token'), 0,
    'unknown ids mark nothing'
);
select is(
    recording_finalize.relay_mark_published(array[]::bigint[], :'token'), 0,
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
