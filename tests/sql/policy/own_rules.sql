-- recording_finalize_internal.policy: RF001 for what the policy's own rules refuse - not a JSON
-- object, an unknown key, a value of the wrong type, a value out of its own range - and for
-- numbers no integer, interval or double precision can hold (refused with RF001, never a cast
-- error such as 22003). Checked whatever the server's bounds.
begin;
select plan(42);

create temp table bad (policy text, description text);
insert into bad values
    ('[]', 'an array'),
    ('"x"', 'a string'),
    ('null', 'JSON null'),
    ('{"sla": 60}', 'an unknown key'),
    ('{"Max_Attempts": 8}', 'a key in another case'),
    ('{"max_attempts": "8"}', 'max_attempts as a string'),
    ('{"max_attempts": null}', 'max_attempts null'),
    ('{"sla_timeout_seconds": true}', 'sla_timeout_seconds as a boolean'),
    ('{"backoff_base_seconds": [60]}', 'backoff_base_seconds as an array'),
    ('{"backoff_factor": {"x": 2}}', 'backoff_factor as an object'),
    ('{"backoff_cap_seconds": "15m"}', 'backoff_cap_seconds as a string'),
    ('{"backoff_jitter": null}', 'backoff_jitter null'),
    ('{"upload_grace_seconds": "PT30M"}', 'upload_grace_seconds as a string'),
    ('{"topic": 1}', 'topic as a number'),
    ('{"topic": null}', 'topic null'),
    ('{"max_attempts": 0}', 'max_attempts 0'),
    ('{"max_attempts": -1}', 'max_attempts -1'),
    ('{"max_attempts": 1.5}', 'max_attempts 1.5'),
    ('{"max_attempts": 1000000001}', 'max_attempts above 1e9'),
    ('{"sla_timeout_seconds": 0}', 'an SLA of 0'),
    ('{"sla_timeout_seconds": -60}', 'a negative SLA'),
    ('{"sla_timeout_seconds": 0.0000001}', 'an SLA that rounds to 0 microseconds'),
    ('{"sla_timeout_seconds": 1000000001}', 'an SLA above 1e9 seconds'),
    ('{"backoff_base_seconds": 0}', 'a backoff base of 0'),
    ('{"backoff_cap_seconds": 30}', 'a cap below the default base (60)'),
    ('{"backoff_base_seconds": 10, "backoff_cap_seconds": 5}', 'a cap below the base'),
    ('{"upload_grace_seconds": 0}', 'an upload grace of 0'),
    ('{"backoff_factor": 0.5}', 'a backoff factor below 1'),
    ('{"backoff_factor": 1000001}', 'a backoff factor above 1e6'),
    ('{"backoff_jitter": -0.1}', 'a negative jitter'),
    ('{"backoff_jitter": 1}', 'a jitter of 1'),
    -- Huge and tiny numbers: refused by the rules, not by a cast.
    ('{"max_attempts": 1e400}', 'max_attempts 1e400'),
    ('{"max_attempts": 1e-400}', 'max_attempts 1e-400'),
    ('{"sla_timeout_seconds": 1e309}', 'an SLA of 1e309 seconds (beyond double precision)'),
    ('{"backoff_base_seconds": 1e400}', 'a backoff base of 1e400'),
    ('{"backoff_cap_seconds": 1e400}', 'a cap of 1e400'),
    ('{"upload_grace_seconds": -1e400}', 'an upload grace of -1e400'),
    ('{"backoff_factor": 1e400}', 'a backoff factor of 1e400'),
    ('{"backoff_jitter": 1e400}', 'a jitter of 1e400');

select throws_ok(
    format('select recording_finalize_internal.policy(%L::jsonb)', b.policy),
    'RF001', null, 'refused: ' || b.description
)
from bad as b;
select throws_ok(
    'select recording_finalize_internal.policy(null)', 'RF001', null, 'refused: SQL NULL'
);

select matches(
    tests.error_of($$select recording_finalize_internal.policy('{"max_attempts": 1.5}')$$),
    '^RF001: invalid_parameter: max_attempts must be a whole number in 1\.\.1000000000, got ',
    'the message names the rule and the policy'
);
select matches(
    tests.error_of($$select recording_finalize_internal.policy('{"sla": 60}')$$),
    '^RF001: invalid_parameter: unknown policy key sla$',
    'an unknown key is named'
);

select * from finish();
rollback;
