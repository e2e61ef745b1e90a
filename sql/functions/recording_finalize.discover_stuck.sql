-- Opens finalize rows for stuck recordings the service never opened one for: it needs no change.

create or replace function recording_finalize.discover_stuck(
    p_limit integer default 1000,
    p_policy jsonb default '{}'
)
returns integer
language plpgsql
volatile
security definer
set search_path = ''
set lock_timeout = '100ms'
as $$
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
    v_opened integer;
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: discover_stuck: p_limit must be 1..10000, got %s',
                p_limit);
    end if;
    -- Due at session end + SLA, which has passed: the next claim takes them. A lifecycle call
    -- that opens the row meanwhile wins (ON CONFLICT): it is then not ours to open.
    insert into messenger.recording_finalize_attempts as f (
        recording_id, session_kind, session_id, next_attempt_at, opened_by
    )
    select o.recording_id, o.session_kind, o.session_id,
        o.session_ended_at + v_policy.sla_timeout, 'discovery'
    from recording_finalize_internal.orphans(v_policy.sla_timeout) as o
    limit p_limit
    on conflict (recording_id) do nothing;
    get diagnostics v_opened = row_count;
    return v_opened;
end
$$;

comment on function recording_finalize.discover_stuck(integer, jsonb) is
'Once per cycle: opens a finalize row (Pending, due at session end + SLA, opened_by discovery) '
'for up to p_limit (1..10000) recordings in Pending/Recording/Uploading whose session ended '
'more than the policy''s SLA ago and that have none (recording_finalize_internal.orphans), so '
'the worker rescues an unmodified service. Returns how many it opened. Reads only the active '
'recordings (ix_recording_active), never the history; writes only the product''s table. '
'p_policy: see check_policy. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.discover_stuck(integer, jsonb) from public;
grant execute on function recording_finalize.discover_stuck(integer, jsonb)
to recording_finalize_worker;
