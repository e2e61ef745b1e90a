-- discover_unpublished holds, whatever the counts, while service_events gives published_at as
-- the constant NULL: such a port shows pending events only and cannot show a delivered one, so
-- a quiet service's first few delivered recordings (below the counts' threshold) would be sent
-- a second event. republish_hold() names the port's definition as the cause.
begin;
select plan(4);

select tests.clean_slate();
select tests.restart_republish_sweep();
select tests.use_pending_only_service_events();

-- Three recordings the service made Available and delivered: under the counts' threshold.
select count(tests.make_recording('Direct', tests.make_session(), 'Available'))
from generate_series(1, 3);
select is(recording_finalize.discover_unpublished('1 day', 100), 0, 'nothing opened');
select results_eq(
    $$select held, sampled, unshown from recording_finalize.republish_hold()$$,
    $$values (true, 3, 3)$$,
    'held at 3 of 3'
);
select alike((select problem from recording_finalize.republish_hold()),
    '%gives published_at as the constant NULL%', 'the problem says why');
select is((select count(*) from messenger.recording_finalize_attempts), 0::bigint,
    'no finalize row, no event');

select * from finish();
rollback;
