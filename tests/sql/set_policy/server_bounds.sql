-- set_policy: RF010 for a value outside the server's bounds (recording_finalize.settings), one
-- per bound, naming the column, its value and the bound; the bounds themselves are accepted; a
-- refused policy is not stored; the bounds are the owner's to move.
begin;
select plan(19);

-- Raise the lower bound of max attempts, so that it is reachable above the type's floor.
update recording_finalize.settings set max_attempts_min = 3;

create temp table out_of_bounds (call text, col text);
insert into out_of_bounds values
    ('p_max_attempts => 2', 'max_attempts'),
    ('p_max_attempts => 20001', 'max_attempts'),
    ('p_sla_timeout => ''0.5 s''', 'sla_timeout'),
    ('p_sla_timeout => ''24:00:01''', 'sla_timeout'),
    ('p_backoff_base => ''0.05 s''', 'backoff_base'),
    ('p_backoff_base => ''3601 s'', p_backoff_cap => ''3601 s''', 'backoff_base'),
    ('p_backoff_factor => 10.5', 'backoff_factor'),
    ('p_backoff_cap => ''24:00:01''', 'backoff_cap'),
    ('p_backoff_jitter => 0.51', 'backoff_jitter'),
    ('p_upload_grace => ''0.5 s''', 'upload_grace'),
    ('p_upload_grace => ''24:00:01''', 'upload_grace');
create temp table stored as select p.* from recording_finalize.policy as p;

select throws_ok(
    format('select recording_finalize.set_policy(%s)', o.call),
    'RF010', null, format('RF010: %s is outside the server''s bound', o.call)
)
from out_of_bounds as o;
select is_empty(
    $$select o.call, tests.error_of(format('select recording_finalize.set_policy(%s)', o.call))
    from out_of_bounds as o
    where tests.error_of(format('select recording_finalize.set_policy(%s)', o.call))
        !~ ('^RF010: policy_out_of_bounds: ' || o.col || ' is .*; the server''s '
            || 'bound is .*\(recording_finalize.settings\)$')$$,
    'each message names the column, its value and the bound'
);
select matches(
    tests.error_of($$select recording_finalize.set_policy(p_max_attempts => 20001)$$),
    'max_attempts is 20001; the server''s bound is 3\.\.20000',
    'e.g. max_attempts 20001 against 3..20000'
);
select results_eq(
    $$select p.* from recording_finalize.policy as p$$,
    $$select * from stored$$,
    'a refused policy is not stored'
);

-- The bounds themselves are inside.
select lives_ok(
    $$select recording_finalize.set_policy(3, '1 s', '0.1 s', 1, '0.1 s', 0, '1 s')$$,
    'every lower bound is accepted'
);
select lives_ok(
    $$select recording_finalize.set_policy(20000, '24 hours', '1 hour', 10, '24 hours', 0.5,
        '24 hours')$$,
    'every upper bound is accepted'
);

-- The owner moves a bound: the next set_policy follows it.
update recording_finalize.settings set max_attempts_max = 7;
select throws_ok($$select recording_finalize.set_policy()$$,
    'RF010', null, 'even the defaults are checked (8 attempts > 7)');
update recording_finalize.settings set max_attempts_max = 20000;

-- make chaos, make demo and make bench: SLA 1 s, backoff 200 ms x2 up to 2 s, jitter 0.2,
-- 50 attempts; and the test suite's 20000 attempts.
select lives_ok(
    $$select recording_finalize.set_policy(50, '1 s', '200 ms', 2, '2 s', 0.2)$$,
    'the chaos harness''s policy is admitted'
);
select lives_ok($$select recording_finalize.set_policy(20000, '30 minutes')$$,
    'the production defaults and 20000 attempts are admitted');

select * from finish();
rollback;
