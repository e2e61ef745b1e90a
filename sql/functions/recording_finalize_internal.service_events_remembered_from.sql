-- From when service_events still shows the events of recordings that became Available: an outbox
-- that deletes what it delivered after a retention period forgets every event delivered before
-- its oldest delivered row, and a recording it forgot looks exactly like one whose event was
-- never enqueued. The product republishes neither kind of the forgotten.

create or replace function recording_finalize_internal.service_events_remembered_from()
returns timestamptz
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
    -- A retention job does not delete to the second in delivery order, and the time an event
    -- carries is not always its recording's: a recording this close to the oldest delivered
    -- event shown is taken as forgotten.
    c_margin constant interval := interval '15 minutes';
begin
    -- Asked only when an Available recording without an event the product can see is at hand
    -- (rare rows), once per call: the lookup reads the service's outbox from its oldest row.
    -- NULL when service_events shows no event at all: that says nothing of what it forgot (a new
    -- service), and republish_trusted's rules stand alone then.
    -- The oldest delivered event, by when it was delivered: a retention job deletes delivered
    -- events only, so an event its relay never delivered (a message in an error queue) stays
    -- pending for days and says nothing of what the job deleted meanwhile; and one delivered late
    -- is kept from its delivery on, old as its enqueued_at is, while the job goes on deleting the
    -- events delivered before it. The recording of an event delivered after this became Available
    -- no later than that delivery. Only when no event shown was delivered (pending events only,
    -- or a relay that has not delivered yet) the oldest event enqueued stands in.
    return (
        select coalesce(min(e.published_at), min(e.enqueued_at))
        from recording_finalize_adapter.service_events as e
    ) + c_margin;
end
$$;

comment on function recording_finalize_internal.service_events_remembered_from() is
'Internal. The time from which the adapter''s service_events shows the event of a recording '
'that became Available, if it has one: when its oldest delivered event was delivered '
'(published_at; the oldest enqueued_at when none shown was delivered) plus 15 minutes. An '
'outbox that deletes delivered events after a retention period shows none delivered before, so '
'the event of a recording Available before this time may have been sent; an event still pending '
'(never delivered, so never deleted) moves nothing back. NULL when service_events shows '
'no event at all. The product enqueues the event of an Available recording that service_events '
'does not show only when it became Available at or after this time (or it is NULL), beside '
'republish_trusted(): claim_due (and claim_preview, preview_outcomes, explain, which report '
'it), apply_outcome and discover_unpublished ask. STABLE: reads service_events.';

revoke all on function recording_finalize_internal.service_events_remembered_from() from public;
