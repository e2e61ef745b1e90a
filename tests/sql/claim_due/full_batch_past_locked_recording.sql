-- A recording held by an in-flight callback does not cost the claim a place in its batch: the
-- claim passes over it (SKIP LOCKED) and takes the next due row, so 5 requested with 6
-- claimable due comes back with 5, not 4 (issue 9) - also when more recordings are held than
-- the batch has places (no fixed look-ahead).
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(9);

select tests.delete_committed('c0c0c0a3');
select tests.clean_slate();
create temp table fx as
select n, tests.fixed_uuid('c0c0c0a3', n) as recording_id
from generate_series(1, 10) as n;
-- Row 1 is the oldest due: a claim in next_attempt_at order meets it first.
select count(tests.commit_stuck(
    recording_id, tests.fixed_uuid('c0c0c0a3', 100 + n), now() - make_interval(mins => 10 - n)
)) as committed
from fx \gset

select is(dblink_connect('rfr_ingest', tests.conninfo()), 'OK', 'callback session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
select dblink_exec('rfr_worker', $$set lock_timeout = '3s'$$) as worker_lock_timeout \gset

-- The ingest callback holds the oldest row's recording and has not committed.
select dblink_exec('rfr_ingest', 'begin') as ingest_begin \gset
select status as locked_status from dblink(
    'rfr_ingest',
    format(
        'select status from messenger.call_recordings where id = %L for update',
        (select recording_id from fx where n = 1)
    )
) as t(status text) \gset

create temp table claimed as
select * from dblink('rfr_worker', 'select recording_id, action from tests.claim(5)')
    as t(recording_id uuid, action text);

select is((select count(*) from claimed), 5::bigint,
    'a batch of 5 comes back full although the oldest due recording is locked');
select set_eq(
    'select recording_id from claimed',
    'select recording_id from fx where n between 2 and 6',
    'it holds the next 5 rows in next_attempt_at order, without the locked one'
);
select is(
    (select attempts from messenger.recording_finalize_attempts
        where recording_id = (select recording_id from fx where n = 1)),
    0,
    'the row of the locked recording is untouched (no attempt counted)'
);

-- The callback now holds three of the due recordings (1, 7, 8); 9 and 10 are free.
select count(*) as more_locked from dblink(
    'rfr_ingest',
    format(
        'select status from messenger.call_recordings where id in (%L, %L) for update',
        (select recording_id from fx where n = 7), (select recording_id from fx where n = 8)
    )
) as t(status text) \gset
create temp table second_claim as
select * from dblink('rfr_worker', 'select recording_id, action from tests.claim(2)')
    as t(recording_id uuid, action text);
select set_eq(
    'select recording_id from second_claim',
    'select recording_id from fx where n in (9, 10)',
    'a batch of 2 behind 3 held recordings still comes back full: rows 9 and 10'
);
select results_eq(
    $$select count(*) filter (where attempts = 0), count(*) filter (where attempts = 1)
    from messenger.recording_finalize_attempts
    where recording_id in (select recording_id from fx)$$,
    $$values (3::bigint, 7::bigint)$$,
    'the three held rows are untouched, every other row was claimed once'
);

select dblink_exec('rfr_ingest', 'rollback') as ingest_rollback \gset
select is(dblink_disconnect('rfr_ingest'), 'OK', 'callback session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c0a3');

select * from finish();
rollback;
