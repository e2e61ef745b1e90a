-- Moves a locked, non-terminal recording to Available with adopted file metadata.

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
declare
    v_rec recording_finalize_internal.recording;
begin
    -- Status guard: only a non-terminal recording moves (the caller holds its row lock). From
    -- Pending/Recording the card's path is -> Uploading -> Available: the version moves by two.
    -- The caller checked the metadata (recording_finalize_internal.metadata_problem).
    update messenger.call_recordings as r
    set status = 'Available',
        file_id = p_file_id,
        size_bytes = p_size_bytes,
        duration_seconds = p_duration_seconds,
        format = p_format,
        ended_at = coalesce(r.ended_at, now()),
        started_at = coalesce(
            r.started_at,
            coalesce(r.ended_at, now()) - make_interval(secs => p_duration_seconds)
        ),
        available_at = now(),
        version = r.version + case when r.status = 'Uploading' then 1 else 2 end,
        updated_at = now()
    where r.id = p_recording_id
        and r.status in ('Pending', 'Recording', 'Uploading');
    if not found then
        raise exception using
            errcode = 'RF007',
            message = format('recording_conflict: recording %s is missing or already terminal',
                p_recording_id);
    end if;
    select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;
    return recording_finalize_internal.enqueue_available(v_rec, p_session, p_topic);
end
$$;

comment on function recording_finalize_internal.transition_available(
    uuid, text, bigint, integer, text, recording_finalize_internal.session, text
) is
'Internal. The one -> Available transition, shared by apply_outcome (found) and '
'recording_ingest_completed: a non-terminal recording becomes Available with the adopted '
'metadata (version +1 from Uploading, +2 from Pending/Recording; a missing started_at/ended_at '
'filled from the duration), and its event and realtime row are enqueued (enqueue_available; '
'returns whether the event was new). The caller holds the recording''s row lock and checked the '
'metadata; RF007 when the recording is missing or terminal.';

revoke all on function recording_finalize_internal.transition_available(
    uuid, text, bigint, integer, text, recording_finalize_internal.session, text
) from public;
