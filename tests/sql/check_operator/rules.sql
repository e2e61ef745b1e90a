-- check_operator (internal, pure): every audited operator action names a person (1..128
-- characters, trimmed) and says why (1..512, trimmed): RF001 otherwise, naming the action.
begin;
select plan(11);

select lives_ok(
    $$select recording_finalize_internal.check_operator('requeue', 'ann', 'why')$$,
    'a name and a reason'
);
select lives_ok(
    format($$select recording_finalize_internal.check_operator('retry', %L, %L)$$,
        '  ' || repeat('o', 128) || '  ', repeat('r', 512)),
    'at the bounds (128 and 512 characters after trimming)'
);
select throws_ok(
    $$select recording_finalize_internal.check_operator('requeue', null, 'why')$$,
    'RF001', null, 'a missing operator'
);
select throws_ok(
    $$select recording_finalize_internal.check_operator('requeue', '', 'why')$$,
    'RF001', null, 'an empty operator'
);
select throws_ok(
    $$select recording_finalize_internal.check_operator('requeue', '    ', 'why')$$,
    'RF001', null, 'an operator of blanks only'
);
select throws_ok(
    format($$select recording_finalize_internal.check_operator('requeue', %L, 'why')$$,
        repeat('o', 129)),
    'RF001', null, 'an operator of 129 characters'
);
select throws_ok(
    $$select recording_finalize_internal.check_operator('pause', 'ann', null)$$,
    'RF001', null, 'a missing reason'
);
select throws_ok(
    $$select recording_finalize_internal.check_operator('pause', 'ann', '   ')$$,
    'RF001', null, 'a blank reason'
);
select throws_ok(
    format($$select recording_finalize_internal.check_operator('pause', 'ann', %L)$$,
        repeat('r', 513)),
    'RF001', null, 'a reason of 513 characters'
);
select matches(
    tests.error_of($$select recording_finalize_internal.check_operator('repair', '', 'x')$$),
    '^RF001: invalid_parameter: repair: the operator must be 1\.\.128 characters',
    'the message names the action'
);
select matches(
    tests.error_of($$select recording_finalize_internal.check_operator('retry', 'ann', '')$$),
    '^RF001: invalid_parameter: retry: a reason of 1\.\.512 characters is required$',
    'and says a reason is required'
);

select * from finish();
rollback;
