-- reschedule of many ids at once (the bulk requeue, not strict): every Quarantined row among
-- them is requeued in one statement, in recording-id order; ids without a row or in another
-- status are skipped and left exactly as they were.
begin;
select plan(7);

select tests.clean_slate();
create temp table q as
select n, tests.make_stuck() as id from generate_series(1, 3) as n;
update messenger.recording_finalize_attempts as f
set status = 'Quarantined', attempts = 8,
    quarantine_reason = (array['max_attempts', 'crash_loop', 'invalid_metadata'])[q.n],
    last_error = 'reason ' || q.n
from q where q.id = f.recording_id;
select tests.make_stuck(p_attempts => 2, p_next_attempt_at => now() + interval '1 hour')
    as pending \gset
select gen_random_uuid() as missing \gset
create temp table pending_before as
select f.* from messenger.recording_finalize_attempts as f where f.recording_id = :'pending';

create temp table requeued as
select * from recording_finalize.reschedule(
    (select array_agg(id) from q) || array[:'pending', :'missing']::uuid[],
    'Quarantined', 'ann', 'outage over', false);

select results_eq(
    'select recording_id from requeued',
    'select id from q order by id',
    'the three quarantined rows come back, in recording-id order'
);
select set_eq(
    'select recording_id, quarantine_reason, last_error from requeued',
    $$select id, (array['max_attempts', 'crash_loop', 'invalid_metadata'])[n], 'reason ' || n
    from q$$,
    'each with the reason it was quarantined for and its last error'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts as f
        where f.recording_id in (select id from q)
            and f.status = 'Pending' and f.attempts = 0 and f.next_attempt_at = now()
            and f.quarantine_reason is null),
    3::bigint,
    'all three are Pending, attempts 0, due now'
);
select is(
    (select f::text from messenger.recording_finalize_attempts as f
        where f.recording_id = :'pending'),
    (select b::text from pending_before as b),
    'the Pending row among the ids is left exactly as it was'
);
select ok(
    not exists (select from messenger.recording_finalize_attempts where recording_id = :'missing'),
    'an id without a row is skipped (no row is made up)'
);
select results_eq(
    $$select count(*), count(distinct recording_id), bool_and((detail ->> 'bulk')::boolean)
    from recording_finalize.operator_actions where action_kind = 'requeue'$$,
    $$values (3::bigint, 3::bigint, true)$$,
    'one audit row per requeued recording, marked bulk'
);
select is_empty(
    format($$select 1 from recording_finalize.operator_actions
        where recording_id in (%L, %L)$$, :'pending', :'missing'),
    'the skipped ids are not audited'
);

select * from finish();
rollback;
