-- operator_retry: a Pending row backing off becomes due now, attempts kept, audited.
begin;
select plan(6);

select tests.clean_slate();
delete from messenger.recording_finalize_operator_actions;
select tests.make_stuck(p_attempts => 3, p_next_attempt_at => now() + interval '10 minutes')
    as rec \gset
select tests.make_stuck(p_attempts => 8) as quarantined \gset
create temp table claimed as select * from tests.claim();

select results_eq(
    format($$select status, attempts, next_attempt_at from recording_finalize.operator_retry(
        %L, 'ann', 'S3 is back')$$, :'rec'),
    $$values ('Pending', 3, now())$$,
    'due now, attempts kept'
);
select results_eq(
    format($$select action_kind, operator_name, reason from messenger.recording_finalize_operator_actions
        where recording_id = %L$$, :'rec'),
    $$values ('retry'::varchar, 'ann', 'S3 is back')$$,
    'audited'
);
select is((select count(*) from tests.claim() where recording_id = :'rec'), 1::bigint,
    'the next claim takes it');
select throws_ok(format($$select * from recording_finalize.operator_retry(%L, 'ann', 'x')$$,
    gen_random_uuid()), 'RF005', null, 'no finalize row');
select throws_ok(format($$select * from recording_finalize.operator_retry(%L, 'ann', 'x')$$,
    :'quarantined'), 'RF020', null, 'a Quarantined row is not retried (requeue it)');
select throws_ok(format($$select * from recording_finalize.operator_retry(%L, 'ann', '')$$,
    :'rec'), 'RF001', null, 'a reason is required');

select * from finish();
rollback;
