-- discover_unpublished judges service_events by the recordings whose event is the service's
-- own: a recording with the product's event (a rescue, or the service's ingest callback) says
-- nothing about whether the port forgets what was delivered. Many rescues after a hold must not
-- make the same forgetting port look trustworthy again and republish what it hides.
begin;
select plan(4);

select tests.clean_slate();
select tests.restart_republish_sweep();

-- Thirty recordings whose events the service's outbox delivered and deleted: held.
create temp table delivered as select tests.make_available(30) as id;
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    '30 of 30 without an event: held');

-- Then 150 recordings completed through the product (the ingest callback enqueues the
-- product's event): 30 of 180 recent Available recordings lack an event, under 20 %.
select count(recording_finalize.recording_ingest_completed(r.id, 'files/' || r.id, 10, 3, 'Ogg'))
from (select tests.make_recording('Direct', tests.make_session(), 'Uploading') as id
    from generate_series(1, 150)) as r;
select is((select count(*) from recording_finalize.outbox), 150::bigint,
    'the product''s 150 events are there');
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'still held: nothing opened for what the port hides');
select results_eq(
    $$select held, sampled, unshown from recording_finalize.republish_hold()$$,
    $$values (true, 30, 30)$$,
    'judged by the 30 recordings whose event is the service''s'
);

select * from finish();
rollback;
