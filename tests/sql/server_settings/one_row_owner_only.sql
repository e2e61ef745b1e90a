-- server_settings: the one row of recording_finalize.settings as a JSON object (every bound,
-- the topic, updated_at; not the singleton key), read by the worker and the operator without
-- any privilege on the table, changed by the owner only, followed at once.
begin;
select plan(10);

create role rfr_pgtap_worker_login login in role recording_finalize_worker;
create role rfr_pgtap_operator_login login in role recording_finalize_operator;

select is(
    pg_typeof(recording_finalize.server_settings())::text, 'jsonb', 'it returns jsonb'
);
select is(
    recording_finalize.server_settings() - 'updated_at',
    '{"topic": "pin.messenger.call-recording-available.v1", "max_attempts_min": 1,
      "max_attempts_max": 20000, "sla_timeout_min": "00:00:01", "sla_timeout_max": "24:00:00",
      "backoff_base_min": "00:00:00.1", "backoff_base_max": "01:00:00",
      "backoff_factor_max": 10, "backoff_cap_max": "24:00:00", "backoff_jitter_max": 0.5,
      "upload_grace_min": "00:00:01", "upload_grace_max": "24:00:00",
      "relay_lease_max": "00:15:00", "relay_batch_max": 10000,
      "retention_min": "1 day"}'::jsonb,
    'the defaults: the production topic and bounds that admit every value in use'
);
set local intervalstyle = 'iso_8601';
select is(
    recording_finalize.server_settings() ->> 'sla_timeout_min', '00:00:01',
    'intervals read the same in a session whose IntervalStyle is iso_8601'
);
reset intervalstyle;
select is(
    (recording_finalize.server_settings() ->> 'updated_at')::timestamptz,
    (select updated_at from recording_finalize.settings),
    'and when they were last changed'
);

set local role rfr_pgtap_worker_login;
select is(
    recording_finalize.server_settings() ->> 'topic',
    'pin.messenger.call-recording-available.v1',
    'the worker reads them through server_settings()'
);
select throws_ok('select * from recording_finalize.settings', '42501', null,
    'but not the table itself');
select throws_ok(
    $$update recording_finalize.settings set topic = 'pin.billing.invoice-paid.v1'$$,
    '42501', null, 'and cannot change them'
);
reset role;
set local role rfr_pgtap_operator_login;
select is(
    (recording_finalize.server_settings() ->> 'relay_batch_max')::integer, 10000,
    'the operator reads them too'
);
select throws_ok(
    $$update recording_finalize.settings set max_attempts_max = 2147483647$$,
    '42501', null, 'and cannot change them either'
);
reset role;

update recording_finalize.settings
set topic = 'rfr.pgtap.other', retention_min = '7 days', max_attempts_min = 3,
    updated_at = now();
set local role rfr_pgtap_worker_login;
select results_eq(
    $$select s ->> 'topic', s ->> 'retention_min', (s ->> 'max_attempts_min')::integer,
        (s ->> 'updated_at')::timestamptz
    from recording_finalize.server_settings() as s$$,
    $$values ('rfr.pgtap.other', '7 days', 3, now())$$,
    'the owner''s change (UPDATE) is what the worker reads next'
);
reset role;

select * from finish();
rollback;
