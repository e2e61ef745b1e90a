-- Invariant checks by business state: each with a count and a few example ids.

create or replace function recording_finalize.audit(
    p_polling_interval interval default '60 seconds',
    p_examples integer default 5,
    p_lookback interval default '1 day'
)
returns table (check_name text, reason text, found bigint, examples text[])
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    v_services_own_unjudged boolean;
    v_remembered_from timestamptz;
begin
    if p_polling_interval is null or p_polling_interval <= interval '0'
        or p_examples is null or p_examples not between 0 and 100
        or p_lookback is null or p_lookback <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: audit: p_polling_interval and p_lookback must be '
                '> 0 and p_examples 0..100, got %s, %s, %s', p_polling_interval, p_lookback,
                p_examples);
    end if;

    -- Available within the lookback, no event of our topic, and no Pending row that would
    -- enqueue it. (Older events are the service's retention to remove: not findings.) While
    -- republishing is not trusted (off: the service's outbox is transactional; held, or a
    -- service_events of pending events only: it cannot show what was delivered), a recording the
    -- product never had a finalize row for is the service's to publish: judged are only the
    -- recordings the product worked on. So is one older than what service_events remembers
    -- (an outbox that deletes delivered events after a retention period): its event may have
    -- been sent.
    v_services_own_unjudged := not recording_finalize_internal.republish_trusted();
    v_remembered_from := coalesce(
        recording_finalize_internal.service_events_remembered_from(), '-infinity');
    return query
    with hits as (
        select r.id::text as id from recording_finalize_adapter.recordings as r
        where r.status = 'Available' and r.available_at > now() - p_lookback
            and not recording_finalize_internal.has_event(r.id)
            and not exists (select from messenger.recording_finalize_attempts as f
                where f.recording_id = r.id and f.status = 'Pending')
            and (not v_services_own_unjudged and r.available_at >= v_remembered_from or exists (
                select from messenger.recording_finalize_attempts as f
                where f.recording_id = r.id))
    )
    select 'available_without_event', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- Stuck without a finalize row: the next cycle's discovery opens one for each.
    return query
    select 'orphaned_recordings', null::text, count(*),
        (array_agg(o.recording_id::text order by o.recording_id))[1:p_examples]
    from recording_finalize_internal.orphans(v_policy.sla_timeout) as o;

    -- Stuck with no session to judge it by: not terminal, no finalize row, and a session the
    -- adapter's sessions view does not show (purged by the service's retention, or never
    -- written). Discovery finds a stuck recording through its session's end, so it never finds
    -- this one: nothing moves it and no event is sent until a person looks. Only once it has
    -- been quiet for the SLA: a service may write a session just after its first recording.
    return query
    with hits as (
        select r.id::text as id from recording_finalize_adapter.recordings as r
        where r.status = any('{Pending,Recording,Uploading}'::text[])
            and coalesce(r.ended_at, r.started_at, '-infinity')
                <= now() - v_policy.sla_timeout
            and not exists (select from recording_finalize_adapter.sessions as s
                where s.kind = r.session_kind and s.id = r.session_id)
            and not exists (select from messenger.recording_finalize_attempts as f
                where f.recording_id = r.id)
    )
    select 'recordings_without_session', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- A Done row closes a recording that reached a terminal state; anything else is a lie. A
    -- recording that left the view since (the service soft-deleted or deleted it after it was
    -- finalized) is not the product's to judge any more: not a finding.
    return query
    with hits as (
        select f.recording_id::text as id from messenger.recording_finalize_attempts as f
        inner join recording_finalize_adapter.recordings as r on r.id = f.recording_id
        where f.status = 'Done' and f.updated_at > now() - p_lookback
            and r.status <> all('{Available,Failed}'::text[])
    )
    select 'done_not_terminal', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- The relay publishes within one polling interval.
    return query
    with hits as (
        select o.recording_id::text as id from recording_finalize.outbox as o
        where o.published_at is null
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

comment on function recording_finalize.audit(interval, integer, interval) is
'Read-only invariant checks, each with a count and up to p_examples (0..100) recording ids: '
'available_without_event (Available within p_lookback, no event of the topic, no Pending row to '
'enqueue it; only recordings that have a finalize row while republishing is not trusted '
'(republish_trusted), and of an older time than service_events remembers '
'(service_events_remembered_from)), orphaned_recordings (recording_finalize_internal.orphans: '
'stuck without a finalize row; the next discovery opens one), recordings_without_session (not '
'terminal, no finalize row, quiet for the SLA, and no session in the adapter''s sessions view: '
'discovery never finds them), done_not_terminal (a Done row settled within p_lookback whose '
'recording, still in the adapter''s recordings view, is not terminal), unpublished_overdue '
'(older than p_polling_interval), quarantined (one line per reason). RF001 for bad arguments. '
'Reads the service''s tables: available_without_event scans the recordings of the lookback. The '
'policy: the stored one (recording_finalize.policy). Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.audit(interval, integer, interval) from public;
grant execute on function recording_finalize.audit(interval, integer, interval)
to recording_finalize_operator;
