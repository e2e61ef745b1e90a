-- discover_stuck racing the service's lifecycle calls (real sessions): a lifecycle call that has
-- opened the row and not committed wins - discovery passes the recording over at once, without
-- an error and without waiting; a discovery that ran first is re-timed by the lifecycle call
-- (its row, one row). The fixtures are committed through dblink; removed at the end.
begin;
select plan(12);

select tests.delete_committed('c0c0c1b2');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c1b2', 1) as rec1, tests.fixed_uuid('c0c0c1b2', 101) as ses1,
    tests.fixed_uuid('c0c0c1b2', 2) as rec2, tests.fixed_uuid('c0c0c1b2', 102) as ses2 \gset
-- Two stuck recordings, Uploading, sessions ended 2 hours ago, no finalize row.
select tests.exec_committed(format(
    $sql$do $do$ begin
    perform tests.make_recording('Direct', tests.make_session('Direct', '2 hours', %L),
        'Uploading', %L);
    perform tests.make_recording('Direct', tests.make_session('Direct', '2 hours', %L),
        'Uploading', %L);
    end $do$ $sql$,
    :'ses1', :'rec1', :'ses2', :'rec2'
)) as committed \gset

select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
select dblink_exec('rfr_service', $$set lock_timeout = '10s'$$) as t1,
    dblink_exec('rfr_worker', $$set statement_timeout = '10s'$$) as t2 \gset
select pid as service_pid from dblink('rfr_service', 'select pg_backend_pid()')
    as t(pid integer) \gset

-- 1. The service stops recording 1 (its finalize row inserted, not committed); discovery runs.
select dblink_exec('rfr_service', 'begin') as s_begin \gset
select status as stopped from dblink('rfr_service', format(
    $$select recording_finalize.recording_stopped(%L, interval '30 minutes')$$, :'rec1'
)) as t(status text) \gset
select is(
    (select e from dblink('rfr_worker', format('select tests.error_of(%L)',
        format('select recording_finalize.discover_stuck(10)')))
        as t(e text)),
    null,
    'discovery runs without an error while the lifecycle call is open (a wait for its row '
        || 'would end in the 100 ms lock timeout: it does not wait)'
);
select results_eq(
    $$select recording_id, opened_by from messenger.recording_finalize_attempts
    where recording_id::text like 'c0c0c1b2%'$$,
    format($$values (%L::uuid, 'discovery'::varchar)$$, :'rec2'),
    'discovery opened a row for recording 2 only (recording 1 is the lifecycle''s)'
);
select dblink_exec('rfr_service', 'commit') as s_commit \gset
select results_eq(
    $$select recording_id, opened_by, attempts from messenger.recording_finalize_attempts
    where recording_id::text like 'c0c0c1b2%' order by recording_id$$,
    format($$values (%L::uuid, 'lifecycle'::varchar, 0), (%L::uuid, 'discovery'::varchar, 0)$$,
        :'rec1', :'rec2'),
    'the lifecycle call committed its row: one row per recording'
);

-- 2. Discovery first (recording 3, not committed), then the lifecycle call.
select tests.fixed_uuid('c0c0c1b2', 3) as rec3, tests.fixed_uuid('c0c0c1b2', 103) as ses3 \gset
select tests.exec_committed(format(
    $sql$do $do$ begin
    perform tests.make_recording('Direct', tests.make_session('Direct', '2 hours', %L),
        'Uploading', %L);
    end $do$ $sql$,
    :'ses3', :'rec3'
)) as committed3 \gset
select dblink_exec('rfr_worker', 'begin') as w_begin \gset
select opened from dblink('rfr_worker', format(
    'select recording_finalize.discover_stuck(10)'
)) as t(opened integer) \gset
select is(:opened, 1, 'discovery opens recording 3''s row');
select dblink_send_query('rfr_service', format(
    $$select recording_finalize.recording_stopped(%L, interval '30 minutes')$$, :'rec3'
)) as s_sent \gset
select ok(tests.wait_until_blocked('rfr_service', :service_pid),
    'the lifecycle call waits for the uncommitted discovery');
select dblink_exec('rfr_worker', 'commit') as w_commit \gset
select is((select status from dblink_get_result('rfr_service') as t(status text)), 'Uploading',
    'then goes through without an error');
select is((select count(*) from dblink_get_result('rfr_service') as t(status text)), 0::bigint,
    'no further result');
select results_eq(
    format($$select opened_by, attempts, next_attempt_at = (
            select ended_at + interval '30 minutes' from messenger.call_sessions where id = %L)
        from messenger.recording_finalize_attempts where recording_id = %L$$, :'ses3', :'rec3'),
    $$values ('discovery'::varchar, 0, true)$$,
    'one row, the discovery''s, due at session end + SLA'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c1b2');

select * from finish();
rollback;
