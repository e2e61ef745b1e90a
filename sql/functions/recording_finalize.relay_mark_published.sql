-- Outbox relay, call 2 of 2: records the broker's acknowledgement of a batch.

create or replace function recording_finalize.relay_mark_published(p_ids bigint[])
returns integer
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
    v_marked integer;
begin
    update messenger.integration_outbox as o
    set published_at = now(), relay_lease_until = null
    where o.id = any(p_ids) and o.published_at is null;
    get diagnostics v_marked = row_count;
    return v_marked;
end
$$;

comment on function recording_finalize.relay_mark_published(bigint[]) is
'Relay call 2: sets published_at on the given outbox rows. Call it only with the ids the broker '
'acknowledged. Idempotent: already published rows are skipped; returns how many rows it '
'marked. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.relay_mark_published(bigint[]) from public;
grant execute on function recording_finalize.relay_mark_published(bigint[])
to recording_finalize_worker;
