-- The happy path: the recorder's ingest callback makes the recording Available and closes its row.

create or replace function messenger.recording_ingest_completed(
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
set search_path = ''
as $$
declare
    v_status text;
    v_result text;
    v_topic text := recording_finalize.our_topic(p_topic);
begin
    -- Lock order everywhere: session, recording, finalize row (the session is only read).
    select r.status into v_status from messenger.call_recordings as r
    where r.id = p_recording_id
    for no key update;
    if not found then
        raise exception using
            errcode = 'RF003',
            message = format('recording_ingest_completed: recording %s does not exist', p_recording_id);
    end if;

    if v_status = 'Available' then
        -- A duplicated callback: make sure the event exists, change nothing else.
        perform recording_finalize.enqueue_available(p_recording_id, v_topic);
        v_result := 'already_available';
    elsif v_status = 'Failed' then
        -- A callback after the safety net gave up: terminal states are never left.
        v_result := 'already_failed';
    else
        perform recording_finalize.transition_available(
            p_recording_id, p_file_id, p_size_bytes, p_duration_seconds, p_format, v_topic
        );
        v_result := 'available';
    end if;

    perform recording_finalize.settle_finalize_row(p_recording_id, 'Done');

    return v_result;
end
$$;

comment on function messenger.recording_ingest_completed(uuid, text, bigint, integer, text, text) is
'The ingest callback of the media recorder (happy path). Non-terminal recording: the same '
'transition and outbox rows as apply_outcome(found) - Available, event, realtime row - and the '
'finalize row, if any, closed Done; returns available. Idempotent: an Available recording '
'returns already_available (its event ensured, nothing rewritten), a Failed one '
'already_failed (terminal is never left). Raises RF003 for an unknown recording, RF002 for '
'unusable metadata, RF009 for a p_topic other than the server''s (NULL, the default, is the '
'server''s topic). Waits for a worker holding the same recording, never the other way round.';

revoke all on function messenger.recording_ingest_completed(uuid, text, bigint, integer, text, text)
from public;
