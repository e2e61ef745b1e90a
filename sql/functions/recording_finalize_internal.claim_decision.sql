-- The claim's state machine, stated once: what becomes of a due finalize row.

create or replace function recording_finalize_internal.claim_decision(
    p_recording_status text,
    p_event_enqueued boolean,
    p_session_found boolean,
    p_session_ended_at timestamptz,
    p_attempts integer,
    p_last_outcome text,
    p_max_attempts integer,
    p_sla_timeout interval,
    p_now timestamptz
)
returns table (action text, detail text, quarantine_reason text, counts_attempt boolean)
language sql
immutable
-- No SET clause: a SQL function without one is inlined into the caller's statement (one plan,
-- no call of its own). It is granted to nobody and only reached from functions that pin
-- search_path; every name in it is qualified or a built-in.
as $$
    select d.action, d.detail,
        case when d.action = 'quarantined' then case d.detail
            when 'RecordingNotFound' then 'recording_not_found'
            when 'SessionNotFound' then 'session_not_found'
            -- Exhausted while no verdict was ever recorded: every claim went unanswered.
            when 'MaxAttemptsExceeded' then case when p_last_outcome is null
                then 'crash_loop' else 'max_attempts' end
        end end,
        -- A claim that hands the row out or settles it counts an attempt; re-timing and
        -- quarantine do not.
        d.action in ('reconcile', 'republished', 'closed')
    from (
        select case
            -- A finalize row whose recording is gone cannot be worked on: a human looks.
            when p_recording_status is null then 'quarantined'
            -- Terminal: a Failed recording has no event; an Available one needs its event
            -- once (the republish phase, settled in the claim: no round trip to the driver).
            when p_recording_status = 'Failed' then 'closed'
            when p_recording_status = 'Available' and p_event_enqueued then 'closed'
            when p_recording_status = 'Available' then 'republished'
            when not p_session_found then 'quarantined'
            -- Not ours yet: the happy path still has its SLA. No attempt is counted.
            when p_session_ended_at is null or p_session_ended_at + p_sla_timeout > p_now
                then 'deferred_by_sla'
            -- Attempts are counted at claim (pre-increment), so a row that crashed the worker
            -- on every claim arrives here exhausted and is quarantined, not handed out again.
            when p_attempts >= p_max_attempts then 'quarantined'
            else 'reconcile'
        end as action,
        case
            when p_recording_status is null then 'RecordingNotFound'
            when p_recording_status in ('Failed', 'Available') then p_recording_status
            when not p_session_found then 'SessionNotFound'
            when p_session_ended_at is null then 'SessionNotEnded'
            when p_session_ended_at + p_sla_timeout > p_now then 'WithinSla'
            when p_attempts >= p_max_attempts then 'MaxAttemptsExceeded'
            else p_recording_status
        end as detail
    ) as d
$$;

comment on function recording_finalize_internal.claim_decision(
    text, boolean, boolean, timestamptz, integer, text, integer, interval, timestamptz
) is
'Internal, pure. The claim''s decision for one due finalize row, in the words claim_due returns; '
'claim_due carries it out, claim_preview, preview_outcomes and explain report it: quarantined '
'(recording or session not found, or attempts >= max attempts), closed (recording Failed, or '
'Available with its event), republished (Available without its event: the claim enqueues it), '
'deferred_by_sla (the session has not ended, or ended less than the SLA ago) or reconcile '
'(check the file storage). detail names the cause: RecordingNotFound, SessionNotFound, '
'MaxAttemptsExceeded, SessionNotEnded, WithinSla, or the recording''s status; quarantine_reason '
'the code a quarantined row gets (crash_loop: exhausted while p_last_outcome is NULL, i.e. no '
'verdict was recorded since the row was opened or rescheduled); counts_attempt whether the '
'claim counts an attempt (reconcile, republished, closed).';

revoke all on function recording_finalize_internal.claim_decision(
    text, boolean, boolean, timestamptz, integer, text, integer, interval, timestamptz
) from public;
