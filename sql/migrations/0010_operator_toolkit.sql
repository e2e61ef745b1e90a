-- The operator toolkit: the operator role, quarantine reasons, the audit trail of operator
-- actions, the pause switch and the marker that keeps "enqueue once" true after a prune.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- Every statement here is cheap on a large database: the new column is nullable without a
-- default (catalog-only), its CHECK is NOT VALID (enforced for new writes, no scan), the tables
-- are new, and each CREATE TRIGGER takes SHARE ROW EXCLUSIVE on its table once, briefly, under
-- the lock_timeout below.

set local lock_timeout = '5s';
set local statement_timeout = '5min';

-- Operators (requeue, retry, pause, audit --repair, prune) log in as a role granted this one.
do $$
begin
    if not exists (
        select from pg_catalog.pg_roles where rolname = 'recording_finalize_operator'
    ) then
        create role recording_finalize_operator nologin;
    end if;
end
$$;

comment on role recording_finalize_operator is
'recording-finalize-retry operator: EXECUTE on the runbook functions (explain, audit, requeue, '
'retry, pause, prune), nothing on any table. Grant it to the operators'' login roles.';

grant usage on schema recording_finalize to recording_finalize_operator;

-- Why a row is Quarantined, as a code; set by the trigger
-- messenger.recording_finalize_attempts_quarantine_reason from the last_error written by the
-- function that quarantined it.
alter table messenger.recording_finalize_attempts
add column quarantine_reason varchar(24) null;

-- The quarantine reasons the toolkit knows (NOT VALID: no scan; enforced on every new write).
alter table messenger.recording_finalize_attempts
add constraint recording_finalize_attempts_quarantine_reason_ck check (
    quarantine_reason in (
        'max_attempts', 'crash_loop', 'invalid_metadata', 'recording_not_found',
        'session_not_found'
    )
) not valid;

-- Who did what to which recording, and why: every operator action leaves one row.
create table messenger.recording_finalize_operator_actions (
    id bigint generated always as identity primary key,
    -- Null for actions on the whole worker (pause, resume).
    recording_id uuid null,
    action_kind varchar(16) not null,
    operator_name text not null,
    reason text not null,
    detail jsonb not null default '{}',
    created_at timestamptz not null default now(),
    constraint recording_finalize_operator_actions_action_kind_ck check (
        action_kind in ('requeue', 'retry', 'repair', 'pause', 'resume')
    ),
    -- An audit row names a person and a reason; empty ones would record nothing.
    constraint recording_finalize_operator_actions_operator_name_ck check (
        length(btrim(operator_name)) between 1 and 128
    ),
    constraint recording_finalize_operator_actions_reason_ck check (
        length(btrim(reason)) between 1 and 512
    )
);

create index recording_finalize_operator_actions_recording_idx
on messenger.recording_finalize_operator_actions (recording_id, created_at)
where recording_id is not null;

-- The pause switch: a row per paused part; no row = running.
create table messenger.recording_finalize_pause (
    part varchar(16) primary key,
    paused_at timestamptz not null default now(),
    paused_by text not null,
    reason text null,
    constraint recording_finalize_pause_part_ck check (part in ('reconcile', 'relay'))
);

-- "Enqueue once per recording" rests on the integration-outbox row existing. When a published
-- row is deleted (prune, or by hand), this marker outlives it, and enqueue_available consults
-- it, so a late duplicate ingest callback cannot send the event a second time.
create table messenger.integration_outbox_pruned (
    topic text not null,
    dedupe_key text not null,
    published_at timestamptz null,
    pruned_at timestamptz not null default now(),
    constraint integration_outbox_pruned_pkey primary key (topic, dedupe_key)
);

-- The contract a DBA sees in \d+.
comment on column messenger.recording_finalize_attempts.quarantine_reason is
'Why the row is Quarantined (max_attempts, crash_loop, invalid_metadata, recording_not_found, '
'session_not_found), set by trigger recording_finalize_attempts_quarantine_reason from '
'last_error; NULL while not quarantined (operator_requeue clears it) or for an unknown cause.';
comment on table messenger.recording_finalize_operator_actions is
'Append-only audit trail of operator actions (requeue, retry, repair, pause, resume): who '
'(operator_name), why (reason), when (created_at), on which recording (NULL: the whole worker). '
'Written only by the operator functions; shown by recording-finalize explain.';
comment on table messenger.recording_finalize_pause is
'The pause switch: one row per paused part (reconcile, relay); no row = running. Read once per '
'cycle by every runner (operator_state), written by set_pause.';
comment on table messenger.integration_outbox_pruned is
'One row per deleted published integration event (topic, dedupe_key = RecordingId), written by '
'trigger integration_outbox_pruned_marker: enqueue_available never enqueues a marked event '
'again, so "once per recording" outlives prune.';

-- The two triggers are created here, once (the function files re-applied by every migrate take
-- no table lock). Their functions' living definitions are
-- sql/functions/messenger.recording_finalize_attempts_quarantine_reason.sql and
-- sql/functions/messenger.integration_outbox_pruned_marker.sql; these copies exist so that a fresh
-- database has them before the triggers.

create or replace function messenger.recording_finalize_attempts_quarantine_reason()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
    -- The functions that quarantine a row write last_error with a fixed class prefix:
    -- claim_due MaxAttemptsExceeded / RecordingNotFound / SessionNotFound, apply_outcome
    -- Transient (attempts exhausted) / InvalidMetadata / RecordingNotFound.
    -- crash_loop: exhausted while no apply_outcome recorded any outcome since the row was opened
    -- or last requeued (OLD.last_error is still empty, or still the quarantine message a requeue
    -- kept): every attempt was claimed and never answered - the worker died on this row.
    new.quarantine_reason := case
        when new.last_error like 'MaxAttemptsExceeded%'
            and (old.last_error is null or old.last_error !~ '^(Transient|ConfigError):')
            then 'crash_loop'
        when new.last_error like 'MaxAttemptsExceeded%' or new.last_error like 'Transient%'
            then 'max_attempts'
        when new.last_error like 'InvalidMetadata%' then 'invalid_metadata'
        when new.last_error like 'RecordingNotFound%' then 'recording_not_found'
        when new.last_error like 'SessionNotFound%' then 'session_not_found'
    end;
    return new;
end
$$;

create or replace trigger recording_finalize_attempts_quarantine_reason
before update on messenger.recording_finalize_attempts
for each row
when (new.status = 'Quarantined' and old.status is distinct from new.status)
execute function messenger.recording_finalize_attempts_quarantine_reason();

create or replace function messenger.integration_outbox_pruned_marker()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
begin
    -- Only published rows: an unpublished row deleted by hand never reached a consumer, so the
    -- republish phase may enqueue it again.
    insert into messenger.integration_outbox_pruned (topic, dedupe_key, published_at)
    select d.topic, d.dedupe_key, d.published_at
    from pruned_rows as d
    where d.published_at is not null
    on conflict (topic, dedupe_key) do nothing;
    return null;
end
$$;

create or replace trigger integration_outbox_pruned_marker
after delete on messenger.integration_outbox
referencing old table as pruned_rows
for each statement
execute function messenger.integration_outbox_pruned_marker();
