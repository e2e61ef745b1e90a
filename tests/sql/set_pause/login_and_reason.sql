-- The audit trail records the real login: any operator login may give any name, so the
-- session_user is stored next to it (the pause row and the audit row) and shown by
-- operator_state; a pause needs a reason and a known part (RF001); a re-pause is dated anew.
begin;
select plan(12);

select tests.clean_slate();
create role rfr_pgtap_audit_operator login in role recording_finalize_operator;

set local session authorization rfr_pgtap_audit_operator;
select throws_ok($$select * from recording_finalize.set_pause('relay', true, 'ann', null)$$,
    'RF001', null, 'a pause without a reason is refused');
select throws_ok($$select * from recording_finalize.set_pause('relay', true, 'ann', ' ')$$,
    'RF001', null, 'so is a blank reason');
select throws_ok($$select * from recording_finalize.set_pause('relay', true, 'ann',
    repeat('r', 513))$$, 'RF001', null, 'and a reason over 512 characters');
select throws_ok($$select * from recording_finalize.set_pause('claim', true, 'ann', 'r')$$,
    'RF001', null, 'an unknown part is refused');
select throws_ok($$select * from recording_finalize.set_pause(null, true, 'ann', 'r')$$,
    'RF001', null, 'a missing part is refused');
select throws_ok($$select * from recording_finalize.set_pause('relay', null, 'ann', 'r')$$,
    'RF001', null, 'a missing p_paused is refused');
select throws_ok($$select * from recording_finalize.set_pause('all', true, '', 'r')$$,
    'RF001', null, 'an operator is required');
select lives_ok($$select * from recording_finalize.set_pause('relay', true,
    'security-team', 'broker upgrade')$$, 'a pause under someone else''s name');
select is(
    (select pauses -> 0 ->> 'login' from recording_finalize.operator_state()),
    'rfr_pgtap_audit_operator', 'operator_state shows the login that paused'
);
reset session authorization;

select results_eq(
    $$select action_kind::text, operator_name, login_role
    from recording_finalize.operator_actions order by id$$,
    $$values ('pause', 'security-team', 'rfr_pgtap_audit_operator')$$,
    'the audit trail has the login next to the name given, and only the accepted call'
);

-- A re-pause by someone else: the new name, login, reason and time, not the old ones.
update recording_finalize.pause set paused_at = now() - interval '1 day';
select lives_ok($$select * from recording_finalize.set_pause('relay', true, 'bob', 'still')$$,
    're-pause as the superuser');
select results_eq(
    $$select paused_by, reason, login_role = session_user::text, paused_at = now()
    from recording_finalize.pause$$,
    $$values ('bob'::text, 'still'::text, true, true)$$,
    'the pause carries the new name, reason, login and time'
);

select * from finish();
rollback;
