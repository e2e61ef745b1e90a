-- discover_unpublished beside an outbox that keeps what it delivered for a day (CAP's default),
-- after a quiet spell longer than that: the cleanup has deleted every delivered event, so
-- service_events shows none, and the last recordings before the spell look like ones whose
-- events were never enqueued. They are too few for the counts (six, not more than ten), but none
-- of the recent recordings has its event and nothing delivered is shown at all: held, nothing
-- opened. Once the service is busy again (delivered events shown), the hold ends and what it
-- kept back stays as it is.
begin;
select plan(6);

select tests.clean_slate();
select tests.restart_republish_sweep();

-- Six the service made Available a day and a quarter of an hour ago, before the quiet spell
-- (within the window's day past the SLA): delivered, then deleted by the cleanup a day after
-- their delivery.
create temp table forgotten as select tests.make_available(6, '24 hours 15 minutes') as id;

select is(recording_finalize.discover_unpublished('1 day', 100), 0, 'nothing opened');
select is((select held from recording_finalize.republish_hold()), true,
    'held: none of six has its event, and service_events shows no delivered one');
select ok((select problem from recording_finalize.republish_hold())
        like '%none of the 6 most recently Available recordings%no delivered event at all%',
    'the hold says why');

-- Monday: two recordings delivered and kept.
create temp table kept as select tests.make_available(2, '5 minutes') as id;
select count(tests.make_service_event(id, now() - interval '4 minutes')) as events
from kept \gset
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'the hold ends and opens nothing');
select is((select held from recording_finalize.republish_hold()), false, 'not held');
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'what the hold kept back stays as it is');

select * from finish();
rollback;
