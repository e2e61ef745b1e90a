-- Dry run of claim_due: what the next cycle would do with every row due now; writes nothing.

create or replace function recording_finalize.claim_preview(
    p_limit integer default 1000,
    p_max_attempts integer default 8,
    p_sla_timeout interval default '30 minutes',
    p_topic text default 'pin.messenger.call-recording-available.v1'
)
returns table (
    recording_id uuid,
    session_kind text,
    session_id uuid,
    action text,
    attempts integer,
    next_attempt_at timestamptz,
    detail text
)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('claim_preview: p_limit must be 1..10000, got %s', p_limit);
    end if;
    if p_max_attempts is null or p_max_attempts < 1 then
        raise exception using
            errcode = 'RF001',
            message = format('claim_preview: p_max_attempts must be > 0, got %s', p_max_attempts);
    end if;
    if p_sla_timeout is null or p_sla_timeout <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('claim_preview: p_sla_timeout must be > 0, got %s', p_sla_timeout);
    end if;
    return query
    select f.recording_id, f.session_kind::text, f.session_id, p.action, p.attempts,
        f.next_attempt_at, p.detail
    from messenger.recording_finalize_attempts as f
    cross join lateral recording_finalize.predict_action(
        f.recording_id, p_max_attempts, p_sla_timeout, p_topic
    ) as p
    where f.status = 'Pending' and f.next_attempt_at <= now()
    order by f.next_attempt_at, f.recording_id
    limit p_limit;
end
$$;

comment on function recording_finalize.claim_preview(integer, integer, interval, text) is
'Dry run beside claim_due: the Pending rows due now (up to p_limit, 1..10000), in claim order, '
'each with the action claim_due would take (reconcile, republished, closed, deferred, '
'quarantined), the attempts it would leave and its detail - the same rules as claim_due, by '
'predict_action. STABLE: takes no row lock, counts no attempt, writes nothing. RF001 for '
'out-of-range arguments. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.claim_preview(integer, integer, interval, text)
from public;
grant execute on function recording_finalize.claim_preview(integer, integer, interval, text)
to recording_finalize_worker, recording_finalize_operator;
