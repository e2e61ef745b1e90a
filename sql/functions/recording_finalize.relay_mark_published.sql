-- Outbox relay, call 2 of 2: records the broker's acknowledgement of a batch.

create or replace function recording_finalize.relay_mark_published(
    p_ids bigint[],
    p_lease_token uuid
)
returns integer
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
    v_topic text := recording_finalize.our_topic(null);
    v_marked integer;
begin
    -- Only rows of our topic that this relay's claim leased: another topic's rows, rows another
    -- relay took over after the lease ran out, and rows never leased are left alone.
    update messenger.integration_outbox as o
    set published_at = now(), relay_lease_until = null
    where o.id = any(p_ids)
        and o.topic = v_topic
        and o.published_at is null
        and o.relay_lease_token = p_lease_token;
    get diagnostics v_marked = row_count;
    return v_marked;
end
$$;

comment on function recording_finalize.relay_mark_published(bigint[], uuid) is
'Relay call 2: sets published_at on the given outbox rows, but only on unpublished rows of the '
'server''s topic leased with p_lease_token (the token relay_claim returned with them); '
'anything else - another topic''s row, a row another relay re-leased, a NULL or wrong token - '
'is not marked. Call it only with the ids the broker acknowledged. Idempotent: already '
'published rows are skipped; returns how many rows it marked. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.relay_mark_published(bigint[], uuid) from public;
grant execute on function recording_finalize.relay_mark_published(bigint[], uuid)
to recording_finalize_worker;
