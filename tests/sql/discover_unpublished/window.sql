-- discover_unpublished reads only the window: recordings that became Available between
-- SLA + p_window ago and SLA ago (the happy path has had the SLA to enqueue its event). One
-- Available more recently than the SLA, or before the window, gets no row.
begin;
select plan(4);

select tests.clean_slate();
update recording_finalize.discovery_sweep
set republish_after_at = null, republish_after_id = null;
-- A service whose outbox keeps what it delivered: the recordings below are crashes it explains.
select tests.make_remembering_service() is not null as remembering \gset

create function pg_temp.available(p_ago interval) returns uuid language plpgsql as $f$
declare
    v_id uuid := tests.make_recording('Direct', tests.make_session(), 'Available');
begin
    update messenger.call_recordings set available_at = now() - p_ago where id = v_id;
    return v_id;
end
$f$;
-- SLA 30 minutes, window 1 day: the window is (now - 1 day 30 min, now - 30 min].
select pg_temp.available('10 minutes') as too_young \gset
select pg_temp.available('31 minutes') as young_edge \gset
select pg_temp.available('1 day 29 minutes') as old_edge \gset
select pg_temp.available('1 day 31 minutes') as too_old \gset
select pg_temp.available('10 days') as ancient \gset

select is(recording_finalize.discover_unpublished('1 day', 100), 2,
    'two recordings of the window get a row');
select set_eq(
    'select recording_id from messenger.recording_finalize_attempts',
    format('values (%L::uuid), (%L::uuid)', :'young_edge', :'old_edge'),
    'the ones Available 31 minutes and 1 day 29 minutes ago'
);
-- A wider window reaches the older one; the ancient one stays outside it.
select is(recording_finalize.discover_unpublished('2 days', 100), 1,
    'a two-day window reaches one more');
select is(
    (select count(*) from messenger.recording_finalize_attempts
        where recording_id in (:'too_young', :'ancient')),
    0::bigint,
    'none for the one still within the SLA, nor for the one before every window'
);

select * from finish();
rollback;
