-- report_worker_config / worker_config: the last worker to start wins, one row; RF001 for an
-- empty value.
begin;
select plan(5);

delete from recording_finalize.worker_config;
select is_empty($$select * from recording_finalize.worker_config()$$,
    'no worker has reported: no row');
select recording_finalize.report_worker_config('bucket-a', 'recordings/{recording_id}', '1 minute');
select recording_finalize.report_worker_config('bucket-b', 'rec/{recording_id}.webm', '30 seconds');
select results_eq(
    $$select s3_bucket, s3_key_template, polling_interval, login_role = session_user
    from recording_finalize.worker_config()$$,
    $$values ('bucket-b', 'rec/{recording_id}.webm', interval '30 seconds', true)$$,
    'the last report wins, with its login'
);
select is((select count(*) from recording_finalize.worker_config), 1::bigint, 'one row');
select throws_ok($$select recording_finalize.report_worker_config('', 'k', '1 minute')$$,
    'RF001', null, 'an empty bucket');
select throws_ok($$select recording_finalize.report_worker_config('b', 'k', '0 seconds')$$,
    'RF001', null, 'an interval of 0');

select * from finish();
rollback;
