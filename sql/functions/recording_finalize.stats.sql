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
    -- Each figure reads an index prefix (Pending, Quarantined, unpublished): finished rows cost
    -- nothing however many there are.
    select
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Pending'),
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Pending' and f.next_attempt_at <= now()),
        coalesce(
            (select extract(epoch from now() - min(f.created_at))::double precision
                from messenger.recording_finalize_attempts as f where f.status = 'Pending'),
            0
        ),
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Quarantined'),
        (select count(*) from messenger.integration_outbox as o
            where o.topic = recording_finalize.our_topic(p_topic) and o.published_at is null),
        coalesce(
            (select extract(epoch from now() - min(o.created_at))::double precision
                from messenger.integration_outbox as o
                where o.topic = recording_finalize.our_topic(p_topic)
                    and o.published_at is null),
            0
        )
$$;

comment on function recording_finalize.stats(text) is
'Operational gauges: backlog = Pending finalize rows, due = those due now, oldest_age_seconds = '
'now() - min(created_at) of Pending rows (0 when none; the SLO-lag base), quarantined = '
'Quarantined rows, publish_backlog = unpublished integration-outbox rows of the server''s topic '
'and the age of the oldest. p_topic NULL means the server''s topic; another topic raises RF009. '
'Read-only. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.stats(text) from public;
grant execute on function recording_finalize.stats(text)
to recording_finalize_worker, recording_finalize_operator;
