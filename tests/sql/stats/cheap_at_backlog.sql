-- stats: cheap at any backlog. With a backlog of 5 000 Pending and 10 000
-- unpublished events beside 20 000 finished rows and 20 000 published events, committed and
-- vacuumed (as autovacuum leaves a quiet table): the product table's part of one call reads a
-- few dozen blocks and scans no table sequentially (its counts are index-only scans of the
-- partial indexes of the baseline). The publish backlog reads the product's own outbox
-- (recording_finalize.outbox) through its partial index on unpublished rows: the whole call reads
-- under 200 buffers, with no index asked of the service.
-- Outbox ids follow insertion order, as the identity column hands them out: the 20 000 oldest
-- are published, the 10 000 newest (the oldest of them 10 000 s old) are not.
-- The rows are committed and vacuumed through dblink (ids and recording ids c0c0c0a4...) and
-- removed at the end, after the rollback.
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
        recording_id, session_kind, session_id, status, attempts, next_attempt_at, created_at,
        quarantine_reason
    )
    select tests.fixed_uuid('c0c0c0a4', n), 'Direct', gen_random_uuid(),
        case when n <= 5000 then 'Pending' when n <= 5200 then 'Quarantined' else 'Done' end, 1,
        now() + make_interval(secs => n % 600 - 300), now() - make_interval(secs => n),
        case when n > 5000 and n <= 5200 then 'max_attempts' end
    from generate_series(1, 25000) as n
$$) as loaded_rows \gset
select dblink_exec('rfr_load', $$
    insert into recording_finalize.outbox (
        recording_id, topic, message_key, headers, payload, created_at, published_at
    )
    select tests.fixed_uuid('c0c0c0a4', n), 'pin.messenger.call-recording-available.v1', 'k',
        '{}', jsonb_build_object('pad', repeat('x', 100)),
        now() - make_interval(secs => 30001 - n), case when n <= 20000 then now() end
    from generate_series(1, 30000) as n
$$) as loaded_events \gset
-- Vacuum marks a page all-visible only for rows older than every snapshot of this database. A
-- statement of this session that waited for the vacuum would hold one, whose xmin is the oldest
-- transaction running anywhere on the server (another database's long transaction would then
-- spoil the test), so the vacuum is sent and this session waits idle, in psql. An autoanalyze
-- running meanwhile holds such a snapshot too: then the vacuum is repeated (three rounds).
-- index_cleanup on: the dead rows earlier test files rolled back must leave the pages too (a
-- vacuum that skips its index pass keeps their line pointers, and such a page is not
-- all-visible).
create function pg_temp.vm_incomplete()
returns boolean
language sql
as $$
    select bool_or(c.relallvisible < c.relpages) from pg_catalog.pg_class as c
    where c.oid in ('messenger.recording_finalize_attempts'::regclass,
        'recording_finalize.outbox'::regclass)
$$;
select true as vacuum_again \gset
\if :vacuum_again
select dblink_send_query('rfr_load', 'vacuum (analyze, index_cleanup on) '
    || 'messenger.recording_finalize_attempts, '
    || 'recording_finalize.outbox') as vacuum_sent \gset
\! sleep 0.5
select count(*) as vacuumed from dblink_get_result('rfr_load') as t(r text) \gset
select count(*) as vacuum_end from dblink_get_result('rfr_load') as t(r text) \gset
select pg_temp.vm_incomplete() as vacuum_again \gset
\endif
\if :vacuum_again
\! sleep 1
select dblink_send_query('rfr_load', 'vacuum (index_cleanup on) '
    || 'messenger.recording_finalize_attempts, '
    || 'recording_finalize.outbox') as vacuum_sent \gset
\! sleep 0.5
select count(*) as vacuumed from dblink_get_result('rfr_load') as t(r text) \gset
select count(*) as vacuum_end from dblink_get_result('rfr_load') as t(r text) \gset
select pg_temp.vm_incomplete() as vacuum_again \gset
\endif
\if :vacuum_again
\! sleep 2
select dblink_send_query('rfr_load', 'vacuum (index_cleanup on) '
    || 'messenger.recording_finalize_attempts, '
    || 'recording_finalize.outbox') as vacuum_sent \gset
\! sleep 0.5
select count(*) as vacuumed from dblink_get_result('rfr_load') as t(r text) \gset
select count(*) as vacuum_end from dblink_get_result('rfr_load') as t(r text) \gset
\endif
select plan(9);

select ok(not pg_temp.vm_incomplete(),
    'precondition: vacuum marked every page all-visible (else a snapshot held it back)');

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
-- This transaction's counters of one table and its indexes: blocks read, sequential scans.
create function pg_temp.counters(p_table regclass)
returns table (blocks bigint, seq_scans bigint)
language sql
as $$
    select sum(pg_stat_get_xact_blocks_fetched(c.oid))::bigint,
        pg_stat_get_xact_numscans(p_table)
    from pg_catalog.pg_class as c
    where c.oid = p_table
        or c.oid in (select i.indexrelid from pg_catalog.pg_index as i where i.indrelid = p_table)
$$;

-- Once to warm the cache, then measured.
create temp table figures as select * from recording_finalize.stats();
create temp table before as
select * from pg_temp.counters('messenger.recording_finalize_attempts');
create temp table measured as select * from recording_finalize.stats();
create temp table after as
select * from pg_temp.counters('messenger.recording_finalize_attempts');

-- This transaction's now() is older than the load's: the ages are off by the seconds it took.
select results_eq(
    $$select backlog, quarantined, publish_backlog, oldest_age_seconds between 4940 and 5060,
        oldest_unpublished_age_seconds between 9940 and 10060 from figures$$,
    $$values (5000::bigint, 200::bigint, 10000::bigint, true, true)$$,
    'the figures: backlog 5000 (oldest 5000 s), quarantined 200, publish backlog 10000 (10000 s)'
);
select cmp_ok(
    (select a.blocks - b.blocks from after as a, before as b), '<', 120::bigint,
    format('the finalize table''s part reads under 120 blocks (%s) for 25 000 rows',
        (select a.blocks - b.blocks from after as a, before as b))
);
select is(
    (select a.seq_scans - b.seq_scans from after as a, before as b), 0::bigint,
    'no sequential scan of the finalize table'
);

-- The whole call, measured again.
create temp table figures_indexed as select * from recording_finalize.stats();
create temp table seq_before as
select pg_stat_get_xact_numscans('messenger.recording_finalize_attempts'::regclass) as f_seq,
    pg_stat_get_xact_numscans('recording_finalize.outbox'::regclass) as o_seq;
select pg_temp.buffers($$select * from recording_finalize.stats()$$) as buffers \gset
create temp table seq_after as
select pg_stat_get_xact_numscans('messenger.recording_finalize_attempts'::regclass)
        - b.f_seq as f_seq,
    pg_stat_get_xact_numscans('recording_finalize.outbox'::regclass) - b.o_seq as o_seq
from seq_before as b;

select results_eq(
    'select backlog, due, quarantined, publish_backlog from figures_indexed',
    'select backlog, due, quarantined, publish_backlog from figures',
    'the same figures again'
);
select cmp_ok(:buffers::bigint, '<', 200::bigint,
    format('the whole call reads under 200 buffers (%s)', :buffers));
select is((select f_seq from seq_after), 0::bigint, 'no sequential scan of the finalize table');
select is((select o_seq from seq_after), 0::bigint, 'no sequential scan of the product''s outbox');

select is(dblink_disconnect('rfr_load'), 'OK', 'the loading session disconnected');

select * from finish();
rollback;
select tests.delete_committed('c0c0c0a4') as cleaned \gset
