-- backoff_delay refuses out-of-range arguments with RF001.
begin;
select plan(13);

select throws_ok(
    $$select recording_finalize_internal.backoff_delay(0, '1 minute', 2, '15 minutes', 0)$$,
    'RF001', null, 'attempt 0 is refused (n counts the claim''s increment)'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(
        -2147483648, '1 minute', 2, '15 minutes', 0)$$,
    'RF001', null, 'the smallest integer is refused with RF001, not an overflow'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(null, '1 minute', 2, '15 minutes', 0)$$,
    'RF001', null, 'a null attempt count is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '0 seconds', 2, '15 minutes', 0)$$,
    'RF001', null, 'a zero base is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '-1 minute', 2, '15 minutes', 0)$$,
    'RF001', null, 'a negative base is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '1 minute', 0.99, '15 minutes', 0)$$,
    'RF001', null, 'a factor below 1 is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '1 minute', 'NaN', '15 minutes', 0)$$,
    'RF001', null, 'a NaN factor is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(
        1, '1 minute', 'Infinity', '15 minutes', 0)$$,
    'RF001', null, 'an infinite factor is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '1 minute', 2, '59 seconds', 0)$$,
    'RF001', null, 'a cap below the base is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '1 minute', 2, null, 0)$$,
    'RF001', null, 'a null cap is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '1 minute', 2, '15 minutes', 1)$$,
    'RF001', null, 'jitter 1 is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '1 minute', 2, '15 minutes', -0.01)$$,
    'RF001', null, 'a negative jitter is refused'
);
select throws_ok(
    $$select recording_finalize_internal.backoff_delay(1, '1 minute', 2, '15 minutes', 'NaN')$$,
    'RF001', null, 'a NaN jitter is refused'
);

select * from finish();
rollback;
