-- claim_due: two real sessions claiming at once get disjoint rows (SKIP LOCKED), never wait, and
-- a claim holds no row beyond the ones it returns (the other session gets all the rest).
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(11);

select tests.delete_committed('c0c0c0c0');
select tests.clean_slate();
create temp table fx as
select n, tests.fixed_uuid('c0c0c0c0', n) as recording_id
from generate_series(1, 6) as n;
select count(tests.commit_stuck(
    recording_id, tests.fixed_uuid('c0c0c0c0', 100 + n), now() - make_interval(mins => 10 - n)
)) as committed
from fx \gset

select is(dblink_connect('rfr_b', tests.conninfo()), 'OK', 'session B connected');
select is(dblink_connect('rfr_c', tests.conninfo()), 'OK', 'session C connected');
-- C must never wait for B: a blocked claim would fail on these timeouts instead of hanging.
select dblink_exec('rfr_c', $$set lock_timeout = '3s'$$) as c_lock_timeout \gset
select dblink_exec('rfr_c', $$set statement_timeout = '10s'$$) as c_statement_timeout \gset

-- B claims 3 rows and keeps its transaction open (its driver is checking the file storage).
select dblink_exec('rfr_b', 'begin') as b_begin \gset
create temp table b_claim as
select * from dblink('rfr_b', 'select recording_id, action from tests.claim(3)')
    as t(recording_id uuid, action text);
-- C claims while B still holds its rows.
create temp table c_claim as
select * from dblink('rfr_c', 'select recording_id, action from tests.claim(10)')
    as t(recording_id uuid, action text);

select set_eq(
    'select recording_id from b_claim',
    'select recording_id from fx where n <= 3',
    'B claims the 3 oldest rows'
);
select set_eq(
    'select recording_id from c_claim',
    'select recording_id from fx where n > 3',
    'C, claiming at the same time, gets exactly the other 3 (B holds none it did not return)'
);
select is_empty(
    'select recording_id from b_claim intersect select recording_id from c_claim',
    'no row is claimed by both sessions'
);
select ok(
    (select bool_and(action = 'reconcile') from (table b_claim union all table c_claim) as u),
    'every claimed row is a reconcile row'
);
select is(
    (select sum(attempts) from messenger.recording_finalize_attempts
        where recording_id in (select recording_id from b_claim)),
    0::bigint,
    'B''s claim is not visible to others until it commits'
);

-- B's runner dies: its transaction rolls back and its rows are free again.
select dblink_exec('rfr_b', 'rollback') as b_rollback \gset
create temp table c_again as
select * from dblink('rfr_c', 'select recording_id, action from tests.claim(10)')
    as t(recording_id uuid, action text);

select set_eq(
    'select recording_id from c_again',
    'select recording_id from b_claim',
    'after B rolls back, its rows (and only those) are claimable'
);
select results_eq(
    $$select attempts, count(*) from messenger.recording_finalize_attempts
    where recording_id in (select recording_id from fx) group by attempts$$,
    $$values (1, 6::bigint)$$,
    'each row was counted once: no double claim'
);

select is(dblink_disconnect('rfr_b'), 'OK', 'session B disconnected');
select is(dblink_disconnect('rfr_c'), 'OK', 'session C disconnected');
select tests.delete_committed('c0c0c0c0');

select * from finish();
rollback;
