-- quarantined_rows filters by reason code and by the time a row was quarantined (since), as
-- the bulk requeue pages through them; an unknown reason code is RF001.
begin;
select plan(9);

select tests.clean_slate();
create temp table q as
select n, tests.make_stuck() as id from generate_series(1, 5) as n;
-- Row n: reason by n, quarantined n days ago.
update messenger.recording_finalize_attempts as f
set status = 'Quarantined',
    quarantine_reason = (array['max_attempts', 'crash_loop', 'crash_loop', 'invalid_metadata',
        'session_not_found'])[q.n],
    updated_at = now() - make_interval(days => q.n)
from q where q.id = f.recording_id;

select results_eq(
    $$select recording_id from recording_finalize.quarantined_rows(p_reason_code => 'crash_loop')$$,
    'select id from q where n in (2, 3) order by n desc',
    'by reason code: only crash_loop rows, oldest first'
);
select results_eq(
    $$select recording_id from recording_finalize.quarantined_rows(
        p_since => now() - interval '3 days')$$,
    'select id from q where n <= 3 order by n desc',
    'since: rows quarantined at or after the time'
);
select results_eq(
    $$select recording_id from recording_finalize.quarantined_rows(
        p_reason_code => 'crash_loop', p_since => now() - interval '2 days')$$,
    'select id from q where n = 2',
    'both filters at once'
);
select results_eq(
    $$select recording_id from recording_finalize.quarantined_rows(1, 'crash_loop')$$,
    'select id from q where n = 3',
    'with a limit: the oldest of the reason'
);
select is_empty(
    $$select * from recording_finalize.quarantined_rows(p_reason_code => 'recording_not_found')$$,
    'a known reason no row has: nothing'
);
select is(
    (select count(*) from recording_finalize.quarantined_rows(p_since => now() + interval '1 s')),
    0::bigint,
    'since a future time: nothing'
);
select is(
    (select count(*) from recording_finalize.quarantined_rows(p_reason_code => null,
        p_since => null)),
    5::bigint,
    'no filter: every quarantined row'
);
select throws_ok(
    $$select * from recording_finalize.quarantined_rows(p_reason_code => 'bogus')$$,
    'RF001', null, 'an unknown reason code is refused'
);
select throws_ok(
    $$select * from recording_finalize.quarantined_rows(p_reason_code => 'Crash_Loop')$$,
    'RF001', null, 'reason codes are exact (lowercase)'
);

select * from finish();
rollback;
