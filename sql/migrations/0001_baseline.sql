-- Baseline: every table, type and index recording-finalize-retry owns. Nothing else.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- The product is a visitor in the messenger service's database (sql/README.md, "Ownership"):
-- this file creates objects only in the product's schemas and the one product table that lives
-- in schema messenger (recording_finalize_attempts). It never alters, comments,
-- grants on or triggers a table of the service. `recording-finalize migrate` has checked the
-- service's tables, the unique keys the product relies on, the privileges it needs and the
-- group roles before this runs (the roles are created by migrate, not here).

-- No lock below is taken on a table the service uses; the bound is for the product's own.
set local lock_timeout = '1s';
set local statement_timeout = '1min';

create schema recording_finalize;
comment on schema recording_finalize is
'recording-finalize-retry: the API functions (granted to the worker, operator and service roles) '
'and the product''s own tables. The messenger tables stay the service''s.';

create schema recording_finalize_internal;
comment on schema recording_finalize_internal is
'recording-finalize-retry internals: helper functions and types, granted to nobody. Called by '
'the API functions of schema recording_finalize, which run as the owner.';

grant usage on schema recording_finalize
to recording_finalize_worker, recording_finalize_operator, recording_finalize_service;

-- A function this role creates from now on is not executable by PUBLIC until a file grants it
-- (per database, for the migrating role only; uninstall reverts it). Each file also revokes.
alter default privileges revoke execute on functions from public;

-- ---------------------------------------------------------------------------------------------
-- The server side of the configuration: one row, owner only.

create table recording_finalize.settings (
    -- Exactly one row: the primary key can only be true.
    singleton boolean primary key default true,
    topic text not null default 'pin.messenger.call-recording-available.v1',
    max_attempts_min integer not null default 1,
    max_attempts_max integer not null default 20000,
    sla_timeout_min interval not null default '1 second',
    sla_timeout_max interval not null default '24 hours',
    backoff_base_min interval not null default '100 milliseconds',
    backoff_base_max interval not null default '1 hour',
    backoff_factor_max double precision not null default 10,
    backoff_cap_max interval not null default '24 hours',
    backoff_jitter_max double precision not null default 0.5,
    upload_grace_min interval not null default '1 second',
    upload_grace_max interval not null default '24 hours',
    relay_lease_max interval not null default '15 minutes',
    relay_batch_max integer not null default 10000,
    retention_min interval not null default '1 day',
    -- Random, never shown: seals the policy a session has checked (recording_finalize_internal.
    -- policy), so that no caller can forge it.
    policy_seal_key uuid not null default gen_random_uuid(),
    updated_at timestamptz not null default now(),
    -- One row, no more: the key is the constant true.
    constraint settings_singleton_ck check (singleton),
    -- A Kafka topic name, as RFR_TOPIC is checked by the driver.
    constraint settings_topic_ck check (
        topic ~ '^[A-Za-z0-9._-]{1,249}$' and topic not in ('.', '..')
    ),
    -- Every bound is itself sane: a range that is not empty and within the functions' own rules.
    constraint settings_max_attempts_ck check (
        max_attempts_min >= 1 and max_attempts_max >= max_attempts_min
    ),
    constraint settings_sla_timeout_ck check (
        sla_timeout_min > interval '0' and sla_timeout_max >= sla_timeout_min
    ),
    constraint settings_backoff_base_ck check (
        backoff_base_min > interval '0' and backoff_base_max >= backoff_base_min
    ),
    constraint settings_backoff_factor_max_ck check (
        backoff_factor_max >= 1 and backoff_factor_max < 'Infinity'::double precision
    ),
    constraint settings_backoff_cap_max_ck check (backoff_cap_max >= backoff_base_min),
    constraint settings_backoff_jitter_max_ck check (
        backoff_jitter_max >= 0 and backoff_jitter_max < 1
    ),
    constraint settings_upload_grace_ck check (
        upload_grace_min > interval '0' and upload_grace_max >= upload_grace_min
    ),
    constraint settings_relay_lease_max_ck check (relay_lease_max > interval '0'),
    constraint settings_relay_batch_max_ck check (relay_batch_max between 1 and 10000),
    constraint settings_retention_min_ck check (retention_min >= interval '1 minute')
);

insert into recording_finalize.settings default values;

comment on table recording_finalize.settings is
'The server side of the worker''s configuration, one row, owner only (no grant): the Kafka topic '
'every API function works on and the bounds of every policy value a caller passes. Read it with '
'recording_finalize.server_settings(); change it with UPDATE as the owner. The driver refuses '
'to start (exit 2) when its policy is outside these bounds (recording_finalize.check_policy).';
comment on column recording_finalize.settings.topic is
'The integration-outbox topic of call-recording-available: the only topic the product enqueues '
'into, leases from or marks published. A policy whose topic differs raises RF009.';
comment on column recording_finalize.settings.max_attempts_min is
'Smallest max_attempts (RFR_MAX_ATTEMPTS) accepted (RF010). Raise it in production (e.g. 3).';
comment on column recording_finalize.settings.max_attempts_max is
'Largest max_attempts accepted (RF010): a bound on "never quarantine".';
comment on column recording_finalize.settings.upload_grace_max is
'Largest upload_grace accepted (RF010), and the longest deferral of a 404 during a storage '
'incident.';
comment on column recording_finalize.settings.relay_lease_max is
'Longest relay lease: relay_claim caps p_lease at this.';
comment on column recording_finalize.settings.retention_min is
'Smallest prune p_older_than (RFR_RETENTION, prune --older-than) accepted (RF010).';
comment on column recording_finalize.settings.policy_seal_key is
'A random key, read by the owner''s functions only (server_settings leaves it out): the policy '
'a session checked is kept for that session sealed with it and this row (see '
'recording_finalize_internal.policy). Replace it (gen_random_uuid()) to drop every kept policy.';
comment on column recording_finalize.settings.singleton is
'Always true: the primary key that keeps this table at one row.';
comment on column recording_finalize.settings.sla_timeout_min is
'Smallest sla_timeout_seconds (RFR_FINALIZE_SLA_TIMEOUT) accepted (RF010).';
comment on column recording_finalize.settings.sla_timeout_max is
'Largest sla_timeout_seconds accepted (RF010).';
comment on column recording_finalize.settings.backoff_base_min is
'Smallest backoff_base_seconds (RFR_BACKOFF_BASE) accepted (RF010).';
comment on column recording_finalize.settings.backoff_base_max is
'Largest backoff_base_seconds accepted (RF010).';
comment on column recording_finalize.settings.backoff_factor_max is
'Largest backoff_factor (RFR_BACKOFF_FACTOR) accepted (RF010).';
comment on column recording_finalize.settings.backoff_cap_max is
'Largest backoff_cap_seconds (RFR_BACKOFF_CAP) accepted (RF010).';
comment on column recording_finalize.settings.backoff_jitter_max is
'Largest backoff_jitter (RFR_BACKOFF_JITTER) accepted (RF010; always < 1).';
comment on column recording_finalize.settings.upload_grace_min is
'Smallest upload_grace_seconds (RFR_UPLOAD_GRACE, by default the SLA) accepted (RF010).';
comment on column recording_finalize.settings.relay_batch_max is
'Largest relay batch (relay_claim p_limit, RFR_RELAY_BATCH_SIZE) accepted (RF010).';
comment on column recording_finalize.settings.updated_at is
'When the row was last changed (set it in the UPDATE).';

-- ---------------------------------------------------------------------------------------------
-- The job's operational table, in schema messenger beside the recordings it follows: the
-- service's operators and backups find it with the service's tables.

create table messenger.recording_finalize_attempts (
    id uuid primary key default gen_random_uuid(),
    recording_id uuid not null,
    session_kind varchar(12) not null,
    session_id uuid not null,
    status varchar(16) not null default 'Pending',
    attempts integer not null default 0,
    next_attempt_at timestamptz not null,
    last_error varchar(512) null,
    -- Set by claim_due for a row handed to the driver; apply_outcome must present it back.
    claim_token uuid null,
    claimed_at timestamptz null,
    -- The verdict apply_outcome last recorded since the row was opened or rescheduled.
    last_outcome varchar(24) null,
    quarantine_reason varchar(24) null,
    -- Who opened the row: the service's lifecycle calls, the worker's discovery, an operator's
    -- repair, or the ingest callback of a recording that had none.
    opened_by varchar(16) not null default 'lifecycle',
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint recording_finalize_attempts_session_kind_ck check (
        session_kind::text = any('{Direct,Conference}'::text[])
    ),
    constraint recording_finalize_attempts_status_ck check (
        status::text = any('{Pending,Done,Quarantined}'::text[])
    ),
    constraint recording_finalize_attempts_attempts_ck check (attempts >= 0),
    constraint recording_finalize_attempts_last_outcome_ck check (
        last_outcome::text = any('{found,missing,transient,invalid_metadata,config_error}'::text[])
    ),
    constraint recording_finalize_attempts_quarantine_reason_ck check (
        quarantine_reason::text = any(
            '{max_attempts,crash_loop,invalid_metadata,recording_not_found,session_not_found}'
            ::text[]
        )
    ),
    -- A quarantined row says why; no other row carries a reason.
    constraint recording_finalize_attempts_quarantined_has_reason_ck check (
        (status = 'Quarantined') = (quarantine_reason is not null)
    ),
    constraint recording_finalize_attempts_opened_by_ck check (
        opened_by::text = any('{lifecycle,discovery,repair,ingest}'::text[])
    )
);

-- Finalization happens once per recording (the name is part of the documented contract,
-- sql/README.md: operators' queries use it).
create unique index ux_rfa_recording on messenger.recording_finalize_attempts (recording_id);

-- The claim's scan, Pending rows only (name and columns part of the documented contract,
-- sql/README.md): a settled row leaves it, so the index is the size of the backlog whatever the history.
create index ix_rfa_due on messenger.recording_finalize_attempts (status, next_attempt_at)
where status = 'Pending';

-- stats(): the oldest Pending row is the first entry; the counts are index-only scans.
create index recording_finalize_attempts_pending_created_idx
on messenger.recording_finalize_attempts (created_at) include (next_attempt_at)
where status = 'Pending';

-- stats() and quarantined_rows(): the quarantined rows, oldest first.
create index recording_finalize_attempts_quarantined_idx
on messenger.recording_finalize_attempts (updated_at, recording_id)
where status = 'Quarantined';

-- prune(): the Done rows, oldest settled first.
create index recording_finalize_attempts_done_idx
on messenger.recording_finalize_attempts (updated_at)
where status = 'Done';

-- Every finalized row leaves two dead versions here; vacuum by churn, not by history (the
-- default 20 % of a table that keeps its history would wait for hundreds of thousands).
alter table messenger.recording_finalize_attempts set (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_analyze_threshold = 2000
);

comment on table messenger.recording_finalize_attempts is
'The safety net''s reliability table (owned by recording-finalize-retry, not the service): one '
'row per recording in asynchronous finalization (ux_rfa_recording). Pending rows are claimed by '
'recording_finalize.claim_due() when next_attempt_at <= now(); Done = the recording is terminal '
'and its event enqueued; Quarantined = a human must look (recording_finalize.reschedule()).';
comment on column messenger.recording_finalize_attempts.recording_id is
'The recording (logical reference to messenger.call_recordings.id; no foreign key: the service''s '
'table is not the product''s to constrain).';
comment on column messenger.recording_finalize_attempts.id is 'The row''s own key.';
comment on column messenger.recording_finalize_attempts.session_kind is
'Direct (session in messenger.call_sessions) or Conference (messenger.conference_sessions).';
comment on column messenger.recording_finalize_attempts.session_id is
'The recording''s session: the Kafka key of its event.';
comment on column messenger.recording_finalize_attempts.status is
'Pending (scheduled), Done (settled) or Quarantined (needs a human).';
comment on column messenger.recording_finalize_attempts.attempts is
'File-storage checks counted so far, incremented at claim (pre-increment: a row that crashes '
'the worker still reaches quarantine); given back when the check could not count (a '
'configuration error, a storage incident, a lock, a stop).';
comment on column messenger.recording_finalize_attempts.next_attempt_at is
'When the row is due: session end + SLA at first, then now() + backoff after each claim.';
comment on column messenger.recording_finalize_attempts.last_error is
'The last error recorded for the row (class and code, no PII, no URL, <= 512 characters).';
comment on column messenger.recording_finalize_attempts.claim_token is
'Set by claim_due() for a row handed to the driver; apply_outcome() must present it.';
comment on column messenger.recording_finalize_attempts.claimed_at is
'When claim_due last handed the row to the driver.';
comment on column messenger.recording_finalize_attempts.last_outcome is
'The verdict apply_outcome last recorded since the row was opened or rescheduled; NULL means '
'every claim went unanswered (a row quarantined so is a crash_loop).';
comment on column messenger.recording_finalize_attempts.quarantine_reason is
'Why the row is Quarantined: max_attempts, crash_loop, invalid_metadata, recording_not_found or '
'session_not_found; set by the function that quarantines it, NULL otherwise.';
comment on column messenger.recording_finalize_attempts.opened_by is
'lifecycle (recording_stopped/session_ended), discovery (the worker found the recording stuck '
'without a row), repair (audit --repair) or ingest (the callback of a recording without one).';
comment on column messenger.recording_finalize_attempts.created_at is
'When finalization began: the base of the SLO lag (stats().oldest_age_seconds).';
comment on column messenger.recording_finalize_attempts.updated_at is
'When a function last changed the row.';

-- ---------------------------------------------------------------------------------------------
-- Storage incidents: periods in which a 404 from the file storage is not trusted.

create table recording_finalize.storage_incidents (
    id bigint generated always as identity primary key,
    source varchar(64) not null,
    started_at timestamptz not null,
    ended_at timestamptz null,
    reason varchar(512) null,
    opened_by text not null default session_user,
    closed_by text null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    -- Who saw it: the worker itself, the recorders, an operator...
    constraint storage_incidents_source_ck check (source ~ '^[a-z][a-z0-9_.-]{0,63}$'),
    constraint storage_incidents_ended_after_start_ck check (
        ended_at is null or ended_at >= started_at
    )
);

-- At most one open incident per source.
create unique index storage_incidents_one_open_uq
on recording_finalize.storage_incidents (source) where ended_at is null;

-- The deferral rule reads the incidents that ended recently (and the open ones).
create index storage_incidents_ended_idx
on recording_finalize.storage_incidents (ended_at);

comment on table recording_finalize.storage_incidents is
'Periods in which the file storage was out, as the worker saw it (source worker) or as the '
'recorders or an operator report it: while one that overlaps a recording''s upload window is '
'open, and for the upload grace after it ended, a 404 fails no recording.';
comment on column recording_finalize.storage_incidents.opened_by is
'The login role (session_user) that opened the incident.';
comment on column recording_finalize.storage_incidents.id is 'The incident''s number.';
comment on column recording_finalize.storage_incidents.source is
'Who saw it: worker (the worker itself), recorders (the service), or an operator''s name.';
comment on column recording_finalize.storage_incidents.started_at is
'When the storage went out (may be back-dated, never in the future).';
comment on column recording_finalize.storage_incidents.ended_at is
'When it came back; NULL while the incident is open.';
comment on column recording_finalize.storage_incidents.reason is
'What happened: an error class and code, or an operator''s sentence; never a URL.';
comment on column recording_finalize.storage_incidents.closed_by is
'The login role (session_user) that closed it; NULL while open.';
comment on column recording_finalize.storage_incidents.created_at is 'When the row was written.';
comment on column recording_finalize.storage_incidents.updated_at is 'When the row last changed.';

-- ---------------------------------------------------------------------------------------------
-- The operators' audit trail and the pause switch.

create table recording_finalize.operator_actions (
    id bigint generated always as identity primary key,
    -- Null for actions on the whole worker (pause, resume).
    recording_id uuid null,
    action_kind varchar(16) not null,
    operator_name text not null,
    reason text not null,
    detail jsonb not null default '{}',
    -- The login that really ran it (a column default is evaluated in the caller's session, even
    -- inside SECURITY DEFINER); operator_name is only the name it gave.
    login_role text not null default session_user,
    created_at timestamptz not null default now(),
    constraint operator_actions_action_kind_ck check (
        action_kind::text = any('{requeue,retry,repair,pause,resume}'::text[])
    ),
    -- An audit row names a person and a reason; empty ones would record nothing.
    constraint operator_actions_operator_name_ck check (
        length(btrim(operator_name)) between 1 and 128
    ),
    constraint operator_actions_reason_ck check (length(btrim(reason)) between 1 and 512)
);

create index operator_actions_recording_idx
on recording_finalize.operator_actions (recording_id, created_at)
where recording_id is not null;

comment on table recording_finalize.operator_actions is
'Append-only audit trail of operator actions (requeue, retry, repair, pause, resume): who, why, '
'when, on which recording (NULL: the whole worker). Shown by recording-finalize explain.';
comment on column recording_finalize.operator_actions.id is 'The action''s number.';
comment on column recording_finalize.operator_actions.recording_id is
'The recording acted on; NULL for an action on the whole worker (pause, resume).';
comment on column recording_finalize.operator_actions.action_kind is
'requeue, retry, repair, pause or resume.';
comment on column recording_finalize.operator_actions.operator_name is
'The name the operator gave (--operator, else the OS user).';
comment on column recording_finalize.operator_actions.reason is 'Why, in the operator''s words.';
comment on column recording_finalize.operator_actions.detail is
'What the row looked like before (attempts, quarantine reason, last error), or the part paused.';
comment on column recording_finalize.operator_actions.login_role is
'The login (session_user) that ran the action, even inside SECURITY DEFINER.';
comment on column recording_finalize.operator_actions.created_at is 'When.';

create table recording_finalize.pause (
    part varchar(16) primary key,
    paused_at timestamptz not null default now(),
    paused_by text not null,
    reason text not null,
    login_role text not null default session_user,
    constraint pause_part_ck check (part::text = any('{reconcile,relay}'::text[]))
);

comment on table recording_finalize.pause is
'The pause switch: one row per paused part (reconcile, relay); no row = running. Read once per '
'cycle by every runner (operator_state), written by set_pause.';
comment on column recording_finalize.pause.part is 'The paused part: reconcile or relay.';
comment on column recording_finalize.pause.paused_at is 'When it was paused (last).';
comment on column recording_finalize.pause.paused_by is 'The name the operator gave.';
comment on column recording_finalize.pause.reason is 'Why it is paused.';
comment on column recording_finalize.pause.login_role is
'The login (session_user) that paused it last.';

-- ---------------------------------------------------------------------------------------------
-- The relay's leases: kept here, so that leasing an event writes nothing in the service's
-- outbox. A lease is void once it expires, or once its holder no longer holds the runner lock.

create table recording_finalize.relay_leases (
    outbox_id bigint primary key,
    lease_token uuid not null,
    leased_until timestamptz not null,
    -- The backend that held the single-runner lock when the lease was taken (NULL: none).
    holder_pid integer null,
    leased_at timestamptz not null default now()
);

comment on table recording_finalize.relay_leases is
'One row per integration-outbox event a relay has leased and not yet marked published (by id; '
'no foreign key into the service''s table). relay_claim skips a live lease, takes over an '
'expired one or one whose holder no longer holds the runner lock; relay_mark_published deletes '
'the leases it marks; prune deletes leases of events that are gone or published.';
comment on column recording_finalize.relay_leases.outbox_id is
'The leased messenger.integration_outbox row (its id; no foreign key into the service''s table).';
comment on column recording_finalize.relay_leases.lease_token is
'The token of the relay_claim batch; relay_mark_published must present it.';
comment on column recording_finalize.relay_leases.leased_until is
'The lease expires then; an expired lease is taken over by the next claim.';
comment on column recording_finalize.relay_leases.holder_pid is
'The backend that held the single-runner lock when the lease was taken; a lease whose holder no '
'longer holds it is void.';
comment on column recording_finalize.relay_leases.leased_at is 'When the lease was taken.';

-- ---------------------------------------------------------------------------------------------
-- Where discovery goes on: discover_stuck reads the service's active recordings a slice per call,
-- in ix_recording_active order, so no call reads them all; this is the slice's end.

create table recording_finalize.discovery_sweep (
    -- Exactly one row: the primary key can only be true.
    singleton boolean primary key default true,
    after_session_kind text null,
    after_session_id uuid null,
    sweeps bigint not null default 0,
    updated_at timestamptz not null default now(),
    constraint discovery_sweep_singleton_ck check (singleton),
    constraint discovery_sweep_position_ck check (
        (after_session_kind is null) = (after_session_id is null)
    )
);

insert into recording_finalize.discovery_sweep default values;

comment on table recording_finalize.discovery_sweep is
'One row: how far discover_stuck has read the service''s active recordings (ix_recording_active '
'order, session_kind then session_id). Each call reads the next slice and moves the position; '
'at the end it starts over. Written only by discover_stuck.';
comment on column recording_finalize.discovery_sweep.singleton is
'Always true: the table has one row.';
comment on column recording_finalize.discovery_sweep.after_session_kind is
'The session kind of the last active recording the previous call read (NULL: start over).';
comment on column recording_finalize.discovery_sweep.after_session_id is
'The session id of the last active recording the previous call read (NULL: start over).';
comment on column recording_finalize.discovery_sweep.sweeps is
'How many times discovery has read every active recording, since the install.';
comment on column recording_finalize.discovery_sweep.updated_at is 'When a call last moved it.';

-- ---------------------------------------------------------------------------------------------
-- migrate's own bookkeeping, beside yoyo-migrations' tables in the schema migrate created for
-- them (recording_finalize_migrations: a name no other tool uses).

-- What each applied file WAS when migrate applied it, so that it can refuse a changed migration,
-- skip a function file that has not changed, and `run` can refuse a database that differs from
-- the installed package (the drift check).
create table recording_finalize_migrations.file_checksums (
    kind varchar(12) not null,
    file_name text not null,
    -- sha256 of the file's bytes when migrate applied it.
    sha256 varchar(64) not null,
    -- Function files: recording_finalize_internal.function_fingerprint(file_name) right after.
    definition_md5 varchar(32) null,
    package_version text not null,
    recorded_at timestamptz not null default now(),
    constraint file_checksums_pk primary key (kind, file_name),
    constraint file_checksums_kind_ck check (kind::text = any('{migration,function}'::text[])),
    constraint file_checksums_sha256_ck check (sha256 ~ '^[0-9a-f]{64}$'),
    constraint file_checksums_definition_ck check (
        (kind = 'function') = (definition_md5 is not null)
    )
);

comment on table recording_finalize_migrations.file_checksums is
'What each applied migration and function file was when recording-finalize migrate applied it: '
'the sha256 of the file, and for a function file the fingerprint of the definitions it created.';
comment on column recording_finalize_migrations.file_checksums.kind is 'migration or function.';
comment on column recording_finalize_migrations.file_checksums.file_name is
'The migration id, or the function file''s name (<schema>.<name>.sql).';
comment on column recording_finalize_migrations.file_checksums.sha256 is
'sha256 of the file''s bytes when migrate applied it.';
comment on column recording_finalize_migrations.file_checksums.definition_md5 is
'Function files: the fingerprint of the definitions right after migrate applied them.';
comment on column recording_finalize_migrations.file_checksums.package_version is
'The package version whose migrate applied the file.';
comment on column recording_finalize_migrations.file_checksums.recorded_at is 'When.';

-- The last successful migrate: the schema version (last migration id) and the package version.
create table recording_finalize_migrations.migrate_state (
    singleton boolean primary key default true,
    schema_version text not null,
    package_version text not null,
    migrated_at timestamptz not null default now(),
    constraint migrate_state_singleton_ck check (singleton)
);

comment on table recording_finalize_migrations.migrate_state is
'The last successful recording-finalize migrate: the schema version it left (its last '
'migration id) and the package version that ran it.';
comment on column recording_finalize_migrations.migrate_state.singleton is
'Always true: the primary key that keeps this table at one row.';
comment on column recording_finalize_migrations.migrate_state.schema_version is
'The last migration id the last migrate left.';
comment on column recording_finalize_migrations.migrate_state.package_version is
'The package version that ran the last migrate.';
comment on column recording_finalize_migrations.migrate_state.migrated_at is 'When.';

-- ---------------------------------------------------------------------------------------------
-- Types of the internal helpers.

-- A caller's policy, validated against the settings (recording_finalize_internal.policy()).
create type recording_finalize_internal.policy as (
    topic text,
    max_attempts integer,
    sla_timeout interval,
    backoff_base interval,
    backoff_factor double precision,
    backoff_cap interval,
    backoff_jitter double precision,
    upload_grace interval,
    upload_grace_max interval
);

comment on type recording_finalize_internal.policy is
'A call''s policy after recording_finalize_internal.policy() read the settings once and checked '
'every value: the server''s topic, max attempts, SLA, backoff, upload grace (and its cap).';

-- A recording as the product reads it: the contract's columns of messenger.call_recordings (a
-- type of the product's own, so that no function depends on the service's row type).
create type recording_finalize_internal.recording as (
    id uuid,
    session_kind text,
    session_id uuid,
    media_type text,
    trigger text,
    status text,
    file_id text,
    size_bytes bigint,
    duration_seconds integer,
    format text,
    failure_reason text,
    started_at timestamptz,
    ended_at timestamptz,
    available_at timestamptz,
    failed_at timestamptz,
    version integer,
    created_at timestamptz,
    updated_at timestamptz
);

comment on type recording_finalize_internal.recording is
'The columns of messenger.call_recordings the product reads (recording_finalize_internal.'
'recording_row), as a type of the product''s own.';

-- A recording's session, whichever table its kind lives in (the columns the product reads).
create type recording_finalize_internal.session as (
    id uuid,
    chat_id uuid,
    deal_id uuid,
    tenant_id uuid,
    started_at timestamptz,
    ended_at timestamptz
);

comment on type recording_finalize_internal.session is
'The columns of messenger.call_sessions / conference_sessions the product reads.';
