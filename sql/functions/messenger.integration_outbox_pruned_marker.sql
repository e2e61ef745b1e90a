-- Keeps a marker of every published integration event whose outbox row is deleted.

create or replace function messenger.integration_outbox_pruned_marker()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
begin
    -- Only published rows: an unpublished row deleted by hand never reached a consumer, so the
    -- republish phase may enqueue it again.
    insert into messenger.integration_outbox_pruned (topic, dedupe_key, published_at)
    select d.topic, d.dedupe_key, d.published_at
    from pruned_rows as d
    where d.published_at is not null
    on conflict (topic, dedupe_key) do nothing;
    return null;
end
$$;

comment on function messenger.integration_outbox_pruned_marker() is
'AFTER DELETE statement trigger of messenger.integration_outbox: records (topic, dedupe_key) of '
'every deleted published row in messenger.integration_outbox_pruned, so enqueue_available keeps '
'"once per recording" after the outbox row is gone, whoever deleted it. Idempotent.';

revoke all on function messenger.integration_outbox_pruned_marker() from public;
