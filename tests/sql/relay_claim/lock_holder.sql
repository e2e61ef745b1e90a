-- With p_lock_key, a lease is void once its holder no longer holds the single-runner lock: the
-- events a killed relay leased are published by the next runner at once, not after the lease.
-- Session B takes the lock and claims, then disconnects (a kill); session C takes the lock and
-- claims the same events at once. A live lease of the current holder is skipped, by anyone; a
-- holder that unlocks (alive) loses its leases the same way.
-- The outbox rows are committed through dblink (prefix c0c0c0c3) and removed at the end.
begin;
select plan(18);

\set lock_key 5928001741300577

-- Waits (up to 5 s) until nobody holds the advisory lock p_key: a disconnected backend
-- releases its locks as it exits, a moment after dblink_disconnect returns.
create function pg_temp.wait_unlocked(p_key bigint) returns boolean language plpgsql as $f$
declare
    v_deadline timestamptz := clock_timestamp() + interval '5 seconds';
begin
    loop
        if not exists (select from pg_catalog.pg_locks as l
            where l.locktype = 'advisory' and l.granted and l.objsubid = 1
                and l.classid = ((p_key >> 32) & 4294967295)::oid
                and l.objid = (p_key & 4294967295)::oid) then
            return true;
        end if;
        if clock_timestamp() > v_deadline then
            return false;
        end if;
        perform pg_catalog.pg_sleep(0.02);
    end loop;
end
$f$;
create function pg_temp.cleanup() returns void language sql as $f$
    select tests.exec_committed($$delete from recording_finalize.relay_leases
        where outbox_id in (select id from recording_finalize.outbox
            where recording_id::text like 'c0c0c0c3%')$$);
    select tests.delete_committed('c0c0c0c3');
$f$;

select pg_temp.cleanup();
select tests.exec_committed(
    $$insert into recording_finalize.outbox (recording_id, topic, message_key, headers,
        payload)
    select tests.fixed_uuid('c0c0c0c3', n), 'pin.messenger.call-recording-available.v1',
        'k', '{}', jsonb_build_object('n', n)
    from generate_series(1, 4) as n$$
) as inserted \gset
create temp table events as
select id from recording_finalize.outbox where recording_id::text like 'c0c0c0c3%';

-- B: the runner that will be killed.
select is(dblink_connect('rfr_lock_b', tests.conninfo()), 'OK', 'runner B connected');
select b_pid from dblink('rfr_lock_b', 'select pg_backend_pid()') as t(b_pid integer) \gset
select ok(
    (select locked from dblink('rfr_lock_b', format(
        'select recording_finalize.try_lock_runner(%s)', :lock_key)) as t(locked boolean)),
    'B takes the single-runner lock'
);
create temp table b_rows as
select * from dblink('rfr_lock_b', format($$select id, lease_token
    from recording_finalize.relay_claim(10, interval '1 minute', %s)$$, :lock_key))
    as t(id bigint, lease_token uuid);
select set_eq('select id from b_rows', 'select id from events', 'B leases the four events');
select is(
    (select array_agg(distinct holder_pid) from recording_finalize.relay_leases
        where outbox_id in (select id from events)),
    array[:b_pid],
    'the leases name B, the lock''s holder, as their holder'
);
select max(leased_until) as b_lease_end from recording_finalize.relay_leases
where outbox_id in (select id from events) \gset

-- C, while B is alive and holds the lock: B's leases are live.
select is(dblink_connect('rfr_lock_c', tests.conninfo()), 'OK', 'runner C connected');
select c_pid from dblink('rfr_lock_c', 'select pg_backend_pid()') as t(c_pid integer) \gset
select is(
    (select count(*) from dblink('rfr_lock_c', format($$select id
        from recording_finalize.relay_claim(10, interval '1 minute', %s)$$, :lock_key))
        as t(id bigint)),
    0::bigint,
    'while B holds the lock, its live leases are skipped'
);

-- B is killed (its session ends); C becomes the runner.
select is(dblink_disconnect('rfr_lock_b'), 'OK', 'runner B is gone');
select ok(pg_temp.wait_unlocked(:lock_key), 'and with it its lock');
select ok(
    (select locked from dblink('rfr_lock_c', format(
        'select recording_finalize.try_lock_runner(%s)', :lock_key)) as t(locked boolean)),
    'C takes the lock'
);
create temp table c_rows as
select * from dblink('rfr_lock_c', format($$select id, lease_token
    from recording_finalize.relay_claim(10, interval '1 minute', %s)$$, :lock_key))
    as t(id bigint, lease_token uuid);
select set_eq('select id from c_rows', 'select id from events',
    'C leases the same four events at once');
select cmp_ok(clock_timestamp(), '<', :'b_lease_end'::timestamptz,
    'before B''s leases would have run out');
select results_eq(
    $$select count(*), min(holder_pid), count(distinct lease_token)
    from recording_finalize.relay_leases where outbox_id in (select id from events)
        and lease_token = (select min(lease_token::text)::uuid from c_rows)$$,
    format('values (4::bigint, %s, 1::bigint)', :c_pid),
    'the leases are C''s now: its token, C as holder'
);
select is(
    (select count(*) from dblink('rfr_lock_c', format($$select id
        from recording_finalize.relay_claim(10, interval '1 minute', %s)$$, :lock_key))
        as t(id bigint)),
    0::bigint,
    'C''s own live leases are skipped by its next claim'
);
-- D: another session (every claim runs in its own committed session, so that this test's
-- transaction never holds a lease row the cleanup must delete).
select is(dblink_connect('rfr_lock_d', tests.conninfo()), 'OK', 'runner D connected');
select is(
    (select count(*) from dblink('rfr_lock_d', $$select id
        from recording_finalize.relay_claim(10, interval '1 minute')$$) as t(id bigint)),
    0::bigint,
    'a claim without p_lock_key skips them too (a live lease is a lease)'
);

-- A holder that unlocks, alive, is no longer the holder either.
select ok(
    (select unlocked from dblink('rfr_lock_c', format(
        'select recording_finalize.unlock_runner(%s)', :lock_key)) as t(unlocked boolean)),
    'C releases the lock and stays connected'
);
select ok(
    (select locked from dblink('rfr_lock_d', format(
        'select recording_finalize.try_lock_runner(%s)', :lock_key)) as t(locked boolean)),
    'D takes the lock'
);
select set_eq(
    format($$select * from dblink('rfr_lock_d', 'select id from recording_finalize.relay_claim(
        10, interval ''1 minute'', %s)') as t(id bigint)$$, :lock_key),
    'select id from events',
    'and takes over C''s leases at once'
);

select dblink_disconnect('rfr_lock_c') as c_gone \gset
select dblink_disconnect('rfr_lock_d') as d_gone \gset
select pg_temp.cleanup();

select * from finish();
rollback;
