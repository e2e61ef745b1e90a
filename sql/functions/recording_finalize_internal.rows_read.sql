-- How many rows a query reads to return what it returns, from its executed plan: the measure
-- the install check judges an index by (a bitmap scan of every Available recording uses an
-- index and still reads the whole history).

create or replace function recording_finalize_internal.rows_read(p_query text)
returns table (rows_read bigint, rows_returned bigint, whole_scans text[])
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
    v_plan jsonb;
begin
    -- The query runs (EXPLAIN ANALYZE): the caller gives only read-only queries, bounded by its
    -- statement_timeout.
    execute 'explain (analyze, verbose, costs off, timing off, format json) ' || p_query
        into v_plan;
    return query
    with nodes as (
        select n as node
        from jsonb_path_query(v_plan, 'strict $.**') as n
        where jsonb_typeof(n) = 'object' and n ? 'Node Type'
    )
    select
        -- Rows a scan fetched: those it passed on plus those its filter or recheck dropped,
        -- once per loop. A bitmap index scan only feeds its heap scan, counted there.
        coalesce(sum((
            coalesce((x.node ->> 'Actual Rows')::numeric, 0)
            + coalesce((x.node ->> 'Rows Removed by Filter')::numeric, 0)
            + coalesce((x.node ->> 'Rows Removed by Index Recheck')::numeric, 0)
        ) * coalesce((x.node ->> 'Actual Loops')::numeric, 1)) filter (
            where x.node ->> 'Node Type' in (
                'Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan')
        ), 0)::bigint,
        coalesce((v_plan -> 0 -> 'Plan' ->> 'Actual Rows')::bigint, 0),
        -- The product's own tables (its one-row settings) are no finding.
        coalesce(array_agg(distinct x.node ->> 'Relation Name') filter (
            where x.node ->> 'Node Type' = 'Seq Scan'
                and x.node ->> 'Schema' not like 'recording\_finalize%'), '{}')
    from nodes as x;
end
$$;

comment on function recording_finalize_internal.rows_read(text) is
'Internal. Runs EXPLAIN ANALYZE of p_query (which it executes: read-only queries only) and '
'returns the rows its scans read (returned plus removed by filter or recheck, per loop), the '
'rows the query returned, and the tables outside the product''s schemas it read with a '
'sequential scan. check_adapter judges '
'the discovery scans and the service_events lookup by it.';

revoke all on function recording_finalize_internal.rows_read(text) from public;
