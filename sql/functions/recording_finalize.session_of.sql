-- The one lookup of a recording's session, whichever table its kind lives in.

create or replace function recording_finalize.session_of(
    p_session_kind text,
    p_session_id uuid,
    p_for_share boolean default false
)
returns messenger.call_sessions
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_session messenger.call_sessions%rowtype;
begin
    if p_session_kind = 'Direct' then
        if p_for_share then
            select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at
            into v_session
            from messenger.call_sessions as s where s.id = p_session_id
            for share;
        else
            select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at
            into v_session
            from messenger.call_sessions as s where s.id = p_session_id;
        end if;
    elsif p_session_kind = 'Conference' then
        if p_for_share then
            select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at
            into v_session
            from messenger.conference_sessions as s where s.id = p_session_id
            for share;
        else
            select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at
            into v_session
            from messenger.conference_sessions as s where s.id = p_session_id;
        end if;
    else
        raise exception using
            errcode = 'RF001',
            message = format(
                'session kind must be Direct or Conference, got %s',
                coalesce(p_session_kind, 'NULL')
            );
    end if;
    return v_session;
end
$$;

comment on function recording_finalize.session_of(text, uuid, boolean) is
'Internal. The session a recording belongs to: Direct -> messenger.call_sessions, Conference -> '
'messenger.conference_sessions, returned as a call_sessions row (both tables have these '
'columns); every field NULL when there is no such session. p_for_share locks the row FOR '
'SHARE (recording_started: a concurrent session_ended, whose UPDATE conflicts with it, then '
'waits for the start to commit and sees the recording; FOR KEY SHARE would not conflict). '
'Lock order everywhere: session, recording, finalize row. RF001 for another kind. Volatile '
'(it may lock).';

revoke all on function recording_finalize.session_of(text, uuid, boolean) from public;
