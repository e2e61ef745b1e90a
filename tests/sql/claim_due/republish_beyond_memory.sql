-- claim_due beside an outbox that deletes what it delivered after a retention period: a due row
-- whose recording the service made Available itself (a late callback during a long deferral)
-- before the oldest event service_events still shows has its event sent and forgotten, most
-- likely. It is closed without one (RepublishOff), and explain and claim_preview say so; a
-- recording service_events remembers is republished as ever.
begin;
select plan(6);

select tests.clean_slate();
update recording_finalize.discovery_sweep
set republish_window = '1 day', republish_held_since = null;
-- The service's outbox keeps an hour: its oldest event is 50 minutes old.
select tests.make_recording('Direct', tests.make_session(), 'Available') as recent \gset
update messenger.call_recordings set available_at = now() - interval '50 minutes'
where id = :'recent';
select tests.make_service_event(:'recent', now() - interval '49 minutes') is not null as ok \gset

select tests.make_stuck(p_status => 'Available', p_ended_ago => '9 hours') as late \gset
update messenger.call_recordings set available_at = now() - interval '5 hours'
where id = :'late';
select tests.make_stuck(p_status => 'Available') as remembered \gset
update messenger.call_recordings set available_at = now() - interval '20 minutes'
where id = :'remembered';

select is((select (p.action, p.detail)::text from recording_finalize.claim_preview(10) as p
        where p.recording_id = :'late'),
    '(closed,RepublishOff)', 'claim_preview: closed, RepublishOff');
select ok(recording_finalize.explain(:'late') -> 'next' ->> 'text'
        like '%close the row without an event%no event as old as it%',
    'explain says it closes without an event, and why');
create temp table claimed as select * from tests.claim();
select is((select (action, detail)::text from claimed where recording_id = :'late'),
    '(closed,RepublishOff)', 'the claim closes it without an event');
select is((select action from claimed where recording_id = :'remembered'), 'republished',
    'one service_events remembers is republished');
select is((select count(*) from recording_finalize.outbox where recording_id = :'late'),
    0::bigint, 'no event of ours for the forgotten one');
select is((select count(*) from recording_finalize.outbox where recording_id = :'remembered'),
    1::bigint, 'one for the remembered one');

select * from finish();
rollback;
