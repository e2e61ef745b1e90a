-- transactional: false
-- squawk-disable-assume-in-transaction
-- Issue 14: the enumeration CHECKs of the tables written once per finalized row, rewritten in
-- a form PostgreSQL prepares for a fraction of the cost. Same names, same rule, same verdict
-- for every value (NULL included); only the stored expression changes.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- Why: the executor reads and plans every CHECK of a table from its stored text for each
-- INSERT or UPDATE statement (not once per session), and the worker changes one row per
-- statement. `status in ('Pending', ...)` on a varchar column is stored as
-- `(status)::text = ANY ((ARRAY['Pending'::character varying, ...])::text[])`: an array built
-- and cast element by element, folded again each time. `status::text = any ('{...}'::text[])`
-- is stored as one constant array. Measured on one backend, 10,000 single-row UPDATEs of a
-- copy of call_recordings with eight copies of the status CHECK: 13 us per CHECK per statement
-- in the first form, 7 us in the second (`psql -X -d SCRATCH -f bench/check_cost.psql`). A
-- finalized row writes call_recordings once (6 of these CHECKs), its finalize row twice (3)
-- and realtime_outbox once (2); the service's own callbacks write the same tables.
--
-- Not transactional (the yoyo directive above), so that each statement commits on its own:
--   1. per table, one ALTER drops each CHECK and adds it again NOT VALID under the same name.
--      Dropped and added in one statement, the table is never without the rule. It takes
--      ACCESS EXCLUSIVE for a moment (no scan); writers queue behind it only while it waits,
--      hence lock_timeout 1 s, migrate's own: a timeout is retried by migrate (5 tries).
--   2. VALIDATE CONSTRAINT scans the table under SHARE UPDATE EXCLUSIVE: no writer waits.
-- A run stopped between 1 and 2 leaves a CHECK that every new row obeys but NOT VALID in the
-- catalog; every statement here can run again, so migrate simply runs the file again.
-- recording_finalize_attempts_quarantine_reason_ck was added NOT VALID by migration 0010 (no
-- scan; NULL passes anyway) and stays so: it is not validated here either.

set lock_timeout = '1s';
set statement_timeout = '30min';

alter table messenger.call_recordings
-- squawk-ignore ban-drop-constraint
drop constraint call_recordings_session_kind_ck,
add constraint call_recordings_session_kind_ck check (
    session_kind::text = any('{Direct,Conference}'::text[])
) not valid,
-- squawk-ignore ban-drop-constraint
drop constraint call_recordings_media_type_ck,
add constraint call_recordings_media_type_ck check (
    media_type::text = any('{Audio,Video}'::text[])
) not valid,
-- squawk-ignore ban-drop-constraint
drop constraint call_recordings_trigger_ck,
add constraint call_recordings_trigger_ck check (
    trigger::text = any('{Manual,Auto}'::text[])
) not valid,
-- squawk-ignore ban-drop-constraint
drop constraint call_recordings_status_ck,
add constraint call_recordings_status_ck check (
    status::text = any('{Pending,Recording,Uploading,Available,Failed}'::text[])
) not valid,
-- squawk-ignore ban-drop-constraint
drop constraint call_recordings_format_ck,
add constraint call_recordings_format_ck check (
    format::text = any('{Webm,Mp4,Ogg,M4a}'::text[])
) not valid,
-- squawk-ignore ban-drop-constraint
drop constraint call_recordings_failure_reason_ck,
add constraint call_recordings_failure_reason_ck check (
    failure_reason::text = any('{Timeout,RecorderError,UploadFailed}'::text[])
) not valid;

alter table messenger.recording_finalize_attempts
-- squawk-ignore ban-drop-constraint
drop constraint recording_finalize_attempts_session_kind_ck,
add constraint recording_finalize_attempts_session_kind_ck check (
    session_kind::text = any('{Direct,Conference}'::text[])
) not valid,
-- squawk-ignore ban-drop-constraint
drop constraint recording_finalize_attempts_status_ck,
add constraint recording_finalize_attempts_status_ck check (
    status::text = any('{Pending,Done,Quarantined}'::text[])
) not valid,
-- squawk-ignore ban-drop-constraint
drop constraint recording_finalize_attempts_quarantine_reason_ck,
add constraint recording_finalize_attempts_quarantine_reason_ck check (
    -- Two literals on two lines are one constant to the parser (SQL's string continuation).
    quarantine_reason::text = any(
        '{max_attempts,crash_loop,invalid_metadata,'
        'recording_not_found,session_not_found}'::text[]
    )
) not valid;

alter table messenger.realtime_outbox
-- squawk-ignore ban-drop-constraint
drop constraint realtime_outbox_kind_ck,
add constraint realtime_outbox_kind_ck check (
    kind::text = any('{RecordingAvailable,RecordingFailed}'::text[])
) not valid,
-- squawk-ignore ban-drop-constraint
drop constraint realtime_outbox_session_kind_ck,
add constraint realtime_outbox_session_kind_ck check (
    session_kind::text = any('{Direct,Conference}'::text[])
) not valid;

-- VALIDATE scans the table under SHARE UPDATE EXCLUSIVE: no writer waits for it.
alter table messenger.call_recordings validate constraint call_recordings_session_kind_ck;
alter table messenger.call_recordings validate constraint call_recordings_media_type_ck;
alter table messenger.call_recordings validate constraint call_recordings_trigger_ck;
alter table messenger.call_recordings validate constraint call_recordings_status_ck;
alter table messenger.call_recordings validate constraint call_recordings_format_ck;
alter table messenger.call_recordings validate constraint call_recordings_failure_reason_ck;
alter table messenger.recording_finalize_attempts
validate constraint recording_finalize_attempts_session_kind_ck;
alter table messenger.recording_finalize_attempts
validate constraint recording_finalize_attempts_status_ck;
alter table messenger.realtime_outbox validate constraint realtime_outbox_kind_ck;
alter table messenger.realtime_outbox validate constraint realtime_outbox_session_kind_ck;

reset lock_timeout;
reset statement_timeout;
