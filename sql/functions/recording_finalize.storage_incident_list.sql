-- Lists the open and recently ended file-storage incidents, for status and the gauges.

create or replace function recording_finalize.storage_incident_list(
    p_recent interval default '7 days',
    p_limit integer default 100
)
returns table (
    id bigint,
    source text,
    started_at timestamptz,
    ended_at timestamptz,
    is_open boolean,
    duration_seconds double precision,
    reason text,
    opened_by text,
    closed_by text
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('storage_incident_list: p_limit must be in 1..10000, got %s',
                coalesce(p_limit::text, 'NULL'));
    end if;
    if p_recent is null or p_recent < interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('storage_incident_list: p_recent must be >= 0, got %s',
                coalesce(p_recent::text, 'NULL'));
    end if;
    return query
    select i.id, i.source::text, i.started_at, i.ended_at, i.ended_at is null,
        extract(epoch from coalesce(i.ended_at, now()) - i.started_at)::double precision,
        i.reason::text, i.opened_by, i.closed_by
    from recording_finalize.storage_incidents as i
    where i.ended_at is null or i.ended_at >= now() - p_recent
    order by i.ended_at is null desc, coalesce(i.ended_at, i.started_at) desc, i.id desc
    limit p_limit;
end
$$;

comment on function recording_finalize.storage_incident_list(interval, integer) is
'The open file-storage incidents (first) and those that ended within p_recent (default 7 days), '
'newest first, at most p_limit (1..10000); duration_seconds runs to now() for an open one. '
'RF001 for a bad p_limit or a negative p_recent. Read-only. Worker and operators.';

revoke all on function recording_finalize.storage_incident_list(interval, integer) from public;
grant execute on function recording_finalize.storage_incident_list(interval, integer)
to recording_finalize_worker, recording_finalize_operator;
