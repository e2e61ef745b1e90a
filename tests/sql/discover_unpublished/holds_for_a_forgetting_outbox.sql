-- discover_unpublished looks before it republishes: when service_events does not show most of
-- the recently Available recordings (an outbox that deletes what it delivered), it opens
-- nothing, keeps the recordings as they are and records the hold; republish_hold() and explain
-- say why and name the two ways out. When the port shows them again the hold ends, and what it
-- kept back is never republished by discovery.
begin;
select plan(11);

select tests.clean_slate();
-- Its outbox keeps what it delivered: service_events remembers past every recording below.
select tests.make_remembering_service() is not null as remembering \gset
select tests.restart_republish_sweep();
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

-- Thirty recordings the service made Available an hour ago and whose events its outbox
-- delivered and deleted: service_events shows none of them.
create temp table delivered as select tests.make_available(30) as id;

set local role rfr_pgtap_worker_login;
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'as the worker: nothing opened for 30 of 30 recordings service_events does not show');
select results_eq(
    $$select held, sampled, unshown, republish_window from recording_finalize.republish_hold()$$,
    $$values (true, 30, 30, interval '1 day')$$,
    'republish_hold(): held, with the judgement that held it'
);
reset role;
select is((select count(*) from messenger.recording_finalize_attempts), 0::bigint,
    'no finalize row opened, no event, the recordings as they were');
select ok(
    (select problem like '%30 of the 30 most recently Available recordings have no event, '
            'neither in recording_finalize_adapter.service_events%'
        and fix like '%RFR_REPUBLISH_WINDOW=0%' and fix like '%keeps the service''s delivered%'
    from recording_finalize.republish_hold()),
    'the problem names the port, the fix the two ways out'
);
select ok(
    recording_finalize.explain((select id from delivered limit 1)) -> 'next' ->> 'text'
        like 'nothing: it has no event, and republish discovery is held%',
    'explain says why nothing happens to one of them'
);
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'the next call holds again');

-- The DBA maps service_events onto something that keeps the delivered events: 25 show again,
-- 5 stay unshown (at most what a crash explains). The hold ends; the five stay as they are.
select count(tests.make_service_event(id)) from (select id from delivered limit 25) as d;
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'the hold ends: nothing opened for what it kept back');
select results_eq(
    $$select held, republish_not_before = now() from recording_finalize.republish_hold(),
        recording_finalize.discovery_sweep$$,
    $$values (false, true)$$,
    'not held; discovery starts after the hold''s end'
);
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'a recording the hold kept back is never republished by discovery');

-- A window of 0 turns republish discovery off (a transactional outbox), and says so.
select is(recording_finalize.discover_unpublished('0', 100), 0, 'window 0: nothing');
select results_eq(
    $$select held, republish_window from recording_finalize.republish_hold()$$,
    $$values (false, interval '0')$$,
    'republish_hold(): not held, the window 0 (off)'
);

select * from finish();
rollback;
