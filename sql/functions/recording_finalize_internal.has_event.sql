-- Whether a recording has its call-recording-available event: the product's or the service's.

create or replace function recording_finalize_internal.has_event(p_recording_id uuid)
returns boolean
-- PL/pgSQL: a SQL function with a sub-select is never inlined, and would be planned again on
-- every call; PL/pgSQL keeps its plans for the session.
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
    return exists (
        select from recording_finalize.outbox as o where o.recording_id = p_recording_id
    )
    or exists (
        select from recording_finalize_adapter.service_events as e
        where e.recording_id = p_recording_id
    );
end
$$;
comment on function recording_finalize_internal.has_event(uuid) is
'Internal. True when the recording has an event in the product''s own outbox '
'(recording_finalize.outbox) or the service''s own (recording_finalize_adapter.service_events), '
'in any state. The one answer to "has it its event?" for the claim, the previews, explain and '
'audit. Called per row (PostgreSQL does not inline a scalar function with a sub-select): each '
'call is two lookups by recording id.';

revoke all on function recording_finalize_internal.has_event(uuid) from public;
