-- orphans reads the active recordings through ix_recording_active (an index or bitmap scan on
-- it), never a sequential scan of call_recordings: with 50 000 Available recordings beside 100
-- active ones, analyzed, the plan and the scan counters of discover_stuck say so.
begin;
select plan(6);

select tests.clean_slate();
insert into messenger.call_recordings (
    id, session_kind, session_id, media_type, trigger, status, file_id, size_bytes,
    duration_seconds, format, started_at, ended_at, available_at
)
select gen_random_uuid(), 'Direct', gen_random_uuid(), 'Audio', 'Manual', 'Available',
    'recordings/' || n, 4096, 600, 'Webm', now() - interval '3 hours', now() - interval '2 hours',
    now() - interval '1 hour'
from generate_series(1, 50000) as n;
select count(tests.make_recording('Direct', tests.make_session('Direct', '2 hours'),
    'Uploading')) as active
from generate_series(1, 100) \gset
analyze messenger.call_recordings;
analyze messenger.call_sessions;

create function pg_temp.plan_nodes(p_sql text)
returns setof jsonb
language plpgsql
as $$
declare
    v_plan jsonb;
begin
    execute 'explain (format json) ' || p_sql into v_plan;
    return query select n from jsonb_path_query(v_plan, 'strict $.**') as n
        where jsonb_typeof(n) = 'object' and n ? 'Node Type';
end
$$;

create temp table orphan_plan as
select * from pg_temp.plan_nodes(
    $$select * from recording_finalize_internal.orphans('30 minutes')$$) as n;
select ok(
    exists (select from orphan_plan as n
        where n ->> 'Index Name' = 'ix_recording_active'
            and n ->> 'Node Type' in ('Index Scan', 'Index Only Scan', 'Bitmap Index Scan')),
    'the plan reads ix_recording_active'
);
select is_empty(
    $$select n from orphan_plan as n
    where n ->> 'Node Type' = 'Seq Scan' and n ->> 'Relation Name' = 'call_recordings'$$,
    'and never scans call_recordings sequentially'
);

-- The statement discover_stuck runs (its join and FOR SHARE SKIP LOCKED) plans the same way.
create temp table discover_plan as
select * from pg_temp.plan_nodes(
    $$select o.recording_id from recording_finalize_internal.orphans('30 minutes') as o
    join messenger.call_recordings as r on r.id = o.recording_id
    limit 1000 for share of r skip locked$$) as n;
select is_empty(
    $$select n from discover_plan as n
    where n ->> 'Node Type' = 'Seq Scan' and n ->> 'Relation Name' = 'call_recordings'$$,
    'discover_stuck''s statement never scans call_recordings sequentially either'
);

-- And when it runs: this transaction's scan counters.
create temp table counters_before as
select pg_stat_get_xact_numscans('messenger.call_recordings'::regclass) as seq_scans,
    pg_stat_get_xact_numscans('messenger.ix_recording_active'::regclass) as active_scans;
select recording_finalize.discover_stuck(1000) as opened \gset
select is(:opened, 100, 'discover_stuck opens the 100 stuck recordings');
select is(
    pg_stat_get_xact_numscans('messenger.call_recordings'::regclass)
        - (select seq_scans from counters_before),
    0::bigint,
    'without a sequential scan of call_recordings'
);
select cmp_ok(
    pg_stat_get_xact_numscans('messenger.ix_recording_active'::regclass)
        - (select active_scans from counters_before),
    '>=', 1::bigint,
    'through ix_recording_active'
);

select * from finish();
rollback;
