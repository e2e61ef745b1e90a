-- Renders a payload timestamp: ISO-8601 UTC, independent of the session TimeZone.

create or replace function recording_finalize.iso_utc(p_at timestamptz)
returns text
language sql
stable
parallel safe
strict
set search_path = ''
as $$
    select pg_catalog.to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

comment on function recording_finalize.iso_utc(timestamptz) is
'ISO-8601 UTC text with microseconds and a Z suffix, e.g. 2026-11-30T09:14:34.123456Z. '
'Both the happy path and the safety net render payload timestamps through it, so their '
'messages are byte-compatible whatever the connection''s TimeZone. NULL in, NULL out. '
'STABLE, not IMMUTABLE: to_char() is STABLE (its output may follow settings such as lc_time '
'for some patterns), and a function cannot promise more than what it calls.';

revoke all on function recording_finalize.iso_utc(timestamptz) from public;
