-- Whether the adapter's service_events shows at least one event the service delivered.

create or replace function recording_finalize_internal.service_events_show_delivered()
returns boolean
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
    -- Stops at the first delivered row: a service whose outbox keeps what it delivered answers
    -- at once; one that shows pending events only reads them all (few, while its relay works).
    return exists (
        select from recording_finalize_adapter.service_events as e
        where e.published_at is not null
    );
end
$$;

comment on function recording_finalize_internal.service_events_show_delivered() is
'Internal. True when the adapter''s service_events shows an event the service delivered '
'(published_at set). False for an outbox that deletes what it delivered, and for one that keeps '
'it for a retention period a quiet spell outlasted: then a recording whose event the service '
'delivered looks exactly like one whose event was never enqueued. What discover_unpublished '
'and republish_hold ask. STABLE: reads service_events.';

revoke all on function recording_finalize_internal.service_events_show_delivered() from public;
