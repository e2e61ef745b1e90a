-- Rule 3 of whether a 404 is believed (outcome_decision states all three): the storage incident
-- that defers it. A function of its own, in PL/pgSQL, so that outcome_decision's statement - run
-- for every verdict, nearly all of them found - carries a call it makes only for a 404, not the
-- plan of this read: a plan's nodes are set up for every run of the statement, taken or not.

create or replace function recording_finalize_internal.incident_deferring_404(
    p_window_start timestamptz,
    p_upload_grace interval,
    p_now timestamptz,
    p_bucket_confirmed boolean,
    out until timestamptz,
    out reason text
)
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
    -- A 404 fails the recording only if no incident that overlaps its upload window (from
    -- p_window_start, when the recording stopped or its session ended, to now) is open or ended
    -- less than the grace ago. Of several, the one that defers longest decides (an open one:
    -- the grace from now, it cannot end sooner).
    select
        coalesce(e.ended_at, p_now) + p_upload_grace,
        case when e.ended_at is null then format(
            'StorageIncident: %s incident %s open since %s; a 404 is not trusted while '
            'storage is out, next check at %s', i.source, i.id,
            recording_finalize_internal.iso_utc(i.started_at),
            recording_finalize_internal.iso_utc(p_now + p_upload_grace))
        else format(
            'StorageIncident: %s incident %s ended %s, within the upload grace of %s; a 404 '
            'is not trusted before %s', i.source, i.id,
            recording_finalize_internal.iso_utc(e.ended_at), p_upload_grace,
            recording_finalize_internal.iso_utc(e.ended_at + p_upload_grace))
        end
    into until, reason
    from recording_finalize.storage_incidents as i
    -- When it ends, as far as this verdict is concerned: the worker's unreachable incident at
    -- p_now when HeadBucket answered (storage_health closes it before the cycle claims).
    cross join lateral (
        select case when i.ended_at is null and i.source = 'worker' and p_bucket_confirmed
            and i.kind = 'unreachable' then p_now
            else i.ended_at end as ended_at
        -- Once per incident, not copied into the five places below that read it.
        offset 0
    ) as e
    where i.started_at <= p_now
        -- The incidents as recorded (what the indexes on ended_at serve), then as this verdict
        -- sees them.
        and (i.ended_at is null
            or (i.ended_at >= coalesce(p_window_start, '-infinity')
                and i.ended_at + p_upload_grace > p_now))
        and (e.ended_at is null
            or (e.ended_at >= coalesce(p_window_start, '-infinity')
                and e.ended_at + p_upload_grace > p_now))
    order by coalesce(e.ended_at, 'infinity') desc, i.id desc
    limit 1;
end
$$;

comment on function recording_finalize_internal.incident_deferring_404(
    timestamptz, interval, timestamptz, boolean
) is
'Internal, for outcome_decision (rule 3 of whether a 404 is believed). The storage incident '
'(any source) that overlaps the upload window from p_window_start and is open or ended less than '
'p_upload_grace before p_now, the one that defers longest: until (its end, or p_now when open, '
'plus the grace) and reason (the last_error that names it); both NULL when none does. With '
'p_bucket_confirmed true the worker''s open incident of kind unreachable counts as ended at '
'p_now (the cycle''s HeadBucket answered). STABLE: reads storage_incidents.';

revoke all on function recording_finalize_internal.incident_deferring_404(
    timestamptz, interval, timestamptz, boolean
) from public;
