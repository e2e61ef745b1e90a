-- record_operator_action: an audit row names an operator and a reason (RF001 otherwise).
begin;
select plan(4);

select throws_ok(
    $$select recording_finalize.record_operator_action(null, 'retry', '  ', 'why')$$,
    'RF001', null, 'a blank operator is refused'
);
select throws_ok(
    $$select recording_finalize.record_operator_action(null, 'retry', 'ann', null)$$,
    'RF001', null, 'a missing reason is refused'
);
select throws_ok(
    format('select recording_finalize.record_operator_action(null, %L, %L, %L)',
        'retry', 'ann', repeat('x', 513)),
    'RF001', null, 'a reason over 512 characters is refused'
);
select isnt(recording_finalize.record_operator_action(null, 'retry', ' ann ', ' why '), null,
    'a named operator with a reason is recorded');

select * from finish();
rollback;
