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
    v_updated integer;
    v_constraint text;
    v_problem text;
begin
    -- The metadata rules live once, in the table's CHECKs (migrations 0001 and 0005); a refused
    -- value is translated here by constraint name into RF002 with the rule in words. Nothing
    -- moves: the failed UPDATE is undone with its block.
    begin
        -- Status guard: only a non-terminal recording moves (the caller holds its row lock).
        -- From Pending/Recording the card's path is -> Uploading -> Available, two transitions,
        -- so the version moves by two.
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
        get diagnostics v_updated = row_count;
    exception
        when check_violation or string_data_right_truncation then
            get stacked diagnostics v_constraint = constraint_name;
            v_problem := case
                -- format is varchar(8): a longer value fails its length before its CHECK.
                when v_constraint = '' then 'format must be one of Webm, Mp4, Ogg, M4a'
                when v_constraint = 'call_recordings_available_complete_ck' then
                    'file_id, size_bytes, duration_seconds and format are all required'
                when v_constraint = 'call_recordings_file_id_not_url_ck' then
                    'file_id is a URL or empty, not a storage reference'
                when v_constraint = 'call_recordings_file_id_not_blank_ck' then 'file_id is blank'
                when v_constraint = 'call_recordings_file_id_length_ck' then
                    'file_id is longer than 1024 characters'
                when v_constraint = 'call_recordings_size_bytes_ck' then 'size_bytes must be >= 0'
                when v_constraint = 'call_recordings_duration_seconds_ck' then
                    'duration_seconds must be >= 0'
                when v_constraint = 'call_recordings_format_ck' then
                    'format must be one of Webm, Mp4, Ogg, M4a'
            end;
            if v_problem is null then
                raise;
            end if;
            raise exception using
                errcode = 'RF002',
                message = format(
                    'recording %s: unusable file metadata: %s', p_recording_id, v_problem
                ),
                hint = format('Refused by the table constraint %s.', v_constraint);
    end;
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
'(found): moves a non-terminal recording to Available (a status guard; version +1 from Uploading, '
'+2 from Pending/Recording), fills a missing started_at/ended_at from the duration, and '
'enqueues the event and the realtime row. The caller holds the recording''s row lock and has '
'checked it is non-terminal; RF007 otherwise. The metadata rules are the table''s CHECKs '
'(one source): a refused value raises RF002 naming the rule (missing value, empty/blank/URL '
'or longer than 1024 characters file_id, negative size or duration, unknown format) and '
'changes nothing.';

revoke all on function recording_finalize.transition_available(
    uuid, text, bigint, integer, text, text
) from public;
