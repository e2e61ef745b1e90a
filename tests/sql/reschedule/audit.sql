-- reschedule writes one audit row per rescheduled recording: the name and reason given
-- (trimmed), the login that really ran it (session_user, whatever name it gave), what the row
-- was before; an id named twice is rescheduled and audited once.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 8) as rec \gset
select action from tests.claim() \gset
select last_error as old_error from messenger.recording_finalize_attempts
where recording_id = :'rec' \gset
create role rfr_pgtap_audit_operator login in role recording_finalize_operator;

set local session authorization rfr_pgtap_audit_operator;
create temp table requeued as
select * from recording_finalize.reschedule(array[:'rec', :'rec']::uuid[], 'Quarantined',
    '  alice (on-call lead) ', ' approved by the CTO  ', false);
reset session authorization;

select is((select count(*) from requeued), 1::bigint,
    'an id named twice is rescheduled once');
select results_eq(
    format($$select action_kind::text, operator_name, reason, login_role, created_at
    from recording_finalize.operator_actions where recording_id = %L$$, :'rec'),
    $$values ('requeue', 'alice (on-call lead)', 'approved by the CTO',
        'rfr_pgtap_audit_operator', now())$$,
    'one audit row: the name and reason given, trimmed, and the real login'
);
select results_eq(
    format($$select (detail ->> 'attempts')::integer, detail ->> 'quarantineReason',
        detail ->> 'lastError', (detail ->> 'bulk')::boolean
    from recording_finalize.operator_actions where recording_id = %L$$, :'rec'),
    format($$values (8, 'crash_loop', %L, true)$$, :'old_error'),
    'with the row as it was: attempts, reason, last error, and that the call named several ids'
);
select is(
    recording_finalize.explain(:'rec') -> 'operatorActions' -> 0 ->> 'login',
    'rfr_pgtap_audit_operator',
    'explain shows the login next to the name'
);
select is(
    (select count(*) from recording_finalize.operator_actions), 1::bigint,
    'and nothing else was audited'
);

select * from finish();
rollback;
