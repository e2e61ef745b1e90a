-- prune never waits: a finalize row another transaction holds is skipped (SKIP LOCKED), left
-- for a later batch. The fixture rows are committed through dblink (prefix c0c0c0c5).
begin;
select plan(6);

select tests.delete_committed('c0c0c0c5');
select tests.exec_committed(format(
    $f$do $do$ begin
        perform tests.make_due_row(tests.make_recording('Direct',
            tests.make_session('Direct', '2 hours', %L), 'Available', %L), 1, now(), 'Done');
        update messenger.recording_finalize_attempts set updated_at = now() - interval '40 days'
        where recording_id = %L;
    end $do$ $f$,
    tests.fixed_uuid('c0c0c0c5', 1), tests.fixed_uuid('c0c0c0c5', 2),
    tests.fixed_uuid('c0c0c0c5', 2))) as committed \gset

select is(dblink_connect('rfr_holder', tests.conninfo()), 'OK', 'another session connected');
select dblink_exec('rfr_holder', 'begin') as h_begin \gset
select count(*) as h_locked from dblink('rfr_holder', format(
    $$select 1 from messenger.recording_finalize_attempts where recording_id = %L
    for no key update$$, tests.fixed_uuid('c0c0c0c5', 2))) as t(x integer) \gset

set local statement_timeout = '5s';
select clock_timestamp() as started \gset
select is(
    (select finalize from recording_finalize.prune('30 days')), 0::bigint,
    'the held Done row is skipped'
);
select cmp_ok(clock_timestamp() - :'started'::timestamptz, '<', interval '1 second',
    'without waiting for the other transaction');
reset statement_timeout;

select is(dblink_exec('rfr_holder', 'commit'), 'COMMIT', 'the other session lets go');
select is(
    (select finalize from recording_finalize.prune('30 days', p_dry_run => true)), 1::bigint,
    'the row is still there for the next batch'
);
select is(dblink_disconnect('rfr_holder'), 'OK', 'disconnected');
select tests.delete_committed('c0c0c0c5');

select * from finish();
rollback;
