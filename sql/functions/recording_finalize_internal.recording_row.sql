-- The one read of a recording's row: the contract's columns, as the product's own type.

create or replace function recording_finalize_internal.recording_row(p_recording_id uuid)
returns setof recording_finalize_internal.recording
language sql
stable
-- No SET clause, so that it is inlined where it is called (see claim_decision).
as $$
    select r.id, r.session_kind::text, r.session_id, r.media_type::text, r.trigger::text,
        r.status::text, r.file_id::text, r.size_bytes, r.duration_seconds, r.format::text,
        r.failure_reason::text, r.started_at, r.ended_at, r.available_at, r.failed_at, r.version,
        r.created_at, r.updated_at
    from messenger.call_recordings as r
    where r.id = p_recording_id
$$;

comment on function recording_finalize_internal.recording_row(uuid) is
'Internal. The recording p_recording_id (no row when there is none) with exactly the columns of '
'messenger.call_recordings the product reads, as recording_finalize_internal.recording: the '
'functions never use the service''s own row type, so a column the service adds, or a table it '
'recreates, changes nothing here. Inlined into the caller''s statement. It locks nothing: a caller '
'that must hold the recording locks it first (FOR NO KEY UPDATE, SKIP LOCKED on the worker''s '
'side), and then reads it here, in a statement of its own that sees the latest committed row.';

revoke all on function recording_finalize_internal.recording_row(uuid) from public;
