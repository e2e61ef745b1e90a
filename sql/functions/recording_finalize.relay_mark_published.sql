-- Outbox relay, call 2 of 2: records the broker's acknowledgement of leased events.

create or replace function recording_finalize.relay_mark_published(
    p_ids bigint[],
    p_lease_token uuid
)
returns integer
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_marked integer;
begin
    -- Only rows of the product's own outbox leased with this token: rows another relay took
    -- over, rows never leased are left alone. A row held at this moment (prune) is skipped,
    -- never waited for: it is published again by a later cycle (at least once).
    with mine as (
        delete from recording_finalize.relay_leases as l
        where l.outbox_id = any(p_ids) and l.lease_token = p_lease_token
        returning l.outbox_id
    ),
    free as (
        select o.id from recording_finalize.outbox as o
        inner join mine as m on m.outbox_id = o.id
        where o.published_at is null
        for no key update of o skip locked
    )
    update recording_finalize.outbox as o
    set published_at = now()
    from free
    where o.id = free.id;
    get diagnostics v_marked = row_count;
    return v_marked;
end
$$;

comment on function recording_finalize.relay_mark_published(bigint[], uuid) is
'Outbox relay, call 2 of 2 (called as acknowledgements arrive, so a crash re-delivers only what '
'was in flight): sets published_at on the rows of p_ids that are unpublished rows of the '
'product''s own outbox leased with p_lease_token, and drops their leases; returns how many it '
'marked. '
'Never waits: a row another transaction holds is skipped (its lease is dropped, so a later cycle '
'publishes it again). Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.relay_mark_published(bigint[], uuid) from public;
grant execute on function recording_finalize.relay_mark_published(bigint[], uuid)
to recording_finalize_worker;
