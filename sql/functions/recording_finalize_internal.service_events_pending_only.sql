-- Whether the adapter's service_events can show pending events only: its published_at is the
-- constant NULL, the mapping of an outbox that deletes what it delivered.

create or replace function recording_finalize_internal.service_events_pending_only()
returns boolean
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
    -- The view's stored query, not its rows: an empty outbox answers too, and reading the
    -- catalog costs the same whatever the outbox holds. A constant in a view's target list is
    -- a CONST node whose constisnull is true when it is NULL (any cast of it included).
    return exists (
        select from pg_catalog.pg_rewrite as w
        where w.ev_class = pg_catalog.to_regclass('recording_finalize_adapter.service_events')
            and w.ev_action::text ~ (':expr \{CONST [^{}]*:constisnull true[^{}]*\} '
                ':resno [0-9]+ :resname published_at ')
    );
end
$$;

comment on function recording_finalize_internal.service_events_pending_only() is
'Internal. True when the adapter''s service_events view gives published_at as the constant NULL '
'(null::timestamptz as published_at): a view over an outbox that deletes what it delivered, '
'which shows pending events only, so a delivered event of the service cannot be told from one '
'never enqueued. Read from the view''s definition (pg_rewrite). What republish_trusted, '
'discover_unpublished and check_adapter ask.';

revoke all on function recording_finalize_internal.service_events_pending_only() from public;
