-- The happy path: the recorder's ingest callback makes the recording Available and closes its row.

create or replace function recording_finalize.recording_ingest_completed(
    p_recording_id uuid,
    p_file_id text,
    p_size_bytes bigint,
    p_duration_seconds integer,
    p_format text,
    p_topic text default null
)
returns text
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_topic text := recording_finalize_internal.topic(p_topic);
    v_rec recording_finalize_internal.recording;
    v_problem text;
    v_result text;
begin
    -- Lock order everywhere: session, recording, finalize row (the session is only read). This
    -- is the service's transaction: the worker holds no recording it would wait for (the claim
    -- locks none; apply_outcome takes it SKIP LOCKED and gives up what it cannot have at once);
    -- it may wait for a claim that holds the finalize row, for that claim's call (a batch).
    perform from recording_finalize_adapter.recordings as r
    where r.id = p_recording_id
    for no key update;
    if not found then
        raise exception using
            errcode = 'RF003',
            message = format('recording_not_found: recording_ingest_completed: recording %s does '
                'not exist', p_recording_id);
    end if;
    select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;

    if v_rec.status = 'Available' then
        -- A duplicated callback. If the worker's row is not closed (Pending, or Quarantined: a
        -- human was to look), the event is made sure of (a no-op when it exists) before the row
        -- closes below; a Done or absent row means it was enqueued already (and maybe published
        -- and removed by the service's retention since: never enqueued twice).
        if exists (
            select from messenger.recording_finalize_attempts as f
            where f.recording_id = p_recording_id and f.status <> 'Done'
        ) then
            perform recording_finalize_internal.enqueue_available(
                v_rec,
                recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id),
                v_topic);
        end if;
        v_result := 'already_available';
    elsif v_rec.status = 'Failed' then
        -- A callback after the safety net gave up: terminal states are never left.
        v_result := 'already_failed';
    else
        v_problem := recording_finalize_internal.metadata_problem(
            p_file_id, p_size_bytes, p_duration_seconds, p_format);
        if v_problem is not null then
            raise exception using
                errcode = 'RF002',
                message = format('invalid_file_metadata: recording %s: unusable file metadata: %s',
                    p_recording_id, v_problem);
        end if;
        perform recording_finalize_internal.transition_available(
            p_recording_id, v_rec.status, p_file_id, p_size_bytes, p_duration_seconds, p_format,
            recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id),
            v_topic);
        v_result := 'available';
    end if;

    -- The recording is terminal: the worker's row, if any, is done (its claim token spent).
    update messenger.recording_finalize_attempts as f
    set status = 'Done', claim_token = null, quarantine_reason = null, updated_at = now()
    where f.recording_id = p_recording_id and f.status <> 'Done';
    return v_result;
end
$$;

comment on function recording_finalize.recording_ingest_completed(
    uuid, text, bigint, integer, text, text
) is
'Service API, the ingest callback of the media recorder (happy path): a non-terminal recording '
'gets the same transition and outbox rows as apply_outcome(found) - Available, event, realtime '
'row - and its finalize row, if any, is closed Done; returns available. Idempotent: an '
'Available recording returns already_available (its event made sure of while the worker''s row '
'is Pending or Quarantined; nothing rewritten), a Failed one already_failed (terminal is never '
'left); '
'either way its finalize row is closed. RF003 unknown recording, RF002 unusable metadata (the '
'rule in words, recording_finalize_internal.metadata_problem), RF009 for a p_topic other than '
'the server''s (NULL = the server''s). The service''s transaction: it may wait for a claim '
'holding the finalize row (that call''s duration), never the worker for it. Service API '
'(SECURITY DEFINER).';

revoke all on function recording_finalize.recording_ingest_completed(
    uuid, text, bigint, integer, text, text
) from public;
grant execute on function recording_finalize.recording_ingest_completed(
    uuid, text, bigint, integer, text, text
) to recording_finalize_service;
