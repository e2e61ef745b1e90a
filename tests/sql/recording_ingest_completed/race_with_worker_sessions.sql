-- The ingest callback and apply_outcome(found) in two real sessions, the worker first: the
-- worker's transaction holds the recording (moved to Available, event written, uncommitted);
-- the callback waits for it - the service may wait for the worker, never the other way round -
-- and, once the worker commits, answers already_available without a second event.
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(11);

select tests.delete_committed('c0c0c2a5');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c2a5', 1) as rec, tests.fixed_uuid('c0c0c2a5', 101) as ses \gset
select tests.commit_stuck(:'rec', :'ses');

select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
select dblink_exec('rfr_service', $$set lock_timeout = '10s'$$) as t1 \gset
select pid as service_pid from dblink('rfr_service', 'select pg_backend_pid()')
    as t(pid integer) \gset

select token from dblink('rfr_worker', format(
    'select claim_token from tests.claim() where recording_id = %L', :'rec'
)) as t(token uuid) \gset
select dblink_exec('rfr_worker', 'begin') as b \gset
select result as worker_result from dblink('rfr_worker', format(
    $$select result from recording_finalize.apply_outcome(%L, %L, 'found', 'recordings/wrk', 9,
        9, 'Mp4')$$,
    :'rec', :'token'
)) as t(result text) \gset
select is(:'worker_result'::text, 'reconciled', 'the worker reconciled it, not yet committed');

select dblink_send_query('rfr_service', format(
    $$select recording_finalize.recording_ingest_completed(%L, 'recordings/svc', 11, 7, 'Webm')$$,
    :'rec'
)) as sent \gset
select ok(tests.wait_until_blocked('rfr_service', :service_pid),
    'the callback waits for the worker''s transaction');
select is(dblink_exec('rfr_worker', 'commit'), 'COMMIT', 'the worker commits');
select is((select r from dblink_get_result('rfr_service') as t(r text)), 'already_available',
    'then the callback answers already_available');
select is((select count(*) from dblink_get_result('rfr_service') as t(r text)), 0::bigint,
    'no further result');
select results_eq(
    format($$select r.file_id, f.status, (select count(*) from recording_finalize.outbox
            where recording_id = %L)
        from messenger.call_recordings as r
        join messenger.recording_finalize_attempts as f on f.recording_id = r.id
        where r.id = %L$$, :'rec', :'rec'),
    $$values ('recordings/wrk'::text, 'Done'::varchar, 1::bigint)$$,
    'the worker''s metadata stands, the row is Done, one event'
);
select is(tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint, 'one realtime row');

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c2a5');

select * from finish();
rollback;
