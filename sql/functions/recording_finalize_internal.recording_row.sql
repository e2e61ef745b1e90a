-- The read of a recording: the adapter's recordings port, as the product's own type. One other
-- statement lists the same columns: apply_outcome's, which locks and reads the recording at once
-- (a locking clause cannot go through a function); a column added to the type goes in both.

create or replace function recording_finalize_internal.recording_row(p_recording_id uuid)
returns setof recording_finalize_internal.recording
language sql
stable
-- No SET clause, so that it is inlined where it is called (see claim_decision).
as $$
    select r.id, r.session_kind, r.session_id, r.media_type, r.trigger, r.status, r.file_id,
        r.size_bytes, r.duration_seconds, r.format, r.failure_reason, r.started_at, r.ended_at,
        r.available_at, null::timestamptz, null::integer, null::timestamptz, null::timestamptz
    from recording_finalize_adapter.recordings as r
    where r.id = p_recording_id
$$;

comment on function recording_finalize_internal.recording_row(uuid) is
'Internal. The recording p_recording_id as recording_finalize_adapter.recordings shows it (no row '
'when the adapter does not show it), as recording_finalize_internal.recording; failed_at, '
'version, created_at and updated_at are not ports and stay NULL. Inlined into the caller''s '
'statement. It locks nothing: a caller that must hold the recording locks it through the view '
'first (FOR NO KEY UPDATE SKIP LOCKED), then reads it here; apply_outcome locks and reads it in '
'one statement with these same columns.';

revoke all on function recording_finalize_internal.recording_row(uuid) from public;
