-- apply_outcome while another transaction holds the recording (two real sessions): busy at once
-- (SKIP LOCKED, no wait), the attempt given back and the row due after the backoff base, nothing
-- else written; the other session goes on and commits unaffected.
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(15);

select tests.delete_committed('c0c0c2a1');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c2a1', 1) as rec, tests.fixed_uuid('c0c0c2a1', 101) as ses \gset
select tests.commit_stuck(:'rec', :'ses');

select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
-- Neither side may hang the suite.
select dblink_exec('rfr_service', $$set lock_timeout = '10s'$$) as t1,
    dblink_exec('rfr_worker', $$set statement_timeout = '10s'$$) as t2 \gset

select token from dblink('rfr_worker', format(
    'select claim_token from tests.claim() where recording_id = %L', :'rec'
)) as t(token uuid) \gset

-- The service holds the recording (an UPDATE in flight) and has not committed.
select dblink_exec('rfr_service', 'begin') as b \gset
select dblink_exec('rfr_service', format(
    $$update messenger.call_recordings set status = 'Available', file_id = 'recordings/svc',
        size_bytes = 11, duration_seconds = 7, format = 'Webm', available_at = now(),
        version = version + 1, updated_at = now()
    where id = %L$$, :'rec'
)) as service_update \gset
create temp table recording_before as select * from messenger.call_recordings where id = :'rec';

create temp table applied as
select * from dblink('rfr_worker', format(
    $$select a.*, extract(epoch from clock_timestamp() - statement_timestamp())::float8
    from recording_finalize.apply_outcome(%L, %L, 'found', 'recordings/wrk', 99, 9, 'Mp4') as a$$,
    :'rec', :'token'
)) as t(result text, finalize_status text, attempts integer, detail text, elapsed float8);

select results_eq(
    'select result, finalize_status, attempts, detail from applied',
    $$values ('busy', 'Pending', 0,
        'Busy: the recording was held by another transaction; attempt given back')$$,
    'busy, Pending, the claim''s attempt given back, detail says why'
);
select cmp_ok(
    (select elapsed from applied), '<', 0.09::float8,
    'it returned at once, while the other transaction still holds the recording (a wait would '
    'last apply_outcome''s lock_timeout, 100 ms)'
);
select results_eq(
    format(
        $$select status, attempts, claim_token, last_outcome, quarantine_reason,
            next_attempt_at > now() + interval '50 seconds'
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Pending'::varchar, 0, null::uuid, null::varchar, null::varchar, true)$$,
    'the row: Pending, attempt back, token spent, no verdict recorded, due after the backoff base'
);
select set_eq(
    format('select * from messenger.call_recordings where id = %L', :'rec'),
    'select * from recording_before',
    'the worker wrote nothing to the recording (the committed state is as before)'
);
select is(
    tests.event_count(:'rec') + tests.realtime_count(:'rec', 'RecordingAvailable')
        + tests.realtime_count(:'rec', 'RecordingFailed'),
    0::bigint,
    'nor any outbox row'
);

-- The service was not disturbed: it writes its event and commits.
select is(
    dblink_exec('rfr_service', format(
        $$insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key,
            payload)
        values ('pin.messenger.call-recording-available.v1', %L, 'call-recording-available', %L,
            '{"by": "service"}')$$,
        :'ses', :'rec'
    )),
    'INSERT 0 1',
    'the service inserts its event'
);
select is(dblink_exec('rfr_service', 'commit'), 'COMMIT', 'the service''s transaction commits');
select results_eq(
    format($$select status, file_id, version from messenger.call_recordings where id = %L$$,
        :'rec'),
    $$values ('Available'::varchar, 'recordings/svc'::text, 2)$$,
    'the recording is the service''s'
);
select results_eq(
    format($$select payload ->> 'by' from messenger.integration_outbox where dedupe_key = %L$$,
        :'rec'),
    $$values ('service')$$,
    'exactly one event, the service''s'
);

-- The next cycle (time passes) finds it Available with its event: closed, nothing doubled.
select tests.exec_committed(format(
    $$update messenger.recording_finalize_attempts set next_attempt_at = now()
    where recording_id = %L$$, :'rec'
)) as due \gset
select results_eq(
    $$select action from dblink('rfr_worker', 'select recording_id, action from tests.claim()
        where recording_id::text like ''c0c0c2a1%''') as t(recording_id uuid, action text)$$,
    $$values ('closed')$$,
    'once the row is due again, the claim closes it'
);
select results_eq(
    format('select tests.service_event_count(%L), tests.event_count(%L)', :'rec', :'rec'),
    $$values (1::bigint, 0::bigint)$$,
    'still one event, the service''s: the product enqueued none of its own'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c2a1');

select * from finish();
rollback;
