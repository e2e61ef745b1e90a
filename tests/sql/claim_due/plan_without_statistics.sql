-- The claim's work does not depend on statistics. After a burst, before autovacuum has come by,
-- the planner may know the finished history well and the recordings not at all: here 1,000,000
-- Done rows analyzed, a backlog of 100,000 due Pending rows inserted after that analyze (the
-- statistics still say almost nothing is Pending), and messenger.call_recordings never analyzed.
-- A claim of 100 must still read the due rows in ix_rfa_due order and stop at the batch: it
-- reads a leaf page or a few of that index (the counter counts the entries of each page read,
-- about 250 a page; a sort, a bitmap or a hash join would read all 100,000), scans no table
-- sequentially and reaches each recording by its key.
-- The same holds after the backlog is analyzed too (the second claim below).
begin;
select plan(8);

select tests.clean_slate();
-- TRUNCATE also forgets the recordings' row count (reltuples -1): an ANALYZE of an earlier
-- transaction, even one rolled back, leaves it behind.
truncate messenger.call_recordings, messenger.call_sessions, messenger.conference_sessions;
insert into messenger.recording_finalize_attempts (
    recording_id, session_kind, session_id, status, attempts, next_attempt_at, created_at,
    updated_at
)
select gen_random_uuid(), 'Direct', gen_random_uuid(), 'Done', 1,
    now() - make_interval(secs => n), now() - make_interval(secs => n),
    now() - make_interval(secs => n)
from generate_series(1, 1000000) as n;
analyze messenger.recording_finalize_attempts;

-- The backlog: 100,000 stopped recordings of ended sessions, each due for its check.
create temp table backlog as
select gen_random_uuid() as recording_id, gen_random_uuid() as session_id, n
from generate_series(1, 100000) as n;
insert into messenger.call_sessions (id, started_at, ended_at)
select b.session_id, now() - interval '3 hours', now() - interval '2 hours' from backlog as b;
insert into messenger.call_recordings (
    id, session_kind, session_id, media_type, trigger, status, started_at, ended_at
)
select b.recording_id, 'Direct', b.session_id, 'Audio', 'Auto', 'Uploading',
    now() - interval '3 hours', now() - interval '2 hours'
from backlog as b;
insert into messenger.recording_finalize_attempts (
    recording_id, session_kind, session_id, next_attempt_at
)
select b.recording_id, 'Direct', b.session_id, now() - make_interval(secs => b.n)
from backlog as b;

select is(
    (select c.reltuples from pg_catalog.pg_class as c
        where c.oid = 'messenger.call_recordings'::regclass),
    -1::real,
    'precondition: call_recordings was never analyzed (its row count unknown)'
);

-- This transaction's scan counters of the tables and of the due index (pg_stat_xact_*).
create function pg_temp.counters()
returns table (due_entries bigint, finalize_seq bigint, recordings_seq bigint)
language sql
as $$
    select pg_stat_get_xact_tuples_returned('messenger.ix_rfa_due'::regclass)
            + pg_stat_get_xact_tuples_returned(
                'messenger.recording_finalize_attempts_pending_created_idx'::regclass),
        pg_stat_get_xact_numscans('messenger.recording_finalize_attempts'::regclass),
        pg_stat_get_xact_numscans('messenger.call_recordings'::regclass)
$$;
create temp table before as select * from pg_temp.counters();
create temp table claimed as select * from tests.claim(p_batch_size => 100);
create temp table after as select * from pg_temp.counters();

select is((select count(*) from claimed where action = 'reconcile'), 100::bigint,
    'the claim hands out a full batch');
select is(
    (select array_agg(c.recording_id order by b.n desc) from claimed as c
        join backlog as b using (recording_id)),
    (select array_agg(b.recording_id order by b.n desc) from backlog as b
        where b.n > 100000 - 100),
    'the 100 longest due, in next_attempt_at order'
);
select cmp_ok((select a.due_entries - b.due_entries from after as a, before as b), '<=',
    1000::bigint, 'it reads a few pages of due-index entries, not the backlog');
select is((select a.finalize_seq - b.finalize_seq from after as a, before as b), 0::bigint,
    'no sequential scan of the finalize table');
select is((select a.recordings_seq - b.recordings_seq from after as a, before as b), 0::bigint,
    'no sequential scan of call_recordings: each recording by its key');

-- Once more with every table analyzed: the same work.
analyze messenger.recording_finalize_attempts;
analyze messenger.call_recordings;
create temp table before2 as select * from pg_temp.counters();
create temp table claimed2 as select * from tests.claim(p_batch_size => 100);
create temp table after2 as select * from pg_temp.counters();
select is((select count(*) from claimed2 where action = 'reconcile'), 100::bigint,
    'analyzed: a full batch again');
select cmp_ok((select a.due_entries - b.due_entries from after2 as a, before2 as b), '<=',
    1000::bigint, 'analyzed: a few pages of due-index entries');

select * from finish();
rollback;
-- The rolled-back rows leave their space behind (the heap's and every index's pages), and
-- ANALYZE writes a table's page and row counts in place, which the rollback keeps: the tables are
-- rewritten and counted again, so the files after see them as they are, not 1,100,000 rows big.
vacuum (full, analyze) messenger.recording_finalize_attempts, messenger.call_recordings,
    messenger.call_sessions;
