-- Lifecycle: a call or conference ends; its active recording enters asynchronous finalization.

create or replace function recording_finalize.session_ended(
    p_session_kind text,
    p_session_id uuid,
    p_sla_timeout interval default null
)
returns uuid
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_ended_at timestamptz;
    v_recording_id uuid;
    v_status text;
    -- Left out: the worker's SLA (the stored policy), so the row is due when the worker looks.
    v_sla interval := coalesce(p_sla_timeout, (recording_finalize_internal.policy()).sla_timeout);
begin
    if v_sla <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('session_ended: p_sla_timeout must be > 0, got %s', v_sla);
    end if;

    -- The only writer of ended_at, so the update stays here (the lookups share session_of).
    -- It locks the session first: lock order everywhere is session, recording, finalize row, and
    -- it waits for a recording_started holding the session FOR SHARE.
    if p_session_kind in ('Direct', 'Conference') then
        v_ended_at := recording_finalize_adapter.end_session(p_session_kind, p_session_id, now());
    else
        raise exception using
            errcode = 'RF001',
            message = format(
                'session_ended: p_session_kind must be Direct or Conference, got %s',
                coalesce(p_session_kind, 'NULL')
            );
    end if;
    if v_ended_at is null then
        raise exception using
            errcode = 'RF004',
            message = format('session_ended: no %s session %s', p_session_kind, p_session_id);
    end if;

    select r.id, r.status into v_recording_id, v_status
    from recording_finalize_adapter.recordings as r
    where r.session_kind = p_session_kind
        and r.session_id = p_session_id
        and r.status = any('{Pending,Recording,Uploading}'::text[])
    for no key update;
    if not found then
        return null;
    end if;

    if v_status = 'Recording' then
        perform recording_finalize_adapter.make_uploading(v_recording_id, v_status, v_ended_at);
    end if;

    perform recording_finalize_internal.schedule_finalize(
        v_recording_id, p_session_kind, p_session_id, v_ended_at + v_sla
    );
    return v_recording_id;
end
$$;

comment on function recording_finalize.session_ended(text, uuid, interval) is
'Service API, lifecycle (the messenger service, as a login granted recording_finalize_service): '
'sets the session''s ended_at (kept if already set); its '
'non-terminal recording, if any, goes Recording -> Uploading and gets its finalize row due at '
'ended_at + p_sla_timeout (NULL, the default: the stored policy''s SLA, recording_finalize.'
'policy; an untried row is re-timed). Returns that recording''s id or NULL. '
'Idempotent. RF001 bad kind or SLA, RF004 unknown session.';

revoke all on function recording_finalize.session_ended(text, uuid, interval) from public;
grant execute on function recording_finalize.session_ended(text, uuid, interval)
to recording_finalize_service;
