-- The orphan rule, stated once: stuck recordings the worker cannot see (no finalize row).

create or replace function recording_finalize_internal.orphans(p_sla_timeout interval)
returns table (
    recording_id uuid,
    session_kind text,
    session_id uuid,
    session_ended_at timestamptz
)
language sql
stable
-- No SET clause, so that it is inlined where it is called (see claim_decision).
as $$
    -- Driven by the non-terminal recordings of the adapter's recordings view: the predicate is
    -- implied by the index of active recordings beneath it (checked at migrate and start), so
    -- the scan is the size of the active recordings, never of the history.
    select r.id, r.session_kind, r.session_id, s.ended_at
    from recording_finalize_adapter.recordings as r
    join recording_finalize_adapter.sessions as s
        on s.kind = r.session_kind and s.id = r.session_id
    where r.status = any('{Pending,Recording,Uploading}'::text[])
        and s.ended_at <= pg_catalog.now() - p_sla_timeout
        and not exists (
            select from messenger.recording_finalize_attempts as f where f.recording_id = r.id
        )
$$;

comment on function recording_finalize_internal.orphans(interval) is
'Internal. The recordings in Pending, Recording or Uploading whose session ended more '
'than p_sla_timeout ago and that have no finalize row: what discover_stuck opens rows for, what '
'audit counts (orphaned_recordings), audit_repair repairs and explain describes. Reads the '
'adapter''s recordings and sessions views, the active recordings through their index; a '
'recording whose session is missing is not an '
'orphan (its session never ended). No LIMIT inside: the caller''s limit and filters are '
'applied to the inlined query (explain''s recording id reaches the primary key).';

revoke all on function recording_finalize_internal.orphans(interval) from public;
