-- stats: cheap at any backlog (issue 9, finding 6). With a backlog of 5 000 Pending and 10 000
-- unpublished rows beside 20 000 finished and 20 000 published ones, committed and vacuumed
-- (as autovacuum leaves a quiet table), one call reads under 200 buffers and scans no table
-- sequentially: both ages are one entry of the created_at partial indexes (migration 0005),
-- the counts index-only. Before 0005 the same call read about 2 000 buffers.
-- The rows are committed and vacuumed through dblink (ids and dedupe keys c0c0c0a4..., in the
-- server's topic) and removed at the end.
begin;
-- plan() comes after the load: it writes a temp table, which gives this transaction an xid,
-- and vacuum cannot mark all-visible the rows committed after a transaction still running.
select tests.delete_committed('c0c0c0a4');
select dblink_connect('rfr_load', tests.conninfo()) as load_connected \gset
-- An unflushed asynchronous commit leaves no hint bits, and vacuum then cannot mark pages
-- all-visible: this session commits synchronously.
select dblink_exec('rfr_load', 'set synchronous_commit = on') as sync_on \gset
select dblink_exec('rfr_load', $$
    insert into messenger.recording_finalize_attempts (
        recording_id, session_kind, session_id, status, attempts, next_attempt_at, created_at
    )
    select tests.fixed_uuid('c0c0c0a4', n), 'Direct', gen_random_uuid(),
        case when n <= 5000 then 'Pending' when n <= 5200 then 'Quarantined' else 'Done' end, 1,
        now() + make_interval(secs => n % 600 - 300), now() - make_interval(secs => n)
    from generate_series(1, 25000) as n
$$) as loaded_rows \gset
select dblink_exec('rfr_load', $$
    insert into messenger.integration_outbox (
        topic, message_key, event_type, dedupe_key, payload, created_at, published_at
    )
    select 'pin.messenger.call-recording-available.v1', 'k', 'call-recording-available', 'c0c0c0a4-' || n,
        jsonb_build_object('pad', repeat('x', 100)), now() - make_interval(secs => n),
        case when n > 10000 then now() end
    from generate_series(1, 30000) as n
$$) as loaded_events \gset
select dblink_exec('rfr_load', 'vacuum analyze messenger.recording_finalize_attempts')
    as vacuumed_rows \gset
select dblink_exec('rfr_load', 'vacuum analyze messenger.integration_outbox')
    as vacuumed_events \gset
select plan(6);

-- Shared buffers one statement reads (EXPLAIN ANALYZE runs it).
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

create temp table counters_before as
select pg_stat_get_xact_numscans('messenger.recording_finalize_attempts'::regclass) as f_seq,
    pg_stat_get_xact_numscans('messenger.integration_outbox'::regclass) as o_seq;
-- Once to warm the cache, then measured.
create temp table figures as select * from recording_finalize.stats();
select pg_temp.buffers($$select * from recording_finalize.stats()$$)
    as buffers \gset
create temp table counters as
select pg_stat_get_xact_numscans('messenger.recording_finalize_attempts'::regclass)
        - b.f_seq as f_seq,
    pg_stat_get_xact_numscans('messenger.integration_outbox'::regclass) - b.o_seq as o_seq
from counters_before as b;

-- This transaction's now() is older than the load's: the ages are off by the seconds it took.
select results_eq(
    $$select backlog, quarantined, publish_backlog, oldest_age_seconds between 4940 and 5060,
        oldest_unpublished_age_seconds between 9940 and 10060 from figures$$,
    $$values (5000::bigint, 200::bigint, 10000::bigint, true, true)$$,
    'the figures: backlog 5000 (oldest 5000 s), quarantined 200, publish backlog 10000 (10000 s)'
);
select cmp_ok(:buffers::bigint, '<', 200::bigint,
    format('one call reads under 200 buffers (%s)', :buffers));
select is((select f_seq from counters), 0::bigint, 'no sequential scan of the finalize table');
select is((select o_seq from counters), 0::bigint, 'no sequential scan of the outbox');

select is(dblink_disconnect('rfr_load'), 'OK', 'the loading session disconnected');
select tests.delete_committed('c0c0c0a4');
select is(
    (select count(*) from messenger.recording_finalize_attempts
        where recording_id::text like 'c0c0c0a4%'),
    0::bigint,
    'the committed rows are gone'
);

select * from finish();
rollback;
