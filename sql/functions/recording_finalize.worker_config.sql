-- What the last worker to start runs with: where it looks in the file storage, how often.

create or replace function recording_finalize.worker_config()
returns table (
    s3_bucket text,
    s3_key_template text,
    polling_interval interval,
    login_role text,
    reported_at timestamptz
)
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
    select w.s3_bucket, w.s3_key_template, w.polling_interval, w.login_role, w.reported_at
    from recording_finalize.worker_config as w
$$;

comment on function recording_finalize.worker_config() is
'The bucket, key template and polling interval the last worker to start reported '
'(report_worker_config), with its login and when; no row when no worker has started yet. '
'explain HEADs with them and audit judges "overdue" by that interval. Read-only. Worker and '
'operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.worker_config() from public;
grant execute on function recording_finalize.worker_config()
to recording_finalize_worker, recording_finalize_operator;
