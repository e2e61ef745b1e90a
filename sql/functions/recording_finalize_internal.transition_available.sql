-- Moves a locked, non-terminal recording to Available with adopted file metadata.

create or replace function recording_finalize_internal.transition_available(
    p_recording_id uuid,
    -- The recording's status as the caller read it while holding its row lock.
    p_status text,
    p_file_id text,
    p_size_bytes bigint,
    p_duration_seconds integer,
    p_format text,
    p_session recording_finalize_internal.session,
    p_topic text
)
returns boolean
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
    v_rec recording_finalize_internal.recording;
    v_service_event boolean;
begin
    -- Status guard: only a non-terminal recording moves (the caller holds its row lock, read
    -- its status under it and checked the metadata with recording_finalize_internal.
    -- metadata_problem). The adapter's make_available port writes it, from that status.
    -- Asked before the move: whether the service has an event for the recording is a fact of
    -- the service's, not of the status this transaction is about to give it.
    v_service_event := exists (
        select from recording_finalize_adapter.service_events as e
        where e.recording_id = p_recording_id
    );
    if p_status is null
        or p_status not in ('Pending', 'Recording', 'Uploading')
        or not recording_finalize_adapter.make_available(p_recording_id, p_status, p_file_id,
            p_size_bytes, p_duration_seconds, p_format, now())
    then
        raise exception using
            errcode = 'RF007',
            message = format('recording_conflict: recording %s is missing, already terminal, or '
                'was not moved by recording_finalize_adapter.make_available', p_recording_id);
    end if;
    -- Read again as the port left it: the event carries what the service's row says now.
    select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;
    return recording_finalize_internal.enqueue_available(v_rec, p_session, p_topic,
        v_service_event);
end
$$;

comment on function recording_finalize_internal.transition_available(
    uuid, text, text, bigint, integer, text, recording_finalize_internal.session, text
) is
'Internal. The one -> Available transition, shared by apply_outcome (found) and '
'recording_ingest_completed: a non-terminal recording (p_status: its status as the caller read '
'it under the row lock it holds) becomes Available with the adopted metadata through the '
'adapter''s make_available port, and its event and realtime row are enqueued '
'(enqueue_available; returns whether the event was new). The caller holds the '
'recording''s row lock and checked the metadata; RF007 when the recording is missing, terminal '
'or not moved by the port.';

revoke all on function recording_finalize_internal.transition_available(
    uuid, text, text, bigint, integer, text, recording_finalize_internal.session, text
) from public;

-- The signature before the caller handed in the status, kept for one release: the service's
-- callback (recording_ingest_completed) of the release before calls it while migrate replaces
-- the functions, and the service does not stop for a migrate. Reads the status itself, as it
-- did, and moves the recording the one way above. Drop it in the release after 0.5.0.
create or replace function recording_finalize_internal.transition_available(
    p_recording_id uuid,
    p_file_id text,
    p_size_bytes bigint,
    p_duration_seconds integer,
    p_format text,
    p_session recording_finalize_internal.session,
    p_topic text
)
returns boolean
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
    return recording_finalize_internal.transition_available(
        p_recording_id,
        (select x.status from recording_finalize_internal.recording_row(p_recording_id) as x),
        p_file_id, p_size_bytes, p_duration_seconds, p_format, p_session, p_topic);
end
$$;

comment on function recording_finalize_internal.transition_available(
    uuid, text, bigint, integer, text, recording_finalize_internal.session, text
) is
'Internal, kept for one release. The previous signature of transition_available, without '
'p_status: reads the recording''s status (the caller holds its row lock) and calls the new one. '
'For the callers of the release before while migrate replaces the functions.';

revoke all on function recording_finalize_internal.transition_available(
    uuid, text, bigint, integer, text, recording_finalize_internal.session, text
) from public;
