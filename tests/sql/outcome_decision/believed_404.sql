-- outcome_decision's first two rules for a 404: the bucket (p_bucket_confirmed false reads it as
-- transient) and the key layout (no object found by the cycle while every known upload looked
-- at, at least two, answered 404 reads it as config_error, KeyLayoutUnconfirmed). The third,
-- the storage incidents, is incident_rule.sql's.
begin;
select plan(12);

select tests.clean_slate();
create function pg_temp.decide(
    p_bucket boolean, p_found integer, p_known_missing integer, p_known_other integer,
    p_outcome text default 'missing'
)
returns table (result text, finalize_status text, attempts integer, next_attempt_at timestamptz,
    last_error text, quarantine_reason text)
language sql as $$
    select d.* from recording_finalize_internal.outcome_decision(p_outcome, null,
        'bucket ''b'', key ''recordings/r''', 3, 8, now() - interval '2 hours', '30 minutes',
        '24 hours', now(), p_bucket, p_found, p_known_missing, p_known_other) as d
$$;

-- Rule 1: the bucket.
select results_eq(
    'select result, finalize_status, attempts from pg_temp.decide(false, null, null, null)',
    $$values ('held_by_incident', 'Pending', 2)$$,
    'bucket unconfirmed: the 404 is read as transient (held: the cycle opens its incident)');
select matches((select last_error from pg_temp.decide(false, null, null, null)),
    '^Transient: 404 \(bucket unconfirmed\): bucket ''b'', key ''recordings/r''',
    'last_error says the bucket was unconfirmed and names bucket and key');
select results_eq('select result from pg_temp.decide(false, 1, 3, 0)',
    $$values ('held_by_incident')$$,
    'the bucket rule comes first: found objects do not make an unconfirmed bucket''s 404 true');

-- Rule 2: the key layout.
select results_eq(
    'select result, finalize_status, attempts, next_attempt_at from pg_temp.decide(true, 0, 3, 0)',
    $$values ('config_error_released', 'Pending', 2, now())$$,
    'nothing found, three known uploads all 404: a configuration error, attempt back, due now');
select matches((select last_error from pg_temp.decide(true, null, 2, null)),
    '^ConfigError: KeyLayoutUnconfirmed: the 2 newest uploaded recordings answered 404 too, so '
    'this 404 \(bucket ''b'', key ''recordings/r''\) .*RFR_S3_BUCKET and RFR_S3_KEY_TEMPLATE$',
    'two suffice; last_error names the rule, bucket and key, and the settings to check');
select is((select result from pg_temp.decide(true, 0, 1, 0)), 'failed',
    'one known upload 404 alone is no proof (one binary deleted by hand must not stop the worker)');
select is((select result from pg_temp.decide(true, 0, 2, 1)), 'failed',
    'a known upload that answered otherwise: the layout is not disproved');
select is((select result from pg_temp.decide(true, 1, 3, 0)), 'failed',
    'an object found this cycle confirms the layout');
select is((select result from pg_temp.decide(true, null, null, null)), 'failed',
    'known uploads not looked at: the bucket alone stands');
select is((select result from pg_temp.decide(null, null, null, null)), 'failed',
    'nothing reported: the 404 is believed (as before these facts)');
select is((select result from pg_temp.decide(true, 0, 3, 0, 'transient')), 'backoff',
    'the rules are a 404''s: a transient answer is what it is');
select is((select result from pg_temp.decide(false, 0, 3, 0, 'found')), 'reconciled',
    'and a found object is reconciled whatever the storage facts');

select * from finish();
rollback;
