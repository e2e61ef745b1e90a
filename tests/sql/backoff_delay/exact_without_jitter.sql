-- backoff_delay with jitter 0 is exactly min(cap, base * factor^(n-1)).
begin;
select plan(5);

select results_eq(
    $$select n, recording_finalize_internal.backoff_delay(n, '1 minute', 2.0, '15 minutes', 0)
    from generate_series(1, 7) as n order by n$$,
    $$values (1, interval '1 minute'), (2, interval '2 minutes'), (3, interval '4 minutes'),
        (4, interval '8 minutes'), (5, interval '15 minutes'), (6, interval '15 minutes'),
        (7, interval '15 minutes')$$,
    'the default policy: 1, 2, 4, 8, then the 15-minute cap'
);
select is(
    recording_finalize_internal.backoff_delay(3, '10 seconds', 3.0, '1 hour', 0),
    interval '90 seconds',
    'base 10 s, factor 3: attempt 3 waits 90 s'
);
select is(
    recording_finalize_internal.backoff_delay(50, '30 seconds', 1.0, '10 minutes', 0),
    interval '30 seconds',
    'factor 1 is a constant delay'
);
select is(
    recording_finalize_internal.backoff_delay(4, '1 minute', 2.0, '1 minute', 0),
    interval '1 minute',
    'cap = base is a constant delay'
);
select is(
    recording_finalize_internal.backoff_delay(2, '1.5 seconds', 2.0, '1 minute', 0),
    interval '3 seconds',
    'sub-second precision is kept'
);

select * from finish();
rollback;
