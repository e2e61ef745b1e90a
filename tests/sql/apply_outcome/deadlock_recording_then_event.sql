-- A deadlock with the service, order (b): a service transaction updates a recording first and then
-- inserts its event (dedupe key = recording id), while apply_outcome(found) for the same recording
-- runs in between: after the UPDATE (odd rounds) or after the INSERT too (even rounds). The
-- service holds the recording, so apply_outcome (SKIP LOCKED) returns busy at once without waiting
-- for anything; the service is never disturbed and commits, every time. Six rounds, one recording
-- each. The fixtures are committed through dblink so the other sessions see them; removed at the
-- end.
begin;
select plan(16);

select tests.delete_committed('c0c0c2a3');
select tests.clean_slate();
create temp table fx as
select n, tests.fixed_uuid('c0c0c2a3', n) as rec, tests.fixed_uuid('c0c0c2a3', 100 + n) as ses
from generate_series(1, 6) as n;
select count(tests.commit_stuck(rec, ses)) as committed from fx \gset

select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
-- Neither side may hang the suite; the service keeps the server's deadlock_timeout.
select dblink_exec('rfr_service', $$set lock_timeout = '10s'$$) as t1,
    dblink_exec('rfr_worker', $$set statement_timeout = '10s'$$) as t2 \gset

-- One claim hands all six rows to the worker.
create temp table claimed as
select * from dblink('rfr_worker',
    $$select recording_id, claim_token from tests.claim()
    where recording_id::text like 'c0c0c2a3%'$$) as t(rec uuid, token uuid);

-- Waits (polling every 2 ms) until p_pid waits for a lock held by p_blocker, or until its
-- connection's async query is done: true = it was seen waiting for p_blocker.
create function pg_temp.seen_waiting_for(p_conn text, p_pid integer, p_blocker integer)
returns boolean
language plpgsql
as $$
declare
    v_deadline timestamptz := clock_timestamp() + interval '5 seconds';
begin
    loop
        if p_blocker = any(pg_catalog.pg_blocking_pids(p_pid)) then
            return true;
        end if;
        if public.dblink_is_busy(p_conn) = 0 or clock_timestamp() > v_deadline then
            return false;
        end if;
        perform pg_catalog.pg_sleep(0.002);
    end loop;
end
$$;

-- One round for recording p_rec; p_after_insert: the worker comes after the service's INSERT.
create function pg_temp.round(p_rec uuid, p_ses uuid, p_token uuid, p_after_insert boolean)
returns table (
    worker_waited boolean, result text, finalize_status text, attempts integer, elapsed float8,
    service_update text, service_insert text, service_commit text
)
language plpgsql
as $$
declare
    v_service_pid integer := (select pid from public.dblink('rfr_service',
        'select pg_backend_pid()') as t(pid integer));
    v_worker_pid integer := (select pid from public.dblink('rfr_worker',
        'select pg_backend_pid()') as t(pid integer));
    v_insert text := format(
        $q$insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key,
            payload)
        values ('pin.messenger.call-recording-available.v1', %L, 'call-recording-available', %L,
            '{"by": "service"}')$q$,
        p_ses, p_rec);
begin
    perform public.dblink_exec('rfr_service', 'begin');
    -- 1. The service updates the recording and keeps its transaction open.
    service_update := public.dblink_exec('rfr_service', format(
        $q$update messenger.call_recordings set status = 'Available', file_id = 'recordings/svc',
            size_bytes = 11, duration_seconds = 7, format = 'Webm', available_at = now(),
            version = version + 1, updated_at = now()
        where id = %L$q$,
        p_rec), false);
    if p_after_insert then
        service_insert := public.dblink_exec('rfr_service', v_insert, false);
    end if;
    -- 2. The worker's verdict (asynchronously, so that a wait would show).
    perform public.dblink_send_query('rfr_worker', format(
        $q$select a.result, a.finalize_status, a.attempts,
            extract(epoch from clock_timestamp() - statement_timestamp())::float8
        from recording_finalize.apply_outcome(%L, %L, 'found', 'recordings/wrk', 99, 9, 'Mp4') as a$q$,
        p_rec, p_token));
    worker_waited := pg_temp.seen_waiting_for('rfr_worker', v_worker_pid, v_service_pid);
    select w.result, w.finalize_status, w.attempts, w.elapsed
    into result, finalize_status, attempts, elapsed
    from public.dblink_get_result('rfr_worker', false) as w(
        result text, finalize_status text, attempts integer, elapsed float8);
    perform * from public.dblink_get_result('rfr_worker', false) as w(
        result text, finalize_status text, attempts integer, elapsed float8);
    -- 3. The service inserts its event (if it has not yet) and commits.
    if not p_after_insert then
        service_insert := public.dblink_exec('rfr_service', v_insert, false);
    end if;
    service_commit := public.dblink_exec('rfr_service', 'commit');
    return next;
end
$$;

create temp table rounds as
select fx.n, r.*
from fx join claimed as c on c.rec = fx.rec
cross join lateral pg_temp.round(fx.rec, fx.ses, c.token, fx.n % 2 = 0) as r
order by fx.n;

select diag(format('rounds: %s, apply_outcome took at most %s s',
    count(*), round(max(elapsed)::numeric, 3)))
from rounds;
select is((select count(*) from rounds), 6::bigint, 'six rounds ran');
select is_empty(
    $$select n from rounds where service_commit is distinct from 'COMMIT'$$,
    'the service''s transaction committed in every round'
);
select is_empty(
    $$select n from rounds where (service_update, service_insert)
        is distinct from ('UPDATE 1', 'INSERT 0 1')$$,
    'its UPDATE and its INSERT went through in every round'
);
select is_empty(
    $$select n from rounds where (result, finalize_status, attempts)
        is distinct from ('busy', 'Pending', 0)$$,
    'apply_outcome returned busy every time, the attempt given back'
);
select is_empty(
    $$select n from rounds where worker_waited$$,
    'apply_outcome never waited for the service (the recording is skipped, not waited for)'
);
select cmp_ok(
    (select max(elapsed) from rounds), '<',
    extract(epoch from current_setting('deadlock_timeout')::interval)::float8 / 2,
    'apply_outcome returned well under deadlock_timeout'
);

-- Afterwards: the service's writes stand, exactly one event each, nothing of the worker's.
select is_empty(
    $$select fx.n from fx where (select count(*) from messenger.integration_outbox as o
        where o.dedupe_key = fx.rec::text) <> 1$$,
    'exactly one event per recording'
);
select is_empty(
    $$select fx.n from fx join messenger.integration_outbox as o on o.dedupe_key = fx.rec::text
    where o.payload ->> 'by' is distinct from 'service'$$,
    'each is the service''s own'
);
select is_empty(
    $$select fx.n from fx where tests.event_count(fx.rec) <> 0$$,
    'and the product''s outbox holds none for them'
);
select is_empty(
    $$select r.id from fx join messenger.call_recordings as r on r.id = fx.rec
    where (r.status, r.file_id, r.version) is distinct from ('Available', 'recordings/svc', 2)$$,
    'each recording is the service''s: Available with its metadata, one version step'
);
select is(
    (select count(*) from messenger.realtime_outbox as o join fx on fx.rec = o.reference_id),
    0::bigint,
    'no realtime row from the worker'
);
select is_empty(
    $$select f.recording_id from fx join messenger.recording_finalize_attempts as f
        on f.recording_id = fx.rec
    where (f.status, f.attempts, f.claim_token, f.last_outcome)
        is distinct from ('Pending', 0, null, null)$$,
    'each finalize row: Pending, attempt given back, token spent, no verdict recorded'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c2a3');

select * from finish();
rollback;
