-- Two relays claiming at once get disjoint rows and never wait for each other.
-- The outbox rows are committed through dblink on the server's topic; removed at the end.
begin;
select plan(7);

select tests.delete_committed('c0c0c0c2');
select tests.exec_committed(
    $$insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key,
        payload)
    select 'pin.messenger.call-recording-available.v1', 'k', 'call-recording-available',
        'c0c0c0c2-' || n, jsonb_build_object('n', n)
    from generate_series(1, 6) as n$$
) as inserted \gset

select is(dblink_connect('rfr_relay_b', tests.conninfo()), 'OK', 'relay B connected');
select is(dblink_connect('rfr_relay_c', tests.conninfo()), 'OK', 'relay C connected');
select dblink_exec('rfr_relay_c', $$set lock_timeout = '3s'$$) as c_lock_timeout \gset

-- B leases 3 rows and has not committed yet (it is publishing them).
select dblink_exec('rfr_relay_b', 'begin') as b_begin \gset
create temp table b_rows as
select * from dblink('rfr_relay_b', $$select id from recording_finalize.relay_claim(3,
    interval '1 minute')$$) as t(id bigint);
create temp table c_rows as
select * from dblink('rfr_relay_c', $$select id from recording_finalize.relay_claim(10,
    interval '1 minute')$$) as t(id bigint);

select is((select count(*) from b_rows), 3::bigint, 'B leases 3 rows');
select is((select count(*) from c_rows), 3::bigint, 'C, at the same time, gets the other 3');
select is_empty(
    'select id from b_rows intersect select id from c_rows',
    'no row goes to both relays'
);

select dblink_exec('rfr_relay_b', 'commit') as b_commit \gset
select is(dblink_disconnect('rfr_relay_b'), 'OK', 'relay B disconnected');
select is(dblink_disconnect('rfr_relay_c'), 'OK', 'relay C disconnected');
select tests.delete_committed('c0c0c0c2');

select * from finish();
rollback;
