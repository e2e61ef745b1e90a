-- The gauges of the safety net in one read: backlog, age, quarantine and publish backlog.

create or replace function recording_finalize.stats(
    p_topic text default null
)
returns table (
    backlog bigint,
    due bigint,
    oldest_age_seconds double precision,
    quarantined bigint,
    publish_backlog bigint,
    oldest_unpublished_age_seconds double precision
)
language sql
stable
security definer
set search_path = ''
as $$
    -- RF009 for another topic, even when no row would be read.
    select recording_finalize.our_topic(p_topic);
    -- Cost (migration 0005): each count is an index-only scan of the rows it counts (Pending,
    -- due, Quarantined, unpublished) - finished rows cost nothing however many there are - and
    -- each age reads one index entry, the oldest, whatever the backlog.
    select
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
        (select count(*) from messenger.integration_outbox as o
            where o.topic = recording_finalize.our_topic(p_topic) and o.published_at is null),
        coalesce(
            (select extract(epoch from now() - o.created_at)::double precision
                from messenger.integration_outbox as o
                where o.topic = recording_finalize.our_topic(p_topic) and o.published_at is null
                order by o.created_at limit 1),
            0
        )
$$;

comment on function recording_finalize.stats(text) is
'Operational gauges: backlog = Pending finalize rows, due = those due now, oldest_age_seconds = '
'now() - min(created_at) of Pending rows (0 when none; the SLO-lag base), quarantined = '
'Quarantined rows, publish_backlog = unpublished integration-outbox rows of the server''s topic '
'and the age of the oldest. p_topic NULL means the server''s topic; another topic raises RF009. '
'Read-only. Cost: the two ages read one entry each of the partial indexes '
'recording_finalize_attempts_pending_created_idx and integration_outbox_unpublished_created_idx '
'(constant); the four counts are index-only scans of the counted entries only (ix_rfa_due, '
'the same partial indexes), so they grow with the backlog itself - about one index page per '
'few hundred rows - and visit the heap only for pages not yet marked all-visible by vacuum. '
'Finished rows cost nothing. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.stats(text) from public;
grant execute on function recording_finalize.stats(text)
to recording_finalize_worker, recording_finalize_operator;
