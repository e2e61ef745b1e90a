-- transactional: false
-- squawk-disable-assume-in-transaction
-- The DBA review's findings 4 (part), 6 and 7 (issue 9): the terminal-guard trigger is created
-- here, once (the function files re-applied by every migrate no longer take a table lock); two
-- partial indexes make stats() cheap at any backlog; the file_id rules the functions checked
-- alone become table CHECKs (one source); COMMENT ON TABLE/COLUMN states the contract.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- Not transactional (the yoyo directive above): CREATE INDEX CONCURRENTLY cannot run in a
-- transaction block. Every statement is therefore its own transaction and is written to be
-- re-runnable, so a run that stopped half-way can simply be repeated. The plain (session) SET
-- below bounds every lock wait of this file; the RESETs at the end give the connection back.
--
-- stats() before/after, psql -X -d SCRATCH -f bench/stats_cost.psql (5,000 Pending beside
-- 20,500 finished finalize rows, 15,000 unpublished beside 20,000 published outbox rows, warm
-- cache, EXPLAIN (ANALYZE, BUFFERS) of the call, PostgreSQL 15, 2 shared cores):
--   vacuumed (visibility map set), before: 4,997 buffers, 16-18 ms - min(created_at) of the
--       outbox by a sequential scan (4,733 buffers) and of the Pending rows by a bitmap heap
--       scan (94); after: 177 buffers, 2-6 ms (3 ms typical) - both ages read one index entry
--       (3-4 buffers), the counts are index-only (13 + 8 + 5 + 144 buffers, no heap fetch).
--   right after the load (no vacuum yet), before: 9,725 buffers, 25-30 ms; after: 4,990
--       buffers, 13 ms - the ages still cost 3-5 buffers, but counting rows on pages vacuum has
--       not marked all-visible visits the heap (the planner then scans the outbox): a count is
--       cheap once autovacuum has passed, and bounded by the backlog itself, never by history.

-- CREATE INDEX CONCURRENTLY holds only SHARE UPDATE EXCLUSIVE (no writer waits for it) while it
-- waits for the writers already running, so its waits may be long; the statements after it that
-- take a lock writers queue behind get a short one.
set lock_timeout = '1min';
set statement_timeout = '30min';

-- A concurrent build that failed (a lock timeout, a cancel) leaves an INVALID index that
-- CREATE INDEX ... IF NOT EXISTS would then skip: drop it first, so a re-run builds it again.
do $$
declare
    v_index text;
begin
    for v_index in
        select c.relname from pg_catalog.pg_index as i
        join pg_catalog.pg_class as c on c.oid = i.indexrelid
        join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
        where n.nspname = 'messenger' and not i.indisvalid
            and c.relname in (
                'recording_finalize_attempts_pending_created_idx',
                'integration_outbox_unpublished_created_idx'
            )
    loop
        execute format('drop index messenger.%I', v_index);
    end loop;
end
$$;

-- stats(): the oldest Pending row is the first entry of this index (no heap visit, whatever
-- the backlog), and the Pending and due counts are index-only scans of the smallest index that
-- holds exactly the Pending rows (next_attempt_at is carried for the due count; every update of
-- it already touches ix_rfa_due, so nothing that was HOT stops being HOT).
create index concurrently if not exists recording_finalize_attempts_pending_created_idx
on messenger.recording_finalize_attempts (created_at) include (next_attempt_at)
where status = 'Pending';

-- stats(): the oldest unpublished event of a topic is the first entry under its prefix, and the
-- publish backlog an index-only count of that prefix. created_at is never updated, so the
-- relay's lease update stays HOT (migration 0003).
create index concurrently if not exists integration_outbox_unpublished_created_idx
on messenger.integration_outbox (topic, created_at)
where published_at is null;

-- From here on each lock queues the writers behind it while it waits: keep the wait short. A
-- timeout fails the run; run migrate again (every statement here is re-runnable).
set lock_timeout = '2s';
set statement_timeout = '5min';

-- INV-REC-6, completed: a file_id is at most 1024 characters (the limit transition_available
-- alone enforced until now)... Each DROP ... IF EXISTS removes only the constraint this file
-- adds next (nothing before 0005 has it): it makes the file re-runnable after a partial run.
alter table messenger.call_recordings
-- squawk-ignore ban-drop-constraint
drop constraint if exists call_recordings_file_id_length_ck;
alter table messenger.call_recordings
add constraint call_recordings_file_id_length_ck check (length(file_id) <= 1024) not valid;
-- ...and never blank (spaces only), which the functions refused and the table accepted.
alter table messenger.call_recordings
-- squawk-ignore ban-drop-constraint
drop constraint if exists call_recordings_file_id_not_blank_ck;
alter table messenger.call_recordings
add constraint call_recordings_file_id_not_blank_ck check (btrim(file_id) <> '') not valid;
-- VALIDATE scans the table under SHARE UPDATE EXCLUSIVE: writers are not blocked. A row that
-- breaks a rule makes it fail: fix that row (it was never a valid reference) and re-run.
alter table messenger.call_recordings validate constraint call_recordings_file_id_length_ck;
alter table messenger.call_recordings validate constraint call_recordings_file_id_not_blank_ck;

-- The terminal guard. Its function's living definition is
-- sql/functions/messenger.call_recordings_terminal_guard.sql (re-applied by every migrate, which
-- takes no table lock); this copy exists so that a fresh database has it before the trigger.
create or replace function messenger.call_recordings_terminal_guard()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if old.status in ('Available', 'Failed') and new.status is distinct from old.status then
        raise exception using
            errcode = 'RF008',
            message = format(
                'recording %s is %s, a terminal status; it cannot become %s',
                old.id, old.status, new.status
            );
    end if;
    return new;
end
$$;
revoke all on function messenger.call_recordings_terminal_guard() from public;

-- Takes SHARE ROW EXCLUSIVE on call_recordings once, here, under the lock_timeout above.
create or replace trigger call_recordings_terminal_guard
before update of status on messenger.call_recordings
for each row
execute function messenger.call_recordings_terminal_guard();

-- The contract a DBA sees in \d+.
comment on table messenger.call_sessions is
'A call (session_kind Direct): the owner of its recordings. ended_at set = the session ended; '
'set once, by messenger.session_ended().';
comment on column messenger.call_sessions.ended_at is
'NULL while the call runs. Its recording''s finalize row is due at ended_at + the SLA.';
comment on table messenger.conference_sessions is
'A conference (session_kind Conference): the owner of its recordings; same shape and rules as '
'call_sessions.';
comment on column messenger.conference_sessions.ended_at is
'NULL while the conference runs. Its recording''s finalize row is due at ended_at + the SLA.';

comment on table messenger.call_recordings is
'The domain aggregate CallRecordingEntity. Pending/Recording/Uploading -> Available or Failed; '
'Available and Failed are terminal (trigger call_recordings_terminal_guard, RF008). At most '
'one non-terminal recording per session (ix_recording_active). The binary is never stored: '
'file_id and its metadata only.';
comment on column messenger.call_recordings.session_kind is
'Direct (owner in call_sessions) or Conference (owner in conference_sessions).';
comment on column messenger.call_recordings.status is
'Pending, Recording, Uploading (non-terminal) or Available, Failed (terminal, never left).';
comment on column messenger.call_recordings.file_id is
'Stable reference in file storage (category CALL_RECORDINGS), 1..1024 characters, never blank, '
'never a URL. Set when the recording becomes Available.';
comment on column messenger.call_recordings.size_bytes is
'Content-Length of the stored binary, >= 0; set with Available.';
comment on column messenger.call_recordings.duration_seconds is 'Length, >= 0; set with Available.';
comment on column messenger.call_recordings.format is 'Webm, Mp4, Ogg or M4a; set with Available.';
comment on column messenger.call_recordings.failure_reason is
'Timeout (the safety net found no binary after the SLA), RecorderError or UploadFailed; set '
'with Failed.';
comment on column messenger.call_recordings.version is
'Bumped by every status transition (+1 per step; Pending/Recording -> Available counts the '
'implied Uploading step too). Informational: the transitions are guarded by status under the '
'row lock, not by this number.';

comment on table messenger.recording_finalize_attempts is
'The safety net''s reliability table: one row per recording that entered asynchronous '
'finalization (ux_rfa_recording). Pending rows are claimed by recording_finalize.claim_due() '
'when next_attempt_at <= now(); Done = terminal and its event enqueued; Quarantined = a human '
'must look (recording_finalize.requeue()). Not domain data.';
comment on column messenger.recording_finalize_attempts.recording_id is
'The recording (logical reference to call_recordings.id, no foreign key: a row may outlive it '
'and is then quarantined RecordingNotFound).';
comment on column messenger.recording_finalize_attempts.session_id is
'The recording''s session: the Kafka key of its event.';
comment on column messenger.recording_finalize_attempts.status is
'Pending (scheduled), Done (settled: the recording is terminal and its event enqueued) or '
'Quarantined (needs a human; requeue() makes it Pending again).';
comment on column messenger.recording_finalize_attempts.attempts is
'File-storage checks counted so far, incremented at claim (pre-increment: a row that crashes '
'the worker still reaches quarantine); config errors give the attempt back.';
comment on column messenger.recording_finalize_attempts.next_attempt_at is
'When the row is due: session end + SLA at first, then now() + backoff after each claim.';
comment on column messenger.recording_finalize_attempts.last_error is
'The last error recorded for the row (class and code, no PII, no URL, <= 512 characters); kept '
'when the row is settled without a new one.';
comment on column messenger.recording_finalize_attempts.claim_token is
'Set by claim_due() for a row handed to the driver; apply_outcome() must present it. Cleared '
'when the row is settled or released.';
comment on column messenger.recording_finalize_attempts.created_at is
'When finalization began: the base of the SLO lag (stats().oldest_age_seconds).';

comment on table messenger.integration_outbox is
'Transactional outbox shared by the messenger service. One row per event; (topic, dedupe_key) '
'unique, so enqueueing the same event twice is a no-op. The relay leases unpublished rows '
'(relay_lease_until) and sets published_at once the broker acknowledged them.';
comment on column messenger.integration_outbox.message_key is 'The Kafka message key (SessionId).';
comment on column messenger.integration_outbox.dedupe_key is
'Idempotency key within the topic (RecordingId for call-recording-available).';
comment on column messenger.integration_outbox.payload is
'The event value, published as the exact text of this jsonb. No URL, no binary.';
comment on column messenger.integration_outbox.published_at is
'NULL = not yet acknowledged by the broker.';
comment on column messenger.integration_outbox.relay_lease_until is
'A relay owns the unpublished row until then; an expired lease makes it claimable again.';

comment on table messenger.realtime_outbox is
'Persist-then-push rows for the realtime-dispatch worker: RecordingAvailable or RecordingFailed, '
'written once per recording and kind. Payload without URLs or secrets.';
comment on column messenger.realtime_outbox.reference_id is 'The RecordingId.';
comment on column messenger.realtime_outbox.dispatched_at is 'NULL = not yet pushed.';

reset lock_timeout;
reset statement_timeout;
