-- Whether the product may send the event of an Available recording that has none it can see.

create or replace function recording_finalize_internal.republish_trusted()
returns boolean
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
    -- Not while republish discovery is off (the service enqueues its event in the transaction
    -- that makes a recording Available: such a recording's event is the service's, already
    -- sent) or held (service_events does not show what the service delivered), nor while
    -- service_events can show pending events only. Before the first cycle (no window seen
    -- yet) it is trusted, as discovery is.
    return coalesce((
        select d.republish_window is distinct from interval '0'
            and d.republish_held_since is null
        from recording_finalize.discovery_sweep as d
    ), true)
    and not recording_finalize_internal.service_events_pending_only();
end
$$;

comment on function recording_finalize_internal.republish_trusted() is
'Internal. False while republish discovery is off (its last window 0), held '
'(recording_finalize.republish_hold) or service_events shows pending events only '
'(service_events_pending_only): then an Available recording without an event the product can '
'see is the service''s to publish: the claim closes its finalize row without one, and '
'apply_outcome closes a row whose recording became Available meanwhile without one. Asked once '
'per call by claim_due, claim_preview, preview_outcomes, explain and audit, and by '
'apply_outcome on that terminal path only.';

revoke all on function recording_finalize_internal.republish_trusted() from public;
