-- The server settings: one row, sane bounds, read through server_settings() by the worker and
-- the operator, changed by the owner only.
begin;
select plan(9);

create role rfr_pgtap_worker_login login in role recording_finalize_worker;

select results_eq(
    'select * from recording_finalize.server_settings()',
    $$select 'pin.messenger.call-recording-available.v1'::text, 20000, interval '1 second',
        interval '24 hours', interval '100 milliseconds', interval '1 hour', 10::double precision,
        interval '24 hours', 0.5::double precision, interval '15 minutes', 10000,
        (select updated_at from recording_finalize.settings)$$,
    'the defaults: the production topic and bounds that admit every value in use'
);
select is(
    tests.violated_constraint(
        'insert into recording_finalize.settings (singleton) values (false)'
    ),
    'settings_singleton_ck',
    'a second row cannot be added (the key can only be true)'
);
select is(
    tests.violated_constraint('insert into recording_finalize.settings default values'),
    'settings_pkey',
    'nor a second true row'
);
select is(
    tests.violated_constraint($$update recording_finalize.settings set topic = 'bad topic'$$),
    'settings_topic_ck',
    'the topic is a Kafka topic name'
);
select is(
    tests.violated_constraint('update recording_finalize.settings set backoff_jitter_max = 1'),
    'settings_backoff_jitter_max_ck',
    'the jitter bound stays below 1'
);
select is(
    tests.violated_constraint(
        $$update recording_finalize.settings set sla_timeout_min = '1 hour',
            sla_timeout_max = '1 minute'$$
    ),
    'settings_sla_timeout_ck',
    'a bound range cannot be empty'
);

set local role rfr_pgtap_worker_login;
select is(
    (select topic from recording_finalize.server_settings()),
    'pin.messenger.call-recording-available.v1',
    'the worker reads them through server_settings()'
);
select throws_ok(
    $$update recording_finalize.settings set topic = 'pin.billing.invoice-paid.v1'$$,
    '42501', null, 'but cannot change them'
);
reset role;

update recording_finalize.settings set topic = 'rfr.pgtap.other';
select is(
    (select topic from recording_finalize.server_settings()), 'rfr.pgtap.other',
    'the owner changes them with UPDATE'
);

select * from finish();
rollback;
