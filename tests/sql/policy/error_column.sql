-- recording_finalize_internal.policy names the policy key each refusal is about in the error's
-- COLUMN field (what the driver reads to name the RFR_* variable, never the message text):
-- RF001 for an unknown key, a wrong type or a rule, RF010 for a bound, RF009 topic.
begin;
select plan(14);

-- The COLUMN field of the error a statement raises (NULL if none is named or none raised).
create function pg_temp.column_of(p_sql text) returns text language plpgsql as $f$
declare
    v_column text;
begin
    execute p_sql;
    return '(no error)';
exception when others then
    get stacked diagnostics v_column = column_name;
    return nullif(v_column, '');
end
$f$;

create temp table cases (policy text, key text);
insert into cases values
    ('{"bogus": 1}', 'bogus'),
    ('{"backoff_factor": "2"}', 'backoff_factor'),
    ('{"max_attempts": 1.5}', 'max_attempts'),
    ('{"sla_timeout_seconds": 0}', 'sla_timeout_seconds'),
    ('{"backoff_base_seconds": 1e400}', 'backoff_base_seconds'),
    ('{"backoff_cap_seconds": 1}', 'backoff_cap_seconds'),
    ('{"upload_grace_seconds": -1}', 'upload_grace_seconds'),
    ('{"backoff_jitter": 1}', 'backoff_jitter'),
    ('{"max_attempts": 20001}', 'max_attempts'),
    ('{"sla_timeout_seconds": 86401}', 'sla_timeout_seconds'),
    ('{"backoff_factor": 11}', 'backoff_factor'),
    ('{"upload_grace_seconds": 0.5}', 'upload_grace_seconds'),
    ('{"topic": "pin.billing.invoice-paid.v1"}', 'topic');

select is(
    pg_temp.column_of(format('select recording_finalize_internal.policy(%L::jsonb)', c.policy)),
    c.key,
    format('%s: the error names %s', c.policy, c.key)
)
from cases as c;
select is(
    pg_temp.column_of($$select recording_finalize.check_policy('{"backoff_jitter": 0.9}')$$),
    'backoff_jitter',
    'through check_policy, as the driver calls it'
);

select * from finish();
rollback;
