-- Two deliveries of the same start at once (an at-least-once retry, two real sessions; DBA
-- review finding 10): the one that waits on the other's uncommitted insert hits the primary key,
-- not ix_recording_active, and returns as the documented no-op instead of RF007.
-- The session is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(8);

select tests.delete_committed('c0c0c0d8');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c0d8', 1) as rec, tests.fixed_uuid('c0c0c0d8', 101) as ses \gset
select tests.exec_committed(format(
    $sql$do $do$ begin perform tests.make_session('Direct', null, %L); end $do$ $sql$, :'ses'
)) as committed \gset

select is(dblink_connect('rfr_first', tests.conninfo()), 'OK', 'the first session connected');
select is(dblink_connect('rfr_second', tests.conninfo()), 'OK', 'the second session connected');
select dblink_exec('rfr_first', $$set lock_timeout = '10s'$$) as t1,
    dblink_exec('rfr_second', $$set lock_timeout = '10s'$$) as t2 \gset
select pid as second_pid from dblink('rfr_second', 'select pg_backend_pid()') as t(pid integer)
\gset

select dblink_exec('rfr_first', 'begin') as b1 \gset
select r as started from dblink('rfr_first', format(
    $$select messenger.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')::text$$,
    :'rec', :'ses'
)) as t(r text) \gset
select dblink_send_query('rfr_second', format(
    'select tests.error_of(%L)',
    format($$select messenger.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        :'rec', :'ses')
)) as sent \gset
select ok(tests.wait_until_blocked('rfr_second', :second_pid),
    'the second delivery waits on the first one''s uncommitted insert');
select dblink_exec('rfr_first', 'commit') as c1 \gset
select is((select e from dblink_get_result('rfr_second') as t(e text)), null,
    'once the first commits, the second returns without an error');
select is((select count(*) from dblink_get_result('rfr_second') as t(e text)), 0::bigint,
    'no further result');
select is((select count(*) from messenger.call_recordings where id = :'rec'), 1::bigint,
    'one recording');

select is(dblink_disconnect('rfr_first'), 'OK', 'the first session disconnected');
select is(dblink_disconnect('rfr_second'), 'OK', 'the second session disconnected');
select tests.delete_committed('c0c0c0d8');

select * from finish();
rollback;
