-- The gauges of the safety net in one read: backlog, age, quarantine and publish backlog.

create or replace function recording_finalize.stats(p_topic text default null)
returns table (
    backlog bigint,
    due bigint,
    oldest_age_seconds double precision,
    quarantined bigint,
    publish_backlog bigint,
    oldest_unpublished_age_seconds double precision
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_unpublished bigint;
    v_oldest_id bigint;
begin
    -- A caller's topic other than the server's is RF009.
    perform recording_finalize_internal.topic(p_topic);
    -- The unpublished events counted and the lowest id found in one pass. Not an ORDER BY id
    -- LIMIT 1 of its own: the planner takes the primary key for it (it expects an unpublished
    -- row every few ids) and walks every published row before the first unpublished one, even
    -- with the recommended partial index, which this pass reads index-only.
    select count(*), min(o.id) into v_unpublished, v_oldest_id
    from recording_finalize.outbox as o
    where o.published_at is null;
    -- Each count of the product's table is an index-only scan of the rows it counts (partial
    -- indexes of the baseline): finished rows cost nothing, however many there are. The
    -- publish backlog (above) is the product's own outbox, read through its partial index on
    -- unpublished rows.
    return query select
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Pending'),
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Pending' and f.next_attempt_at <= now()),
        coalesce(
            (select extract(epoch from now() - f.created_at)::double precision
                from messenger.recording_finalize_attempts as f where f.status = 'Pending'
                order by f.created_at limit 1),
            0
        ),
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Quarantined'),
        v_unpublished,
        -- The lowest id stands for the oldest: ids are handed out in insertion order.
        coalesce(
            (select extract(epoch from now() - o.created_at)::double precision
                from recording_finalize.outbox as o
                where o.id = v_oldest_id),
            0
        );
end
$$;

comment on function recording_finalize.stats(text) is
'The gauges: backlog (Pending finalize rows), due (of those, next_attempt_at <= now()), age of '
'the oldest Pending row in seconds (0 when none), Quarantined rows, publish backlog '
'(unpublished events of the product''s own outbox) and the age of the oldest (lowest id) of '
'them, found in one pass over its partial index on unpublished rows. Reads no service table. '
'p_topic NULL is the server''s topic; any other raises RF009. Read-only. Worker and operator '
'API (SECURITY DEFINER).';

revoke all on function recording_finalize.stats(text) from public;
grant execute on function recording_finalize.stats(text)
to recording_finalize_worker, recording_finalize_operator;
