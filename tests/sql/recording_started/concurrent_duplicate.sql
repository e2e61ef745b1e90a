-- Two deliveries of the same start at once (an at-least-once retry, two real sessions; DBA
-- review finding 10): the one that waits on the other's uncommitted insert hits a unique key
-- and returns as the documented no-op instead of RF007. Two different recordings started at
-- once in one session: the one that waits fails RF007 (another active recording). Both are
-- told apart by what the table then holds, not by the name of the key.
-- The session is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(12);

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
    $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')::text$$,
    :'rec', :'ses'
)) as t(r text) \gset
select dblink_send_query('rfr_second', format(
    'select tests.error_of(%L)',
    format($$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
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

-- Another recording in the same session, started while the first start is uncommitted.
select tests.fixed_uuid('c0c0c0d8', 2) as rec2, tests.fixed_uuid('c0c0c0d8', 3) as rec3,
    tests.fixed_uuid('c0c0c0d8', 102) as ses2 \gset
select tests.exec_committed(format(
    $sql$do $do$ begin perform tests.make_session('Direct', null, %L); end $do$ $sql$, :'ses2'
)) as committed2 \gset
select dblink_exec('rfr_first', 'begin') as b2 \gset
select r as started2 from dblink('rfr_first', format(
    $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')::text$$,
    :'rec2', :'ses2'
)) as t(r text) \gset
select dblink_send_query('rfr_second', format(
    'select tests.error_of(%L)',
    format($$select recording_finalize.recording_started(%L, 'Direct', %L, 'Video', 'Auto')$$,
        :'rec3', :'ses2')
)) as sent2 \gset
select ok(tests.wait_until_blocked('rfr_second', :second_pid),
    'a start of another recording waits on the first one''s uncommitted insert');
select dblink_exec('rfr_first', 'commit') as c2 \gset
select matches((select e from dblink_get_result('rfr_second') as t(e text)),
    '^RF007: .*already has an active recording',
    'once the first commits, the second fails RF007: another active recording');
select is((select count(*) from dblink_get_result('rfr_second') as t(e text)), 0::bigint,
    'no further result');
select results_eq(
    format('select id from messenger.call_recordings where session_id = %L', :'ses2'),
    format('values (%L::uuid)', :'rec2'),
    'the session holds the first recording only'
);

select is(dblink_disconnect('rfr_first'), 'OK', 'the first session disconnected');
select is(dblink_disconnect('rfr_second'), 'OK', 'the second session disconnected');
select tests.delete_committed('c0c0c0d8');

select * from finish();
rollback;
