-- Dry run of claim_due: what the next claim would do with each row due now; writes nothing.

create or replace function recording_finalize.claim_preview(
    p_limit integer default 1000
)
returns table (
    recording_id uuid,
    session_kind text,
    session_id uuid,
    action text,
    attempts integer,
    next_attempt_at timestamptz,
    detail text,
    quarantine_reason text
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
-- The same plan constraints as claim_due: the due rows in ix_rfa_due order, whatever the stats.
set enable_seqscan = off
set enable_bitmapscan = off
set enable_sort = off
as $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    -- Asked once: may an Available recording without an event we can see get one from us?
    v_republish boolean := recording_finalize_internal.republish_trusted();
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: claim_preview: p_limit must be 1..10000, got %s',
                p_limit);
    end if;
    -- The inputs claim_due gives claim_decision, read without a lock: the recording's status,
    -- whether its event exists, its session. A row whose recording a writer holds right now is
    -- reported here; the real claim would pass it over until the writer is done.
    return query
    select f.recording_id, f.session_kind::text, f.session_id, d.action, d.attempts,
        f.next_attempt_at, d.detail,
        d.quarantine_reason
    from (
        select x.* from messenger.recording_finalize_attempts as x
        where x.status = 'Pending' and x.next_attempt_at <= now()
        order by x.next_attempt_at
        limit p_limit
    ) as f
    left join lateral recording_finalize_internal.recording_row(f.recording_id) as r on true
    left join lateral recording_finalize_internal.session_row(r.session_kind, r.session_id) as s
        on true
    -- As claim_due asks it: only of an Available recording without an event, once per row, the
    -- service's outbox read once per call at most.
    left join lateral (
        select coalesce(r.available_at
            >= (select recording_finalize_internal.service_events_remembered_from()), true)
            as remembered
        where r.status = 'Available' and not recording_finalize_internal.has_event(r.id)
            and v_republish
        offset 0
    ) as memory on true
    cross join lateral recording_finalize_internal.claim_decision(
        r.status,
        r.status = 'Available' and recording_finalize_internal.has_event(r.id),
        s.id is not null,
        s.ended_at,
        f.attempts,
        f.last_outcome,
        v_policy.max_attempts,
        v_policy.sla_timeout,
        now(),
        p_republish => v_republish and memory.remembered is not false
    ) as d
    order by f.next_attempt_at;
end
$$;

comment on function recording_finalize.claim_preview(integer) is
'Dry run beside claim_due: the Pending rows due now (up to p_limit, 1..10000) in claim order, '
'each with the action claim_due would take, decided by the same '
'recording_finalize_internal.claim_decision (reconcile, republished, closed, deferred_by_sla, '
'quarantined), the attempts it would leave, its detail and quarantine reason. STABLE: no row '
'lock, no attempt counted, nothing written. The policy: the stored one. Operator API (SECURITY '
'DEFINER).';

revoke all on function recording_finalize.claim_preview(integer) from public;
grant execute on function recording_finalize.claim_preview(integer)
to recording_finalize_operator;
