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
    from recording_finalize_adapter.sessions as s
    where s.kind = p_session_kind and s.id = p_session_id
$$;

comment on function recording_finalize_internal.session_row(text, uuid) is
'Internal. The session of kind p_session_kind (Direct / Conference) and id p_session_id as '
'recording_finalize_adapter.sessions shows it, as recording_finalize_internal.session; no row '
'when there is none. Inlined into the caller''s statement. Read-only.';

revoke all on function recording_finalize_internal.session_row(text, uuid) from public;
