-- The operator toolkit: the operator role, quarantine reasons, the audit trail of operator
-- actions, the pause switch and the marker that keeps "enqueue once" true after a prune.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- Every statement here is cheap on a large database: the new column is nullable without a
-- default (catalog-only), its CHECK is NOT VALID (enforced for new writes, no scan), and the
-- tables are new.

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
