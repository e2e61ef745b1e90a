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
    -- that opens the row meanwhile wins: it holds the recording (FOR NO KEY UPDATE) before it
    -- inserts, so FOR SHARE SKIP LOCKED passes over a recording whose row is being opened
    -- (without it, the INSERT would wait for that uncommitted row and the lock timeout would
    -- fail the whole batch); one that committed since the snapshot is ON CONFLICT's.
    insert into messenger.recording_finalize_attempts as f (
        recording_id, session_kind, session_id, next_attempt_at, opened_by
    )
    select o.recording_id, o.session_kind, o.session_id,
        o.session_ended_at + v_policy.sla_timeout, 'discovery'
    from recording_finalize_internal.orphans(v_policy.sla_timeout) as o
    join messenger.call_recordings as r on r.id = o.recording_id
    limit p_limit
    for share of r skip locked
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
'Never waits for a lifecycle call that is opening a row: the recording it holds is passed over '
'(FOR SHARE SKIP LOCKED); the lifecycle''s row wins. '
'p_policy: see check_policy. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.discover_stuck(integer, jsonb) from public;
grant execute on function recording_finalize.discover_stuck(integer, jsonb)
to recording_finalize_worker;
