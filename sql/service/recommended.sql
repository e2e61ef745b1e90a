-- Optional objects on the messenger service's own tables, for the service's DBA to weigh.
-- `recording-finalize migrate` NEVER applies any of this: each item changes a table the service
-- owns, so it is the service's decision. `recording-finalize service-sql recommended` prints
-- this file. Each item says what it buys and what it costs the service; apply the ones you want,
-- as the owner of the tables, each on its own (they are independent).

-- ---------------------------------------------------------------------------------------------
-- 1. An index on when recordings became Available.
--
-- Buys: the worker's republish discovery (recording_finalize.discover_unpublished: the
-- recordings that became Available within RFR_REPUBLISH_WINDOW and never got their event) reads
-- only the window, a slice per cycle. Without it each cycle reads the Available recordings from
-- the oldest on (the check beneath the adapter warns: "discovery reads the whole table").
-- Costs: one index entry per Available recording, written once when it becomes Available.
-- CREATE INDEX CONCURRENTLY takes no lock that blocks writers; it waits for the transactions
-- open when it starts.
create index concurrently if not exists call_recordings_available_at_idx
on messenger.call_recordings (available_at, id)
where status::text = 'Available';

-- ---------------------------------------------------------------------------------------------
-- 2. A guard that Available and Failed are terminal, for every writer.
--
-- Buys: the domain invariant "Available and Failed are terminal" enforced by the table, whoever
-- writes it (the product's functions already keep it: they move only non-terminal recordings,
-- under a status guard and the row lock).
-- Costs: the service can then no longer move a recording out of Failed itself (a re-ingest of a
-- Failed recording, which some runbooks do, is refused with SQLSTATE RF008); creating the
-- trigger takes a SHARE ROW EXCLUSIVE lock on call_recordings for a moment (writers queue
-- behind it while it waits: keep lock_timeout short). The WHEN condition keeps the function off
-- every update that does not leave a terminal status.
create or replace function messenger.call_recordings_terminal_guard()
returns trigger
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
    raise exception using
        errcode = 'RF008',
        message = format('recording %s is %s, a terminal status; it cannot become %s',
            old.id, old.status, new.status);
end
$$;

set lock_timeout = '1s';
create or replace trigger call_recordings_terminal_guard
before update of status on messenger.call_recordings
for each row
when (old.status in ('Available', 'Failed') and new.status is distinct from old.status)
execute function messenger.call_recordings_terminal_guard();
reset lock_timeout;

-- ---------------------------------------------------------------------------------------------
-- 3. Enumeration CHECKs in the form PostgreSQL prepares cheaply.
--
-- Buys: about 6 microseconds per CHECK per INSERT or UPDATE statement. PostgreSQL reads and
-- plans every CHECK of a table from its stored text for each statement; on a varchar column
-- `col in ('A', 'B')` is stored as an array cast element by element, `col::text = any
-- ('{A,B}'::text[])` as one constant (measured: 13 against 7 microseconds per CHECK on a
-- single-row UPDATE). The reference schema (sql/service/schema.sql) is written this way already.
-- Costs: each ALTER takes ACCESS EXCLUSIVE on its table for a moment (dropped and re-added NOT
-- VALID in one statement, no scan); the VALIDATE that follows scans the table under SHARE
-- UPDATE EXCLUSIVE (no writer waits). Shown for one CHECK; repeat for each enumeration CHECK
-- of call_recordings and realtime_outbox.
set lock_timeout = '1s';
alter table messenger.call_recordings
drop constraint call_recordings_status_ck,
add constraint call_recordings_status_ck check (
    status::text = any('{Pending,Recording,Uploading,Available,Failed}'::text[])
) not valid;
reset lock_timeout;
alter table messenger.call_recordings validate constraint call_recordings_status_ck;
