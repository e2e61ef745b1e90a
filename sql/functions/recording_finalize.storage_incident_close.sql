-- Records that the file storage works again: closes the open incident of a source.

create or replace function recording_finalize.storage_incident_close(
    p_source text default 'worker',
    p_at timestamptz default null,
    p_reason text default null
)
returns table (
    id bigint,
    source text,
    started_at timestamptz,
    ended_at timestamptz,
    reason text,
    opened_by text,
    closed_by text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_row recording_finalize.storage_incidents%rowtype;
    v_note text := nullif(recording_finalize_internal.mask_urls(p_reason, 400), '');
begin
    perform recording_finalize_internal.check_incident_caller(p_source, p_at, 'close');

    select i.* into v_row from recording_finalize.storage_incidents as i
    where i.source = p_source and i.ended_at is null
    for update;
    if v_row.id is null then
        return;  -- nothing open: closing is idempotent
    end if;
    if coalesce(p_at, now()) < v_row.started_at then
        raise exception using
            errcode = 'RF017',
            message = format('incident_time_invalid: storage_incident_close: p_at %s is before '
                'the incident''s start %s',
                recording_finalize_internal.iso_utc(p_at),
                recording_finalize_internal.iso_utc(v_row.started_at));
    end if;

    update recording_finalize.storage_incidents as i
    set ended_at = coalesce(p_at, now()),
        closed_by = session_user,
        reason = case when v_note is null then i.reason
            else left(coalesce(i.reason || ' | ', '') || 'closed: ' || v_note, 512) end,
        updated_at = now()
    where i.id = v_row.id
    returning * into v_row;

    id := v_row.id;
    source := v_row.source;
    started_at := v_row.started_at;
    ended_at := v_row.ended_at;
    reason := v_row.reason;
    opened_by := v_row.opened_by;
    closed_by := v_row.closed_by;
    return next;
end
$$;

comment on function recording_finalize.storage_incident_close(text, timestamptz, text) is
'Closes the open file-storage incident of p_source (default worker) at p_at (default now(); '
'may be back-dated, never before the incident''s start nor in the future); p_reason is '
'appended to its reason. Returns the closed incident, or no row when that source has none '
'open (idempotent). A 404 stays untrusted for the upload grace after ended_at '
'(recording_finalize_internal.outcome_decision). Same callers and errors as '
'storage_incident_open (RF016, RF017, RF018); RF017 also when p_at is before started_at. Locks '
'the incident row. Worker, service and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.storage_incident_close(text, timestamptz, text)
from public;
grant execute on function recording_finalize.storage_incident_close(text, timestamptz, text)
to recording_finalize_worker, recording_finalize_operator, recording_finalize_service;
