-- Outbox relay, call 1 of 2: leases a batch of unpublished events of the topic for publishing.

create or replace function recording_finalize.relay_claim(
    p_limit integer default 500,
    p_lease interval default '1 minute',
    p_lock_key bigint default null,
    p_topic text default null
)
returns table (id bigint, message_key text, payload text, headers jsonb, lease_token uuid)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '100ms'
as $$
#variable_conflict use_column
declare
    v_s recording_finalize.settings%rowtype;
    v_token uuid := gen_random_uuid();
    v_holder integer;
    v_live integer[];
    v_ids bigint[];
begin
    -- A caller's topic other than the server's is RF009 (every row of the outbox is of it).
    perform recording_finalize_internal.topic(p_topic);
    perform recording_finalize_internal.check_relay_batch(p_limit);
    if p_lease is null or p_lease <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: relay_claim: p_lease must be > 0, got %s',
                p_lease);
    end if;
    select s.* into v_s from recording_finalize.settings as s;

    -- The session that holds the single-runner lock now (the caller's cycle, p_lock_key). A
    -- lease taken under an earlier holder is void: that runner lost the lock (it died, or its
    -- session ended), so its events are published by this cycle, not after its lease.
    if p_lock_key is not null then
        select l.pid into v_holder
        from pg_catalog.pg_locks as l
        where l.locktype = 'advisory' and l.granted and l.objsubid = 1
            and l.database = (
                select d.oid from pg_catalog.pg_database as d
                where d.datname = pg_catalog.current_database()
            )
            and l.classid = ((p_lock_key >> 32) & 4294967295)::oid
            and l.objid = (p_lock_key & 4294967295)::oid
        limit 1;
        -- The backends that hold a session advisory lock of this database now: a lease whose
        -- holder is one of them is live (a runner of another lock key, a concurrent relay, keeps
        -- its leases); any other holder lost its lock, and its lease is void.
        select pg_catalog.array_agg(l.pid) into v_live
        from pg_catalog.pg_locks as l
        where l.locktype = 'advisory' and l.granted and l.objsubid = 1
            and l.database = (
                select d.oid from pg_catalog.pg_database as d
                where d.datname = pg_catalog.current_database()
            );
    end if;

    -- The lease lives in its own table, beside the product's outbox. A lease
    -- never lasts longer than the server allows. Two relays at once: the second's INSERT waits
    -- for the lease rows the first has not committed yet (a unique-key wait), at most
    -- lock_timeout; past it, this call leases nothing (below) rather than fail the cycle.
    begin
        with candidates as (
            select o.id
            from recording_finalize.outbox as o
            where o.published_at is null
                and not exists (
                    select from recording_finalize.relay_leases as l
                    where l.outbox_id = o.id and l.leased_until > now()
                        and (v_holder is null or l.holder_pid = any(v_live))
                )
            order by o.id
            limit p_limit
        ),
        leased as (
            insert into recording_finalize.relay_leases as l (
                outbox_id, lease_token, leased_until, holder_pid
            )
            select c.id, v_token, now() + least(p_lease, v_s.relay_lease_max), v_holder
            from candidates as c
            on conflict (outbox_id) do update
            set lease_token = excluded.lease_token,
                leased_until = excluded.leased_until,
                holder_pid = excluded.holder_pid,
                leased_at = now()
            where l.leased_until <= now()
                or (excluded.holder_pid is not null
                    and not coalesce(l.holder_pid = any(v_live), false))
            returning l.outbox_id
        )
        select pg_catalog.array_agg(x.outbox_id) into v_ids from leased as x;
    exception when lock_not_available then
        -- Another relay (or prune) holds lease rows of this batch at this moment: they are
        -- its; the rows left are the next call's. Nothing was leased by this one (the block
        -- rolled back), so nothing is returned.
        return;
    end;

    -- Returned only once every lease is in: a row is never handed out unleased.
    return query
    select o.id, o.message_key::text, o.payload::text, o.headers, v_token
    from recording_finalize.outbox as o
    where o.id = any(v_ids)
    order by o.id;
end
$$;

comment on function recording_finalize.relay_claim(integer, interval, bigint, text) is
'Outbox relay, call 1 of 2: leases up to p_limit (1..10000, and at most settings.relay_batch_max: '
'RF010) unpublished rows of the product''s own outbox (recording_finalize.outbox; never a '
'service outbox) for p_lease (capped at '
'settings.relay_lease_max), oldest first, and returns them with payload as the exact text to '
'publish and one lease_token for the batch. The lease is a row of recording_finalize.relay_leases. '
'Live leases are skipped; an expired lease is '
'taken over; with p_lock_key (the single-runner lock the caller''s cycle holds) so is every '
'lease whose holder no longer holds a session advisory lock of this database (it lost the runner '
'lock: killed, its session ended, unlocked), so events leased by a killed relay are published '
'by the next cycle, and a live runner of another lock key keeps its leases. Never waits longer '
'than lock_timeout (100 ms) for another relay''s '
'uncommitted leases: past it, it leases nothing and returns no row (no error). RF001 for bad '
'arguments, RF009 for a p_topic other than the server''s (NULL = the server''s); the COLUMN '
'field of an RF001 or RF010 about p_limit says relay_batch_size. Worker API (SECURITY '
'DEFINER).';

revoke all on function recording_finalize.relay_claim(integer, interval, bigint, text) from public;
grant execute on function recording_finalize.relay_claim(integer, interval, bigint, text)
to recording_finalize_worker;
