-- reschedule locks the finalize rows FOR NO KEY UPDATE (not FOR UPDATE: a FOR KEY SHARE
-- holder does not block it), in recording-id order whatever the order of the ids given, so
-- two operators never deadlock: with the higher id held by another session, it has already
-- locked the lower one while it waits. It waits at most its lock_timeout (1 s).
-- Two quarantined rows are committed through dblink (prefix c0c0c0c6), removed at the end.
begin;
select plan(10);

select tests.fixed_uuid('c0c0c0c6', 1) as low, tests.fixed_uuid('c0c0c0c6', 2) as high \gset
select tests.delete_committed('c0c0c0c6');
select tests.exec_committed(format(
    $f$do $do$ begin
        perform tests.make_due_row(tests.make_recording('Direct',
            tests.make_session('Direct', '2 hours', %1$L), 'Uploading', %2$L), 8, now(),
            'Quarantined');
        perform tests.make_due_row(tests.make_recording('Direct',
            tests.make_session('Direct', '2 hours', %3$L), 'Uploading', %4$L), 8, now(),
            'Quarantined');
    end $do$ $f$,
    tests.fixed_uuid('c0c0c0c6', 11), :'low', tests.fixed_uuid('c0c0c0c6', 12), :'high'))
    as committed \gset

select is(dblink_connect('rfr_holder', tests.conninfo()), 'OK', 'a holder connected');
select is(dblink_connect('rfr_operator', tests.conninfo()), 'OK', 'an operator connected');

-- 1. A FOR KEY SHARE holder (e.g. a foreign-key check) does not block it.
select dblink_exec('rfr_holder', 'begin') as h_begin \gset
select count(*) as held from dblink('rfr_holder', format($$select 1
    from messenger.recording_finalize_attempts where recording_id = %L for key share$$,
    :'high')) as t(x integer) \gset
select is(
    (select count(*) from dblink('rfr_operator', format($$select recording_id
        from recording_finalize.reschedule(array[%L]::uuid[], 'Quarantined', 'ann', 'why',
            false)$$, :'high')) as t(recording_id uuid)),
    1::bigint,
    'a row held FOR KEY SHARE is rescheduled at once (the lock is not FOR UPDATE)'
);
select dblink_exec('rfr_holder', 'rollback') as h_rollback \gset
select tests.exec_committed(format($$update messenger.recording_finalize_attempts
    set status = 'Quarantined', quarantine_reason = 'max_attempts' where recording_id = %L$$,
    :'high')) as requarantined \gset

-- 2. The higher id held FOR SHARE (conflicts with FOR NO KEY UPDATE): the operator, asked for
-- (high, low) in that order, waits for it - holding the lower one already.
select dblink_exec('rfr_holder', 'begin') as h_begin2 \gset
select count(*) as held2 from dblink('rfr_holder', format($$select 1
    from messenger.recording_finalize_attempts where recording_id = %L for share$$,
    :'high')) as t(x integer) \gset
select operator_pid from dblink('rfr_operator', 'select pg_backend_pid()')
    as t(operator_pid integer) \gset
select is(
    dblink_send_query('rfr_operator', format($$select recording_id
        from recording_finalize.reschedule(array[%L, %L]::uuid[], 'Quarantined', 'ann',
            'why', false)$$, :'high', :'low')),
    1, 'the operator asks for (high, low)'
);
select ok(tests.wait_until_blocked('rfr_operator', :operator_pid),
    'it waits for the higher row');
select alike(
    tests.error_of(format($$select 1 from messenger.recording_finalize_attempts
        where recording_id = %L for update nowait$$, :'low')),
    '55P03:%',
    'while it waits, it holds the lower row already (recording-id order)'
);
select is(dblink_exec('rfr_holder', 'commit'), 'COMMIT', 'the holder lets go');
create temp table operator_result as
select * from dblink_get_result('rfr_operator') as t(recording_id uuid);
select results_eq(
    'select recording_id from operator_result',
    format('values (%L::uuid), (%L::uuid)', :'low', :'high'),
    'then it requeues both, in recording-id order'
);
select ok(
    (select count(*) from dblink_get_result('rfr_operator') as t(recording_id uuid)) = 0,
    'and its call is over'
);

select is(dblink_disconnect('rfr_holder'), 'OK', 'holder disconnected');
select dblink_disconnect('rfr_operator') as o_gone \gset
select tests.delete_committed('c0c0c0c6');

select * from finish();
rollback;
