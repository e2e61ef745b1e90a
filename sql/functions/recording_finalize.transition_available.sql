-- Moves a locked, non-terminal recording to Available with adopted file metadata.

create or replace function recording_finalize.transition_available(
    p_recording_id uuid,
    p_file_id text,
    p_size_bytes bigint,
    p_duration_seconds integer,
    p_format text,
    p_topic text
)
returns void
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_problem text;
    v_updated integer;
begin
    v_problem := case
        when p_file_id is null or btrim(p_file_id) = '' then 'file_id is empty'
        when p_file_id ~ '^[A-Za-z][A-Za-z0-9+.-]*://' then 'file_id is a URL, not a storage reference'
        when length(p_file_id) > 1024 then 'file_id is longer than 1024 characters'
        when p_size_bytes is null or p_size_bytes < 0 then 'size_bytes must be >= 0'
        when p_duration_seconds is null or p_duration_seconds < 0 then 'duration_seconds must be >= 0'
        when p_format is null or p_format not in ('Webm', 'Mp4', 'Ogg', 'M4a') then
            'format must be one of Webm, Mp4, Ogg, M4a'
    end;
    if v_problem is not null then
        raise exception using
            errcode = 'RF002',
            message = format('recording %s: unusable file metadata: %s', p_recording_id, v_problem);
    end if;

    -- Version guard: only a non-terminal recording moves. From Pending/Recording the card's path
    -- is -> Uploading -> Available, two transitions, so the version moves by two.
    update messenger.call_recordings as r
    set status = 'Available',
        file_id = p_file_id,
        size_bytes = p_size_bytes,
        duration_seconds = p_duration_seconds,
        format = p_format,
        ended_at = coalesce(r.ended_at, now()),
        started_at = coalesce(
            r.started_at, coalesce(r.ended_at, now()) - make_interval(secs => p_duration_seconds)
        ),
        available_at = now(),
        version = r.version + case when r.status = 'Uploading' then 1 else 2 end,
        updated_at = now()
    where r.id = p_recording_id
        and r.status in ('Pending', 'Recording', 'Uploading');
    get diagnostics v_updated = row_count;
    if v_updated = 0 then
        raise exception using
            errcode = 'RF007',
            message = format('recording %s is missing or already terminal', p_recording_id);
    end if;

    perform recording_finalize.enqueue_available(p_recording_id, p_topic);
end
$$;

comment on function recording_finalize.transition_available(
    uuid, text, bigint, integer, text, text
) is
'Internal. The one -> Available transition, shared by the ingest callback and apply_outcome '
'(found): validates the metadata (RF002: empty or URL file_id, negative size or duration, '
'unknown format), moves a non-terminal recording to Available (version +1 from Uploading, '
'+2 from Pending/Recording), fills a missing started_at/ended_at from the duration, and '
'enqueues the event and the realtime row. The caller holds the recording''s row lock and has '
'checked it is non-terminal; RF007 otherwise.';

revoke all on function recording_finalize.transition_available(
    uuid, text, bigint, integer, text, text
) from public;
