-- The claim's state machine, stated once: what becomes of a due finalize row.

-- The signatures before this one (before its effects were returned; before p_republish):
-- dropped in the transaction that creates this one, so a caller never finds neither (a call
-- with their arguments resolves to this one).
drop function if exists recording_finalize_internal.claim_decision(
    text, boolean, boolean, timestamptz, integer, text, integer, interval, timestamptz
);
drop function if exists recording_finalize_internal.claim_decision(
    text, boolean, boolean, timestamptz, integer, text, integer, interval, timestamptz, text,
    text, uuid
);

create or replace function recording_finalize_internal.claim_decision(
    p_recording_status text,
    p_event_enqueued boolean,
    p_session_found boolean,
    p_session_ended_at timestamptz,
    p_attempts integer,
    p_last_outcome text,
    p_max_attempts integer,
    p_sla_timeout interval,
    p_now timestamptz,
    -- What the quarantine's last_error is written from: the row's last error, the recording's
    -- session.
    p_last_error text default null,
    p_session_kind text default null,
    p_session_id uuid default null,
    -- recording_finalize_internal.republish_trusted(): false, and an Available recording
    -- without an event the product can see is the service's to publish.
    p_republish boolean default true
)
returns table (
    action text,
    detail text,
    quarantine_reason text,
    counts_attempt boolean,
    -- The row as the claim leaves it.
    finalize_status text,
    attempts integer,
    next_attempt_at timestamptz,
    last_error text
)
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
        d.action in ('reconcile', 'republished', 'closed'),
        case d.action
            when 'reconcile' then 'Pending'
            when 'deferred_by_sla' then 'Pending'
            when 'quarantined' then 'Quarantined'
            else 'Done'
        end,
        p_attempts + case when d.action in ('reconcile', 'republished', 'closed') then 1 else 0 end,
        -- Deferred: due when the SLA has passed. A row handed out is due again after the
        -- backoff, which the claim draws with its jitter as it hands the row out; the others
        -- are not due again.
        case when d.action = 'deferred_by_sla'
            then coalesce(p_session_ended_at, p_now) + p_sla_timeout end,
        case when d.action = 'quarantined' then pg_catalog.left(case d.detail
            when 'MaxAttemptsExceeded' then pg_catalog.format(
                'MaxAttemptsExceeded: %s attempts; last error: %s',
                p_attempts, coalesce(p_last_error, 'none recorded'))
            when 'SessionNotFound' then pg_catalog.format('SessionNotFound: no %s session %s',
                p_session_kind, p_session_id)
            else 'RecordingNotFound: recording_finalize_adapter.recordings shows no such '
                'recording'
        end, 512) end
    from (
        select case
            -- A finalize row whose recording is gone cannot be worked on: a human looks.
            when p_recording_status is null then 'quarantined'
            -- Terminal: a Failed recording has no event; an Available one needs its event
            -- once (the republish phase, settled in the claim: no round trip to the driver).
            when p_recording_status = 'Failed' then 'closed'
            when p_recording_status = 'Available' and p_event_enqueued then 'closed'
            -- Republishing off or held: its event is the service's, which may have sent it
            -- (an outbox that deletes what it delivered shows nothing of it).
            when p_recording_status = 'Available' and not p_republish then 'closed'
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
            when p_recording_status = 'Available' and not p_event_enqueued
                and not p_republish then 'RepublishOff'
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
    text, boolean, boolean, timestamptz, integer, text, integer, interval, timestamptz, text, text,
    uuid, boolean
) is
'Internal, pure. The claim''s decision for one due finalize row, in the words claim_due returns; '
'claim_due carries it out, claim_preview, preview_outcomes and explain report it: quarantined '
'(recording or session not found, or attempts >= max attempts), closed (recording Failed, or '
'Available with its event, or Available without one while p_republish is false: detail '
'RepublishOff, its event is the service''s), republished (Available without its event: the '
'claim enqueues it), '
'deferred_by_sla (the session has not ended, or ended less than the SLA ago) or reconcile '
'(check the file storage). detail names the cause: RecordingNotFound, SessionNotFound, '
'MaxAttemptsExceeded, SessionNotEnded, WithinSla, or the recording''s status; quarantine_reason '
'the code a quarantined row gets (crash_loop: exhausted while p_last_outcome is NULL, i.e. no '
'verdict was recorded since the row was opened or rescheduled); counts_attempt whether the '
'claim counts an attempt (reconcile, republished, closed). And its effects, which the claim '
'carries out and the previews report: finalize_status (Pending for reconcile and '
'deferred_by_sla, Quarantined, else Done), attempts (p_attempts, plus the one counted), '
'next_attempt_at (deferred_by_sla: the session''s end, or p_now, + the SLA; reconcile: NULL, '
'the claim''s backoff with its jitter is drawn as the row is handed out; otherwise NULL) and '
'last_error (a quarantine''s, from p_last_error and the session p_session_kind / p_session_id; '
'otherwise NULL: unchanged).';

revoke all on function recording_finalize_internal.claim_decision(
    text, boolean, boolean, timestamptz, integer, text, integer, interval, timestamptz, text, text,
    uuid, boolean
) from public;
