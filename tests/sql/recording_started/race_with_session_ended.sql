-- recording_started racing session_ended (two real sessions): the session row is locked FOR
-- SHARE before ended_at is checked, so the end either waits for the start and sees the
-- recording (and opens its finalize row), or runs first and the start fails RF007. Never a
-- Recording recording in an ended session without a finalize row (an orphan nobody rescues).
-- The sessions are committed through dblink so the other sessions see them; removed at the end.
begin;
select plan(13);

select tests.delete_committed('c0c0c0a2');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c0a2', 1) as rec1, tests.fixed_uuid('c0c0c0a2', 101) as s1,
    tests.fixed_uuid('c0c0c0a2', 2) as rec2, tests.fixed_uuid('c0c0c0a2', 102) as s2 \gset
select tests.exec_committed(format(
    $sql$do $do$ begin perform tests.make_session('Direct', null, %L);
    perform tests.make_session('Direct', null, %L); end $do$ $sql$,
    :'s1', :'s2'
)) as committed \gset

select is(dblink_connect('rfr_start', tests.conninfo()), 'OK', 'the starting session connected');
select is(dblink_connect('rfr_end', tests.conninfo()), 'OK', 'the ending session connected');
-- Neither side may hang the suite: a wait that never ends fails on these instead.
select dblink_exec('rfr_start', $$set lock_timeout = '10s'$$) as t1,
    dblink_exec('rfr_end', $$set lock_timeout = '10s'$$) as t2 \gset
select pid as start_pid from dblink('rfr_start', 'select pg_backend_pid()') as t(pid integer) \gset
select pid as end_pid from dblink('rfr_end', 'select pg_backend_pid()') as t(pid integer) \gset

-- 1. The start has inserted its recording and not committed; the session ends meanwhile.
select dblink_exec('rfr_start', 'begin') as b1 \gset
select r as started from dblink('rfr_start', format(
    $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')::text$$,
    :'rec1', :'s1'
)) as t(r text) \gset
select dblink_send_query('rfr_end', format(
    $$select recording_finalize.session_ended('Direct', %L)$$, :'s1'
)) as sent1 \gset
select ok(
    tests.wait_until_blocked('rfr_end', :end_pid),
    'session_ended waits for the uncommitted start (its FOR SHARE on the session)'
);
select dblink_exec('rfr_start', 'commit') as c1 \gset
select is(
    (select id from dblink_get_result('rfr_end') as t(id uuid)), :'rec1'::uuid,
    'once the start commits, session_ended sees the recording and returns it'
);
select is((select count(*) from dblink_get_result('rfr_end') as t(id uuid)), 0::bigint,
    'no further result');
select results_eq(
    format($$select r.status, f.status from messenger.call_recordings as r
        left join messenger.recording_finalize_attempts as f on f.recording_id = r.id
        where r.id = %L$$, :'rec1'),
    $$values ('Uploading'::varchar, 'Pending'::varchar)$$,
    'the recording went Uploading and has its finalize row'
);

-- 2. The end has run and not committed; the start comes meanwhile.
select dblink_exec('rfr_end', 'begin') as b2 \gset
select r as ended from dblink('rfr_end', format(
    $$select recording_finalize.session_ended('Direct', %L)::text$$, :'s2'
)) as t(r text) \gset
select dblink_send_query('rfr_start', format(
    'select tests.error_of(%L)',
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        :'rec2', :'s2'
    )
)) as sent2 \gset
select ok(
    tests.wait_until_blocked('rfr_start', :start_pid),
    'recording_started waits for the uncommitted end'
);
select dblink_exec('rfr_end', 'commit') as c2 \gset
select matches(
    (select e from dblink_get_result('rfr_start') as t(e text)), '^RF007: ',
    'once the end commits, the start fails RF007 (the session has ended)'
);
select is((select count(*) from dblink_get_result('rfr_start') as t(e text)), 0::bigint,
    'no further result');
select is(
    (select count(*) from messenger.call_recordings where id = :'rec2'), 0::bigint,
    'and no recording was inserted'
);

-- The invariant, over both sessions.
select is_empty(
    $$select r.id from messenger.call_recordings as r
    join messenger.call_sessions as s on s.id = r.session_id
    where r.id::text like 'c0c0c0a2%' and s.ended_at is not null
        and r.status in ('Pending', 'Recording', 'Uploading')
        and not exists (
            select from messenger.recording_finalize_attempts as f where f.recording_id = r.id
        )$$,
    'no non-terminal recording in an ended session lacks its finalize row'
);

select is(dblink_disconnect('rfr_start'), 'OK', 'the starting session disconnected');
select is(dblink_disconnect('rfr_end'), 'OK', 'the ending session disconnected');
select tests.delete_committed('c0c0c0a2');

select * from finish();
rollback;
