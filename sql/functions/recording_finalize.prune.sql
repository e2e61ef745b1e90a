-- Retention of the product's own rows: one bounded batch of finished rows per call.

create or replace function recording_finalize.prune(
    p_older_than interval,
    p_batch_size integer default 1000,
    p_dry_run boolean default false
)
returns table (finalize bigint, leases bigint, incidents bigint)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
-- The deletes take only row locks they can get at once (SKIP LOCKED); nothing here waits.
set lock_timeout = '100ms'
as $$
#variable_conflict use_column
declare
    v_cutoff timestamptz;
    v_incident_cutoff timestamptz;
    v_upload_grace_max interval;
begin
    perform recording_finalize_internal.check_retention(p_older_than);
    if p_batch_size is null or p_batch_size not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: prune: p_batch_size must be 1..10000, got %s',
                p_batch_size);
    end if;
    if p_dry_run is null then
        raise exception using
            errcode = 'RF001', message = 'invalid_parameter: prune: p_dry_run must be set';
    end if;
    select s.upload_grace_max into v_upload_grace_max from recording_finalize.settings as s;
    v_cutoff := now() - p_older_than;
    -- An incident defers a 404 for the upload grace after it ended, and no grace exceeds
    -- settings.upload_grace_max: only an incident that ended before both is of no more use
    -- (the owner may lower retention_min below the grace cap).
    v_incident_cutoff := least(v_cutoff, now() - v_upload_grace_max);

    if p_dry_run then
        return query select
            (select count(*) from messenger.recording_finalize_attempts as f
                where f.status = 'Done' and f.updated_at < v_cutoff
                    and not exists (select from recording_finalize_adapter.recordings as r
                        where r.id = f.recording_id and r.status not in ('Available', 'Failed'))),
            (select count(*) from recording_finalize.relay_leases as l
                where l.leased_until < now()),
            (select count(*) from recording_finalize.storage_incidents as i
                where i.ended_at < v_incident_cutoff);
        return;
    end if;

    -- Done rows settled before the cutoff (oldest first, recording_finalize_attempts_done_idx).
    -- A Done row is the product's record that its work on a recording is over; the recording and
    -- its events are the service's, and the service's retention, not this one, removes them. A
    -- Done row of a recording that is not terminal is an audit finding (done_not_terminal): kept.
    with gone as (
        delete from messenger.recording_finalize_attempts as f
        where f.id in (
            select x.id from messenger.recording_finalize_attempts as x
            where x.status = 'Done' and x.updated_at < v_cutoff
                and not exists (select from recording_finalize_adapter.recordings as r
                    where r.id = x.recording_id and r.status not in ('Available', 'Failed'))
            order by x.updated_at
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into finalize from gone;

    -- Leases that expired: the relay deletes the leases it marks; these are leases of events it
    -- never marked (a failed delivery, a killed relay, an event the service removed meanwhile).
    with gone as (
        delete from recording_finalize.relay_leases as l
        where l.outbox_id in (
            select x.outbox_id from recording_finalize.relay_leases as x
            where x.leased_until < now()
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into leases from gone;

    -- Storage incidents that ended before the cutoff, and before any upload grace, can defer
    -- nothing any more.
    with gone as (
        delete from recording_finalize.storage_incidents as i
        where i.id in (
            select x.id from recording_finalize.storage_incidents as x
            where x.ended_at < v_incident_cutoff
            order by x.ended_at
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into incidents from gone;
    return next;
end
$$;

comment on function recording_finalize.prune(interval, integer, boolean) is
'Retention of the product''s own rows, one batch per call (the driver calls it until every count '
'is below p_batch_size, each call its own transaction): deletes up to p_batch_size (1..10000) '
'each of Done finalize rows settled before now() - p_older_than (>= 1 minute and >= '
'settings.retention_min: RF010; a Done row of a recording that is not terminal is kept), '
'expired relay leases, and storage incidents that ended before the cutoff and more than '
'settings.upload_grace_max ago (one that may still defer a 404 is kept). Never a row of the '
'service: integration_outbox and realtime_outbox retention is the messenger service''s. SKIP '
'LOCKED: never waits on the worker or the service. p_dry_run: counts what would go, deletes '
'nothing. RF001 for bad arguments (the COLUMN field says retention for p_older_than, as for '
'RF010). Worker (run''s hourly pruner) and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.prune(interval, integer, boolean) from public;
grant execute on function recording_finalize.prune(interval, integer, boolean)
to recording_finalize_worker, recording_finalize_operator;
