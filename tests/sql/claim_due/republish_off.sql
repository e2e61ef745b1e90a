-- claim_due: a due row whose recording is Available without an event the product can see is
-- republished only while republishing is trusted. While republish discovery is off (a
-- transactional outbox), held, or service_events shows pending events only (an outbox that
-- deletes what it delivered), the event is the service's, which may have sent it already: the
-- row is closed without one. explain and claim_preview say the same.
begin;
select plan(9);

select tests.clean_slate();
create temp table available as
select tests.make_stuck(p_status => 'Available') as id from generate_series(1, 4);

-- Off: the service enqueues its event in the transaction that makes a recording Available.
update recording_finalize.discovery_sweep
set republish_window = '0', republish_held_since = null;
select is((select (p.action, p.detail)::text from recording_finalize.claim_preview(10) as p
        where p.recording_id = (select min(id::text)::uuid from available)),
    '(closed,RepublishOff)', 'claim_preview: closed, RepublishOff');
select ok(recording_finalize.explain((select min(id::text)::uuid from available)) -> 'next'
        ->> 'text' like '%close the row without an event%service''s to publish%',
    'explain says the row closes without an event, and why');
create temp table claimed as select * from tests.claim(1);
select is((select (action, detail)::text from claimed), '(closed,RepublishOff)',
    'off: closed without an event');

-- Held.
update recording_finalize.discovery_sweep
set republish_window = '1 day', republish_held_since = now();
insert into claimed select * from tests.claim(1);
select is((select count(*) from claimed where action = 'closed'), 2::bigint, 'held: closed too');

-- Trusted (the reference port, nothing off or held): the next one gets its event.
update recording_finalize.discovery_sweep set republish_held_since = null;
insert into claimed select * from tests.claim(1);
select is((select action from claimed where recording_id not in (
        select recording_id from claimed where action = 'closed')), 'republished',
    'trusted: republished');
select is((select count(*) from recording_finalize.outbox), 1::bigint, 'its one event');

-- A service_events of pending events only, republish discovery neither off nor held.
select tests.use_pending_only_service_events();
insert into claimed select * from tests.claim(1);
select is((select count(*) from claimed where action = 'closed'), 3::bigint,
    'pending events only: closed too');
select is(
    (select count(*) from recording_finalize.outbox
        where recording_id in (select recording_id from claimed where action = 'closed')),
    0::bigint, 'no event of ours for the closed ones');
select is(
    (select count(*) from messenger.recording_finalize_attempts
        where status = 'Done'
            and recording_id in (select recording_id from claimed where action = 'closed')),
    3::bigint, 'their rows Done');

select * from finish();
rollback;
