-- recording_finalize_internal.policy: RF010 for a value outside the server's bounds
-- (recording_finalize.settings), one per bound, naming the key, its value and the bound; the
-- bounds themselves are accepted; RF009 for another topic; P0002 when the settings row is gone.
begin;
select plan(22);

-- Raise the lower bounds that default to the policy's own floor, so that each is reachable.
update recording_finalize.settings set max_attempts_min = 3;

create temp table out_of_bounds (policy text, key text);
insert into out_of_bounds values
    ('{"max_attempts": 2}', 'max_attempts'),
    ('{"max_attempts": 20001}', 'max_attempts'),
    ('{"sla_timeout_seconds": 0.5}', 'sla_timeout_seconds'),
    ('{"sla_timeout_seconds": 86401}', 'sla_timeout_seconds'),
    ('{"backoff_base_seconds": 0.05}', 'backoff_base_seconds'),
    ('{"backoff_base_seconds": 3601, "backoff_cap_seconds": 3601}', 'backoff_base_seconds'),
    ('{"backoff_factor": 10.5}', 'backoff_factor'),
    ('{"backoff_cap_seconds": 86401}', 'backoff_cap_seconds'),
    ('{"backoff_jitter": 0.51}', 'backoff_jitter'),
    ('{"upload_grace_seconds": 0.5}', 'upload_grace_seconds'),
    ('{"upload_grace_seconds": 86401}', 'upload_grace_seconds');

select throws_ok(
    format('select recording_finalize_internal.policy(%L::jsonb)', o.policy),
    'RF010', null, format('RF010: %s outside the server''s bound', o.policy)
)
from out_of_bounds as o;
select is_empty(
    $$select o.policy, tests.error_of(format(
        'select recording_finalize_internal.policy(%L::jsonb)', o.policy)) as error
    from out_of_bounds as o
    where tests.error_of(format('select recording_finalize_internal.policy(%L::jsonb)',
        o.policy)) !~ ('^RF010: policy_out_of_bounds: ' || o.key || ' is .*; the server''s '
            || 'bound is .*\(recording_finalize.settings\)$')$$,
    'each message names the key, its value and the bound'
);
select matches(
    tests.error_of($$select recording_finalize_internal.policy('{"max_attempts": 20001}')$$),
    'max_attempts is 20001; the server''s bound is 3\.\.20000',
    'e.g. max_attempts 20001 against 3..20000'
);

-- The bounds themselves are inside.
select lives_ok(
    $$select recording_finalize_internal.policy('{"max_attempts": 3, "sla_timeout_seconds": 1,
        "backoff_base_seconds": 0.1, "backoff_cap_seconds": 0.1, "backoff_factor": 1,
        "backoff_jitter": 0, "upload_grace_seconds": 1}')$$,
    'every lower bound is accepted'
);
select lives_ok(
    $$select recording_finalize_internal.policy('{"max_attempts": 20000,
        "sla_timeout_seconds": 86400, "backoff_base_seconds": 3600, "backoff_cap_seconds": 86400,
        "backoff_factor": 10, "backoff_jitter": 0.5, "upload_grace_seconds": 86400}')$$,
    'every upper bound is accepted'
);

-- The owner moves a bound: the policy follows at once.
update recording_finalize.settings set max_attempts_max = 10;
select throws_ok($$select recording_finalize_internal.policy('{"max_attempts": 11}')$$,
    'RF010', null, 'a lowered bound refuses what it no longer admits');
update recording_finalize.settings set max_attempts_max = 7;
select throws_ok($$select recording_finalize_internal.policy('{}')$$,
    'RF010', null, 'even the defaults are checked (8 attempts > 7)');
update recording_finalize.settings set max_attempts_max = 20000;

-- The topic.
select throws_ok(
    $$select recording_finalize_internal.policy('{"topic": "pin.billing.invoice-paid.v1"}')$$,
    'RF009', null, 'another topic is RF009'
);
select throws_ok(
    $$select recording_finalize_internal.policy('{"topic": ""}')$$,
    'RF009', null, 'so is an empty one'
);
select lives_ok(
    $$select recording_finalize_internal.policy(
        '{"topic": "pin.messenger.call-recording-available.v1"}')$$,
    'the server''s topic named explicitly is fine'
);
-- Own rules come first: a value both refused by them and out of bounds is RF001.
select throws_ok($$select recording_finalize_internal.policy('{"max_attempts": 0}')$$,
    'RF001', null, 'own rules before the server''s bounds');

delete from recording_finalize.settings;
select throws_ok($$select recording_finalize_internal.policy('{}')$$, 'P0002', null,
    'no settings row: P0002, with a hint to restore it');

select * from finish();
rollback;
