-- requeue: the runbook's re-enqueue of one quarantined row, a wrapper of reschedule - Pending,
-- attempts 0, due now - audited with the login as the operator and the reason given (or the
-- default one).
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 8) as rec \gset
select tests.make_stuck(p_attempts => 8) as other \gset
create temp table claimed as select * from tests.claim();
create role rfr_pgtap_requeue_login login in role recording_finalize_operator;

select results_eq(
    'select action from claimed order by 1',
    $$values ('quarantined'), ('quarantined')$$,
    'the exhausted rows were quarantined'
);

set local session authorization rfr_pgtap_requeue_login;
create temp table requeued as
select * from recording_finalize.requeue(:'rec', 'bucket policy fixed');
reset session authorization;

select results_eq(
    'select recording_id, status, attempts, next_attempt_at from requeued',
    format($$values (%L::uuid, 'Pending', 0, now())$$, :'rec'),
    'requeue returns the row as it now is: Pending, attempts 0, due now'
);
select matches(
    (select last_error from requeued), '^MaxAttemptsExceeded: 8 attempts',
    'and its last error, kept'
);
select results_eq(
    format(
        $$select status, attempts, next_attempt_at, claim_token, quarantine_reason
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Pending'::varchar, 0, now(), null::uuid, null::varchar)$$,
    'the stored row is Pending, attempts 0, due now, no reason'
);
select results_eq(
    format($$select action_kind::text, operator_name, login_role, reason
    from recording_finalize.operator_actions where recording_id = %L$$, :'rec'),
    $$values ('requeue', 'rfr_pgtap_requeue_login', 'rfr_pgtap_requeue_login',
        'bucket policy fixed')$$,
    'audited: the login is the operator, with the reason given'
);

select lives_ok(format('select * from recording_finalize.requeue(%L)', :'other'),
    'the reason may be left out');
select results_eq(
    format($$select operator_name, reason from recording_finalize.operator_actions
    where recording_id = %L$$, :'other'),
    $$values (session_user::text collate "default", 'recording_finalize.requeue()')$$,
    'then the default reason is recorded'
);

select * from finish();
rollback;
