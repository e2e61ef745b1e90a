-- discover_unpublished reads the Available recordings of the window a slice per call (p_scan),
-- in (available_at, id) order after where the previous call stopped (discovery_sweep's
-- republish_after_at/_id), and starts over at the end of the window: every recording without
-- an event is found within one sweep, whatever the slice.
begin;
select plan(8);

select tests.clean_slate();
-- Its outbox keeps what it delivered: service_events remembers past every recording below.
select tests.make_remembering_service() is not null as remembering \gset
update recording_finalize.discovery_sweep
set republish_after_at = null, republish_after_id = null;

-- Five Available recordings, an hour apart (the oldest 6 hours ago): 2 and 4 have the service's
-- event, 1, 3 and 5 have none.
create temp table avail as
select n, tests.make_recording('Direct', tests.make_session(), 'Available') as id,
    now() - make_interval(hours => 7 - n) as available_at
from generate_series(1, 5) as n;
update messenger.call_recordings as r set available_at = a.available_at
from avail as a where a.id = r.id;
select count(tests.make_service_event(id)) as events from avail where n in (2, 4) \gset

select is(recording_finalize.discover_unpublished('1 day', 100, 2), 1,
    'the first slice (1, 2): one without an event');
select results_eq(
    'select republish_after_at, republish_after_id from recording_finalize.discovery_sweep',
    'select available_at, id from avail where n = 2',
    'the sweep stands after the slice''s last recording'
);
select is(recording_finalize.discover_unpublished('1 day', 100, 2), 1,
    'the next slice (3, 4): one more');
select results_eq(
    'select republish_after_at, republish_after_id from recording_finalize.discovery_sweep',
    'select available_at, id from avail where n = 4',
    'the sweep moved on'
);
select is(recording_finalize.discover_unpublished('1 day', 100, 2), 1,
    'the last, short slice (5): the last one');
select results_eq(
    'select republish_after_at, republish_after_id from recording_finalize.discovery_sweep',
    $$values (null::timestamptz, null::uuid)$$,
    'a slice shorter than p_scan ends the sweep: it starts over'
);
select set_eq(
    'select recording_id from messenger.recording_finalize_attempts',
    'select id from avail where n in (1, 3, 5)',
    'within one sweep every recording without an event got its row'
);
select is(recording_finalize.discover_unpublished('1 day', 100, 2), 0,
    'starting over, the first slice again: nothing left to open');

select * from finish();
rollback;
