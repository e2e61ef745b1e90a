-- Two relays claiming at once never share a row and never wait long for each other: while B's
-- claim is uncommitted, C's claim waits at most its lock_timeout (100 ms) for B's lease rows,
-- then leases nothing and returns no row (no error); once B committed, C gets the other rows.
-- The outbox rows are committed through dblink on the server's topic; removed at the end.
begin;
select plan(9);

select tests.exec_committed($$delete from recording_finalize.relay_leases
    where outbox_id in (select id from recording_finalize.outbox
        where recording_id::text like 'c0c0c0c2%')$$) as old_leases \gset
select tests.delete_committed('c0c0c0c2');
select tests.exec_committed(
    $$insert into recording_finalize.outbox (recording_id, topic, message_key, headers,
        payload)
    select tests.fixed_uuid('c0c0c0c2', n), 'pin.messenger.call-recording-available.v1',
        'k', '{}', jsonb_build_object('n', n)
    from generate_series(1, 6) as n$$
) as inserted \gset

select is(dblink_connect('rfr_relay_b', tests.conninfo()), 'OK', 'relay B connected');
select is(dblink_connect('rfr_relay_c', tests.conninfo()), 'OK', 'relay C connected');

-- B leases 3 rows and has not committed yet (it is, say, slow to commit).
select dblink_exec('rfr_relay_b', 'begin') as b_begin \gset
create temp table b_rows as
select * from dblink('rfr_relay_b', $$select id from recording_finalize.relay_claim(3,
    interval '1 minute')$$) as t(id bigint);
select clock_timestamp() as c_started \gset
create temp table c_rows as
select * from dblink('rfr_relay_c', $$select id from recording_finalize.relay_claim(10,
    interval '1 minute')$$) as t(id bigint);

select is((select count(*) from b_rows), 3::bigint, 'B leases 3 rows');
select is((select count(*) from c_rows), 0::bigint,
    'C, meanwhile, leases nothing: the rows it met are being leased by B');
select cmp_ok(clock_timestamp() - :'c_started'::timestamptz, '<', interval '2 seconds',
    'C did not wait for B''s transaction to end');

select dblink_exec('rfr_relay_b', 'commit') as b_commit \gset
insert into c_rows
select * from dblink('rfr_relay_c', $$select id from recording_finalize.relay_claim(10,
    interval '1 minute')$$) as t(id bigint);
select is((select count(*) from c_rows), 3::bigint, 'once B committed, C gets the other 3');
select is_empty(
    'select id from b_rows intersect select id from c_rows',
    'no row goes to both relays'
);

select is(dblink_disconnect('rfr_relay_b'), 'OK', 'relay B disconnected');
select is(dblink_disconnect('rfr_relay_c'), 'OK', 'relay C disconnected');
select tests.exec_committed($$delete from recording_finalize.relay_leases
    where outbox_id in (select id from recording_finalize.outbox
        where recording_id::text like 'c0c0c0c2%')$$) as leases_gone \gset
select tests.delete_committed('c0c0c0c2');

select * from finish();
rollback;
