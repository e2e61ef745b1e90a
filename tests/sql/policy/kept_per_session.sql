-- A policy a session checked is kept for that session, sealed (recording_finalize.settings
-- .policy_seal_key, the settings row's version): the next call with the same policy is not
-- checked again, but a changed bound is, and a kept policy a caller forged is not believed.
begin;
select plan(6);

create temp table p as select tests.policy(8) as policy;

select is((recording_finalize_internal.policy((select policy from p))).max_attempts, 8,
    'the policy is checked and taken');
select matches(current_setting('recording_finalize.checked_policy', true), '^[0-9a-f]{64} \(',
    'and kept for the session, sealed');

-- The owner narrows the bound: the kept policy is of another row version, checked again.
update recording_finalize.settings set max_attempts_max = 5;
select throws_ok(format('select recording_finalize_internal.policy(%L)', (select policy from p)),
    'RF010', null, 'a bound changed since: the same policy is refused now');
update recording_finalize.settings set max_attempts_max = 20000;

-- A caller forges a kept policy for a policy out of bounds (max attempts 100,000): the seal
-- needs the key it cannot read, so the policy is checked and refused.
select set_config('recording_finalize.checked_policy',
    repeat('0', 64) || ' (pin.messenger.call-recording-available.v1,100000,00:30:00,00:01:00,'
        || '2,00:15:00,0.1,00:30:00,24:00:00)', false) is not null as forged \gset
select throws_ok($$select recording_finalize_internal.policy('{"max_attempts": 100000}')$$,
    'RF010', null, 'a forged kept policy is not believed');
-- Even one whose seal was copied from a policy checked before.
select recording_finalize_internal.policy((select policy from p)) is not null as kept \gset
select set_config('recording_finalize.checked_policy',
    left(current_setting('recording_finalize.checked_policy'), 64)
        || ' (pin.messenger.call-recording-available.v1,100000,00:30:00,00:01:00,2,00:15:00,'
        || '0.1,00:30:00,24:00:00)', false) is not null as copied \gset
select throws_ok($$select recording_finalize_internal.policy('{"max_attempts": 100000}')$$,
    'RF010', null, 'nor one that copies the seal of another policy');
select ok(not (recording_finalize.server_settings() ? 'policy_seal_key'),
    'server_settings does not show the key');

select * from finish();
rollback;
