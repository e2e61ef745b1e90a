-- Whether a transient answer is held (outcome_decision): the worker's own open storage incident.
-- A function of its own for the reason incident_deferring_404 gives: outcome_decision's statement
-- runs for every verdict, and only a transient one asks.

create or replace function recording_finalize_internal.holding_worker_incident(
    p_bucket_confirmed boolean,
    p_now timestamptz
)
returns bigint
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
    -- The worker opened it because the storage could not be reached: a transient answer then
    -- says nothing about the recording, so no attempt is burned and an outage the worker has
    -- seen quarantines nothing, however long it lasts.
    return (
        select i.id
        from recording_finalize.storage_incidents as i
        where i.source = 'worker' and i.ended_at is null
            -- Not the unreachable incident a HeadBucket that answered closes.
            and not (coalesce(p_bucket_confirmed, false)
                and coalesce(i.kind = 'unreachable', false))
            -- As for a 404: an incident that starts after the moment judged is not open at that
            -- moment.
            and i.started_at <= p_now
        limit 1
    );
end
$$;

comment on function recording_finalize_internal.holding_worker_incident(boolean, timestamptz) is
'Internal, for outcome_decision. The id of the worker''s own storage incident (source worker) '
'open at p_now, by which a transient answer is held (attempt given back); NULL when none is. With '
'p_bucket_confirmed true an incident of kind unreachable does not count (the cycle''s HeadBucket '
'answered: the report closes it). STABLE: reads storage_incidents.';

revoke all on function recording_finalize_internal.holding_worker_incident(boolean, timestamptz)
from public;
