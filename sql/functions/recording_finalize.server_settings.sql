-- The server side of the worker's configuration, for operators and the driver's messages.

create or replace function recording_finalize.server_settings()
returns jsonb
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
-- The bounds are intervals: rendered the same way whatever the caller's IntervalStyle (an
-- iso_8601 session would read PT1S where everyone else reads 00:00:01).
set intervalstyle = 'postgres'
as $$
    select pg_catalog.to_jsonb(s) - 'singleton'
    from recording_finalize.settings as s
$$;

comment on function recording_finalize.server_settings() is
'The one row of recording_finalize.settings as a JSON object (topic and every bound, intervals '
'in the postgres IntervalStyle whatever the session''s, e.g. 00:00:01, 1 day): what '
'set_policy holds a policy to. Read-only; only the owner changes the table (UPDATE). '
'Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.server_settings() from public;
grant execute on function recording_finalize.server_settings()
to recording_finalize_worker, recording_finalize_operator;
