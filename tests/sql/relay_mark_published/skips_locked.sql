-- relay_mark_published never waits for the service: a row another transaction holds (the
-- service updating its own outbox row) is skipped, not waited for; its lease is dropped, so a
-- later cycle publishes it again (at least once). The service's transaction never notices.
-- The outbox rows are committed through dblink (prefix c0c0c0c4) and removed at the end.
begin;
select plan(9);

create function pg_temp.cleanup() returns void language sql as $f$
    select tests.exec_committed($$delete from recording_finalize.relay_leases
        where outbox_id in (select id from messenger.integration_outbox
            where dedupe_key like 'c0c0c0c4%')$$);
    select tests.delete_committed('c0c0c0c4');
$f$;
select pg_temp.cleanup();
select tests.exec_committed(
    $$insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key,
        payload)
    select 'pin.messenger.call-recording-available.v1', 'k', 'call-recording-available',
        'c0c0c0c4-' || n, jsonb_build_object('n', n)
    from generate_series(1, 2) as n$$
) as inserted \gset
select min(id) as held_id, max(id) as free_id from messenger.integration_outbox
where dedupe_key like 'c0c0c0c4%' \gset

-- The service holds one of the rows (its transaction is open).
select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'the service connected');
select dblink_exec('rfr_service', 'begin') as s_begin \gset
select dblink_exec('rfr_service', format(
    $$update messenger.integration_outbox set headers = headers || '{"x-service": "1"}'
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
    format($$select id, published_at is not null from messenger.integration_outbox
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
    (select headers ->> 'x-service' from messenger.integration_outbox where id = :held_id),
    '1', 'with its change'
);
select dblink_disconnect('rfr_service') as s_gone \gset
select dblink_disconnect('rfr_relay') as r_gone \gset
select pg_temp.cleanup();

select * from finish();
rollback;
