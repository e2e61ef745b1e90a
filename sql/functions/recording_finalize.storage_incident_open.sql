-- Records that the file storage is out (idempotent: an open incident of the source is returned).

create or replace function recording_finalize.storage_incident_open(
    p_source text default 'worker',
    p_reason text default null,
    p_at timestamptz default null
)
returns table (
    id bigint,
    source text,
    started_at timestamptz,
    ended_at timestamptz,
    reason text,
    opened_by text,
    created boolean
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_row recording_finalize.storage_incidents%rowtype;
    v_reason text := nullif(recording_finalize_internal.mask_urls(p_reason, 512), '');
begin
    perform recording_finalize_internal.check_incident_caller(p_source, p_at, 'open');

    for v_try in 1..3 loop
        insert into recording_finalize.storage_incidents (source, started_at, reason, opened_by)
        values (p_source, coalesce(p_at, now()), v_reason, session_user)
        on conflict (source) where ended_at is null do nothing
        returning * into v_row;
        if v_row.id is not null then
            created := true;
            exit;
        end if;
        -- Already open: return that one, unchanged.
        select i.* into v_row from recording_finalize.storage_incidents as i
        where i.source = p_source and i.ended_at is null;
        if v_row.id is not null then
            created := false;
            exit;
        end if;
        -- It was closed between our insert and our read: try again.
    end loop;

    id := v_row.id;
    source := v_row.source;
    started_at := v_row.started_at;
    ended_at := v_row.ended_at;
    reason := v_row.reason;
    opened_by := v_row.opened_by;
    return next;
end
$$;

comment on function recording_finalize.storage_incident_open(text, text, timestamptz) is
'Opens a file-storage incident of p_source (default worker), started at p_at (default now(); '
'may be back-dated, never in the future) with p_reason (URLs masked, 512 characters at most). '
'Idempotent: if that source already has an open incident, it is returned unchanged with '
'created = false (one open incident per source, storage_incidents_one_open_uq; concurrent '
'calls return the same row). While it is open, and for the upload grace after it is closed, '
'a 404 fails no recording whose upload window overlapped it '
'(recording_finalize_internal.outcome_decision), and while an incident of source worker is '
'open a transient verdict costs no attempt. Callers (recording_finalize_internal.'
'check_incident_caller, by membership): the worker (source worker), the service (source '
'recorders), operators and the owner (any source); RF018 otherwise. RF016 for a source that is '
'not ^[a-z][a-z0-9_.-]{0,63}$, RF017 for p_at in the future. Worker, service and operator API '
'(SECURITY DEFINER).';

revoke all on function recording_finalize.storage_incident_open(text, text, timestamptz)
from public;
grant execute on function recording_finalize.storage_incident_open(text, text, timestamptz)
to recording_finalize_worker, recording_finalize_operator, recording_finalize_service;
