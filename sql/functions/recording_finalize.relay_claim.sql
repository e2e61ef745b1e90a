-- Outbox relay, call 1 of 2: leases a batch of unpublished events for publishing.

create or replace function recording_finalize.relay_claim(
    p_limit integer default 500,
    p_lease interval default '1 minute',
    p_topic text default null
)
returns table (id bigint, message_key text, payload text, headers jsonb, lease_token uuid)
language plpgsql
volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
    v_topic text := recording_finalize.our_topic(p_topic);
    v_batch_max integer;
    v_lease_max interval;
    v_token uuid := gen_random_uuid();
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('relay_claim: p_limit must be 1..10000, got %s', p_limit);
    end if;
    if p_lease is null or p_lease <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('relay_claim: p_lease must be > 0, got %s', p_lease);
    end if;
    select s.relay_batch_max, s.relay_lease_max into v_batch_max, v_lease_max
    from recording_finalize.settings as s;
    if p_limit > v_batch_max then
        raise exception using
            errcode = 'RF010',
            message = format(
                'policy_out_of_bounds: p_limit is %s; the server''s bound '
                '(recording_finalize.settings) is at most %s', p_limit, v_batch_max
            );
    end if;

    -- The lease outlives this transaction (SKIP LOCKED alone would not): a second relay skips
    -- leased rows until the lease runs out, then may take them over (at-least-once). It never
    -- lasts longer than the server allows, whatever the caller asked for.
    return query
    with picked as (
        select o.id
        from messenger.integration_outbox as o
        where o.topic = v_topic
            and o.published_at is null
            and (o.relay_lease_until is null or o.relay_lease_until < now())
        order by o.id
        limit p_limit
        for update skip locked
    )
    update messenger.integration_outbox as o
    set relay_lease_until = now() + least(p_lease, v_lease_max),
        relay_lease_token = v_token
    from picked
    where o.id = picked.id
    returning o.id, o.message_key, o.payload::text, o.headers, o.relay_lease_token;
end
$$;

comment on function recording_finalize.relay_claim(integer, interval, text) is
'Relay call 1: leases up to p_limit (1..10000, RF001; above the server''s relay_batch_max, '
'RF010) unpublished rows of the server''s topic in id order for p_lease, capped at the '
'server''s relay_lease_max (FOR UPDATE SKIP LOCKED, then a lease that outlives the '
'transaction), and returns id, message_key, payload as text (the exact bytes to publish), '
'headers and lease_token: one fresh token for the whole batch, to present to '
'relay_mark_published. Rows come back in no particular order: sort by id to keep per-key '
'order. A lease that runs out makes the row claimable again (at-least-once), under a new '
'token. p_topic NULL means the server''s topic; another topic raises RF009. RF001 for bad '
'arguments. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.relay_claim(integer, interval, text) from public;
grant execute on function recording_finalize.relay_claim(integer, interval, text)
to recording_finalize_worker;
