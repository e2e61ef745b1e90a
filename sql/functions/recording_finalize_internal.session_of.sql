-- The one lookup of a recording's session, whichever table its kind lives in.

create or replace function recording_finalize_internal.session_of(
    p_session_kind text,
    p_session_id uuid,
    p_for_share boolean default false
)
returns recording_finalize_internal.session
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
    v_session recording_finalize_internal.session;
begin
    if p_session_kind is null or p_session_kind not in ('Direct', 'Conference') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: session kind must be Direct or Conference, got %s',
                coalesce(p_session_kind, 'NULL'));
    end if;
    -- The lock first, in a statement of its own, then the read (recording_finalize_internal.
    -- session_row, the one read of a session) sees the row as it is once locked.
    if p_for_share then
        perform recording_finalize_adapter.hold_session(p_session_kind, p_session_id);
    end if;
    select x.* into v_session
    from recording_finalize_internal.session_row(p_session_kind, p_session_id) as x;
    return v_session;
end
$$;

comment on function recording_finalize_internal.session_of(text, uuid, boolean) is
'Internal. The session a recording belongs to, as the adapter''s sessions view shows it (every '
'field NULL when there is no such session). p_for_share (the adapter''s optional hold_session) '
'locks it FOR SHARE (recording_started: a concurrent session_ended, whose UPDATE conflicts with '
'it, then waits for the start to commit and sees the recording). Lock order everywhere: '
'session, recording, finalize row. RF001 for another kind. Volatile (it may lock).';

revoke all on function recording_finalize_internal.session_of(text, uuid, boolean) from public;
