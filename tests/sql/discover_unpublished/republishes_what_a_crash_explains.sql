-- discover_unpublished republishes the recordings a crash between committing Available and
-- enqueueing the event leaves: up to 10 without any event among the recent Available
-- recordings always, more only while they are at most 20 % of the 200 it samples. A recording
-- with the product's own event is no part of the sample (the_products_events_judge_nothing.sql).
begin;
select plan(5);

select tests.clean_slate();
-- Its outbox keeps what it delivered: service_events remembers past every recording below.
select tests.make_remembering_service() is not null as remembering \gset
select tests.restart_republish_sweep();

-- Ten lost of ten: a crash in a quiet service.
create temp table lost as select tests.make_available(10) as id;
select is(recording_finalize.discover_unpublished('1 day', 100), 10,
    'ten without an event of ten sampled: all ten opened');
select is((select held from recording_finalize.republish_hold()), false, 'not held');

-- Now 60 the service enqueued and 12 more lost: with the ten (rows, no events yet) 22 of 82
-- (27 %) is more than a crash explains.
select count(tests.make_service_event(
    tests.make_recording('Direct', tests.make_session(), 'Available'))) from generate_series(1, 60);
select count(tests.make_recording('Direct', tests.make_session(), 'Available'))
from generate_series(1, 12);
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    '22 without an event of 82 (more than 10 and than 20 %): held');

-- The claim gives the ten the product's events (out of the sample now), and 40 more the service
-- enqueued: 12 of 112 is under 20 %.
select count(*) from tests.claim();
select count(tests.make_service_event(
    tests.make_recording('Direct', tests.make_session(), 'Available'))) from generate_series(1, 40);
-- A fresh judgement (the hold's end is another file's behaviour).
update recording_finalize.discovery_sweep set republish_held_since = null;
select is(recording_finalize.discover_unpublished('1 day', 100), 12,
    '12 without an event of the 112 whose event is the service''s: the twelve opened');
select is((select held from recording_finalize.republish_hold()), false, 'not held');

select * from finish();
rollback;
