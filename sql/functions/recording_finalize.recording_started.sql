-- Lifecycle: a recording starts in a live session.

create or replace function recording_finalize.recording_started(
    p_recording_id uuid,
    p_session_kind text,
    p_session_id uuid,
    p_media_type text,
    p_trigger text
)
returns void
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_session recording_finalize_internal.session;
begin
    -- The enumerations are checked here: the service's table may or may not have CHECKs.
    if p_media_type is null or p_media_type not in ('Audio', 'Video')
        or p_trigger is null or p_trigger not in ('Manual', 'Auto') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: recording_started: media type must be Audio or '
                'Video and trigger Manual or Auto, got %s and %s', coalesce(p_media_type, 'NULL'),
                coalesce(p_trigger, 'NULL'));
    end if;
    -- FOR SHARE on the session before ended_at is read: a concurrent session_ended (an UPDATE
    -- of that row) waits until this start commits and then sees the recording, or ended first
    -- and this read sees its ended_at. Lock order everywhere: session, recording, finalize row.
    v_session := recording_finalize_internal.session_of(
        p_session_kind, p_session_id, p_for_share => true);
    if v_session.id is null then
        raise exception using
            errcode = 'RF004',
            message = format('recording_started: no %s session %s', p_session_kind, p_session_id);
    end if;
    if v_session.ended_at is not null then
        raise exception using
            errcode = 'RF007',
            message = format('recording_started: session %s has already ended', p_session_id);
    end if;

    -- A repeated start of the same recording is a no-op; the same id in another session is not.
    if exists (select from recording_finalize_adapter.recordings as r where r.id = p_recording_id) then
        if not exists (
            select from recording_finalize_adapter.recordings as r
            where r.id = p_recording_id and r.session_kind = p_session_kind
                and r.session_id = p_session_id
        ) then
            raise exception using
                errcode = 'RF007',
                message = format(
                    'recording_started: recording %s belongs to another session, not %s %s',
                    p_recording_id, p_session_kind, p_session_id
                );
        end if;
        return;
    end if;

    begin
        perform recording_finalize_adapter.start_recording(
            p_recording_id, p_session_kind, p_session_id, p_media_type, p_trigger, now());
    exception when unique_violation then
        -- Told by what is there, not by the constraint's name (the table is the service's): a
        -- concurrent delivery of the same start committed first (at-least-once retry) is a no-op;
        -- the same id in another session, or another active recording in this one, is not.
        if exists (
            select from recording_finalize_adapter.recordings as r
            where r.id = p_recording_id and r.session_kind = p_session_kind
                and r.session_id = p_session_id
        ) then
            return;
        elsif exists (select from recording_finalize_adapter.recordings as r where r.id = p_recording_id) then
            raise exception using
                errcode = 'RF007',
                message = format(
                    'recording_conflict: recording_started: recording %s belongs to another '
                    'session, not %s %s', p_recording_id, p_session_kind, p_session_id
                );
        end if;
        raise exception using
            errcode = 'RF007',
            message = format(
                'recording_conflict: recording_started: session %s already has an active '
                'recording', p_session_id
            ),
            hint = 'ix_recording_active allows one non-terminal recording per session.';
    end;
end
$$;

comment on function recording_finalize.recording_started(uuid, text, uuid, text, text) is
'Service API, lifecycle (the messenger service, as a login granted recording_finalize_service): '
'inserts the recording in status Recording, started_at = now(). '
'No finalize row yet: one is opened when the recording or its session ends. Idempotent by '
'RecordingId, also under concurrency (two deliveries of the same start at once: the one that '
'loses the primary-key race returns too). RF001 bad session kind, RF004 unknown session, RF007 '
'session ended, another non-terminal recording in it (ix_recording_active), or the recording '
'id already belongs to another session; RF001 for a media type other than Audio/Video or a '
'trigger other than Manual/Auto. '
'Concurrency: locks the session FOR SHARE, so a concurrent session_ended either waits for this '
'start (and opens its finalize row) or ended first (RF007 here).';

revoke all on function recording_finalize.recording_started(uuid, text, uuid, text, text)
from public;
grant execute on function recording_finalize.recording_started(uuid, text, uuid, text, text)
to recording_finalize_service;
