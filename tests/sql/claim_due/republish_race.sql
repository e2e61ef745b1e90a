-- claim_due: a republish that meets the service's own event being written and committed while
-- the claim waits for it (within its 100 ms lock timeout) closes the row after all - the
-- service's event is the one, no second event, no realtime row from the claim.
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(9);

-- tests.wait_until_blocked polls every 20 ms; the claim waits 100 ms at most, so this polls
-- every millisecond and the service commits well within the claim's wait.
create function pg_temp.blocked_soon(p_pid integer)
returns boolean
language plpgsql
as $$
declare
    v_deadline timestamptz := clock_timestamp() + interval '90 milliseconds';
begin
    while clock_timestamp() < v_deadline loop
        if cardinality(pg_catalog.pg_blocking_pids(p_pid)) > 0 then
            return true;
        end if;
        perform pg_catalog.pg_sleep(0.001);
    end loop;
    return false;
end
$$;

select tests.delete_committed('c0c0c1b3');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c1b3', 1) as rec, tests.fixed_uuid('c0c0c1b3', 101) as ses \gset
select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
select pid as worker_pid from dblink('rfr_worker', 'select pg_backend_pid()')
    as t(pid integer) \gset
-- The worker's session claims once before the row exists: its first claim plans the claim's
-- statements (tens of milliseconds), which would otherwise fall into the 90 ms window below.
select count(*) as warm from dblink('rfr_worker', 'select action from tests.claim()')
    as t(action text) \gset
select tests.exec_committed(format(
    $sql$do $do$ begin perform tests.make_due_row(tests.make_recording(
        'Direct', tests.make_session('Direct', '2 hours', %L), 'Available', %L), 1);
    end $do$ $sql$,
    :'ses', :'rec'
)) as committed \gset


-- The service has written its event and not committed; it does not need the recording.
select dblink_exec('rfr_service', 'begin') as s_begin \gset
select dblink_exec('rfr_service', format(
    $$insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key,
        payload)
    values ('pin.messenger.call-recording-available.v1', %L, 'call-recording-available', %L,
        '{"writtenBy": "service"}')$$,
    :'ses', :'rec'
)) as s_insert \gset
-- The claim does not see it yet, so it enqueues and waits for the service's key.
select dblink_send_query('rfr_worker',
    'select recording_id, action, attempts, claim_token from tests.claim()') as w_sent \gset
select ok(pg_temp.blocked_soon(:worker_pid),
    'the claim''s enqueue waits for the service''s uncommitted event');
select dblink_exec('rfr_service', 'commit') as s_commit \gset

select results_eq(
    $$select action, attempts, claim_token from dblink_get_result('rfr_worker')
        as t(recording_id uuid, action text, attempts integer, claim_token uuid)$$,
    $$values ('closed', 2, null::uuid)$$,
    'once the service commits within the wait, the claim closes the row (the event exists)'
);
select is((select count(*) from dblink_get_result('rfr_worker')
        as t(recording_id uuid, action text, attempts integer, claim_token uuid)),
    0::bigint, 'no further result');
select results_eq(
    format($$select payload from messenger.integration_outbox where dedupe_key = %L$$, :'rec'),
    $$values ('{"writtenBy": "service"}'::jsonb)$$,
    'one event, the service''s'
);
select results_eq(
    format($$select (select status from messenger.recording_finalize_attempts
            where recording_id = %1$L),
        (select count(*) from messenger.realtime_outbox where reference_id = %1$L)$$, :'rec'),
    $$values ('Done'::varchar, 0::bigint)$$,
    'the row is Done and the claim wrote no realtime row'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c1b3');

select * from finish();
rollback;
