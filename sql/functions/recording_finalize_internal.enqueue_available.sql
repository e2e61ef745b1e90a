-- Writes the product's call-recording-available event and the realtime RecordingAvailable row,
-- once, unless the service has its own event for the recording.

-- The signature before p_service_event: dropped in the transaction that creates this one, so
-- that the service's callback of the release before, which calls it with three arguments while
-- migrate replaces the functions, always finds one (the new argument has a default).
drop function if exists recording_finalize_internal.enqueue_available(
    recording_finalize_internal.recording, recording_finalize_internal.session, text
);

create or replace function recording_finalize_internal.enqueue_available(
    p_recording recording_finalize_internal.recording,
    p_session recording_finalize_internal.session,
    p_topic text,
    p_service_event boolean default null
)
returns boolean
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
    v_inserted integer;
begin
    if p_recording.status is distinct from 'Available' then
        raise exception using
            errcode = 'RF007',
            message = format('recording_conflict: recording %s is not Available (%s)',
                p_recording.id, coalesce(p_recording.status, 'missing'));
    end if;

    -- The service's own event (its happy path) is the recording's event: none of ours then.
    -- A caller that has just moved the recording asked before the move (p_service_event): a
    -- service_events that shows a recording once it is Available would hide our event now.
    -- (Asked in a statement of its own only when not given: the given answer costs nothing.)
    if p_service_event is null then
        p_service_event := exists (
            select from recording_finalize_adapter.service_events as e
            where e.recording_id = p_recording.id
        );
    end if;
    if p_service_event then
        return false;
    end if;

    -- The only place the payload is built, so the happy path and the safety net emit the same
    -- bytes. Once per recording: recording_id is unique in the product's own outbox.
    insert into recording_finalize.outbox (recording_id, topic, message_key, payload, headers)
    values (
        p_recording.id,
        p_topic,
        p_recording.session_id::text,
        jsonb_build_object(
            'recordingId', p_recording.id,
            'sessionKind', p_recording.session_kind,
            'sessionId', p_recording.session_id,
            'chatId', p_session.chat_id,
            'dealId', p_session.deal_id,
            'tenantId', p_session.tenant_id,
            'mediaType', p_recording.media_type,
            'fileId', p_recording.file_id,
            'format', p_recording.format,
            'durationSeconds', p_recording.duration_seconds,
            'sizeBytes', p_recording.size_bytes,
            'trigger', p_recording.trigger,
            -- A writer that made the row Available directly may have left the times empty;
            -- the contract has no null times, so they are derived from what is certain.
            'startedAt', recording_finalize_internal.iso_utc(coalesce(
                p_recording.started_at,
                coalesce(p_recording.ended_at, p_recording.available_at)
                - make_interval(secs => p_recording.duration_seconds)
            )),
            'endedAt', recording_finalize_internal.iso_utc(
                coalesce(p_recording.ended_at, p_recording.available_at)),
            'availableAt', recording_finalize_internal.iso_utc(p_recording.available_at)
        ),
        jsonb_build_object(
            'event-type', 'call-recording-available',
            'event-id', gen_random_uuid()::text
        )
    )
    on conflict (recording_id) do nothing;
    get diagnostics v_inserted = row_count;
    -- An event that existed already came with its push.
    if v_inserted = 0 then
        return false;
    end if;

    -- The push carries no URL and no secret: the client fetches by FileId through the API.
    perform recording_finalize_adapter.enqueue_realtime(
        'RecordingAvailable',
        p_recording.session_kind,
        p_recording.session_id,
        p_recording.id,
        jsonb_build_object('recordingId', p_recording.id, 'status', 'Available')
    );
    return true;
end
$$;

comment on function recording_finalize_internal.enqueue_available(
    recording_finalize_internal.recording, recording_finalize_internal.session, text, boolean
) is
'Internal. For an Available recording and its session: the product''s event in '
'recording_finalize.outbox (topic p_topic, key = SessionId, headers event-type and a fresh '
'event-id) and, only with a new event, the realtime RecordingAvailable row (the adapter''s '
'enqueue_realtime port). The only place the payload is built. Nothing when the adapter''s '
'service_events lists the service''s own event for the recording (p_service_event: what it '
'said before the caller moved the recording; NULL: asked now), or the product has one '
'already: returns true only when the event is new. A missing ended_at is taken as '
'available_at, a missing started_at as ended_at - duration. RF007 when the recording is not '
'Available. Runs in the caller''s transaction; may wait on a concurrent enqueue of the same '
'recording (the caller bounds it with lock_timeout).';

revoke all on function recording_finalize_internal.enqueue_available(
    recording_finalize_internal.recording, recording_finalize_internal.session, text, boolean
) from public;
