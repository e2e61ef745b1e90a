-- storage_incident_open: two sessions opening at once get the same incident (dblink).
begin;
select plan(2);

select tests.exec_committed($$delete from messenger.storage_incidents where source = 'race'$$);
-- One session holds an uncommitted open; the other's open waits on the unique index, then
-- returns the same row instead of failing.
select public.dblink_connect('rfr_race', tests.conninfo());
select public.dblink_exec('rfr_race', 'begin');
select public.dblink_exec('rfr_race',
    $q$do $$ begin perform recording_finalize.storage_incident_open('race', 'first'); end $$$q$);
select public.dblink_send_query('rfr_race', 'commit');
create temp table second as
select * from recording_finalize.storage_incident_open('race', 'second');
select public.dblink_get_result('rfr_race');
select public.dblink_disconnect('rfr_race');

select results_eq('select reason, created from second', $$values ('first', false)$$,
    'the second open returns the first one''s incident');
select is((select count(*) from messenger.storage_incidents where source = 'race'), 1::bigint,
    'one incident');

select tests.exec_committed($$delete from messenger.storage_incidents where source = 'race'$$);
select * from finish();
rollback;
