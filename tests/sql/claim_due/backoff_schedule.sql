-- claim_due schedules the next try at now() + backoff(attempts): exact without jitter, capped.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table schedule (attempts integer, delay interval);

-- Six rounds of: claim, the storage check fails transiently, time passes.
do $$
declare
    v_rec uuid := (select recording_id from messenger.recording_finalize_attempts);
    v_claim record;
begin
    for i in 1..6 loop
        select * into v_claim from tests.claim(p_max_attempts => 100);
        insert into schedule
        select f.attempts, f.next_attempt_at - now()
        from messenger.recording_finalize_attempts as f where f.recording_id = v_rec;
        perform tests.apply(v_rec, 'transient', p_error => 'S3Timeout', p_max_attempts => 100);
        perform tests.make_due(v_rec);
    end loop;
end
$$;

select results_eq(
    'select attempts, delay from schedule order by attempts',
    $$values (1, interval '1 minute'), (2, interval '2 minutes'), (3, interval '4 minutes'),
        (4, interval '8 minutes'), (5, interval '15 minutes'), (6, interval '15 minutes')$$,
    'base 1 min, factor 2, cap 15 min, jitter 0: 1, 2, 4, 8, 15, 15 minutes'
);

-- A row with a huge attempt count: the exponent must not overflow.
select tests.clean_slate();
select tests.make_stuck(p_attempts => 9999) as huge \gset
create temp table huge_claim as
select * from tests.claim(p_max_attempts => 20000);

select results_eq(
    'select action, attempts from huge_claim',
    $$values ('reconcile', 10000)$$,
    'attempt 10000 is claimed without an overflow'
);
select is(
    (select next_attempt_at - now() from messenger.recording_finalize_attempts),
    interval '15 minutes',
    'attempt 10000 waits exactly the cap'
);

-- With the policy's default jitter (0.1: set_policy with no argument) every row of a batch
-- lands within +-10 % of backoff(1).
select tests.clean_slate();
select recording_finalize.set_policy() is not null as defaults \gset
select count(tests.make_stuck()) as made from generate_series(1, 200) \gset
create temp table jitter_claim as select * from recording_finalize.claim_due(p_batch_size => 1000);
create temp table jittered as
select f.next_attempt_at - now() as delay
from jitter_claim as c
join messenger.recording_finalize_attempts as f on f.recording_id = c.recording_id;

select is((select count(*) from jittered), 200::bigint, 'all 200 rows were claimed');
select ok(
    (select bool_and(delay between interval '54 seconds' and interval '66 seconds')
        from jittered),
    'jitter 0.1 keeps every delay within [54 s, 66 s]'
);
select cmp_ok(
    (select count(distinct delay) from jittered), '>', 100::bigint,
    'jitter actually spreads the rows (more than 100 distinct delays out of 200)'
);
select ok(
    (select min(delay) < interval '57 seconds' and max(delay) > interval '63 seconds'
        from jittered),
    'the spread reaches both halves of the band'
);

select * from finish();
rollback;
