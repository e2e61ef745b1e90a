-- transactional: false
-- squawk-disable-assume-in-transaction
-- Issue 14: ix_rfa_due holds only the Pending rows. Its name and columns stay the design card's
-- ((status, next_attempt_at)); a predicate is added, so that
--   * a settled row leaves it (its entry goes to the Done or the Quarantined index below, which
--     prune() and the operator's reads use), so the claim's index is the size of the backlog,
--     not of the history (the DBA review: 55 MB for 1.02 M finished rows against 128 kB for
--     the Pending ones), and a claim reads no dead entry of a row finished long ago.
-- claim_due's scan (status = 'Pending' and next_attempt_at <= now() order by next_attempt_at)
-- and stats' due count read it exactly as before. Forward-only: never edit this file once it
-- has landed; add a new migration instead.
--
-- Not transactional (the yoyo directive above): CREATE/DROP INDEX CONCURRENTLY cannot run in a
-- transaction block. Every statement is its own transaction and is re-runnable: the new index
-- is built beside the old one under a temporary name, the two names are swapped in one
-- statement (the name ix_rfa_due never disappears), and the old one is dropped concurrently.

-- The builds take only SHARE UPDATE EXCLUSIVE (no writer waits for them) but wait for the
-- writers already running: a long wait is harmless. The swap takes a short lock: see below.
set lock_timeout = '1min';
set statement_timeout = '30min';

-- A concurrent build that failed leaves an INVALID index that IF NOT EXISTS would then skip.
do $$
begin
    if exists (
        select from pg_catalog.pg_index as i
        join pg_catalog.pg_class as c on c.oid = i.indexrelid
        join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
        where n.nspname = 'messenger' and c.relname = 'ix_rfa_due_pending' and not i.indisvalid
    ) then
        drop index messenger.ix_rfa_due_pending;
    end if;
end
$$;

create index concurrently if not exists ix_rfa_due_pending
on messenger.recording_finalize_attempts (status, next_attempt_at)
where status = 'Pending';

-- stats() counts the Quarantined rows and quarantined_rows() lists them oldest first: they
-- read the Quarantined prefix of the full ix_rfa_due until now; this index holds just them (a
-- row is quarantined rarely: an insert into it is not on the happy path).
do $$
begin
    if exists (
        select from pg_catalog.pg_index as i
        join pg_catalog.pg_class as c on c.oid = i.indexrelid
        join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
        where n.nspname = 'messenger' and c.relname = 'recording_finalize_attempts_quarantined_idx'
            and not i.indisvalid
    ) then
        drop index messenger.recording_finalize_attempts_quarantined_idx;
    end if;
end
$$;

create index concurrently if not exists recording_finalize_attempts_quarantined_idx
on messenger.recording_finalize_attempts (updated_at, recording_id)
where status = 'Quarantined';

-- prune() deletes the Done rows older than its cutoff, oldest first: it read the Done prefix of
-- the full ix_rfa_due until now; this index holds just them. A settle still writes one entry
-- (here instead of in ix_rfa_due), so the claim's index stays the size of the backlog while
-- prune keeps its index scan.
do $$
begin
    if exists (
        select from pg_catalog.pg_index as i
        join pg_catalog.pg_class as c on c.oid = i.indexrelid
        join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
        where n.nspname = 'messenger' and c.relname = 'recording_finalize_attempts_done_idx'
            and not i.indisvalid
    ) then
        drop index messenger.recording_finalize_attempts_done_idx;
    end if;
end
$$;

create index concurrently if not exists recording_finalize_attempts_done_idx
on messenger.recording_finalize_attempts (next_attempt_at)
where status = 'Done';

-- The swap: ALTER INDEX ... RENAME takes SHARE UPDATE EXCLUSIVE on the table (writers go on);
-- both renames commit together. Skipped once done (ix_rfa_due is then the partial one).
set lock_timeout = '2s';
do $$
begin
    if exists (
        select from pg_catalog.pg_class as c
        join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
        where n.nspname = 'messenger' and c.relname = 'ix_rfa_due_pending'
    ) then
        alter index if exists messenger.ix_rfa_due rename to ix_rfa_due_full;
        alter index messenger.ix_rfa_due_pending rename to ix_rfa_due;
    end if;
end
$$;

set lock_timeout = '1min';
drop index concurrently if exists messenger.ix_rfa_due_full;

comment on index messenger.ix_rfa_due is
'The claim''s scan: Pending finalize rows by next_attempt_at (partial since migration 0012: a '
'settled row leaves it, so it is the size of the backlog whatever the history).';

reset lock_timeout;
reset statement_timeout;
