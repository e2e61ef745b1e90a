-- The scan of stuck-recording discovery, stated once: discover_stuck reads it, and the
-- adapter's check judges the plan of this same query.

create or replace function recording_finalize_internal.active_recordings_after(
    p_after_kind text,
    p_after_id uuid,
    p_limit integer
)
returns table (id uuid, session_kind text, session_id uuid)
language sql
stable
-- No SET clause, so that it is inlined where it is called: the caller's statement gets this
-- query's plan, and check_adapter sees the plan discovery runs.
as $$
    select r.id, r.session_kind::text, r.session_id
    from recording_finalize_adapter.recordings as r
    where r.status = any('{Pending,Recording,Uploading}'::text[])
        and (r.session_kind, r.session_id)
            > (coalesce(p_after_kind, ''),
                coalesce(p_after_id, '00000000-0000-0000-0000-000000000000'))
    order by r.session_kind, r.session_id
    limit p_limit
$$;

comment on function recording_finalize_internal.active_recordings_after(text, uuid, integer) is
'Internal. The next p_limit active recordings (Pending, Recording, Uploading) of the adapter''s '
'recordings view in (session_kind, session_id) order after (p_after_kind, p_after_id) (NULL: from '
'the start). What discover_stuck reads a slice at a time, and what check_adapter judges: an '
'index beneath the view serves it (ix_recording_active under the reference adapter), or every '
'call reads the whole history. Inlined into the caller''s statement. Read-only.';

revoke all on function recording_finalize_internal.active_recordings_after(text, uuid, integer)
from public;
