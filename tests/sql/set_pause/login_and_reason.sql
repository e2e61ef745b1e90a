-- The audit trail records the real login (DBA review finding 5): any operator login may give any
-- name, so the session_user is stored next to it (operator actions and the pause switch) and
-- shown by explain and operator_state; a pause needs a reason; a re-pause is dated anew.
begin;
select plan(9);

delete from messenger.recording_finalize_pause;
delete from messenger.recording_finalize_operator_actions;
select tests.clean_slate();
select tests.make_stuck() as rec \gset
create role rfr_pgtap_audit_operator login in role recording_finalize_operator;

set local session authorization rfr_pgtap_audit_operator;
select throws_ok($$select * from recording_finalize.set_pause('relay', true, 'ann', null)$$,
    'RF001', null, 'a pause without a reason is refused');
select throws_ok($$select * from recording_finalize.set_pause('relay', true, 'ann', ' ')$$,
    'RF001', null, 'so is a blank reason');
select lives_ok($$select * from recording_finalize.set_pause('relay', true,
    'security-team', 'broker upgrade')$$, 'a pause under someone else''s name');
select lives_ok(format($$select * from recording_finalize.operator_retry(%L,
    'alice (on-call lead)', 'approved by CTO')$$, :'rec'), 'a retry under someone else''s name');
select is(
    (select pauses -> 0 ->> 'login' from recording_finalize.operator_state()),
    'rfr_pgtap_audit_operator', 'operator_state shows the login that paused'
);
select is(
    recording_finalize.explain(:'rec') -> 'operatorActions' -> 0 ->> 'login',
    'rfr_pgtap_audit_operator', 'explain shows the login that retried'
);
reset session authorization;

select results_eq(
    $$select action_kind::text, operator_name, login_role
    from messenger.recording_finalize_operator_actions order by id$$,
    $$values ('pause', 'security-team', 'rfr_pgtap_audit_operator'),
        ('retry', 'alice (on-call lead)', 'rfr_pgtap_audit_operator')$$,
    'the audit trail has the login next to the name given'
);

-- A re-pause by someone else: the new name, login and time, not the old time.
update messenger.recording_finalize_pause set paused_at = now() - interval '1 day';
select lives_ok($$select * from recording_finalize.set_pause('relay', true, 'bob', 'still')$$,
    're-pause as the owner');
select results_eq(
    $$select paused_by, login_role = session_user::text, paused_at = now()
    from messenger.recording_finalize_pause$$,
    $$values ('bob'::text, true, true)$$,
    'the pause carries the new name, login and time'
);

select * from finish();
rollback;
