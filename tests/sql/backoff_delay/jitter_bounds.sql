-- backoff_delay with jitter J stays within [d*(1-J), d*(1+J)] and really varies.
begin;
select plan(7);

create temp table samples as
select extract(epoch from
    recording_finalize_internal.backoff_delay(3, '1 minute', 2.0, '15 minutes', 0.1))
    as s
from generate_series(1, 2000);

select ok(
    (select bool_and(s between 216 and 264) from samples),
    'd = 240 s, J = 0.1: every one of 2000 delays is within [216 s, 264 s]'
);
select cmp_ok(
    (select min(s) from samples), '<', 220::numeric, 'the low end of the band is reached'
);
select cmp_ok(
    (select max(s) from samples), '>', 260::numeric, 'the high end of the band is reached'
);
select ok(
    (select avg(s) between 237 and 243 from samples),
    'the jitter is centred on d'
);

create temp table capped as
select extract(epoch from
    recording_finalize_internal.backoff_delay(40, '1 minute', 2.0, '15 minutes', 0.5))
    as s
from generate_series(1, 2000);

select ok(
    (select bool_and(s between 450 and 1350) from capped),
    'the jitter applies to the capped delay: d = 900 s, J = 0.5 within [450 s, 1350 s]'
);
select cmp_ok(
    (select count(distinct s) from capped), '>', 1000::bigint,
    'jittered delays are spread, not one value'
);
select ok(
    (select bool_and(
        recording_finalize_internal.backoff_delay(1, '1 minute', 2.0, '15 minutes', 0.999)
            between interval '0' and interval '2 minutes'
    ) from generate_series(1, 500)),
    'a jitter just below 1 never yields a negative delay'
);

select * from finish();
rollback;
