-- operator_requeue_quarantined: RF001 for a bad batch limit, operator or reason.
begin;
select plan(3);

select throws_ok(
    $$select * from recording_finalize.operator_requeue_quarantined('ann', 'x', p_limit => 1001)$$,
    'RF001', null, 'a batch is at most 1000 rows'
);
select throws_ok(
    $$select * from recording_finalize.operator_requeue_quarantined('', 'x')$$,
    'RF001', null, 'an operator is required, also for a dry run'
);
select throws_ok(
    $$select * from recording_finalize.operator_requeue_quarantined('ann', null)$$,
    'RF001', null, 'a reason is required'
);

select * from finish();
rollback;
