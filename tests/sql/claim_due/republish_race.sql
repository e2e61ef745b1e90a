-- claim_due: a republish that meets the service's own event being written (not committed yet)
-- does not wait for it: the product's event goes to its own outbox, which shares no key with the
-- service's, so the claim republishes at once while the service's transaction is still open.
-- Once the service commits there is one event of each - the race the event's contract accepts
-- (consumers de-duplicate by RecordingId). (Before the product's own outbox, the claim waited
-- for the service's key within its lock timeout and then closed the row.)
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(9);

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
-- The claim does not see it, and does not wait for it.
select dblink_send_query('rfr_worker',
    'select recording_id, action, attempts, claim_token from tests.claim()') as w_sent \gset
select results_eq(
    $$select action, attempts, claim_token from dblink_get_result('rfr_worker')
        as t(recording_id uuid, action text, attempts integer, claim_token uuid)$$,
    $$values ('republished', 2, null::uuid)$$,
    'the claim republishes while the service''s transaction is still open (no wait on its key)'
);
select is((select count(*) from dblink_get_result('rfr_worker')
        as t(recording_id uuid, action text, attempts integer, claim_token uuid)),
    0::bigint, 'no further result');
select is(dblink_exec('rfr_service', 'commit'), 'COMMIT', 'the service commits undisturbed');
select results_eq(
    format($$select tests.service_event_count(%1$L), tests.event_count(%1$L),
        (select payload ->> 'writtenBy' from messenger.integration_outbox
            where dedupe_key = %1$L::text)$$, :'rec'),
    $$values (1::bigint, 1::bigint, 'service')$$,
    'one event of each: the service''s own, untouched, and the product''s'
);
select results_eq(
    format($$select (select status from messenger.recording_finalize_attempts
            where recording_id = %1$L),
        (select count(*) from messenger.realtime_outbox where reference_id = %1$L)$$, :'rec'),
    $$values ('Done'::varchar, 1::bigint)$$,
    'the row is Done and the claim wrote its realtime row'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c1b3');

select * from finish();
rollback;
