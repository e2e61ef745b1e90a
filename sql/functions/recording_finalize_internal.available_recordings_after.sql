-- The scan of republish discovery, stated once: discover_unpublished reads it, and the
-- adapter's check judges the plan of this same query.

create or replace function recording_finalize_internal.available_recordings_after(
    p_from timestamptz,
    p_to timestamptz,
    p_after_at timestamptz,
    p_after_id uuid,
    p_limit integer
)
returns table (id uuid, session_kind text, session_id uuid, available_at timestamptz)
language sql
stable
-- No SET clause, so that it is inlined where it is called: the caller's statement gets this
-- query's plan, and check_adapter sees the plan discovery runs.
as $$
    select r.id, r.session_kind::text, r.session_id, r.available_at
    from recording_finalize_adapter.recordings as r
    where r.status = 'Available'
        and r.available_at > p_from and r.available_at <= p_to
        and (r.available_at, r.id)
            > (p_after_at, coalesce(p_after_id, '00000000-0000-0000-0000-000000000000'))
    order by r.available_at, r.id
    limit p_limit
$$;

comment on function recording_finalize_internal.available_recordings_after(
    timestamptz, timestamptz, timestamptz, uuid, integer
) is
'Internal. The next p_limit Available recordings of the adapter''s recordings view with '
'available_at in (p_from, p_to], in (available_at, id) order after (p_after_at, p_after_id) '
'(p_after_id NULL: the zero UUID). What discover_unpublished reads a slice at a time, and what '
'check_adapter judges: an index on available_at of the Available recordings beneath the view '
'serves it, or every call reads the whole history. Inlined into the caller''s statement. '
'Read-only.';

revoke all on function recording_finalize_internal.available_recordings_after(
    timestamptz, timestamptz, timestamptz, uuid, integer
) from public;
