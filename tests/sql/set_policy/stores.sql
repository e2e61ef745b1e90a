-- set_policy stores the one policy every function reads: an argument left NULL takes the
-- column's default, the upload grace NULL is the SLA; it returns the policy as resolved and what
-- it replaced (another runner's values), and only the worker may call it, without any table
-- privilege. recording_finalize_internal.policy() reads it with the server's topic and grace cap.
begin;
select plan(11);
create role rfr_pgtap_policy_worker login in role recording_finalize_worker;
create role rfr_pgtap_policy_operator login in role recording_finalize_operator;

select recording_finalize.set_policy(p_max_attempts => 5, p_backoff_jitter => 0);
select is(
    recording_finalize.set_policy() - 'replaced',
    jsonb_build_object('topic', 'pin.messenger.call-recording-available.v1', 'max_attempts', 8,
        'sla_timeout_seconds', 1800, 'backoff_base_seconds', 60, 'backoff_factor', 2,
        'backoff_cap_seconds', 900, 'backoff_jitter', 0.1, 'upload_grace_seconds', 1800),
    'no argument: every column default, the grace the SLA, durations in seconds'
);
select results_eq(
    $$select p.* from recording_finalize_internal.policy() as p$$,
    $$values ('pin.messenger.call-recording-available.v1'::text, 8, interval '30 minutes',
        interval '1 minute', 2::double precision, interval '15 minutes', 0.1::double precision,
        interval '30 minutes', interval '24 hours')$$,
    'the reader: the stored policy with the server''s topic and grace cap'
);
select is(
    (recording_finalize.set_policy(p_max_attempts => 3, p_sla_timeout => '10 minutes',
        p_upload_grace => '2 hours') - 'replaced')
        @> '{"max_attempts": 3, "sla_timeout_seconds": 600, "upload_grace_seconds": 7200}',
    true, 'the values given are stored, the rest defaults'
);
select is(
    recording_finalize.set_policy(p_max_attempts => 3, p_sla_timeout => '10 minutes',
        p_upload_grace => '2 hours') -> 'replaced',
    'null'::jsonb, 'the same values again: nothing replaced'
);
select is(
    recording_finalize.set_policy(p_max_attempts => 4) -> 'replaced' ->> 'max_attempts', '3',
    'other values: replaced names what was there (the last writer wins)'
);
select is(
    (select p.upload_grace from recording_finalize.policy as p), null,
    'a grace left NULL is stored NULL'
);
select is((recording_finalize_internal.policy()).upload_grace, interval '30 minutes',
    'and read as the SLA');

set local role rfr_pgtap_policy_worker;
select lives_ok($$select recording_finalize.set_policy(p_max_attempts => 6)$$,
    'the worker sets it');
select throws_ok($$update recording_finalize.policy set max_attempts = 1$$, '42501', null,
    'but cannot write the table: only within the bounds, through set_policy');
reset role;
set local role rfr_pgtap_policy_operator;
select throws_ok($$select recording_finalize.set_policy()$$, '42501', null,
    'the operator cannot set it');
reset role;

delete from recording_finalize.policy;
select throws_ok($$select recording_finalize_internal.policy()$$, 'P0002', null,
    'no policy row: P0002, with a hint to restore it');

select * from finish();
rollback;
