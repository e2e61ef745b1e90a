-- The storage-incident rule: may a 404 fail this recording now, or must it wait?

create or replace function recording_finalize.upload_deferral(
    p_recording_id uuid,
    p_grace interval,
    p_as_of timestamptz default now()
)
returns table (
    defer_until timestamptz,
    incident_id bigint,
    incident_source text,
    incident_open boolean,
    reason text
)
language plpgsql
stable
set search_path = ''
as $$
#variable_conflict use_column
declare
    v_window_start timestamptz;
begin
    if p_grace is null or p_grace <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('upload_deferral: p_grace must be > 0, got %s',
                coalesce(p_grace::text, 'NULL'));
    end if;

    -- The upload window opens when the recorder could start uploading: the recording stopped
    -- or its session ended, whichever came first (unknown: every incident counts).
    select coalesce(least(r.ended_at, cs.ended_at, fs.ended_at), '-infinity')
    into v_window_start
    from messenger.call_recordings as r
    left join messenger.call_sessions as cs
        on r.session_kind = 'Direct' and cs.id = r.session_id
    left join messenger.conference_sessions as fs
        on r.session_kind = 'Conference' and fs.id = r.session_id
    where r.id = p_recording_id;
    v_window_start := coalesce(v_window_start, '-infinity');

    -- An incident overlaps the window [v_window_start, p_as_of] if it started by p_as_of and
    -- had not ended before the window opened. It defers the 404 while open (by the grace from
    -- now: it cannot end sooner than now), and until its end + grace once closed. Of several,
    -- the one that defers longest decides.
    return query
    select
        case when i.ended_at is null then p_as_of + p_grace else i.ended_at + p_grace end,
        i.id,
        i.source::text,
        i.ended_at is null,
        case
            when i.ended_at is null then format(
                'StorageIncident: %s incident %s open since %s; a 404 is not trusted while '
                'storage is out, next check at %s',
                i.source, i.id, recording_finalize.iso_utc(i.started_at),
                recording_finalize.iso_utc(p_as_of + p_grace))
            else format(
                'StorageIncident: %s incident %s ended %s, within the upload grace of %s; '
                'a 404 is not trusted before %s',
                i.source, i.id, recording_finalize.iso_utc(i.ended_at), p_grace,
                recording_finalize.iso_utc(i.ended_at + p_grace))
        end
    from messenger.storage_incidents as i
    where i.started_at <= p_as_of
        and (i.ended_at is null
            or (i.ended_at >= v_window_start and i.ended_at + p_grace > p_as_of))
    order by coalesce(i.ended_at, 'infinity') desc, i.id desc
    limit 1;
end
$$;

comment on function recording_finalize.upload_deferral(uuid, interval, timestamptz) is
'THE storage-incident rule, used by apply_outcome for a missing (404) verdict. The upload '
'window of a recording runs from least(recording ended_at, session ended_at) to p_as_of. '
'A 404 fails the recording only if no storage incident overlapping that window is open or '
'ended less than p_grace before p_as_of. Otherwise one row: defer_until = incident end + '
'p_grace (an open incident: p_as_of + p_grace, the earliest moment it could allow a failure), '
'the deciding incident (of several: the one that defers longest) and reason, the text '
'apply_outcome stores as last_error. No row: the 404 stands (Failed, Timeout, as without '
'incidents). Boundaries: an incident that ended exactly at the window start overlaps it; one '
'that ended exactly p_grace ago no longer defers. RF001 if p_grace is not > 0. Read-only '
'(STABLE), internal (no grant).';

revoke all on function recording_finalize.upload_deferral(uuid, interval, timestamptz)
from public;
