-- The server's bounds added by migration 0014, for the driver's start-up check and operators.

create or replace function recording_finalize.server_bounds()
returns table (
    retention_min interval,
    marker_retention interval,
    upload_grace_min interval,
    upload_grace_max interval,
    max_attempts_min integer
)
language sql
stable
security definer
set search_path = ''
as $$
    select s.retention_min, s.marker_retention, s.upload_grace_min, s.upload_grace_max,
        s.max_attempts_min
    from recording_finalize.settings as s
$$;

comment on function recording_finalize.server_bounds() is
'The bounds of recording_finalize.settings added by migration 0014 (server_settings() keeps its '
'return type, so drivers already running are not broken): prune''s retention_min and '
'marker_retention, apply_outcome''s upload_grace_min/max, check_policy''s max_attempts_min '
'(RF010 outside them). The driver reads it at start and refuses (exit 2) RFR_RETENTION, '
'RFR_UPLOAD_GRACE or RFR_MAX_ATTEMPTS outside them. Read-only. Worker and operator API '
'(SECURITY DEFINER).';

revoke all on function recording_finalize.server_bounds() from public;
grant execute on function recording_finalize.server_bounds()
to recording_finalize_worker, recording_finalize_operator;
