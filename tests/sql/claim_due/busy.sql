-- claim_due: busy - a republish whose event a service transaction is writing at that moment.
-- The product's events are its own (recording_finalize.outbox, unique by recording), so the one
-- writer the claim can meet there is the service's duplicated callback,
-- recording_ingest_completed, for the same Available recording: S has enqueued the event (not
-- committed) and waits for the finalize row the worker's transaction W holds; the claim's INSERT
-- waits for S's uncommitted key. lock_timeout (100 ms) ends the claim's wait: the row comes back
-- busy, is left Pending for the backoff base, no attempt counted, and once W commits S closes
-- the row and commits the one event - the service never loses.
-- (The service writing its OWN outbox no longer makes anyone wait: apply_outcome and the claim
-- never share a key with it; see apply_outcome/service_event_uncommitted.sql.)
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(13);

select tests.delete_committed('c0c0c1b0');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c1b0', 1) as rec, tests.fixed_uuid('c0c0c1b0', 101) as ses \gset
select tests.exec_committed(format(
    $sql$do $do$ begin perform tests.make_due_row(tests.make_recording(
        'Direct', tests.make_session('Direct', '2 hours', %L), 'Available', %L), 2);
    end $do$ $sql$,
    :'ses', :'rec'
)) as committed \gset

select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
-- Neither side may hang the suite.
select dblink_exec('rfr_service', $$set lock_timeout = '10s'$$) as t1,
    dblink_exec('rfr_worker', $$set statement_timeout = '10s'$$) as t2 \gset
select pid as service_pid from dblink('rfr_service', 'select pg_backend_pid()')
    as t(pid integer) \gset
select pid as worker_pid from dblink('rfr_worker', 'select pg_backend_pid()')
    as t(pid integer) \gset

-- W's transaction holds the finalize row (a caller of claim_due may; the claim takes it again
-- in the same transaction), so that S's wait is in place before the claim runs.
select dblink_exec('rfr_worker', 'begin') as w_begin \gset
select count(*) as w_locked from dblink('rfr_worker', format(
    'select 1 from messenger.recording_finalize_attempts where recording_id = %L for update',
    :'rec'
)) as t(one integer) \gset
-- S: the duplicated callback enqueues the event, then needs the finalize row to close it.
select dblink_send_query('rfr_service', format(
    $$select recording_finalize.recording_ingest_completed(%L, 'recordings/svc', 11, 7,
        'Webm')$$,
    :'rec'
)) as s_sent \gset
select ok(tests.wait_until_blocked('rfr_service', :service_pid),
    'the service''s callback waits for the finalize row the worker holds');

select clock_timestamp() as claim_started \gset
create temp table claimed as
select * from dblink('rfr_worker', 'select recording_id, action, attempts, claim_token, detail
    from tests.claim()')
    as t(recording_id uuid, action text, attempts integer, claim_token uuid, detail text);
select extract(epoch from clock_timestamp() - :'claim_started'::timestamptz) as claim_seconds
\gset

select results_eq(
    'select recording_id, action, attempts, claim_token, detail from claimed',
    format($$values (%L::uuid, 'busy', 2, null::uuid, 'Available')$$, :'rec'),
    'the claim returns the row busy: no token, no attempt counted'
);
select cmp_ok(:claim_seconds::numeric, '<', 0.9,
    format('it gave up after about 100 ms, before any deadlock check (%s s)', :'claim_seconds'));
select results_eq(
    format($$select * from dblink('rfr_worker', %L)
        as t(status text, attempts integer, claim_token uuid, due_in interval)$$,
        format($$select status, attempts, claim_token, next_attempt_at - now()
            from messenger.recording_finalize_attempts where recording_id = %L$$, :'rec')),
    $$values ('Pending', 2, null::uuid, interval '1 minute')$$,
    'in the worker''s transaction the row is Pending, due after the backoff base (1 minute)'
);
select is(
    (select n from dblink('rfr_worker', format(
        'select count(*) from messenger.realtime_outbox where reference_id = %L', :'rec'))
        as t(n bigint)),
    0::bigint,
    'and the claim wrote no realtime row'
);

-- The worker commits: the service's callback gets the row, closes it and commits.
select dblink_exec('rfr_worker', 'commit') as w_commit \gset
select is(
    (select r from dblink_get_result('rfr_service') as t(r text)),
    'already_available',
    'the service''s callback goes through once the claim commits'
);
select count(*) as s_done from dblink_get_result('rfr_service') as t(r text) \gset

select results_eq(
    format($$select tests.event_count(%L), tests.service_event_count(%L),
        tests.realtime_count(%L, 'RecordingAvailable')$$, :'rec', :'rec', :'rec'),
    $$values (1::bigint, 0::bigint, 1::bigint)$$,
    'one event in the product''s outbox (the callback''s) and one realtime row, nothing doubled'
);
select results_eq(
    format($$select status, attempts from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'rec'),
    $$values ('Done'::varchar, 2)$$,
    'the finalize row is Done, closed by the callback; the claim counted no attempt'
);

-- Time passes: the next claim has nothing left to do for it.
select is(
    (select count(*) from dblink('rfr_worker', format(
        'select action from tests.claim() where recording_id = %L', :'rec'))
        as t(action text)),
    0::bigint,
    'the next claim does not take the closed row'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c1b0');

select * from finish();
rollback;
