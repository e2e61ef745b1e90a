-- The schema objects migrations 0012 and 0013 replaced, as they were before (migrations 0001
-- and 0005): ix_rfa_due over every finalize row, the terminal guard called on every update of
-- status, the default autovacuum thresholds. Applied over a freshly migrated, empty database.

drop index messenger.ix_rfa_due;
create index ix_rfa_due on messenger.recording_finalize_attempts (status, next_attempt_at);

create or replace trigger call_recordings_terminal_guard
before update of status on messenger.call_recordings
for each row
execute function messenger.call_recordings_terminal_guard();

alter table messenger.recording_finalize_attempts reset (
    autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,
    autovacuum_analyze_scale_factor, autovacuum_analyze_threshold
);
alter table messenger.call_recordings reset (
    autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold
);
alter table messenger.integration_outbox reset (
    autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold
);
alter table messenger.realtime_outbox reset (
    autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold
);
drop index if exists messenger.recording_finalize_attempts_quarantined_idx;
drop index if exists messenger.recording_finalize_attempts_done_idx;
