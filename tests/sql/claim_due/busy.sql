-- claim_due: busy - a republish whose event the service is writing at that moment. The service
-- (session S) has inserted the event under dedupe key = recording id, not committed, and waits
-- for the recording the claim (session W) holds: the claim's INSERT waits for S, S for the
-- claim. lock_timeout (100 ms) ends the claim's wait: the row comes back busy, is left Pending
-- for the backoff base, no attempt counted, and once the claim commits S gets the recording and
-- commits its own event - the service never loses. The next claim then only closes the row.
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

-- W's transaction holds the recording (a caller of claim_due may; the claim itself locks no
-- recording), so that S's wait is in place before the claim runs.
select dblink_exec('rfr_worker', 'begin') as w_begin \gset
select count(*) as w_locked from dblink('rfr_worker', format(
    'select 1 from messenger.call_recordings where id = %L for no key update', :'rec'
)) as t(one integer) \gset
-- S writes its event first, then needs the recording.
select dblink_exec('rfr_service', 'begin') as s_begin \gset
select dblink_exec('rfr_service', format(
    $$insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key,
        payload)
    values ('pin.messenger.call-recording-available.v1', %L, 'call-recording-available', %L,
        '{"writtenBy": "service"}')$$,
    :'ses', :'rec'
)) as s_insert \gset
select dblink_send_query('rfr_service', format(
    $$update messenger.call_recordings set updated_at = now() where id = %L$$, :'rec'
)) as s_sent \gset
select ok(tests.wait_until_blocked('rfr_service', :service_pid),
    'the service waits for the recording the worker holds');

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

-- The worker commits: the service gets the recording and commits its event.
select dblink_exec('rfr_worker', 'commit') as w_commit \gset
select is((select count(*) from dblink_get_result('rfr_service') as t(r text)), 1::bigint,
    'the service''s update goes through once the claim commits');
select count(*) as s_done from dblink_get_result('rfr_service') as t(r text) \gset
select dblink_exec('rfr_service', 'commit') as s_commit \gset

select results_eq(
    format($$select event_type, payload from messenger.integration_outbox
        where dedupe_key = %L$$, :'rec'),
    $$values ('call-recording-available', '{"writtenBy": "service"}'::jsonb)$$,
    'one event, the service''s own'
);
select results_eq(
    format($$select status, attempts from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'rec'),
    $$values ('Pending'::varchar, 2)$$,
    'the finalize row is still Pending, attempts unchanged'
);

-- Time passes: the next claim finds the event and only closes the row.
select tests.exec_committed(format(
    $$update messenger.recording_finalize_attempts set next_attempt_at = now()
    where recording_id = %L$$, :'rec')) as made_due \gset
select is(
    (select action from dblink('rfr_worker', 'select action from tests.claim()')
        as t(action text)),
    'closed',
    'the next claim closes it: the event exists'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c1b0');

select * from finish();
rollback;
