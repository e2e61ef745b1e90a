-- storage_incident_open: two sessions opening at once get the same incident (dblink). One
-- session holds an uncommitted open; the other's open waits on the unique index, then returns
-- that row (created = false) instead of failing.
begin;
select plan(9);

select tests.exec_committed(
    $$delete from recording_finalize.storage_incidents where source = 'pgtap-race'$$) as cleaned
\gset
select is(dblink_connect('rfr_race1', tests.conninfo()), 'OK', 'the first session connected');
select is(dblink_connect('rfr_race2', tests.conninfo()), 'OK', 'the second session connected');
select dblink_exec('rfr_race2', $$set lock_timeout = '10s'$$) as t2 \gset
select pid as race2_pid from dblink('rfr_race2', 'select pg_backend_pid()') as t(pid integer)
\gset

select dblink_exec('rfr_race1', 'begin') as b \gset
select created as first_created from dblink('rfr_race1',
    $$select created from recording_finalize.storage_incident_open('pgtap-race', 'first')$$)
    as t(created boolean) \gset
select is(:'first_created'::boolean, true, 'the first session opened it (uncommitted)');
select dblink_send_query('rfr_race2',
    $$select reason, created from recording_finalize.storage_incident_open('pgtap-race',
        'second')$$) as sent \gset
select ok(tests.wait_until_blocked('rfr_race2', :race2_pid),
    'the second open waits for the first''s uncommitted row');
select is(dblink_exec('rfr_race1', 'commit'), 'COMMIT', 'the first session commits');
select results_eq(
    $$select * from dblink_get_result('rfr_race2') as t(reason text, created boolean)$$,
    $$values ('first', false)$$,
    'the second open returns the first one''s incident, created = false'
);
select is(
    (select count(*) from recording_finalize.storage_incidents where source = 'pgtap-race'),
    1::bigint, 'one incident');
select is(dblink_disconnect('rfr_race1'), 'OK', 'the first session disconnected');
select is(dblink_disconnect('rfr_race2'), 'OK', 'the second session disconnected');

select tests.exec_committed(
    $$delete from recording_finalize.storage_incidents where source = 'pgtap-race'$$) as cleaned
\gset
select * from finish();
rollback;
