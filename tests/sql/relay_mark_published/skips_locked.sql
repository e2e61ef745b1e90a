-- relay_mark_published never waits: a row of the product's outbox another transaction holds
-- (here session "rfr_service" updating it, as an operator's fix or any other writer would) is
-- skipped, not waited for; its lease is dropped, so a later cycle publishes it again (at least
-- once). The other transaction never notices.
-- The outbox rows are committed through dblink (prefix c0c0c0c4) and removed at the end.
begin;
select plan(9);

create function pg_temp.cleanup() returns void language sql as $f$
    select tests.exec_committed($$delete from recording_finalize.relay_leases
        where outbox_id in (select id from recording_finalize.outbox
            where recording_id::text like 'c0c0c0c4%')$$);
    select tests.delete_committed('c0c0c0c4');
$f$;
select pg_temp.cleanup();
select tests.exec_committed(
    $$insert into recording_finalize.outbox (recording_id, topic, message_key, headers,
        payload)
    select tests.fixed_uuid('c0c0c0c4', n), 'pin.messenger.call-recording-available.v1',
        'k', '{}', jsonb_build_object('n', n)
    from generate_series(1, 2) as n$$
) as inserted \gset
select min(id) as held_id, max(id) as free_id from recording_finalize.outbox
where recording_id::text like 'c0c0c0c4%' \gset

-- Another transaction holds one of the rows (it is open).
select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'the service connected');
select dblink_exec('rfr_service', 'begin') as s_begin \gset
select dblink_exec('rfr_service', format(
    $$update recording_finalize.outbox set headers = headers || '{"x-service": "1"}'
    where id = %s$$, :held_id)) as s_update \gset

-- The relay, in its own session (so that this test's transaction holds no row of it).
select is(dblink_connect('rfr_relay', tests.conninfo()), 'OK', 'the relay connected');
create temp table claimed as
select * from dblink('rfr_relay', 'select id, lease_token from recording_finalize.relay_claim(10)')
    as t(id bigint, lease_token uuid);
select min(lease_token::text) as token from claimed \gset
select set_eq('select id from claimed', format('values (%s), (%s)', :held_id, :free_id),
    'the relay leased both rows (the claim only reads the outbox)');

select dblink_exec('rfr_relay', $$set statement_timeout = '5s'$$) as relay_timeout \gset
select clock_timestamp() as mark_started \gset
select is(
    (select marked from dblink('rfr_relay', format(
        $$select recording_finalize.relay_mark_published(array[%s, %s]::bigint[], %L)$$,
        :held_id, :free_id, :'token')) as t(marked integer)),
    1,
    'mark marks the free row and skips the held one'
);
select cmp_ok(clock_timestamp() - :'mark_started'::timestamptz, '<', interval '1 second',
    'without waiting for the service''s transaction');
select results_eq(
    format($$select id, published_at is not null from recording_finalize.outbox
        where id in (%s, %s) order by id$$, :held_id, :free_id),
    format('values (%s::bigint, false), (%s::bigint, true)', :held_id, :free_id),
    'the held row stays unpublished'
);
select is(
    (select count(*) from recording_finalize.relay_leases where lease_token = :'token'),
    0::bigint,
    'both leases are dropped: the held row is claimable again by a later cycle'
);

select is(dblink_exec('rfr_service', 'commit'), 'COMMIT', 'the service commits its update');
select is(
    (select headers ->> 'x-service' from recording_finalize.outbox where id = :held_id),
    '1', 'with its change'
);
select dblink_disconnect('rfr_service') as s_gone \gset
select dblink_disconnect('rfr_relay') as r_gone \gset
select pg_temp.cleanup();

select * from finish();
rollback;
