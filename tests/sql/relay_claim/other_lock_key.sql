-- With p_lock_key, a lease is void only once its holder holds no runner lock any more: a live
-- runner that holds another lock key (a runner the single-runner lock does not hold back) keeps its
-- leases, so the two relays do not publish each other's in-flight events a second time. Once it
-- is gone, its leases are void for the other key's runner as well.
-- The outbox rows are committed through dblink (prefix c0c0c0c7) and removed at the end.
begin;
select plan(8);

\set key_b 5928001741300581
\set key_c 5928001741300582

create function pg_temp.cleanup() returns void language sql as $f$
    select tests.exec_committed($$delete from recording_finalize.relay_leases
        where outbox_id in (select id from recording_finalize.outbox
            where recording_id::text like 'c0c0c0c7%')$$);
    select tests.delete_committed('c0c0c0c7');
$f$;
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

select pg_temp.cleanup();
select tests.exec_committed(
    $$insert into recording_finalize.outbox (recording_id, topic, message_key, headers,
        payload)
    select tests.fixed_uuid('c0c0c0c7', n), 'pin.messenger.call-recording-available.v1',
        'k', '{}', jsonb_build_object('n', n)
    from generate_series(1, 3) as n$$
) as inserted \gset
create temp table events as
select id from recording_finalize.outbox where recording_id::text like 'c0c0c0c7%';

-- B holds key_b and leases the events; C holds key_c.
select dblink_connect('rfr_key_b', tests.conninfo()) as b_up \gset
select dblink_connect('rfr_key_c', tests.conninfo()) as c_up \gset
select ok(
    (select locked from dblink('rfr_key_b', format(
        'select recording_finalize.try_lock_runner(%s)', :key_b)) as t(locked boolean)),
    'B takes its lock'
);
select ok(
    (select locked from dblink('rfr_key_c', format(
        'select recording_finalize.try_lock_runner(%s)', :key_c)) as t(locked boolean)),
    'C takes another key''s lock'
);
select set_eq(
    format($$select * from dblink('rfr_key_b', 'select id from recording_finalize.relay_claim(
        10, interval ''1 minute'', %s)') as t(id bigint)$$, :key_b),
    'select id from events',
    'B leases the three events'
);
select is(
    (select count(*) from dblink('rfr_key_c', format($$select id
        from recording_finalize.relay_claim(10, interval '1 minute', %s)$$, :key_c))
        as t(id bigint)),
    0::bigint,
    'C skips them: their holder B is a live runner (of another key)'
);
select is(
    (select count(distinct lease_token) from recording_finalize.relay_leases
        where outbox_id in (select id from events)),
    1::bigint,
    'the leases are still B''s alone'
);

-- B is killed: its leases are void for C too.
select is(dblink_disconnect('rfr_key_b'), 'OK', 'runner B is gone');
select ok(pg_temp.wait_unlocked(:key_b), 'and with it its lock');
select set_eq(
    format($$select * from dblink('rfr_key_c', 'select id from recording_finalize.relay_claim(
        10, interval ''1 minute'', %s)') as t(id bigint)$$, :key_c),
    'select id from events',
    'C takes B''s leases over at once'
);

select dblink_disconnect('rfr_key_c') as c_gone \gset
select pg_temp.cleanup();

select * from finish();
rollback;
