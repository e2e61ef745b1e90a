-- The Kafka topic and the policy bounds live on the server; an operator role apart from the worker.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- Until now the worker's API took the topic and its retry policy from the caller: a role that
-- could only EXECUTE the API could enqueue events into, lease from and mark rows of any topic,
-- and choose its own max attempts, SLA and backoff. From here on the topic is the server's (a
-- caller's p_topic must be NULL or equal to it, RF009) and every policy argument must lie
-- within the server's bounds (RF010). Only the owner (the migrating role) can change them.

set local lock_timeout = '5s';
set local statement_timeout = '5min';

create table recording_finalize.settings (
    -- Exactly one row: the primary key can only be true.
    singleton boolean primary key default true,
    topic text not null default 'pin.messenger.call-recording-available.v1',
    max_attempts_max integer not null default 20000,
    sla_timeout_min interval not null default '1 second',
    sla_timeout_max interval not null default '24 hours',
    backoff_base_min interval not null default '100 milliseconds',
    backoff_base_max interval not null default '1 hour',
    backoff_factor_max double precision not null default 10,
    backoff_cap_max interval not null default '24 hours',
    backoff_jitter_max double precision not null default 0.5,
    relay_lease_max interval not null default '15 minutes',
    relay_batch_max integer not null default 10000,
    updated_at timestamptz not null default now(),
    -- One row, no more: the key is the constant true.
    constraint settings_singleton_ck check (singleton),
    -- A Kafka topic name, as RFR_TOPIC is checked by the driver.
    constraint settings_topic_ck check (
        topic ~ '^[A-Za-z0-9._-]{1,249}$' and topic not in ('.', '..')
    ),
    -- Every bound is itself sane: a range that is not empty and within the functions' own rules.
    constraint settings_max_attempts_max_ck check (max_attempts_max >= 1),
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
    constraint settings_relay_lease_max_ck check (relay_lease_max > interval '0'),
    constraint settings_relay_batch_max_ck check (relay_batch_max between 1 and 10000)
);

insert into recording_finalize.settings default values;

comment on table recording_finalize.settings is
'The server side of the worker''s configuration, one row, owner only (no grant): the Kafka topic '
'every API function works on and the bounds of every policy argument the worker passes. '
'Read it with recording_finalize.server_settings(); change it with UPDATE as the owner. The '
'driver refuses to start (exit 2) when RFR_TOPIC differs or an RFR_* value is out of bounds.';
comment on column recording_finalize.settings.singleton is
'Always true: the primary key that keeps this table at one row.';
comment on column recording_finalize.settings.topic is
'The integration-outbox topic of call-recording-available (RFR_TOPIC must equal it). claim_due, '
'apply_outcome, relay_claim, relay_mark_published, stats and recording_ingest_completed work on '
'this topic only; a p_topic that differs raises RF009.';
comment on column recording_finalize.settings.max_attempts_max is
'Largest p_max_attempts (RFR_MAX_ATTEMPTS) accepted: a bound on "never quarantine".';
comment on column recording_finalize.settings.sla_timeout_min is
'Smallest p_sla_timeout (RFR_FINALIZE_SLA_TIMEOUT) accepted.';
comment on column recording_finalize.settings.sla_timeout_max is
'Largest p_sla_timeout (RFR_FINALIZE_SLA_TIMEOUT) accepted.';
comment on column recording_finalize.settings.backoff_base_min is
'Smallest p_backoff_base (RFR_BACKOFF_BASE) accepted.';
comment on column recording_finalize.settings.backoff_base_max is
'Largest p_backoff_base (RFR_BACKOFF_BASE) accepted.';
comment on column recording_finalize.settings.backoff_factor_max is
'Largest p_backoff_factor (RFR_BACKOFF_FACTOR) accepted.';
comment on column recording_finalize.settings.backoff_cap_max is
'Largest p_backoff_cap (RFR_BACKOFF_CAP) accepted.';
comment on column recording_finalize.settings.backoff_jitter_max is
'Largest p_backoff_jitter (RFR_BACKOFF_JITTER) accepted (always < 1).';
comment on column recording_finalize.settings.relay_lease_max is
'Longest relay lease: relay_claim caps p_lease at this.';
comment on column recording_finalize.settings.relay_batch_max is
'Largest relay_claim p_limit (RFR_RELAY_BATCH_SIZE) accepted.';
comment on column recording_finalize.settings.updated_at is
'When the row was last changed (set it in the UPDATE).';

-- relay_mark_published marks only rows leased with the token of the relay_claim that leased them.
alter table messenger.integration_outbox add column relay_lease_token uuid null;

comment on column messenger.integration_outbox.relay_lease_token is
'The lease token relay_claim returned with this row; relay_mark_published must present it.';

-- relay_claim now returns the lease token, relay_mark_published takes it: both signatures
-- change, so the old functions go (the function files create the new ones). Dropping them is
-- the point: the old relay_mark_published could mark any id of any topic. A driver older than
-- this migration can no longer relay (its calls fail, nothing is marked, nothing is lost):
-- roll the workers out right after migrate.
-- squawk-ignore ban-drop-function
drop function if exists recording_finalize.relay_claim(integer, interval, text);
-- squawk-ignore ban-drop-function
drop function if exists recording_finalize.relay_mark_published(bigint[]);

-- The operator (runbook: status, requeue) is a role of its own; the worker keeps only what the
-- cycle and the relay need. Cluster-wide, so created only when missing.
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
'recording-finalize-retry operator: EXECUTE on the runbook functions (requeue, quarantined_rows, '
'stats, server_settings), nothing else. Grant it to the login role people or the runbook use.';

grant usage on schema recording_finalize to recording_finalize_operator;
