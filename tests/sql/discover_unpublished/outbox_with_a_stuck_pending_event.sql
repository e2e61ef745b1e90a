-- discover_unpublished beside an outbox that deletes what it delivered after a retention period
-- and holds one event its relay never delivered: a message whose dispatch kept failing (an
-- NServiceBus outbox row left undispatched while its message sits in the error queue) stays
-- pending for days, and a retention job deletes delivered rows only. That event is no sign of
-- what the outbox remembers: the recordings whose delivered events the retention deleted since
-- are never opened. Nor once the relay delivers it late (the message retried from the error
-- queue): a retention that counts from delivery keeps it, old as it is, while it goes on
-- deleting the events delivered before it.
begin;
select plan(6);

select tests.clean_slate();
select tests.restart_republish_sweep();

-- Eight the service made Available five hours ago: delivered, then deleted by its retention.
create temp table forgotten as select tests.make_available(8, '5 hours') as id;
-- Three Available 50 minutes ago, their events delivered at once and kept.
create temp table kept as select tests.make_available(3, '50 minutes') as id;
select count(tests.make_service_event(id, now() - interval '50 minutes')) as events
from kept \gset
-- One Available three days ago whose event was never delivered: enqueued then, pending since.
select tests.make_recording('Direct', tests.make_session(), 'Available') as stuck \gset
update messenger.call_recordings set available_at = now() - interval '3 days'
where id = :'stuck';
select tests.make_service_event(:'stuck') as stuck_event \gset

select is(recording_finalize_internal.service_events_remembered_from(),
    now() - interval '50 minutes' + interval '15 minutes',
    'service_events remembers from its oldest delivered event on, plus the margin');
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'nothing opened beside the pending event');
select is((select count(*) from messenger.recording_finalize_attempts
        where recording_id in (select id from forgotten)), 0::bigint,
    'none for the eight whose delivered events the retention deleted');

-- The relay delivers the stuck event now.
update messenger.integration_outbox set published_at = now() where id = :stuck_event;
select is(recording_finalize_internal.service_events_remembered_from(),
    now() - interval '50 minutes' + interval '15 minutes',
    'an event delivered late moves nothing back');
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'nothing opened once it is delivered');
select is((select count(*) from messenger.recording_finalize_attempts), 0::bigint,
    'no finalize row at all');

select * from finish();
rollback;
