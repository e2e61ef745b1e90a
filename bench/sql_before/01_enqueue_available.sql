-- The body of recording_finalize.enqueue_available before issue 14 (main at f82ad26):
-- the three timestamps through recording_finalize.iso_utc.
-- Writes the call-recording-available event and the realtime RecordingAvailable row, once.

create or replace function recording_finalize.enqueue_available(
    p_recording_id uuid,
    p_topic text
)
returns boolean
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_rec messenger.call_recordings%rowtype;
    v_session messenger.call_sessions%rowtype;
    v_inserted integer;
    v_topic text := recording_finalize.our_topic(p_topic);
begin
    select r.* into v_rec from messenger.call_recordings as r where r.id = p_recording_id;
    if not found or v_rec.status <> 'Available' then
        raise exception using
            errcode = 'RF007',
            message = format(
                'enqueue_available: recording %s is not Available (%s)',
                p_recording_id, coalesce(v_rec.status, 'missing')
            );
    end if;

    -- The event was published and its outbox row pruned since: it was enqueued once already.
    if exists (
        select from messenger.integration_outbox_pruned as m
        where m.topic = p_topic and m.dedupe_key = v_rec.id::text
    ) then
        return false;
    end if;

    v_session := recording_finalize.session_of(v_rec.session_kind, v_rec.session_id);

    insert into messenger.integration_outbox (
        topic, message_key, event_type, dedupe_key, payload, headers
    )
    values (
        v_topic,
        v_rec.session_id::text,
        'call-recording-available',
        v_rec.id::text,
        jsonb_build_object(
            'recordingId', v_rec.id,
            'sessionKind', v_rec.session_kind,
            'sessionId', v_rec.session_id,
            'chatId', v_session.chat_id,
            'dealId', v_session.deal_id,
            'tenantId', v_session.tenant_id,
            'mediaType', v_rec.media_type,
            'fileId', v_rec.file_id,
            'format', v_rec.format,
            'durationSeconds', v_rec.duration_seconds,
            'sizeBytes', v_rec.size_bytes,
            'trigger', v_rec.trigger,
            -- A writer that made the row Available directly may have left the times empty;
            -- the contract has no null times, so they are derived from what is certain.
            'startedAt', recording_finalize.iso_utc(coalesce(
                v_rec.started_at,
                coalesce(v_rec.ended_at, v_rec.available_at)
                - make_interval(secs => v_rec.duration_seconds)
            )),
            'endedAt', recording_finalize.iso_utc(coalesce(v_rec.ended_at, v_rec.available_at)),
            'availableAt', recording_finalize.iso_utc(v_rec.available_at)
        ),
        jsonb_build_object(
            'event-type', 'call-recording-available',
            'event-id', gen_random_uuid()::text
        )
    )
    on conflict (topic, dedupe_key) do nothing;
    get diagnostics v_inserted = row_count;

    -- The push carries no URL and no secret: the client fetches by FileId through the API.
    insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id, payload)
    values (
        'RecordingAvailable',
        v_rec.session_kind,
        v_rec.session_id,
        v_rec.id,
        jsonb_build_object('recordingId', v_rec.id, 'status', 'Available')
    )
    on conflict (reference_id, kind)
    where kind in ('RecordingAvailable', 'RecordingFailed')
    do nothing;

    return v_inserted > 0;
end
$$;

comment on function recording_finalize.enqueue_available(uuid, text) is
'Internal. Enqueues the integration event (key = SessionId, dedupe_key = RecordingId, headers '
'event-type and a fresh event-id) and the realtime RecordingAvailable row for an Available '
'recording. Idempotent by RecordingId: returns true only when the integration row is new; a '
'recording whose published row was pruned (messenger.integration_outbox_pruned) gets neither '
'row again. The '
'only place the payload is built, so the happy path and the safety net emit identical events. '
'A missing ended_at is taken as available_at, a missing started_at as ended_at - duration. '
'Raises RF007 when the recording is not Available, RF009 when p_topic is not NULL and not the '
'server''s topic (the event always goes to the server''s topic). Runs in the caller''s '
'transaction.';

revoke all on function recording_finalize.enqueue_available(uuid, text) from public;
