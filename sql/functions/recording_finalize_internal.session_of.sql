-- The one lookup of a recording's session, whichever table its kind lives in.

create or replace function recording_finalize_internal.session_of(
    p_session_kind text,
    p_session_id uuid,
    p_for_share boolean default false
)
returns recording_finalize_internal.session
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_session recording_finalize_internal.session;
begin
    if p_session_kind = 'Direct' and p_for_share then
        select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at into v_session
        from messenger.call_sessions as s where s.id = p_session_id
        for share;
    elsif p_session_kind = 'Direct' then
        select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at into v_session
        from messenger.call_sessions as s where s.id = p_session_id;
    elsif p_session_kind = 'Conference' and p_for_share then
        select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at into v_session
        from messenger.conference_sessions as s where s.id = p_session_id
        for share;
    elsif p_session_kind = 'Conference' then
        select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at into v_session
        from messenger.conference_sessions as s where s.id = p_session_id;
    else
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: session kind must be Direct or Conference, got %s',
                coalesce(p_session_kind, 'NULL'));
    end if;
    return v_session;
end
$$;

comment on function recording_finalize_internal.session_of(text, uuid, boolean) is
'Internal. The session a recording belongs to: Direct -> messenger.call_sessions, Conference -> '
'messenger.conference_sessions (every field NULL when there is no such session). p_for_share '
'locks it FOR SHARE (recording_started: a concurrent session_ended, whose UPDATE conflicts with '
'it, then waits for the start to commit and sees the recording). Lock order everywhere: '
'session, recording, finalize row. RF001 for another kind. Volatile (it may lock).';

revoke all on function recording_finalize_internal.session_of(text, uuid, boolean) from public;
