-- A race with the service, order (a), now that the product's events are its own: a service
-- transaction inserts a recording's event into its own outbox (dedupe key = recording id) and
-- keeps it open while apply_outcome(found) for the same recording runs, then updates the
-- recording. The product's event goes to its own outbox (recording_finalize.outbox), so
-- apply_outcome never waits for the service's uncommitted key (it cannot see it, and shares no
-- unique key with it): it reconciles and commits at once, and no lock cycle can form. The service
-- then updates and commits undisturbed. This is the race the event's contract accepts: one event
-- of each, which consumers de-duplicate by RecordingId. (Before the product's own outbox,
-- apply_outcome waited here for the service's key and gave up busy at its lock_timeout.) Five
-- rounds, one recording each. The fixtures are committed through dblink so the other sessions see
-- them; removed at the end.
begin;
select plan(16);

select tests.delete_committed('c0c0c2a2');
select tests.clean_slate();
create temp table fx as
select n, tests.fixed_uuid('c0c0c2a2', n) as rec, tests.fixed_uuid('c0c0c2a2', 100 + n) as ses
from generate_series(1, 5) as n;
select count(tests.commit_stuck(rec, ses)) as committed from fx \gset

select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
-- Neither side may hang the suite; the service keeps the server's deadlock_timeout.
select dblink_exec('rfr_service', $$set lock_timeout = '10s'$$) as t1,
    dblink_exec('rfr_worker', $$set statement_timeout = '10s'$$) as t2 \gset

-- One claim hands all five rows to the worker.
create temp table claimed as
select * from dblink('rfr_worker',
    $$select recording_id, claim_token from tests.claim()
    where recording_id::text like 'c0c0c2a2%'$$) as t(rec uuid, token uuid);

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

-- One round for recording p_rec.
create function pg_temp.round(p_rec uuid, p_ses uuid, p_token uuid)
returns table (
    worker_waited boolean, service_waited boolean, result text, finalize_status text,
    attempts integer, elapsed float8, service_update text, service_commit text
)
language plpgsql
as $$
declare
    v_service_pid integer := (select pid from public.dblink('rfr_service',
        'select pg_backend_pid()') as t(pid integer));
    v_worker_pid integer := (select pid from public.dblink('rfr_worker',
        'select pg_backend_pid()') as t(pid integer));
begin
    perform public.dblink_exec('rfr_service', 'begin');
    -- 1. The service inserts its event and keeps its transaction open.
    perform public.dblink_exec('rfr_service', format(
        $q$insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key,
            payload)
        values ('pin.messenger.call-recording-available.v1', %L, 'call-recording-available', %L,
            '{"by": "service"}')$q$,
        p_ses, p_rec));
    -- 2. The worker's verdict: it locks the recording, moves it, enqueues its own event.
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
    -- 3. The service updates the recording (its late callback) and commits.
    perform public.dblink_send_query('rfr_service', format(
        $q$update messenger.call_recordings set status = 'Available', file_id = 'recordings/svc',
            size_bytes = 11, duration_seconds = 7, format = 'Webm', available_at = now(),
            version = version + 1, updated_at = now()
        where id = %L$q$,
        p_rec));
    service_waited := pg_temp.seen_waiting_for('rfr_service', v_service_pid, v_worker_pid);
    -- An error on either side leaves its columns NULL: the round fails.
    select s.status into service_update
    from public.dblink_get_result('rfr_service', false) as s(status text);
    perform * from public.dblink_get_result('rfr_service', false) as s(status text);
    service_commit := public.dblink_exec('rfr_service', 'commit');
    return next;
end
$$;

create temp table rounds as
select fx.n, r.*
from fx join claimed as c on c.rec = fx.rec
cross join lateral pg_temp.round(fx.rec, fx.ses, c.token) as r
order by fx.n;

select diag(format('rounds: %s, apply_outcome took at most %s s',
    count(*), round(max(elapsed)::numeric, 3)))
from rounds;
select is((select count(*) from rounds), 5::bigint, 'five rounds ran');
select is_empty(
    $$select n from rounds where service_commit is distinct from 'COMMIT'$$,
    'the service''s transaction committed in every round'
);
select is_empty(
    $$select n from rounds where service_update is distinct from 'UPDATE 1'$$,
    'and its UPDATE of the recording went through in every round'
);
select is_empty(
    $$select n from rounds where (result, finalize_status, attempts)
        is distinct from ('reconciled', 'Done', 1)$$,
    'apply_outcome reconciled every time, its row Done'
);
select is_empty(
    $$select n from rounds where worker_waited or service_waited$$,
    'neither side ever waited for the other (no lock cycle can form)'
);
select cmp_ok(
    (select max(elapsed) from rounds), '<', 0.09::float8,
    'apply_outcome never sat out a lock_timeout (100 ms) on the service''s uncommitted event'
);

-- Afterwards: one event of each per recording (consumers de-duplicate by RecordingId).
select is_empty(
    $$select fx.n from fx where tests.service_event_count(fx.rec) <> 1$$,
    'the service''s own event stands for every recording, untouched'
);
select is_empty(
    $$select fx.n from fx join messenger.integration_outbox as o on o.dedupe_key = fx.rec::text
    where o.payload ->> 'by' is distinct from 'service' or o.published_at is not null$$,
    'the service''s outbox holds only its own rows, unmarked by the product'
);
select is_empty(
    $$select fx.n from fx where tests.event_count(fx.rec) <> 1$$,
    'and the product''s outbox one event per recording (the accepted race: one of each)'
);
select is(
    (select count(*) from messenger.realtime_outbox as o join fx on fx.rec = o.reference_id
        where o.kind = 'RecordingAvailable'),
    5::bigint,
    'one realtime RecordingAvailable row from the worker per recording'
);
select is_empty(
    $$select r.id from fx join messenger.call_recordings as r on r.id = fx.rec
    where (r.status, r.file_id) is distinct from ('Available', 'recordings/svc')$$,
    'each recording is Available, with the service''s later metadata'
);
select is_empty(
    $$select f.recording_id from fx join messenger.recording_finalize_attempts as f
        on f.recording_id = fx.rec
    where (f.status, f.attempts, f.claim_token, f.last_outcome)
        is distinct from ('Done', 1, null, 'found')$$,
    'each finalize row: Done, one attempt, token spent, verdict found'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c2a2');

select * from finish();
rollback;
