-- discover_unpublished judges a hold again at every call, also when nothing is left to open: once
-- the DBA maps service_events onto something that keeps the delivered events (or gives a window
-- that leaves the forgotten recordings out), every recording of the window shows its event and
-- no candidate is left; the hold must end then too, or it would be reported (status, explain,
-- the alert) for good after its cause is gone.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_remembering_service() is not null as remembering \gset
select tests.restart_republish_sweep();

-- Thirty recordings the service made Available an hour ago and whose events its outbox
-- delivered and deleted: service_events shows none of them.
create temp table delivered as select tests.make_available(30) as id;

select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'nothing opened for 30 of 30 recordings service_events does not show');
select is((select held from recording_finalize.republish_hold()), true, 'held');

-- The DBA maps service_events onto something that keeps the delivered events: all 30 show.
select count(tests.make_service_event(id, now() - interval '1 hour')) from delivered;
select is(recording_finalize.discover_unpublished('1 day', 100), 0, 'nothing to open');
select results_eq(
    $$select held, unshown, republish_not_before = now() from recording_finalize.republish_hold(),
        recording_finalize.discovery_sweep$$,
    $$values (false, 0, true)$$,
    'the hold ends at that call, judged on what service_events shows now'
);
select is((select count(*) from messenger.recording_finalize_attempts), 0::bigint,
    'no finalize row, no event');

select * from finish();
rollback;
