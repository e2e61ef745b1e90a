-- Opens (or re-times) the finalize row of a recording that entered asynchronous finalization.

create or replace function recording_finalize_internal.schedule_finalize(
    p_recording_id uuid,
    p_session_kind text,
    p_session_id uuid,
    p_due_at timestamptz
)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
    insert into messenger.recording_finalize_attempts as f (
        recording_id, session_kind, session_id, next_attempt_at, opened_by
    )
    values (p_recording_id, p_session_kind, p_session_id, p_due_at, 'lifecycle')
    on conflict (recording_id) do update
    set next_attempt_at = excluded.next_attempt_at,
        updated_at = now()
    -- Only an untouched row is re-timed: the worker's schedule wins once it has tried.
    where f.status = 'Pending' and f.attempts = 0;
end
$$;

comment on function recording_finalize_internal.schedule_finalize(uuid, text, uuid, timestamptz) is
'Internal. Creates the recording''s finalize row (Pending, attempts 0, next_attempt_at = '
'p_due_at, opened_by lifecycle), or moves next_attempt_at of a row the worker has not tried yet '
'(from "recording stopped" to "session ended + SLA"). Idempotent by RecordingId '
'(ux_rfa_recording).';

revoke all on function recording_finalize_internal.schedule_finalize(uuid, text, uuid, timestamptz)
from public;
