-- Invariant checks by business state: each with a count and a few example ids.

create or replace function recording_finalize.audit(
    p_sla_timeout interval default '30 minutes',
    p_polling_interval interval default '60 seconds',
    p_examples integer default 5,
    p_topic text default 'pin.messenger.call-recording-available.v1'
)
returns table (check_name text, reason text, found bigint, examples text[])
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    if p_sla_timeout is null or p_sla_timeout <= interval '0'
        or p_polling_interval is null or p_polling_interval <= interval '0'
        or p_examples is null or p_examples not between 0 and 100 then
        raise exception using
            errcode = 'RF001',
            message = format('audit: p_sla_timeout and p_polling_interval must be > 0 and '
                'p_examples 0..100, got %s, %s, %s', p_sla_timeout, p_polling_interval,
                p_examples);
    end if;

    -- Available, no event (not even a pruned one), and nothing that would enqueue it.
    return query
    with hits as (
        select r.id::text as id from messenger.call_recordings as r
        where r.status = 'Available'
            and not exists (select from messenger.integration_outbox as o
                where o.topic = p_topic and o.dedupe_key = r.id::text)
            and not exists (select from messenger.integration_outbox_pruned as m
                where m.topic = p_topic and m.dedupe_key = r.id::text)
            and not exists (select from messenger.recording_finalize_attempts as f
                where f.recording_id = r.id and f.status = 'Pending')
    )
    select 'available_without_event', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- Non-terminal, session ended past the SLA, no finalize row: the worker cannot see them.
    return query
    with hits as (
        select r.id::text as id from messenger.call_recordings as r
        left join messenger.call_sessions as c
            on r.session_kind = 'Direct' and c.id = r.session_id
        left join messenger.conference_sessions as k
            on r.session_kind = 'Conference' and k.id = r.session_id
        where r.status in ('Pending', 'Recording', 'Uploading')
            and coalesce(c.ended_at, k.ended_at) + p_sla_timeout <= now()
            and not exists (select from messenger.recording_finalize_attempts as f
                where f.recording_id = r.id)
    )
    select 'orphaned_recordings', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- A Done row closes a recording that reached a terminal state; anything else is a lie.
    return query
    with hits as (
        select f.recording_id::text as id from messenger.recording_finalize_attempts as f
        left join messenger.call_recordings as r on r.id = f.recording_id
        where f.status = 'Done' and r.status is distinct from 'Available'
            and r.status is distinct from 'Failed'
    )
    select 'done_not_terminal', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- The relay publishes within one polling interval.
    return query
    with hits as (
        select o.dedupe_key as id from messenger.integration_outbox as o
        where o.topic = p_topic and o.published_at is null
            and o.created_at < now() - p_polling_interval
    )
    select 'unpublished_overdue', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- Quarantined rows wait for a human: one line per reason, or one line with 0.
    return query
    select 'quarantined', q.reason, q.found, q.examples
    from (
        select f.quarantine_reason::text as reason, count(*) as found,
            (array_agg(f.recording_id::text order by f.recording_id))[1:p_examples] as examples
        from messenger.recording_finalize_attempts as f
        where f.status = 'Quarantined'
        group by f.quarantine_reason
    ) as q
    union all
    select 'quarantined', null, 0, array[]::text[]
    where not exists (
        select from messenger.recording_finalize_attempts as f where f.status = 'Quarantined'
    )
    order by 2 nulls first;
end
$$;

comment on function recording_finalize.audit(interval, interval, integer, text) is
'Read-only invariant audit; one row per check with the number of findings and up to '
'p_examples (0..100) recording ids: available_without_event (Available, no event enqueued or '
'pruned, no Pending finalize row), orphaned_recordings (non-terminal, session ended more than '
'p_sla_timeout ago, no finalize row), done_not_terminal (Done row, recording not Available/'
'Failed or missing), unpublished_overdue (unpublished outbox rows of p_topic older than '
'p_polling_interval), quarantined (one row per quarantine_reason). Scans the recordings: an '
'operator''s command, not a hot path. RF001 for bad arguments. Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.audit(interval, interval, integer, text) from public;
grant execute on function recording_finalize.audit(interval, interval, integer, text)
to recording_finalize_operator;
