-- discover_unpublished beside an outbox that deletes what it delivered after a retention period
-- (here an hour): service_events shows no event older than its oldest row, so a recording
-- Available before it (plus a margin) looks like one whose event was never enqueued, though
-- the service sent it. Those are never opened: only a recording service_events still remembers
-- is judged, and a crash among those is republished as ever. (The sample that judges the port
-- counts the forgotten: nine unshown of twelve hold nothing, more than ten would hold all.)
begin;
select plan(6);

select tests.clean_slate();
select tests.restart_republish_sweep();

-- Eight the service made Available five hours ago: delivered, then deleted by its retention.
create temp table forgotten as select tests.make_available(8, '5 hours') as id;
-- Three Available 50 minutes ago, their events kept (published at once, within the hour).
create temp table kept as select tests.make_available(3, '50 minutes') as id;
select count(tests.make_service_event(id, now() - interval '50 minutes')) as events
from kept \gset
-- One Available 35 minutes ago whose event a crash lost (the SLA is 30 minutes).
select tests.make_recording('Direct', tests.make_session(), 'Available') as lost \gset
update messenger.call_recordings set available_at = now() - interval '35 minutes'
where id = :'lost';

select is(recording_finalize_internal.service_events_remembered_from(),
    now() - interval '50 minutes' + interval '15 minutes',
    'service_events remembers from its oldest event on, plus the margin');
select is(recording_finalize.discover_unpublished('1 day', 100), 1, 'one row opened');
select is((select recording_id from messenger.recording_finalize_attempts), :'lost'::uuid,
    'the crash''s recording, which service_events remembers');
select is((select count(*) from messenger.recording_finalize_attempts
        where recording_id in (select id from forgotten)), 0::bigint,
    'none for the eight whose events it forgot');
select is((select held from recording_finalize.republish_hold()), false,
    'not held: nine unshown of twelve sampled');
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'the next call opens nothing more');

select * from finish();
rollback;
