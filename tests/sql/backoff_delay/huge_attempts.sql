-- backoff_delay caps the exponent, so any attempt count is safe (2^43 minutes would overflow).
begin;
select plan(6);

select is(
    recording_finalize_internal.backoff_delay(10000, '1 minute', 2.0, '15 minutes', 0),
    interval '15 minutes',
    'attempt 10000 waits the cap'
);
select is(
    recording_finalize_internal.backoff_delay(2147483647, '1 minute', 2.0, '15 minutes', 0),
    interval '15 minutes',
    'attempt 2^31-1 waits the cap'
);
select is(
    recording_finalize_internal.backoff_delay(10000, '1 second', 1000.0, '1 day', 0),
    interval '1 day',
    'a huge factor is capped too'
);
select is(
    recording_finalize_internal.backoff_delay(44, '1 minute', 2.0, '10000 days', 0),
    interval '10000 days',
    'a cap beyond any reachable delay still protects the overflow point'
);
select ok(
    recording_finalize_internal.backoff_delay(10000, '1 minute', 2.0, '15 minutes', 0.1)
        between interval '13 minutes 30 seconds' and interval '16 minutes 30 seconds',
    'attempt 10000 with jitter stays within the capped band'
);
select lives_ok(
    $$select now()
        + recording_finalize_internal.backoff_delay(n, '1 minute', 2.0, '15 minutes', 0.1)
    from generate_series(1, 10000) as n$$,
    'attempts 1..10000 all give a valid timestamp'
);

select * from finish();
rollback;
