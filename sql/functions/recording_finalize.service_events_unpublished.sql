-- The service's own events left unpublished past a lag: the service's relay is not publishing.

create or replace function recording_finalize.service_events_unpublished(
    p_lag interval,
    p_scan integer default 1000
)
returns table (
    unpublished bigint,
    oldest_age_seconds double precision
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off
set jit = off
as $$
#variable_conflict use_column
begin
    if p_lag is null or p_lag <= interval '0' then
        raise exception using
            errcode = 'RF001',
            column = 'service_event_lag',
            message = format('invalid_parameter: service_events_unpublished: p_lag must be '
                '> 0, got %s', coalesce(p_lag::text, 'NULL'));
    end if;
    if p_scan is null or p_scan not between 1 and 100000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: service_events_unpublished: p_scan must be '
                '1..100000, got %s', coalesce(p_scan::text, 'NULL'));
    end if;
    -- Read from the recordings' side, never by a scan of service_events: the port's table is
    -- the service's outbox, which may hold every event ever published (with no index on its
    -- unpublished rows), and the reference view joins it to the recordings by a cast no index
    -- serves in that direction. The newest p_scan recordings that became Available more than
    -- the lag ago (the index on available_at that republish discovery reads, backwards), each
    -- with one lookup of its events by recording_id (the lookup has_event makes): the cost is
    -- p_scan lookups, whatever the size of either table. The service enqueues a recording's
    -- event when it becomes Available, so an event unpublished past the lag belongs to one of
    -- them while the service keeps finalizing recordings.
    return query
    with recent as (
        select r.id
        from recording_finalize_adapter.recordings as r
        where r.status = 'Available' and r.available_at <= now() - p_lag
        order by r.available_at desc, r.id desc
        limit p_scan
    )
    select
        count(*),
        coalesce(extract(epoch from now() - min(e.enqueued_at))::double precision, 0)
    from recent as s
    inner join recording_finalize_adapter.service_events as e on e.recording_id = s.id
    where e.published_at is null and e.enqueued_at <= now() - p_lag;
end
$$;

comment on function recording_finalize.service_events_unpublished(interval, integer) is
'The service''s own call-recording-available events (the adapter''s service_events) that are '
'still unpublished (published_at NULL) more than p_lag (> 0, RF001) after they were enqueued, '
'among the events of the newest p_scan (1..100000, RF001) recordings that became Available '
'more than p_lag ago: their count (the gauge recording_finalize_service_events_unpublished, '
'at most one per event of those recordings) and the age in seconds of the oldest (0 when '
'none). Such events wait for the service''s own relay, which the product never replaces: a '
'count above 0 that stays says that relay is not publishing. One statement: p_scan rows of '
'the index on available_at beneath the recordings view and one lookup by recording_id each, '
'never a scan of the service''s outbox. Read-only. Worker and operator API (SECURITY '
'DEFINER).';

revoke all on function recording_finalize.service_events_unpublished(interval, integer)
from public;
grant execute on function recording_finalize.service_events_unpublished(interval, integer)
to recording_finalize_worker, recording_finalize_operator;
