-- Lifecycle: the recorder stopped; the recording waits for its upload and ingest callback.

create or replace function recording_finalize.recording_stopped(
    p_recording_id uuid,
    p_sla_timeout interval default null
)
returns text
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_rec recording_finalize_internal.recording;
    -- Left out: the worker's SLA (the stored policy), so the row is due when the worker looks.
    v_sla interval := coalesce(p_sla_timeout, (recording_finalize_internal.policy()).sla_timeout);
begin
    if v_sla <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('recording_stopped: p_sla_timeout must be > 0, got %s', v_sla);
    end if;

    -- Lock order everywhere: session, recording, finalize row. The session is only read here
    -- (no lock), so taking the recording first keeps that order.
    perform from recording_finalize_adapter.recordings as r
    where r.id = p_recording_id
    for no key update;
    if not found then
        raise exception using
            errcode = 'RF003',
            message = format('recording_not_found: recording_stopped: recording %s does not exist',
                p_recording_id);
    end if;
    select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;
    if v_rec.status in ('Available', 'Failed') then
        return v_rec.status;
    end if;

    if v_rec.status in ('Pending', 'Recording') then
        perform recording_finalize_adapter.make_uploading(p_recording_id, v_rec.status, now());
    end if;

    -- Due one SLA after the session ends; while it runs, one SLA from now (claim re-times it).
    perform recording_finalize_internal.schedule_finalize(
        v_rec.id, v_rec.session_kind, v_rec.session_id,
        coalesce(
            (recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id)).ended_at,
            now()
        ) + v_sla
    );
    return 'Uploading';
end
$$;

comment on function recording_finalize.recording_stopped(uuid, interval) is
'Service API, lifecycle (the messenger service, as a login granted recording_finalize_service): '
'Pending/Recording -> Uploading (ended_at = now(), version + 1) '
'and opens the finalize row, due at session end + p_sla_timeout (now() + p_sla_timeout while '
'the session still runs; NULL, the default: the stored policy''s SLA, recording_finalize.policy). '
'Idempotent: Uploading stays, a terminal recording is left alone and '
'its status returned. RF001 bad SLA, RF003 unknown recording.';

revoke all on function recording_finalize.recording_stopped(uuid, interval) from public;
grant execute on function recording_finalize.recording_stopped(uuid, interval)
to recording_finalize_service;
