-- The product's own outbox: its call-recording-available events are written to
-- recording_finalize.outbox and relayed and marked by the sidecar alone. The service's outboxes
-- are only read, through the adapter's service_events view (the product never writes a table it
-- does not own). Forward-only: a change after landing only in comments, or one recorded in
-- driver/drift.py's AMENDED_MIGRATIONS with its reason.

set local lock_timeout = '1s';
set local statement_timeout = '1min';

create table recording_finalize.outbox (
    id bigint generated always as identity primary key,
    recording_id uuid not null,
    topic text not null,
    message_key text not null,
    headers jsonb not null,
    payload jsonb not null,
    created_at timestamptz not null default now(),
    published_at timestamptz null,
    -- The relay publishes headers as Kafka headers (name -> text) and the payload as an object.
    constraint outbox_headers_ck check (jsonb_typeof(headers) = 'object'),
    constraint outbox_payload_ck check (jsonb_typeof(payload) = 'object')
);

-- INV: at most one event per recording from the product (enqueueing it again is a no-op).
create unique index outbox_recording_uq on recording_finalize.outbox (recording_id);

-- The relay's scan: unpublished rows only, oldest first, whatever the history.
create index outbox_unpublished_idx on recording_finalize.outbox (id) where published_at is null;

-- prune(): published rows, oldest first.
create index outbox_published_idx on recording_finalize.outbox (published_at)
where published_at is not null;

comment on table recording_finalize.outbox is
'The product''s own call-recording-available events: one per recording at most, written in the '
'transaction that made the recording Available (or found it Available without an event), '
'published to Kafka and marked by the sidecar''s relay only. The service''s outboxes are never '
'written, marked or deleted by the product.';
comment on column recording_finalize.outbox.id is
'The relay''s order (oldest first) and the key of its lease (relay_leases.outbox_id).';
comment on column recording_finalize.outbox.recording_id is 'The RecordingId (at most one event).';
comment on column recording_finalize.outbox.topic is 'The Kafka topic (the server''s).';
comment on column recording_finalize.outbox.message_key is 'The Kafka key: the SessionId.';
comment on column recording_finalize.outbox.headers is
'The Kafka headers: event-type and event-id (unique per row).';
comment on column recording_finalize.outbox.payload is 'The event (docs/contract/).';
comment on column recording_finalize.outbox.created_at is
'When the product enqueued it (the age stats() and audit''s unpublished_overdue read).';
comment on column recording_finalize.outbox.published_at is
'When the broker acknowledged it (NULL: not yet).';

-- Leases named rows of the service's outbox until now: none of them is the relay's any more.
delete from recording_finalize.relay_leases;
comment on table recording_finalize.relay_leases is
'One row per event of recording_finalize.outbox a relay has leased and not yet marked published. '
'relay_claim skips a live lease, takes over an expired one or one whose holder no longer holds '
'the runner lock; relay_mark_published deletes the leases it marks.';
comment on column recording_finalize.relay_leases.outbox_id is
'The leased recording_finalize.outbox row (its id).';

-- Where republish discovery goes on: the Available recordings of the window, a slice per call.
alter table recording_finalize.discovery_sweep add column republish_after_at timestamptz null;
alter table recording_finalize.discovery_sweep add column republish_after_id uuid null;
comment on column recording_finalize.discovery_sweep.republish_after_at is
'available_at of the last Available recording discover_unpublished read (NULL: start over).';
comment on column recording_finalize.discovery_sweep.republish_after_id is
'Its id (ties on available_at).';

-- An upgrade from 0.2.x copies nothing out of the service's outbox. The events 0.2.x enqueued
-- there and that are still unpublished stay where they are: they are the service's relay's to
-- publish (0.2.x relayed every unpublished row of the topic; from here on the product relays only
-- its own outbox, and migrate says so when it upgrades a 0.2.x install), and the product sees
-- them through the adapter's service_events, so it adds no event of its own for them. A copy
-- would leave each such event pending in two outboxes (a rollback then publishes it twice), and
-- it would read the service's table under an assumed shape instead of through the adapter.

-- The adapter (schema recording_finalize_adapter): what migrate installed, so that it upgrades
-- the reference adapter while nobody edited it, and keeps one a DBA edited.
alter table recording_finalize_migrations.migrate_state add column adapter_sha256 varchar(64) null;
alter table recording_finalize_migrations.migrate_state add column adapter_md5 varchar(32) null;
comment on column recording_finalize_migrations.migrate_state.adapter_sha256 is
'sha256 of sql/adapter/reference.sql when migrate last installed it (NULL: the adapter is a '
'DBA''s, or none).';
comment on column recording_finalize_migrations.migrate_state.adapter_md5 is
'recording_finalize_internal.adapter_fingerprint() right after migrate installed it.';

-- What the running worker was configured with, as it reported it at start: explain and audit
-- look where the worker looks, not where the operator's own environment says.
create table recording_finalize.worker_config (
    -- Exactly one row: the primary key can only be true.
    singleton boolean primary key default true,
    s3_bucket text not null,
    s3_key_template text not null,
    polling_interval interval not null,
    login_role text not null default session_user,
    reported_at timestamptz not null default now(),
    constraint worker_config_singleton_ck check (singleton)
);
comment on table recording_finalize.worker_config is
'The file-storage settings and polling interval the last worker to start runs with (it reports '
'them at start: report_worker_config). explain HEADs where the worker looks, audit judges '
'"overdue" by the worker''s interval. One row; written by report_worker_config only.';
comment on column recording_finalize.worker_config.singleton is 'Always true: one row.';
comment on column recording_finalize.worker_config.s3_bucket is 'RFR_S3_BUCKET of the worker.';
comment on column recording_finalize.worker_config.s3_key_template is
'RFR_S3_KEY_TEMPLATE of the worker.';
comment on column recording_finalize.worker_config.polling_interval is
'RFR_POLLING_INTERVAL of the worker.';
comment on column recording_finalize.worker_config.login_role is 'The login that reported it.';
comment on column recording_finalize.worker_config.reported_at is 'When the worker started.';

-- outcome_decision has one signature again: the nine-argument one of 0.2.x, apply_outcome's, is
-- replaced by the full one with p_bucket_confirmed NULL. A 0.2.x apply_outcome that runs between
-- this drop and the function files of the same migrate (seconds) fails and is retried by its
-- next cycle. No client calls it: it is internal (no grant), apply_outcome is its only caller.
-- squawk-ignore ban-drop-function
drop function if exists recording_finalize_internal.outcome_decision(
    text, text, text, integer, integer, timestamptz, interval, interval, timestamptz
);

-- The retry policy, stored once: the worker sets it at start (recording_finalize.set_policy,
-- within the server's bounds of recording_finalize.settings) and every function reads it here;
-- no call passes it any more. The column defaults are the policy's documented defaults
-- (docs/configuration.md).
create table recording_finalize.policy (
    -- Exactly one row: the primary key can only be true.
    singleton boolean primary key default true,
    max_attempts integer not null default 8,
    sla_timeout interval not null default '30 minutes',
    backoff_base interval not null default '1 minute',
    backoff_factor double precision not null default 2.0,
    backoff_cap interval not null default '15 minutes',
    backoff_jitter double precision not null default 0.1,
    -- NULL: the SLA (the time the happy path is given for an upload anyway).
    upload_grace interval null,
    set_by text not null default session_user,
    set_at timestamptz not null default now(),
    constraint policy_singleton_ck check (singleton)
);
insert into recording_finalize.policy default values;
comment on table recording_finalize.policy is
'The retry policy every function reads (recording_finalize_internal.policy): one row, written by '
'recording_finalize.set_policy only, which the worker calls once at start with its RFR_* values '
'(an unset one: the column default) and which refuses a value outside recording_finalize.'
'settings. Several runners: the last to start wins (set_policy returns what it replaced).';
comment on column recording_finalize.policy.singleton is 'Always true: one row.';
comment on column recording_finalize.policy.max_attempts is
'RFR_MAX_ATTEMPTS: attempts before a row is quarantined.';
comment on column recording_finalize.policy.sla_timeout is
'RFR_FINALIZE_SLA_TIMEOUT: how long after its session ends the happy path owns a recording.';
comment on column recording_finalize.policy.backoff_base is 'RFR_BACKOFF_BASE: first retry delay.';
comment on column recording_finalize.policy.backoff_factor is
'RFR_BACKOFF_FACTOR: retry delay growth (>= 1).';
comment on column recording_finalize.policy.backoff_cap is
'RFR_BACKOFF_CAP: longest retry delay (>= backoff_base).';
comment on column recording_finalize.policy.backoff_jitter is
'RFR_BACKOFF_JITTER: retry delay jitter fraction (>= 0).';
comment on column recording_finalize.policy.upload_grace is
'RFR_UPLOAD_GRACE: how long after a storage incident a 404 is not trusted (NULL: sla_timeout).';
comment on column recording_finalize.policy.set_by is 'The login that set it last.';
comment on column recording_finalize.policy.set_at is 'When.';
comment on type recording_finalize_internal.policy is
'The policy as every function uses it (recording_finalize_internal.policy()): the stored policy '
'(recording_finalize.policy, upload grace resolved), the server''s topic and upload grace cap.';

-- The policy a session had checked was kept sealed with this key; it is stored now, not kept.
-- No client reads the column (server_settings() left it out; only policy(jsonb) did).
-- squawk-ignore ban-drop-column
alter table recording_finalize.settings drop column policy_seal_key;
comment on table recording_finalize.settings is
'The server side of the worker''s configuration, one row, owner only (no grant): the Kafka topic '
'every API function works on and the bounds of every policy value (recording_finalize.policy). '
'Read it with recording_finalize.server_settings(); change it with UPDATE as the owner. '
'recording_finalize.set_policy refuses a policy outside these bounds (RF010): the driver then '
'refuses to start (exit 2).';

-- Every function took the policy as a jsonb argument until this release: the old
-- signatures go, the files of sql/functions create the new ones. The sidecars of 0.2.x stop
-- before migrate runs (CHANGELOG: migrate before the sidecars of this version start).
-- squawk-ignore-file ban-drop-function
drop function if exists recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text, jsonb
);
drop function if exists recording_finalize.audit(jsonb, interval, integer, interval);
drop function if exists recording_finalize.audit_repair(text, jsonb, integer);
drop function if exists recording_finalize.check_policy(jsonb, integer, interval);
drop function if exists recording_finalize.claim_due(integer, jsonb);
drop function if exists recording_finalize.claim_preview(integer, jsonb);
drop function if exists recording_finalize.discover_stuck(integer, jsonb, integer);
drop function if exists recording_finalize.discover_unpublished(
    interval, integer, jsonb, integer
);
drop function if exists recording_finalize.explain(uuid, jsonb);
drop function if exists recording_finalize.preview_outcomes(jsonb, jsonb);
drop function if exists recording_finalize_internal.policy(jsonb);
