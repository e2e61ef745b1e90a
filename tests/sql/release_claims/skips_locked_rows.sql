-- release_claims never waits for a row another transaction holds (two real sessions): the
-- ingest callback settling one of the rows keeps it (and settles it), the others are released,
-- and the stopping worker is not held up nor fails.
-- The fixtures are committed through dblink so the other sessions see them; removed at the end.
begin;
select plan(9);

select tests.delete_committed('c0c0c2a4');
select tests.clean_slate();
create temp table fx as
select n, tests.fixed_uuid('c0c0c2a4', n) as rec, tests.fixed_uuid('c0c0c2a4', 100 + n) as ses
from generate_series(1, 3) as n;
select count(tests.commit_stuck(rec, ses)) as committed from fx \gset

select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
select dblink_exec('rfr_worker', $$set statement_timeout = '10s'$$) as t1 \gset

create temp table claimed as
select * from dblink('rfr_worker',
    $$select recording_id, claim_token from tests.claim()
    where recording_id::text like 'c0c0c2a4%'$$) as t(rec uuid, token uuid);

-- The ingest callback for row 1 has run and not committed: it holds the recording and the
-- finalize row (closed Done, uncommitted).
select dblink_exec('rfr_service', 'begin') as b \gset
select r as ingest from dblink('rfr_service', format(
    $$select recording_finalize.recording_ingest_completed(%L, 'recordings/svc', 1, 1, 'Ogg')$$,
    (select rec from fx where n = 1)
)) as t(r text) \gset
select is(:'ingest'::text, 'available', 'the callback made recording 1 Available (uncommitted)');

create temp table released as
select * from dblink('rfr_worker', format(
    $$select recording_finalize.release_claims(%L::uuid[], %L::uuid[]),
        extract(epoch from clock_timestamp() - statement_timestamp())::float8$$,
    (select array_agg(rec order by rec) from claimed),
    (select array_agg(token order by rec) from claimed)
), false) as t(n integer, elapsed float8);

select is((select n from released), 2, 'the two rows nobody holds are released');
select cmp_ok((select elapsed from released), '<', 0.09::float8,
    'without waiting for the held one (a wait would last its lock_timeout, 100 ms, and fail)');
select is(dblink_exec('rfr_service', 'commit'), 'COMMIT', 'the callback commits');
select results_eq(
    $$select fx.n, f.status, f.attempts, f.claim_token is null from fx
    join messenger.recording_finalize_attempts as f on f.recording_id = fx.rec order by fx.n$$,
    $$values (1, 'Done'::varchar, 1, true), (2, 'Pending', 0, true), (3, 'Pending', 0, true)$$,
    'row 1 is the callback''s (Done), rows 2 and 3 have their attempt back'
);

select is(dblink_disconnect('rfr_service'), 'OK', 'service session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c2a4');

select * from finish();
rollback;
