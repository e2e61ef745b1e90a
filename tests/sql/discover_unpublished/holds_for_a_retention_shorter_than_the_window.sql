-- discover_unpublished beside an outbox that keeps its delivered events for a retention period
-- shorter than the SLA plus the republish window (here three hours, against a day): the
-- recordings between the retention's age and the window's start show no event, and when they
-- are many the judgement holds. The way out named for it is the window below the retention
-- minus the SLA (the port is right, it only forgets sooner than the window reaches), and once
-- the worker is given such a window, the hold ends at its next call.
begin;
select plan(5);

select tests.clean_slate();
select tests.restart_republish_sweep();

-- Twenty the service made Available ten hours ago: delivered, then deleted by its retention.
create temp table forgotten as select tests.make_available(20, '10 hours') as id;
-- Five Available two hours ago, their events delivered at once and kept.
create temp table kept as select tests.make_available(5, '2 hours') as id;
select count(tests.make_service_event(id, now() - interval '2 hours')) as events
from kept \gset

select is(recording_finalize.discover_unpublished('1 day', 100), 0, 'nothing opened');
select is((select held from recording_finalize.republish_hold()), true,
    'held: 20 of the 25 recordings of the window show no event');
select ok((select fix like '%RFR_REPUBLISH_WINDOW below the retention minus the SLA%'
    from recording_finalize.republish_hold()),
    'the way out for an outbox that keeps its delivered events for a while: a shorter window');

-- The worker is given a window of an hour, within the retention minus the SLA.
select is(recording_finalize.discover_unpublished('1 hour', 100), 0, 'nothing opened');
select is((select held from recording_finalize.republish_hold()), false,
    'the hold ends at the next call');

select * from finish();
rollback;
