-- The server side of the worker's configuration, for the driver's start-up check and operators.

create or replace function recording_finalize.server_settings()
returns table (
    topic text,
    max_attempts_max integer,
    sla_timeout_min interval,
    sla_timeout_max interval,
    backoff_base_min interval,
    backoff_base_max interval,
    backoff_factor_max double precision,
    backoff_cap_max interval,
    backoff_jitter_max double precision,
    relay_lease_max interval,
    relay_batch_max integer,
    updated_at timestamptz
)
language sql
stable
security definer
set search_path = ''
as $$
    select
        s.topic, s.max_attempts_max, s.sla_timeout_min, s.sla_timeout_max, s.backoff_base_min,
        s.backoff_base_max, s.backoff_factor_max, s.backoff_cap_max, s.backoff_jitter_max,
        s.relay_lease_max, s.relay_batch_max, s.updated_at
    from recording_finalize.settings as s
$$;

comment on function recording_finalize.server_settings() is
'The one row of recording_finalize.settings: the topic every API function works on and the '
'bounds of the policy arguments (RF009/RF010 otherwise). The driver reads it at start and '
'refuses (exit 2) a RFR_TOPIC that differs or an RFR_* value out of bounds. Read-only; only '
'the owner changes the table. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.server_settings() from public;
grant execute on function recording_finalize.server_settings()
to recording_finalize_worker, recording_finalize_operator;
