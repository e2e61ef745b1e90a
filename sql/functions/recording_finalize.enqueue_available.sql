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
    v_new_id bigint;
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
            -- The format is recording_finalize.iso_utc's, written out (issue 14): its three
            -- calls, each switching search_path, cost ~0.1 ms per event (pg_stat_statements).
            'startedAt', pg_catalog.to_char(coalesce(
                v_rec.started_at,
                coalesce(v_rec.ended_at, v_rec.available_at)
                - make_interval(secs => v_rec.duration_seconds)
            ) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
            'endedAt', pg_catalog.to_char(
                coalesce(v_rec.ended_at, v_rec.available_at) at time zone 'UTC',
                'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'
            ),
            'availableAt', pg_catalog.to_char(
                v_rec.available_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'
            )
        ),
        jsonb_build_object(
            'event-type', 'call-recording-available',
            'event-id', gen_random_uuid()::text
        )
    )
    on conflict (topic, dedupe_key) do nothing
    returning id into v_new_id;
    get diagnostics v_inserted = row_count;

    -- The event was published and its outbox row pruned since (the marker), so it was enqueued
    -- once already: the new row goes again. Checked after the INSERT, not before: a concurrent
    -- prune may delete the published row this INSERT waited on and commit its marker meanwhile,
    -- and this statement has a fresh snapshot (READ COMMITTED) that sees it. One check covers
    -- both cases, and the common one (no marker) costs one probe (issue 14). The deleted row is
    -- unpublished, so the marker trigger records nothing for it.
    if v_inserted > 0 and exists (
        select from messenger.integration_outbox_pruned as m
        where m.topic = v_topic and m.dedupe_key = v_rec.id::text
    ) then
        delete from messenger.integration_outbox as o where o.id = v_new_id;
        return false;
    end if;
    -- An event that existed already came with its realtime row (both are written in one
    -- transaction); a pruned realtime row must not be pushed a second time.
    if v_inserted = 0 then
        return false;
    end if;

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

    return true;
end
$$;

comment on function recording_finalize.enqueue_available(uuid, text) is
'Internal. Enqueues the integration event (key = SessionId, dedupe_key = RecordingId, headers '
'event-type and a fresh event-id) and the realtime RecordingAvailable row for an Available '
'recording. Idempotent by RecordingId: returns true only when the integration row is new; a '
'recording whose published row was pruned (messenger.integration_outbox_pruned) gets neither '
'row again, also when the prune commits while this INSERT waits on the row it deletes (the '
'marker is checked after the INSERT, in a fresh snapshot, and the new row deleted); the '
'realtime row is written only together with a new integration row. The '
'only place the payload is built, so the happy path and the safety net emit identical events. '
'A missing ended_at is taken as available_at, a missing started_at as ended_at - duration. '
'Raises RF007 when the recording is not Available, RF009 when p_topic is not NULL and not the '
'server''s topic (the event always goes to the server''s topic). Runs in the caller''s '
'transaction.';

revoke all on function recording_finalize.enqueue_available(uuid, text) from public;
