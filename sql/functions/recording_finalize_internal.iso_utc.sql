-- Renders an instant as ISO-8601 UTC text, independent of the session's TimeZone.

create or replace function recording_finalize_internal.iso_utc(p_at timestamptz)
returns text
language sql
stable
parallel safe
strict
-- No SET clause, so that it is inlined where it is called (see claim_decision).
as $$
    select pg_catalog.to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

comment on function recording_finalize_internal.iso_utc(timestamptz) is
'Internal. ISO-8601 UTC text with microseconds and a Z suffix, e.g. 2026-11-30T09:14:34.123456Z: '
'the event payload''s instants (enqueue_available) and the instants in messages. NULL in, NULL '
'out. STABLE, not IMMUTABLE: to_char() is STABLE.';

revoke all on function recording_finalize_internal.iso_utc(timestamptz) from public;
