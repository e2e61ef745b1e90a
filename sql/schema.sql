-- What recording-finalize-retry owns, as a fresh migrate leaves it: GENERATED, do not edit.
-- `make schema` rewrites it (tools/schema_snapshot.py); `make test` fails when it differs from
-- what sql/migrations and sql/functions produce. Tables with their constraints, indexes and
-- grants; functions as signatures (bodies: sql/functions/, comments: COMMENT ON in the SQL).
-- The service's own tables are not here (sql/service/schema.sql is their reference DDL).

CREATE SCHEMA recording_finalize;
CREATE SCHEMA recording_finalize_adapter;
CREATE SCHEMA recording_finalize_internal;
CREATE SCHEMA recording_finalize_migrations;
GRANT USAGE ON SCHEMA recording_finalize TO recording_finalize_worker;
GRANT USAGE ON SCHEMA recording_finalize TO recording_finalize_operator;
GRANT USAGE ON SCHEMA recording_finalize TO recording_finalize_service;

CREATE TYPE recording_finalize_internal.policy AS (
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
CREATE TYPE recording_finalize_internal.recording AS (
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
	started_at timestamp with time zone,
	ended_at timestamp with time zone,
	available_at timestamp with time zone,
	failed_at timestamp with time zone,
	version integer,
	created_at timestamp with time zone,
	updated_at timestamp with time zone
);
CREATE TYPE recording_finalize_internal.session AS (
	id uuid,
	chat_id uuid,
	deal_id uuid,
	tenant_id uuid,
	started_at timestamp with time zone,
	ended_at timestamp with time zone
);

CREATE TABLE recording_finalize.discovery_sweep (
    singleton boolean DEFAULT true NOT NULL,
    after_session_kind text,
    after_session_id uuid,
    sweeps bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    republish_after_at timestamp with time zone,
    republish_after_id uuid,
    republish_window interval,
    republish_judged_at timestamp with time zone,
    republish_sampled integer,
    republish_unshown integer,
    republish_held_since timestamp with time zone,
    republish_not_before timestamp with time zone,
    CONSTRAINT discovery_sweep_position_ck CHECK (((after_session_kind IS NULL) = (after_session_id IS NULL))),
    CONSTRAINT discovery_sweep_singleton_ck CHECK (singleton)
);
ALTER TABLE ONLY recording_finalize.discovery_sweep
    ADD CONSTRAINT discovery_sweep_pkey PRIMARY KEY (singleton);

CREATE TABLE recording_finalize.operator_actions (
    id bigint NOT NULL,
    recording_id uuid,
    action_kind character varying(16) NOT NULL,
    operator_name text NOT NULL,
    reason text NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    login_role text DEFAULT SESSION_USER NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT operator_actions_action_kind_ck CHECK (((action_kind)::text = ANY ('{requeue,retry,repair,pause,resume}'::text[]))),
    CONSTRAINT operator_actions_operator_name_ck CHECK (((length(btrim(operator_name)) >= 1) AND (length(btrim(operator_name)) <= 128))),
    CONSTRAINT operator_actions_reason_ck CHECK (((length(btrim(reason)) >= 1) AND (length(btrim(reason)) <= 512)))
);
ALTER TABLE recording_finalize.operator_actions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME recording_finalize.operator_actions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
ALTER TABLE ONLY recording_finalize.operator_actions
    ADD CONSTRAINT operator_actions_pkey PRIMARY KEY (id);
CREATE INDEX operator_actions_recording_idx ON recording_finalize.operator_actions USING btree (recording_id, created_at) WHERE (recording_id IS NOT NULL);

CREATE TABLE recording_finalize.outbox (
    id bigint NOT NULL,
    recording_id uuid NOT NULL,
    topic text NOT NULL,
    message_key text NOT NULL,
    headers jsonb NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    published_at timestamp with time zone,
    CONSTRAINT outbox_headers_ck CHECK ((jsonb_typeof(headers) = 'object'::text)),
    CONSTRAINT outbox_payload_ck CHECK ((jsonb_typeof(payload) = 'object'::text))
);
ALTER TABLE recording_finalize.outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME recording_finalize.outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
ALTER TABLE ONLY recording_finalize.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);
CREATE INDEX outbox_published_idx ON recording_finalize.outbox USING btree (published_at) WHERE (published_at IS NOT NULL);
CREATE UNIQUE INDEX outbox_recording_uq ON recording_finalize.outbox USING btree (recording_id);
CREATE INDEX outbox_unpublished_idx ON recording_finalize.outbox USING btree (id) WHERE (published_at IS NULL);

CREATE TABLE recording_finalize.pause (
    part character varying(16) NOT NULL,
    paused_at timestamp with time zone DEFAULT now() NOT NULL,
    paused_by text NOT NULL,
    reason text NOT NULL,
    login_role text DEFAULT SESSION_USER NOT NULL,
    CONSTRAINT pause_part_ck CHECK (((part)::text = ANY ('{reconcile,relay}'::text[])))
);
ALTER TABLE ONLY recording_finalize.pause
    ADD CONSTRAINT pause_pkey PRIMARY KEY (part);

CREATE TABLE recording_finalize.policy (
    singleton boolean DEFAULT true NOT NULL,
    max_attempts integer DEFAULT 8 NOT NULL,
    sla_timeout interval DEFAULT '00:30:00'::interval NOT NULL,
    backoff_base interval DEFAULT '00:01:00'::interval NOT NULL,
    backoff_factor double precision DEFAULT 2.0 NOT NULL,
    backoff_cap interval DEFAULT '00:15:00'::interval NOT NULL,
    backoff_jitter double precision DEFAULT 0.1 NOT NULL,
    upload_grace interval,
    set_by text DEFAULT SESSION_USER NOT NULL,
    set_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT policy_singleton_ck CHECK (singleton)
);
ALTER TABLE ONLY recording_finalize.policy
    ADD CONSTRAINT policy_pkey PRIMARY KEY (singleton);

CREATE TABLE recording_finalize.relay_leases (
    outbox_id bigint NOT NULL,
    lease_token uuid NOT NULL,
    leased_until timestamp with time zone NOT NULL,
    holder_pid integer,
    leased_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE ONLY recording_finalize.relay_leases
    ADD CONSTRAINT relay_leases_pkey PRIMARY KEY (outbox_id);

CREATE TABLE recording_finalize.settings (
    singleton boolean DEFAULT true NOT NULL,
    topic text DEFAULT 'pin.messenger.call-recording-available.v1'::text NOT NULL,
    max_attempts_min integer DEFAULT 1 NOT NULL,
    max_attempts_max integer DEFAULT 20000 NOT NULL,
    sla_timeout_min interval DEFAULT '00:00:01'::interval NOT NULL,
    sla_timeout_max interval DEFAULT '24:00:00'::interval NOT NULL,
    backoff_base_min interval DEFAULT '00:00:00.1'::interval NOT NULL,
    backoff_base_max interval DEFAULT '01:00:00'::interval NOT NULL,
    backoff_factor_max double precision DEFAULT 10 NOT NULL,
    backoff_cap_max interval DEFAULT '24:00:00'::interval NOT NULL,
    backoff_jitter_max double precision DEFAULT 0.5 NOT NULL,
    upload_grace_min interval DEFAULT '00:00:01'::interval NOT NULL,
    upload_grace_max interval DEFAULT '24:00:00'::interval NOT NULL,
    relay_lease_max interval DEFAULT '00:15:00'::interval NOT NULL,
    relay_batch_max integer DEFAULT 10000 NOT NULL,
    retention_min interval DEFAULT '1 day'::interval NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT settings_backoff_base_ck CHECK (((backoff_base_min > '00:00:00'::interval) AND (backoff_base_max >= backoff_base_min))),
    CONSTRAINT settings_backoff_cap_max_ck CHECK ((backoff_cap_max >= backoff_base_min)),
    CONSTRAINT settings_backoff_factor_max_ck CHECK (((backoff_factor_max >= (1)::double precision) AND (backoff_factor_max < 'Infinity'::double precision))),
    CONSTRAINT settings_backoff_jitter_max_ck CHECK (((backoff_jitter_max >= (0)::double precision) AND (backoff_jitter_max < (1)::double precision))),
    CONSTRAINT settings_max_attempts_ck CHECK (((max_attempts_min >= 1) AND (max_attempts_max >= max_attempts_min))),
    CONSTRAINT settings_relay_batch_max_ck CHECK (((relay_batch_max >= 1) AND (relay_batch_max <= 10000))),
    CONSTRAINT settings_relay_lease_max_ck CHECK ((relay_lease_max > '00:00:00'::interval)),
    CONSTRAINT settings_retention_min_ck CHECK ((retention_min >= '00:01:00'::interval)),
    CONSTRAINT settings_singleton_ck CHECK (singleton),
    CONSTRAINT settings_sla_timeout_ck CHECK (((sla_timeout_min > '00:00:00'::interval) AND (sla_timeout_max >= sla_timeout_min))),
    CONSTRAINT settings_topic_ck CHECK (((topic ~ '^[A-Za-z0-9._-]{1,249}$'::text) AND (topic <> ALL (ARRAY['.'::text, '..'::text])))),
    CONSTRAINT settings_upload_grace_ck CHECK (((upload_grace_min > '00:00:00'::interval) AND (upload_grace_max >= upload_grace_min)))
);
ALTER TABLE ONLY recording_finalize.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (singleton);

CREATE TABLE recording_finalize.storage_incidents (
    id bigint NOT NULL,
    source character varying(64) NOT NULL,
    started_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    reason character varying(512),
    opened_by text DEFAULT SESSION_USER NOT NULL,
    closed_by text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    kind character varying(16),
    CONSTRAINT storage_incidents_ended_after_start_ck CHECK (((ended_at IS NULL) OR (ended_at >= started_at))),
    CONSTRAINT storage_incidents_kind_ck CHECK (((kind IS NULL) OR (((source)::text = 'worker'::text) AND ((kind)::text = ANY ('{unreachable,transient}'::text[]))))),
    CONSTRAINT storage_incidents_source_ck CHECK (((source)::text ~ '^[a-z][a-z0-9_.-]{0,63}$'::text))
);
ALTER TABLE recording_finalize.storage_incidents ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME recording_finalize.storage_incidents_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
ALTER TABLE ONLY recording_finalize.storage_incidents
    ADD CONSTRAINT storage_incidents_pkey PRIMARY KEY (id);
CREATE INDEX storage_incidents_ended_idx ON recording_finalize.storage_incidents USING btree (ended_at);
CREATE UNIQUE INDEX storage_incidents_one_open_uq ON recording_finalize.storage_incidents USING btree (source) WHERE (ended_at IS NULL);

CREATE TABLE recording_finalize.worker_config (
    singleton boolean DEFAULT true NOT NULL,
    s3_bucket text NOT NULL,
    s3_key_template text NOT NULL,
    polling_interval interval NOT NULL,
    login_role text DEFAULT SESSION_USER NOT NULL,
    reported_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT worker_config_singleton_ck CHECK (singleton)
);
ALTER TABLE ONLY recording_finalize.worker_config
    ADD CONSTRAINT worker_config_pkey PRIMARY KEY (singleton);

CREATE VIEW recording_finalize_adapter.recordings AS
 SELECT r.id,
    (r.session_kind)::text AS session_kind,
    r.session_id,
    (r.status)::text AS status,
    r.file_id,
    r.size_bytes,
    r.duration_seconds,
    (r.format)::text AS format,
    (r.failure_reason)::text AS failure_reason,
    (r.media_type)::text AS media_type,
    (r.trigger)::text AS trigger,
    r.started_at,
    r.ended_at,
    r.available_at
   FROM messenger.call_recordings r;

CREATE VIEW recording_finalize_adapter.service_events AS
 SELECT r.id AS recording_id,
    o.created_at AS enqueued_at,
    o.published_at
   FROM (messenger.call_recordings r
     JOIN messenger.integration_outbox o ON (((o.topic = ( SELECT s.topic
           FROM recording_finalize.settings s)) AND (o.dedupe_key = (r.id)::text))));

CREATE VIEW recording_finalize_adapter.sessions AS
 SELECT 'Direct'::text AS kind,
    s.id,
    s.chat_id,
    s.deal_id,
    s.tenant_id,
    s.started_at,
    s.ended_at
   FROM messenger.call_sessions s
UNION ALL
 SELECT 'Conference'::text AS kind,
    s.id,
    s.chat_id,
    s.deal_id,
    s.tenant_id,
    s.started_at,
    s.ended_at
   FROM messenger.conference_sessions s;

CREATE TABLE recording_finalize_migrations.file_checksums (
    kind character varying(12) NOT NULL,
    file_name text NOT NULL,
    sha256 character varying(64) NOT NULL,
    definition_md5 character varying(32),
    package_version text NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT file_checksums_definition_ck CHECK ((((kind)::text = 'function'::text) = (definition_md5 IS NOT NULL))),
    CONSTRAINT file_checksums_kind_ck CHECK (((kind)::text = ANY ('{migration,function}'::text[]))),
    CONSTRAINT file_checksums_sha256_ck CHECK (((sha256)::text ~ '^[0-9a-f]{64}$'::text))
);
ALTER TABLE ONLY recording_finalize_migrations.file_checksums
    ADD CONSTRAINT file_checksums_pk PRIMARY KEY (kind, file_name);

CREATE TABLE recording_finalize_migrations.migrate_state (
    singleton boolean DEFAULT true NOT NULL,
    schema_version text NOT NULL,
    package_version text NOT NULL,
    migrated_at timestamp with time zone DEFAULT now() NOT NULL,
    adapter_sha256 character varying(64),
    adapter_md5 character varying(32),
    CONSTRAINT migrate_state_singleton_ck CHECK (singleton)
);
ALTER TABLE ONLY recording_finalize_migrations.migrate_state
    ADD CONSTRAINT migrate_state_pkey PRIMARY KEY (singleton);

CREATE TABLE messenger.recording_finalize_attempts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    recording_id uuid NOT NULL,
    session_kind character varying(12) NOT NULL,
    session_id uuid NOT NULL,
    status character varying(16) DEFAULT 'Pending'::character varying NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    last_error character varying(512),
    claim_token uuid,
    claimed_at timestamp with time zone,
    last_outcome character varying(24),
    quarantine_reason character varying(24),
    opened_by character varying(16) DEFAULT 'lifecycle'::character varying NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT recording_finalize_attempts_attempts_ck CHECK ((attempts >= 0)),
    CONSTRAINT recording_finalize_attempts_last_outcome_ck CHECK (((last_outcome)::text = ANY ('{found,missing,transient,invalid_metadata,config_error}'::text[]))),
    CONSTRAINT recording_finalize_attempts_opened_by_ck CHECK (((opened_by)::text = ANY ('{lifecycle,discovery,repair,ingest}'::text[]))),
    CONSTRAINT recording_finalize_attempts_quarantine_reason_ck CHECK (((quarantine_reason)::text = ANY ('{max_attempts,crash_loop,invalid_metadata,recording_not_found,session_not_found}'::text[]))),
    CONSTRAINT recording_finalize_attempts_quarantined_has_reason_ck CHECK ((((status)::text = 'Quarantined'::text) = (quarantine_reason IS NOT NULL))),
    CONSTRAINT recording_finalize_attempts_session_kind_ck CHECK (((session_kind)::text = ANY ('{Direct,Conference}'::text[]))),
    CONSTRAINT recording_finalize_attempts_status_ck CHECK (((status)::text = ANY ('{Pending,Done,Quarantined}'::text[])))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='2000', autovacuum_analyze_scale_factor='0.02', autovacuum_analyze_threshold='2000');
ALTER TABLE ONLY messenger.recording_finalize_attempts
    ADD CONSTRAINT recording_finalize_attempts_pkey PRIMARY KEY (id);
CREATE INDEX ix_rfa_due ON messenger.recording_finalize_attempts USING btree (status, next_attempt_at) WHERE ((status)::text = 'Pending'::text);
CREATE INDEX recording_finalize_attempts_done_idx ON messenger.recording_finalize_attempts USING btree (updated_at) WHERE ((status)::text = 'Done'::text);
CREATE INDEX recording_finalize_attempts_pending_created_idx ON messenger.recording_finalize_attempts USING btree (created_at) INCLUDE (next_attempt_at) WHERE ((status)::text = 'Pending'::text);
CREATE INDEX recording_finalize_attempts_quarantined_idx ON messenger.recording_finalize_attempts USING btree (updated_at, recording_id) WHERE ((status)::text = 'Quarantined'::text);
CREATE UNIQUE INDEX ux_rfa_recording ON messenger.recording_finalize_attempts USING btree (recording_id);

-- Functions: signature -> the roles that may execute it (recording_finalize_ left
-- out; PUBLIC only where it says so). Bodies: sql/functions/<schema>.<name>.sql.
-- recording_finalize.apply_outcome(p_recording_id uuid, p_claim_token uuid, p_outcome text,
--     p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_error text,
--     p_bucket_confirmed boolean, p_objects_found integer, p_known_missing integer, p_known_other
--     integer) -> worker
-- recording_finalize.audit(p_polling_interval interval, p_examples integer, p_lookback interval) ->
--     operator
-- recording_finalize.audit_repair(p_operator text, p_limit integer) -> operator
-- recording_finalize.check_adapter(p_rehearse boolean) -> worker, operator
-- recording_finalize.claim_due(p_batch_size integer) -> worker
-- recording_finalize.claim_preview(p_limit integer) -> operator
-- recording_finalize.discover_stuck(p_limit integer, p_scan integer) -> worker
-- recording_finalize.discover_unpublished(p_window interval, p_limit integer, p_scan integer) ->
--     worker
-- recording_finalize.explain(p_recording_id uuid) -> operator
-- recording_finalize.failed_recordings(p_limit integer) -> operator
-- recording_finalize.known_uploads(p_limit integer) -> worker, operator
-- recording_finalize.operator_state() -> worker, operator
-- recording_finalize.preview_outcomes(p_verdicts jsonb) -> operator
-- recording_finalize.prune(p_older_than interval, p_batch_size integer, p_dry_run boolean) ->
--     worker, operator
-- recording_finalize.prune_events(p_older_than interval, p_batch_size integer, p_dry_run boolean)
--     -> worker, operator
-- recording_finalize.quarantined_rows(p_limit integer, p_reason_code text, p_since timestamp with
--     time zone) -> operator
-- recording_finalize.record_apply_failure(p_recording_ids uuid[], p_claim_tokens uuid[], p_error
--     text, p_give_back boolean) -> worker
-- recording_finalize.record_apply_failure(p_recording_ids uuid[], p_claim_tokens uuid[],
--     p_sqlstates text[], p_error text, p_message text, p_batch_size integer, p_unapplied_ids
--     uuid[], p_unapplied_tokens uuid[]) -> worker
-- recording_finalize.recording_ingest_completed(p_recording_id uuid, p_file_id text, p_size_bytes
--     bigint, p_duration_seconds integer, p_format text, p_topic text) -> service
-- recording_finalize.recording_started(p_recording_id uuid, p_session_kind text, p_session_id uuid,
--     p_media_type text, p_trigger text) -> service
-- recording_finalize.recording_stopped(p_recording_id uuid, p_sla_timeout interval) -> service
-- recording_finalize.relay_claim(p_limit integer, p_lease interval, p_lock_key bigint, p_topic
--     text) -> worker
-- recording_finalize.relay_mark_published(p_ids bigint[], p_lease_token uuid) -> worker
-- recording_finalize.release_claims(p_recording_ids uuid[], p_claim_tokens uuid[]) -> worker
-- recording_finalize.report_worker_config(p_s3_bucket text, p_s3_key_template text,
--     p_polling_interval interval) -> worker
-- recording_finalize.republish_hold() -> worker, operator
-- recording_finalize.requeue(p_recording_id uuid, p_reason text) -> operator
-- recording_finalize.reschedule(p_recording_ids uuid[], p_from_status text, p_operator text,
--     p_reason text, p_strict boolean) -> operator
-- recording_finalize.schema_state() -> worker, operator
-- recording_finalize.server_settings() -> worker, operator
-- recording_finalize.service_events_unpublished(p_lag interval, p_scan integer) -> worker, operator
-- recording_finalize.session_ended(p_session_kind text, p_session_id uuid, p_sla_timeout interval)
--     -> service
-- recording_finalize.set_pause(p_part text, p_paused boolean, p_operator text, p_reason text) ->
--     operator
-- recording_finalize.set_policy(p_max_attempts integer, p_sla_timeout interval, p_backoff_base
--     interval, p_backoff_factor double precision, p_backoff_cap interval, p_backoff_jitter double
--     precision, p_upload_grace interval, p_topic text, p_relay_batch_size integer, p_retention
--     interval) -> worker
-- recording_finalize.stats(p_topic text) -> worker, operator
-- recording_finalize.storage_health(p_bucket_answered boolean, p_transient integer, p_checked
--     integer, p_cycle_end boolean, p_error text) -> worker
-- recording_finalize.storage_incident_close(p_source text, p_at timestamp with time zone, p_reason
--     text) -> worker, operator, service
-- recording_finalize.storage_incident_list(p_recent interval, p_limit integer) -> worker, operator
-- recording_finalize.storage_incident_open(p_source text, p_reason text, p_at timestamp with time
--     zone) -> worker, operator, service
-- recording_finalize.storage_layout_unconfirmed(p_known_found integer, p_known_missing integer,
--     p_known_other integer) -> worker
-- recording_finalize.try_lock_runner(p_lock_key bigint) -> worker
-- recording_finalize.unlock_runner(p_lock_key bigint) -> worker
-- recording_finalize.worker_config() -> worker, operator
-- recording_finalize_adapter.end_session(p_kind text, p_id uuid, p_at timestamp with time zone) ->
--     owner only
-- recording_finalize_adapter.enqueue_realtime(p_kind text, p_session_kind text, p_session_id uuid,
--     p_reference_id uuid, p_payload jsonb) -> owner only
-- recording_finalize_adapter.hold_session(p_kind text, p_id uuid) -> owner only
-- recording_finalize_adapter.make_available(p_id uuid, p_from_status text, p_file_id text,
--     p_size_bytes bigint, p_duration_seconds integer, p_format text, p_available_at timestamp with
--     time zone) -> owner only
-- recording_finalize_adapter.make_failed(p_id uuid, p_from_status text, p_failure_reason text,
--     p_failed_at timestamp with time zone) -> owner only
-- recording_finalize_adapter.make_uploading(p_id uuid, p_from_status text, p_ended_at timestamp
--     with time zone) -> owner only
-- recording_finalize_adapter.start_recording(p_id uuid, p_session_kind text, p_session_id uuid,
--     p_media_type text, p_trigger text, p_started_at timestamp with time zone) -> owner only
-- recording_finalize_internal.active_recordings_after(p_after_kind text, p_after_id uuid, p_limit
--     integer) -> owner only
-- recording_finalize_internal.adapter_fingerprint() -> owner only
-- recording_finalize_internal.adapter_ports() -> owner only
-- recording_finalize_internal.available_recordings_after(p_from timestamp with time zone, p_to
--     timestamp with time zone, p_after_at timestamp with time zone, p_after_id uuid, p_limit
--     integer) -> owner only
-- recording_finalize_internal.backoff_delay(p_attempts integer, p_base interval, p_factor double
--     precision, p_cap interval, p_jitter double precision) -> owner only
-- recording_finalize_internal.check_incident_caller(p_source text, p_at timestamp with time zone,
--     p_what text) -> owner only
-- recording_finalize_internal.check_operator(p_action text, p_operator text, p_reason text) ->
--     owner only
-- recording_finalize_internal.check_policy_bounds(p_stored recording_finalize_internal.policy) ->
--     owner only
-- recording_finalize_internal.check_relay_batch(p_limit integer) -> owner only
-- recording_finalize_internal.check_retention(p_older_than interval) -> owner only
-- recording_finalize_internal.claim_decision(p_recording_status text, p_event_enqueued boolean,
--     p_session_found boolean, p_session_ended_at timestamp with time zone, p_attempts integer,
--     p_last_outcome text, p_max_attempts integer, p_sla_timeout interval, p_now timestamp with
--     time zone, p_last_error text, p_session_kind text, p_session_id uuid, p_republish boolean) ->
--     owner only
-- recording_finalize_internal.enqueue_available(p_recording recording_finalize_internal.recording,
--     p_session recording_finalize_internal.session, p_topic text, p_service_event boolean) ->
--     owner only
-- recording_finalize_internal.function_fingerprint(p_file_name text) -> owner only
-- recording_finalize_internal.has_event(p_recording_id uuid) -> owner only
-- recording_finalize_internal.iso_utc(p_at timestamp with time zone) -> owner only
-- recording_finalize_internal.key_layout_evidence() -> owner only
-- recording_finalize_internal.key_layout_unconfirmed(p_objects_found integer, p_known_missing
--     integer, p_known_other integer) -> owner only
-- recording_finalize_internal.mask_urls(p_text text, p_max integer) -> owner only
-- recording_finalize_internal.metadata_problem(p_file_id text, p_size_bytes bigint,
--     p_duration_seconds integer, p_format text) -> owner only
-- recording_finalize_internal.orphans(p_sla_timeout interval) -> owner only
-- recording_finalize_internal.outcome_decision(p_outcome text, p_metadata_problem text, p_error
--     text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone,
--     p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone,
--     p_bucket_confirmed boolean, p_objects_found integer, p_known_missing integer, p_known_other
--     integer) -> owner only
-- recording_finalize_internal.policy() -> owner only
-- recording_finalize_internal.record_operator_action(p_recording_ids uuid[], p_action text,
--     p_operator text, p_reason text, p_detail jsonb) -> owner only
-- recording_finalize_internal.recording_row(p_recording_id uuid) -> owner only
-- recording_finalize_internal.republish_trusted() -> owner only
-- recording_finalize_internal.rows_read(p_query text) -> owner only
-- recording_finalize_internal.schedule_finalize(p_recording_id uuid, p_session_kind text,
--     p_session_id uuid, p_due_at timestamp with time zone) -> owner only
-- recording_finalize_internal.service_events_pending_only() -> owner only
-- recording_finalize_internal.service_events_remembered_from() -> owner only
-- recording_finalize_internal.service_events_show_delivered() -> owner only
-- recording_finalize_internal.session_of(p_session_kind text, p_session_id uuid, p_for_share
--     boolean) -> owner only
-- recording_finalize_internal.session_row(p_session_kind text, p_session_id uuid) -> owner only
-- recording_finalize_internal.still_claimed(p_recording_ids uuid[], p_claim_tokens uuid[]) -> owner
--     only
-- recording_finalize_internal.topic(p_topic text, p_server_topic text) -> owner only
-- recording_finalize_internal.transition_available(p_recording_id uuid, p_file_id text,
--     p_size_bytes bigint, p_duration_seconds integer, p_format text, p_session
--     recording_finalize_internal.session, p_topic text) -> owner only
-- recording_finalize_internal.transition_available(p_recording_id uuid, p_status text, p_file_id
--     text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_session
--     recording_finalize_internal.session, p_topic text) -> owner only
-- recording_finalize_internal.vocabulary() -> owner only
