-- The claim's cost does not grow with finished rows: with 50 000 Done and Quarantined rows it
-- reads the Pending rows through an index that holds no finished row (the partial ix_rfa_due,
-- or the partial Pending index, whichever the planner finds cheaper) and never scans the table.
begin;
select plan(4);

select tests.clean_slate();
insert into messenger.recording_finalize_attempts (
    recording_id, session_kind, session_id, status, attempts, next_attempt_at, created_at,
    quarantine_reason
)
select gen_random_uuid(), 'Direct', gen_random_uuid(),
    case when n % 10 = 0 then 'Quarantined' else 'Done' end, 1,
    now() - make_interval(mins => n), now() - make_interval(mins => n),
    case when n % 10 = 0 then 'max_attempts' end
from generate_series(1, 50000) as n;
select count(tests.make_stuck()) as made from generate_series(1, 5) \gset
analyze messenger.recording_finalize_attempts;

-- This transaction's own scan counters (pg_stat_xact_*): sequential scans of the table, index
-- scans and entries read of ix_rfa_due.
create temp table counters_before as
select pg_stat_get_xact_numscans('messenger.recording_finalize_attempts'::regclass) as seq_scans,
    pg_stat_get_xact_numscans('messenger.ix_rfa_due'::regclass)
        + pg_stat_get_xact_numscans(
            'messenger.recording_finalize_attempts_pending_created_idx'::regclass
        ) as due_scans,
    pg_stat_get_xact_tuples_returned('messenger.ix_rfa_due'::regclass)
        + pg_stat_get_xact_tuples_returned(
            'messenger.recording_finalize_attempts_pending_created_idx'::regclass
        ) as due_entries;

create temp table claimed as select * from tests.claim(p_batch_size => 100);

create temp table counters as
select pg_stat_get_xact_numscans('messenger.recording_finalize_attempts'::regclass)
        - b.seq_scans as seq_scans,
    pg_stat_get_xact_numscans('messenger.ix_rfa_due'::regclass)
        + pg_stat_get_xact_numscans(
            'messenger.recording_finalize_attempts_pending_created_idx'::regclass
        ) - b.due_scans as due_scans,
    pg_stat_get_xact_tuples_returned('messenger.ix_rfa_due'::regclass)
        + pg_stat_get_xact_tuples_returned(
            'messenger.recording_finalize_attempts_pending_created_idx'::regclass
        ) - b.due_entries as due_entries
from counters_before as b;

select is((select count(*) from claimed), 5::bigint, 'the 5 due Pending rows are claimed');
select is(
    (select seq_scans from counters), 0::bigint,
    'the claim never scans the finalize table sequentially'
);
select cmp_ok(
    (select due_scans from counters), '>=', 1::bigint,
    'it uses ix_rfa_due or the partial Pending index'
);
-- Entries of rolled-back rows from earlier test files also sit under the Pending prefix until
-- vacuum, so the bound is "far fewer than the finished rows", not an exact count.
select cmp_ok(
    (select due_entries from counters), '<', 5000::bigint,
    'and reads only index entries under the Pending prefix, not the 50 000 finished ones'
);

select * from finish();
rollback;
