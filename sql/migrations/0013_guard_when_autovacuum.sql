-- Issue 14: the terminal guard fires only when it can matter, and the finalize tables are
-- vacuumed by their churn rather than by their history.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- 1. call_recordings_terminal_guard gets a WHEN condition: PostgreSQL evaluates it in the
--    executor, and the PL/pgSQL function (with its search_path switch) runs only for an update
--    that moves a terminal recording to another status - which it then refuses (RF008), as
--    before. Every writer is still guarded: the condition is the function's own test. The
--    function keeps its test too (a trigger created without the condition stays correct).
-- 2. Per-table autovacuum thresholds. The default scale factor (0.2) counts the whole history:
--    with 1.02 M finished rows autovacuum waited for ~204 k dead tuples, and the claim's index
--    scan under an old snapshot went from 6 to 110-274 buffers until a VACUUM. Every finalized
--    row leaves 2 dead finalize-row versions, 1 recording version and 1-2 outbox versions;
--    a threshold of 2,000 + 1 % of the table keeps the dead versions near one drain batch.
--    ALTER TABLE ... SET (storage parameters) takes SHARE UPDATE EXCLUSIVE: no writer waits.

set local lock_timeout = '2s';
set local statement_timeout = '1min';

-- SHARE ROW EXCLUSIVE on call_recordings for the swap of the trigger definition: writers queue
-- behind it while it waits, hence the short lock_timeout (a timeout fails the run: repeat it).
create or replace trigger call_recordings_terminal_guard
before update of status on messenger.call_recordings
for each row
when (old.status in ('Available', 'Failed') and new.status is distinct from old.status)
execute function messenger.call_recordings_terminal_guard();

alter table messenger.recording_finalize_attempts set (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_analyze_threshold = 2000
);
alter table messenger.call_recordings set (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 2000
);
alter table messenger.integration_outbox set (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 2000
);
alter table messenger.realtime_outbox set (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 2000
);
