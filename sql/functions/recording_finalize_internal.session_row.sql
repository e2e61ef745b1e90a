-- The one read of a recording's session, whichever table its kind lives in.

create or replace function recording_finalize_internal.session_row(
    p_session_kind text,
    p_session_id uuid
)
returns setof recording_finalize_internal.session
language sql
stable
-- No SET clause, so that it is inlined where it is called (see claim_decision).
as $$
    select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at
    from messenger.call_sessions as s
    where p_session_kind = 'Direct' and s.id = p_session_id
    union all
    select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at
    from messenger.conference_sessions as s
    where p_session_kind = 'Conference' and s.id = p_session_id
$$;

comment on function recording_finalize_internal.session_row(text, uuid) is
'Internal. The session a recording belongs to, as recording_finalize_internal.session: Direct -> '
'messenger.call_sessions, Conference -> messenger.conference_sessions; no row when there is no '
'such session (or the kind is neither). Inlined into the caller''s statement. Read-only: '
'session_of, which reads through it, takes the FOR SHARE lock recording_started needs first.';

revoke all on function recording_finalize_internal.session_row(text, uuid) from public;
