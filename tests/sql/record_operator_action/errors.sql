-- record_operator_action (internal): an audit row names an operator and a reason (RF001
-- otherwise, through check_operator, before anything is written).
begin;
select plan(5);

select tests.clean_slate();
select throws_ok(
    $$select recording_finalize_internal.record_operator_action(null, 'retry', '  ', 'why')$$,
    'RF001', null, 'a blank operator is refused'
);
select throws_ok(
    $$select recording_finalize_internal.record_operator_action(null, 'retry', 'ann', null)$$,
    'RF001', null, 'a missing reason is refused'
);
select throws_ok(
    format('select recording_finalize_internal.record_operator_action(null, %L, %L, %L)',
        'retry', 'ann', repeat('x', 513)),
    'RF001', null, 'a reason over 512 characters is refused'
);
select throws_ok(
    format('select recording_finalize_internal.record_operator_action(%L::uuid[], %L, %L, %L)',
        array[gen_random_uuid(), gen_random_uuid()], 'requeue', repeat('o', 129), 'why'),
    'RF001', null, 'an operator over 128 characters is refused'
);
select is((select count(*) from recording_finalize.operator_actions), 0::bigint,
    'nothing was written');

select * from finish();
rollback;
