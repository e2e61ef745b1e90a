-- service_events_unpublished costs p_scan lookups, whatever the size of the service's outbox:
-- over 50 000 Available recordings whose events the service published long ago, a call with
-- p_scan 100 scans neither the recordings nor the outbox sequentially and reads a number of
-- buffers bounded by p_scan, not by the tables.
begin;
select plan(4);

select tests.clean_slate();
insert into messenger.call_sessions (id, started_at, ended_at)
select tests.fixed_uuid('5e5e5e01', n), now() - interval '3 days', now() - interval '2 days'
from generate_series(1, 50000) as n;
insert into messenger.call_recordings (
    id, session_kind, session_id, media_type, trigger, status, file_id, size_bytes,
    duration_seconds, format, started_at, ended_at, available_at
)
select tests.fixed_uuid('5e5e5e02', n), 'Direct', tests.fixed_uuid('5e5e5e01', n), 'Audio',
    'Manual', 'Available', 'f', 1, 1, 'Webm', now() - interval '3 days',
    now() - interval '2 days', now() - make_interval(secs => 200000 - n)
from generate_series(1, 50000) as n;
insert into messenger.integration_outbox (
    topic, message_key, event_type, dedupe_key, payload, created_at, published_at
)
select s.topic, 'k', 'call-recording-available', tests.fixed_uuid('5e5e5e02', n)::text,
    jsonb_build_object('pad', repeat('x', 200)), now() - make_interval(secs => 200000 - n),
    case when n <= 49990 then now() end
from generate_series(1, 50000) as n cross join recording_finalize.settings as s;
analyze messenger.call_recordings, messenger.integration_outbox;

create function pg_temp.buffers(p_sql text)
returns bigint
language plpgsql
as $$
declare
    v_plan json;
begin
    execute 'explain (analyze, buffers, format json) ' || p_sql into v_plan;
    return (v_plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint
        + (v_plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
end
$$;

select is(
    (select unpublished from recording_finalize.service_events_unpublished('5 minutes', 100)),
    10::bigint, 'the 10 newest events are unpublished, all within the newest 100 recordings'
);
create temp table seq_before as
select pg_stat_get_xact_numscans('messenger.call_recordings'::regclass) as r_seq,
    pg_stat_get_xact_numscans('messenger.integration_outbox'::regclass) as o_seq;
select pg_temp.buffers(
    $$select * from recording_finalize.service_events_unpublished('5 minutes', 100)$$
) as buffers \gset
-- The bound leaves room for the buffers a lookup reads more or less by chance (a page split, a
-- planner's first access to the catalog), and stays well below a scan of the port (~4 300).
select cmp_ok(:buffers::bigint, '<', 2500::bigint,
    format('p_scan 100 reads %s buffers (under 2500: 25 per recording read) of 50 000 '
        || 'recordings and events (a scan of the port reads about 4 300)', :buffers));
select is(
    pg_stat_get_xact_numscans('messenger.call_recordings'::regclass)
        - (select r_seq from seq_before),
    0::bigint, 'no sequential scan of the recordings'
);
select is(
    pg_stat_get_xact_numscans('messenger.integration_outbox'::regclass)
        - (select o_seq from seq_before),
    0::bigint, 'no sequential scan of the outbox: one lookup by (topic, dedupe_key) per recording'
);

select * from finish();
rollback;
