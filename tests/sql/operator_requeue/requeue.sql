-- operator_requeue: Quarantined -> Pending with an audit row; RF005, RF006, RF001.
begin;
select plan(7);

select tests.clean_slate();
delete from messenger.recording_finalize_operator_actions;
select tests.make_stuck(p_attempts => 8) as rec \gset
select tests.make_stuck() as pending \gset
select tests.make_stuck(p_next_attempt_at => now() + interval '1 hour') as later \gset
create temp table claimed as select * from tests.claim();

select results_eq(
    format($$select status, attempts, next_attempt_at from recording_finalize.operator_requeue(
        %L, 'ann', 'fixed the bucket policy')$$, :'rec'),
    $$values ('Pending', 0, now())$$,
    'requeued: Pending, attempts 0, due now'
);
select results_eq(
    format($$select action_kind, operator_name, reason, detail ->> 'quarantineReason'
        from messenger.recording_finalize_operator_actions where recording_id = %L$$, :'rec'),
    $$values ('requeue'::varchar, 'ann', 'fixed the bucket policy', 'crash_loop')$$,
    'one audit row: who, why, and the reason it was quarantined'
);
select is(
    (select quarantine_reason from messenger.recording_finalize_attempts
        where recording_id = :'rec'),
    null, 'the quarantine reason is cleared'
);
select throws_ok(format($$select * from recording_finalize.operator_requeue(%L, 'ann', 'x')$$,
    gen_random_uuid()), 'RF005', null, 'no finalize row');
select throws_ok(format($$select * from recording_finalize.operator_requeue(%L, 'ann', 'x')$$,
    :'later'), 'RF006', null, 'not Quarantined');
select throws_ok(format($$select * from recording_finalize.operator_requeue(%L, 'ann', '')$$,
    :'rec'), 'RF006', null, 'the status is checked first');
update messenger.recording_finalize_attempts set status = 'Quarantined' where recording_id = :'later';
select throws_ok(format($$select * from recording_finalize.operator_requeue(%L, 'ann', ' ')$$,
    :'later'), 'RF001', null, 'a reason is required');

select * from finish();
rollback;
