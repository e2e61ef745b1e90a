"""Every SQL statement the driver sends, as named functions over a psycopg connection.

The driver calls the functions of ``sql/functions`` (their ``COMMENT ON`` is the contract) and
builds no SQL anywhere else. Each call is one statement: on an autocommit connection it is its
own transaction, so ``apply_outcome`` is all-or-nothing in a single round trip. The pipelined
form (``APPLY_OUTCOME_PIPELINED``, several in one round trip) is sent by ``pipeline.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row

# ClaimedRow is re-exported: callers have always imported it from here.
from .model import ClaimedRow as ClaimedRow
from .model import Verdict

if TYPE_CHECKING:
    from .config import Settings

Connection = psycopg.Connection[Any]


@dataclass(frozen=True)
class AppliedResult:
    """``result`` is reconciled, failed, backoff, quarantined, released, stale or terminal."""

    result: str
    finalize_status: str | None
    attempts: int | None


@dataclass(frozen=True)
class OutboxRow:
    """A leased integration-outbox row: ``payload`` is the exact text to publish;
    ``lease_token`` (the same for the whole batch) goes back to ``relay_mark_published``."""

    id: int
    message_key: str
    payload: str
    headers: dict[str, str]
    lease_token: UUID


@dataclass(frozen=True)
class Stats:
    backlog: int
    due: int
    oldest_age_seconds: float
    quarantined: int
    publish_backlog: int
    oldest_unpublished_age_seconds: float


@dataclass(frozen=True)
class StorageIncident:
    """One row of ``storage_incident_open/close/list`` (the columns they share)."""

    id: int
    source: str
    started_at: datetime
    ended_at: datetime | None
    reason: str | None
    opened_by: str
    closed_by: str | None = None
    created: bool | None = None
    is_open: bool | None = None
    duration_seconds: float | None = None


@dataclass(frozen=True)
class QuarantinedRow:
    recording_id: UUID
    session_kind: str
    session_id: UUID
    attempts: int
    last_error: str | None
    quarantined_at: datetime


@dataclass(frozen=True)
class RequeuedRow:
    recording_id: UUID
    status: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None


CLAIM_DUE = """
select recording_id, session_kind, session_id, action, attempts, claim_token,
    recording_version, detail
from recording_finalize.claim_due(
    p_batch_size => %(batch_size)s,
    p_max_attempts => %(max_attempts)s,
    p_sla_timeout => %(sla_timeout)s,
    p_backoff_base => %(backoff_base)s,
    p_backoff_factor => %(backoff_factor)s,
    p_backoff_cap => %(backoff_cap)s,
    p_backoff_jitter => %(backoff_jitter)s,
    p_topic => %(topic)s
)
"""

APPLY_OUTCOME = """
select result, finalize_status, attempts
from recording_finalize.apply_outcome(
    p_recording_id => %(recording_id)s,
    p_claim_token => %(claim_token)s,
    p_outcome => %(outcome)s,
    p_file_id => %(file_id)s,
    p_size_bytes => %(size_bytes)s,
    p_duration_seconds => %(duration_seconds)s,
    p_format => %(format)s,
    p_error => %(error)s,
    p_max_attempts => %(max_attempts)s,
    p_topic => %(topic)s,
    p_upload_grace => %(upload_grace)s
)
"""

# The same call for the pipeline: positional parameters sent as text, typed in the statement.
APPLY_OUTCOME_PIPELINED = b"""
select result, finalize_status, attempts
from recording_finalize.apply_outcome(
    p_recording_id => $1::uuid,
    p_claim_token => $2::uuid,
    p_outcome => $3::text,
    p_file_id => $4::text,
    p_size_bytes => $5::bigint,
    p_duration_seconds => $6::integer,
    p_format => $7::text,
    p_error => $8::text,
    p_max_attempts => $9::integer,
    p_topic => $10::text,
    p_upload_grace => $11::interval
)
"""

RELAY_CLAIM = """
select id, message_key, payload, headers, lease_token
from recording_finalize.relay_claim(p_limit => %s, p_lease => %s, p_topic => %s)
"""

RELAY_MARK_PUBLISHED = """
select recording_finalize.relay_mark_published(p_ids => %s::bigint[], p_lease_token => %s)
"""

SERVER_SETTINGS = """
select topic, max_attempts_max, sla_timeout_min, sla_timeout_max, backoff_base_min,
    backoff_base_max, backoff_factor_max, backoff_cap_max, backoff_jitter_max, relay_lease_max,
    relay_batch_max
from recording_finalize.server_settings()
"""

SERVER_BOUNDS = """
select retention_min, marker_retention, upload_grace_min, upload_grace_max, max_attempts_min
from recording_finalize.server_bounds()
"""

TRY_LOCK_RUNNER = "select recording_finalize.try_lock_runner(p_lock_key => %s)"

UNLOCK_RUNNER = "select recording_finalize.unlock_runner(p_lock_key => %s)"

# Start-up self-check of the lock connection: built-ins every role may call and read.
BACKEND_PID = "select pg_catalog.pg_backend_pid()"

IDLE_SESSION_TIMEOUT_MS = """
select setting::bigint from pg_catalog.pg_settings where name = 'idle_session_timeout'
"""

STATS = """
select backlog, due, oldest_age_seconds, quarantined, publish_backlog,
    oldest_unpublished_age_seconds
from recording_finalize.stats(p_topic => %s)
"""

QUARANTINED_ROWS = """
select recording_id, session_kind, session_id, attempts, last_error, quarantined_at
from recording_finalize.quarantined_rows(p_limit => %s)
"""



STORAGE_INCIDENT_OPEN = """
select id, source, started_at, ended_at, reason, opened_by, created
from recording_finalize.storage_incident_open(p_source => %s, p_reason => %s, p_at => %s)
"""

STORAGE_INCIDENT_CLOSE = """
select id, source, started_at, ended_at, reason, opened_by, closed_by
from recording_finalize.storage_incident_close(p_source => %s, p_at => %s, p_reason => %s)
"""

STORAGE_INCIDENT_LIST = """
select id, source, started_at, ended_at, is_open, duration_seconds, reason, opened_by, closed_by
from recording_finalize.storage_incident_list(p_recent => %s, p_limit => %s)
"""


def _seconds(value: float) -> timedelta:
    return timedelta(seconds=value)


def claim_due(conn: Connection, settings: Settings) -> list[ClaimedRow]:
    """Claims one batch (settles republish/closed/deferred/quarantined rows in the same call)."""
    params = {
        "batch_size": settings.batch_size,
        "max_attempts": settings.max_attempts,
        "sla_timeout": _seconds(settings.finalize_sla_timeout),
        "backoff_base": _seconds(settings.backoff_base),
        "backoff_factor": settings.backoff_factor,
        "backoff_cap": _seconds(settings.backoff_cap),
        "backoff_jitter": settings.backoff_jitter,
        "topic": settings.topic,
    }
    with conn.cursor(row_factory=class_row(ClaimedRow)) as cur:
        return cur.execute(CLAIM_DUE, params).fetchall()


def apply_outcome(
    conn: Connection, row: ClaimedRow, verdict: Verdict, settings: Settings
) -> AppliedResult:
    """Records one verdict: one statement, one transaction. Raises RF002 for unusable
    ``found`` metadata (the caller re-applies it as invalid_metadata)."""
    params = {
        "recording_id": row.recording_id,
        "claim_token": row.claim_token,
        "outcome": verdict.outcome,
        "file_id": verdict.file_id,
        "size_bytes": verdict.size_bytes,
        "duration_seconds": verdict.duration_seconds,
        "format": verdict.format,
        "error": verdict.error,
        "max_attempts": settings.max_attempts,
        "topic": settings.topic,
        "upload_grace": _seconds(settings.upload_grace),
    }
    with conn.cursor(row_factory=class_row(AppliedResult)) as cur:
        result = cur.execute(APPLY_OUTCOME, params).fetchone()
    if result is None:  # the function always returns one row; guard the contract anyway
        raise RuntimeError("apply_outcome returned no row")
    return result


def relay_claim(conn: Connection, limit: int, lease_s: float, topic: str) -> list[OutboxRow]:
    """Leases up to ``limit`` unpublished rows of ``topic`` for ``lease_s`` seconds."""
    with conn.cursor(row_factory=class_row(OutboxRow)) as cur:
        return cur.execute(RELAY_CLAIM, (limit, _seconds(lease_s), topic)).fetchall()


def relay_mark_published(conn: Connection, ids: list[int], lease_token: UUID) -> int:
    """Marks the broker-acknowledged rows published, if still leased with ``lease_token``
    (the token their ``relay_claim`` returned); returns how many it marked."""
    row = conn.execute(RELAY_MARK_PUBLISHED, (ids, lease_token)).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


@dataclass(frozen=True)
class ServerSettings:
    """``recording_finalize.server_settings()``: the server's topic and policy bounds."""

    topic: str
    max_attempts_max: int
    sla_timeout_min: timedelta
    sla_timeout_max: timedelta
    backoff_base_min: timedelta
    backoff_base_max: timedelta
    backoff_factor_max: float
    backoff_cap_max: timedelta
    backoff_jitter_max: float
    relay_lease_max: timedelta
    relay_batch_max: int


def server_settings(conn: Connection) -> ServerSettings:
    with conn.cursor(row_factory=class_row(ServerSettings)) as cur:
        result = cur.execute(SERVER_SETTINGS).fetchone()
    if result is None:
        raise RuntimeError("server_settings returned no row (recording_finalize.settings is empty)")
    return result


@dataclass(frozen=True)
class ServerBounds:
    """``recording_finalize.server_bounds()``: the bounds added by migration 0014."""

    retention_min: timedelta
    marker_retention: timedelta
    upload_grace_min: timedelta
    upload_grace_max: timedelta
    max_attempts_min: int


def server_bounds(conn: Connection) -> ServerBounds:
    with conn.cursor(row_factory=class_row(ServerBounds)) as cur:
        result = cur.execute(SERVER_BOUNDS).fetchone()
    if result is None:
        raise RuntimeError("server_bounds returned no row (recording_finalize.settings is empty)")
    return result


def try_lock_runner(conn: Connection, key: int) -> bool:
    row = conn.execute(TRY_LOCK_RUNNER, (key,)).fetchone()
    return bool(row and row[0])


def unlock_runner(conn: Connection, key: int) -> bool:
    row = conn.execute(UNLOCK_RUNNER, (key,)).fetchone()
    return bool(row and row[0])


def backend_pid(conn: Connection) -> int:
    """The server process of the session this statement ran in."""
    row = conn.execute(BACKEND_PID).fetchone()
    if row is None:
        raise RuntimeError("pg_backend_pid() returned no row")
    return int(row[0])


def idle_session_timeout_ms(conn: Connection) -> int:
    """The session's ``idle_session_timeout`` in milliseconds (0 = off)."""
    row = conn.execute(IDLE_SESSION_TIMEOUT_MS).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def stats(conn: Connection, topic: str) -> Stats:
    with conn.cursor(row_factory=class_row(Stats)) as cur:
        result = cur.execute(STATS, (topic,)).fetchone()
    if result is None:
        raise RuntimeError("stats returned no row")
    return result


def quarantined_rows(conn: Connection, limit: int) -> list[QuarantinedRow]:
    with conn.cursor(row_factory=class_row(QuarantinedRow)) as cur:
        return cur.execute(QUARANTINED_ROWS, (limit,)).fetchall()


# ------------------------------------------------------------------------------------------
# The operator toolkit (migration 0010): explain, audit, dry run, audited requeue/retry, the
# pause switch and retention. Operators call these as a login granted
# recording_finalize_operator; the cycle reads operator_state once per cycle and run prunes.


@dataclass(frozen=True)
class AuditRow:
    """One invariant check: ``found`` findings, a few example recording ids."""

    check_name: str
    reason: str | None
    found: int
    examples: list[str]


@dataclass(frozen=True)
class FailedRecording:
    recording_id: UUID
    session_kind: str
    session_id: UUID
    failure_reason: str | None
    failed_at: datetime | None


@dataclass(frozen=True)
class RepairedRow:
    recording_id: UUID
    session_kind: str
    session_id: UUID


@dataclass(frozen=True)
class PreviewRow:
    """What ``claim_due`` would do with one due row (``claim_preview``)."""

    recording_id: UUID
    session_kind: str
    session_id: UUID
    action: str
    attempts: int
    next_attempt_at: datetime
    detail: str | None


@dataclass(frozen=True)
class BulkRequeuedRow:
    recording_id: UUID
    quarantine_reason: str | None
    attempts: int
    last_error: str | None
    quarantined_at: datetime


@dataclass(frozen=True)
class PauseRow:
    part: str
    paused: bool
    paused_at: datetime | None
    paused_by: str | None
    reason: str | None


@dataclass(frozen=True)
class OperatorState:
    reconcile_paused: bool
    relay_paused: bool
    pauses: list[dict[str, Any]]
    quarantined_by_reason: dict[str, int]


@dataclass(frozen=True)
class PruneCounts:
    outbox: int
    realtime: int
    finalize: int


EXPLAIN = """
select recording_finalize.explain(
    p_recording_id => %(recording_id)s, p_max_attempts => %(max_attempts)s,
    p_sla_timeout => %(sla_timeout)s, p_topic => %(topic)s
)
"""

AUDIT = """
select check_name, reason, found, examples
from recording_finalize.audit(
    p_sla_timeout => %(sla_timeout)s, p_polling_interval => %(polling_interval)s,
    p_examples => %(examples)s, p_topic => %(topic)s
)
"""

FAILED_RECORDINGS = """
select recording_id, session_kind, session_id, failure_reason, failed_at
from recording_finalize.failed_recordings(p_limit => %s)
"""

AUDIT_REPAIR = """
select recording_id, session_kind, session_id
from recording_finalize.audit_repair(p_operator => %s, p_sla_timeout => %s, p_limit => %s)
"""

CLAIM_PREVIEW = """
select recording_id, session_kind, session_id, action, attempts, next_attempt_at, detail
from recording_finalize.claim_preview(
    p_limit => %(limit)s, p_max_attempts => %(max_attempts)s,
    p_sla_timeout => %(sla_timeout)s, p_topic => %(topic)s
)
"""

OPERATOR_REQUEUE = """
select recording_id, status, attempts, next_attempt_at, last_error
from recording_finalize.operator_requeue(
    p_recording_id => %s, p_operator => %s, p_reason => %s
)
"""

OPERATOR_REQUEUE_QUARANTINED = """
select recording_id, quarantine_reason, attempts, last_error, quarantined_at
from recording_finalize.operator_requeue_quarantined(
    p_operator => %(operator)s, p_reason => %(reason)s, p_reason_code => %(reason_code)s,
    p_since => coalesce(%(since)s::timestamptz, now() - %(since_ago)s::interval),
    p_limit => %(limit)s, p_dry_run => %(dry_run)s
)
"""

OPERATOR_RETRY = """
select recording_id, status, attempts, next_attempt_at, last_error
from recording_finalize.operator_retry(p_recording_id => %s, p_operator => %s, p_reason => %s)
"""

SET_PAUSE = """
select part, paused, paused_at, paused_by, reason
from recording_finalize.set_pause(p_part => %s, p_paused => %s, p_operator => %s, p_reason => %s)
"""

OPERATOR_STATE = """
select reconcile_paused, relay_paused, pauses, quarantined_by_reason
from recording_finalize.operator_state()
"""

PRUNE = """
select outbox, realtime, finalize
from recording_finalize.prune(
    p_older_than => %s, p_batch_size => %s, p_dry_run => %s, p_topic => %s
)
"""


def explain(conn: Connection, recording_id: UUID, settings: Settings) -> dict[str, Any]:
    """The explain document. Raises RF021 for an unknown id."""
    row = conn.execute(EXPLAIN, {
        "recording_id": recording_id,
        "max_attempts": settings.max_attempts,
        "sla_timeout": _seconds(settings.finalize_sla_timeout),
        "topic": settings.topic,
    }).fetchone()
    if row is None or not isinstance(row[0], dict):
        raise RuntimeError("explain returned no document")
    return row[0]


def audit(conn: Connection, settings: Settings, examples: int = 5) -> list[AuditRow]:
    params = {
        "sla_timeout": _seconds(settings.finalize_sla_timeout),
        "polling_interval": _seconds(settings.polling_interval),
        "examples": examples,
        "topic": settings.topic,
    }
    with conn.cursor(row_factory=class_row(AuditRow)) as cur:
        return cur.execute(AUDIT, params).fetchall()


def failed_recordings(conn: Connection, limit: int) -> list[FailedRecording]:
    with conn.cursor(row_factory=class_row(FailedRecording)) as cur:
        return cur.execute(FAILED_RECORDINGS, (limit,)).fetchall()


def audit_repair(conn: Connection, operator: str, settings: Settings,
                 limit: int = 1000) -> list[RepairedRow]:
    with conn.cursor(row_factory=class_row(RepairedRow)) as cur:
        return cur.execute(AUDIT_REPAIR, (
            operator, _seconds(settings.finalize_sla_timeout), limit)).fetchall()


def claim_preview(conn: Connection, settings: Settings, limit: int) -> list[PreviewRow]:
    params = {
        "limit": limit,
        "max_attempts": settings.max_attempts,
        "sla_timeout": _seconds(settings.finalize_sla_timeout),
        "topic": settings.topic,
    }
    with conn.cursor(row_factory=class_row(PreviewRow)) as cur:
        return cur.execute(CLAIM_PREVIEW, params).fetchall()


def operator_requeue(conn: Connection, recording_id: UUID, operator: str,
                     reason: str) -> RequeuedRow:
    """Audited Quarantined → Pending. RF005, RF006, RF001 (empty operator/reason)."""
    with conn.cursor(row_factory=class_row(RequeuedRow)) as cur:
        result = cur.execute(OPERATOR_REQUEUE, (recording_id, operator, reason)).fetchone()
    if result is None:
        raise RuntimeError("operator_requeue returned no row")
    return result


def operator_requeue_quarantined(
    conn: Connection, *, operator: str, reason: str, reason_code: str | None,
    since: datetime | None, since_ago_s: float | None, limit: int, dry_run: bool,
) -> list[BulkRequeuedRow]:
    """One batch (its own transaction) of the bulk requeue; a dry run writes nothing."""
    params = {
        "operator": operator, "reason": reason, "reason_code": reason_code, "since": since,
        "since_ago": None if since_ago_s is None else _seconds(since_ago_s),
        "limit": limit, "dry_run": dry_run,
    }
    with conn.cursor(row_factory=class_row(BulkRequeuedRow)) as cur:
        return cur.execute(OPERATOR_REQUEUE_QUARANTINED, params).fetchall()


def operator_retry(conn: Connection, recording_id: UUID, operator: str,
                   reason: str) -> RequeuedRow:
    """Audited: a Pending row becomes due now. RF005, RF020, RF001."""
    with conn.cursor(row_factory=class_row(RequeuedRow)) as cur:
        result = cur.execute(OPERATOR_RETRY, (recording_id, operator, reason)).fetchone()
    if result is None:
        raise RuntimeError("operator_retry returned no row")
    return result


def set_pause(conn: Connection, part: str, paused: bool, operator: str,
              reason: str | None) -> list[PauseRow]:
    with conn.cursor(row_factory=class_row(PauseRow)) as cur:
        return cur.execute(SET_PAUSE, (part, paused, operator, reason)).fetchall()


def operator_state(conn: Connection) -> OperatorState:
    with conn.cursor(row_factory=class_row(OperatorState)) as cur:
        result = cur.execute(OPERATOR_STATE).fetchone()
    if result is None:
        raise RuntimeError("operator_state returned no row")
    return result


def prune(conn: Connection, older_than_s: float, batch_size: int, dry_run: bool,
          topic: str) -> PruneCounts:
    """One prune batch (or, dry, the counts of everything that would go)."""
    with conn.cursor(row_factory=class_row(PruneCounts)) as cur:
        result = cur.execute(PRUNE, (_seconds(older_than_s), batch_size, dry_run,
                                     topic)).fetchone()
    if result is None:
        raise RuntimeError("prune returned no row")
    return result


def storage_incident_open(
    conn: Connection, source: str, reason: str | None, at: datetime | None = None
) -> StorageIncident:
    """Opens (or returns the open) incident of ``source``. RF016/RF017/RF018 on bad input."""
    with conn.cursor(row_factory=class_row(StorageIncident)) as cur:
        result = cur.execute(STORAGE_INCIDENT_OPEN, (source, reason, at)).fetchone()
    if result is None:
        raise RuntimeError("storage_incident_open returned no row")
    return result


def storage_incident_close(
    conn: Connection, source: str, at: datetime | None = None, reason: str | None = None
) -> StorageIncident | None:
    """Closes the open incident of ``source``; None when it had none open."""
    with conn.cursor(row_factory=class_row(StorageIncident)) as cur:
        return cur.execute(STORAGE_INCIDENT_CLOSE, (source, at, reason)).fetchone()


def storage_incident_list(
    conn: Connection, recent_s: float = 7 * 86400.0, limit: int = 100
) -> list[StorageIncident]:
    """Open incidents first, then those that ended within ``recent_s``, newest first."""
    with conn.cursor(row_factory=class_row(StorageIncident)) as cur:
        return cur.execute(STORAGE_INCIDENT_LIST, (_seconds(recent_s), limit)).fetchall()
# ------------------------------------------------------------------------------------------
# migrate's bookkeeping and the schema drift check (driver/migrate.py, driver/schema.py)

MIGRATIONS_SCHEMA = "recording_finalize_migrations"

# Held by migrate for its whole run (a session lock on its own connection; never waits).
TRY_MIGRATE_LOCK = "select pg_catalog.pg_try_advisory_lock(%s)"
MIGRATE_UNLOCK = "select pg_catalog.pg_advisory_unlock(%s)"

CREATE_MIGRATIONS_SCHEMA = "create schema if not exists recording_finalize_migrations"

# yoyo's tables of a deployment migrated before they had a schema of their own.
TABLES_IN_PUBLIC = """
select t from pg_catalog.unnest(%s::text[]) as t
where pg_catalog.to_regclass(pg_catalog.format('public.%%I', t)) is not null
    and pg_catalog.to_regclass(pg_catalog.format('recording_finalize_migrations.%%I', t)) is null
"""

HAS_OBJECT = """
select pg_catalog.to_regclass('recording_finalize_migrations.file_checksums') is not null,
    pg_catalog.to_regprocedure('recording_finalize.function_fingerprint(text)') is not null,
    pg_catalog.to_regprocedure('recording_finalize.schema_state()') is not null,
    pg_catalog.to_regclass('recording_finalize_migrations._yoyo_migration') is not null
"""

# The worker's probe (it may not look into recording_finalize_migrations).
HAS_SCHEMA_STATE = """
select pg_catalog.to_regprocedure('recording_finalize.schema_state()') is not null
"""

SCHEMA_STATE = """
select kind, name, sha256, recorded_md5, live_md5, package_version, recorded_at
from recording_finalize.schema_state()
"""

YOYO_APPLIED_IDS = "select migration_id from recording_finalize_migrations._yoyo_migration"

# A function file is applied in its own transaction under these (set local: per transaction).
MIGRATE_TIMEOUTS = """
select pg_catalog.set_config('lock_timeout', %s, true),
    pg_catalog.set_config('statement_timeout', %s, true)
"""

FUNCTION_FINGERPRINTS = """
select f, recording_finalize.function_fingerprint(f) from pg_catalog.unnest(%s::text[]) as f
"""

RECORD_MIGRATION = """
insert into recording_finalize_migrations.file_checksums (kind, file_name, sha256,
    package_version)
values ('migration', %s, %s, %s)
on conflict (kind, file_name) do nothing
"""

RECORD_FUNCTION = """
insert into recording_finalize_migrations.file_checksums (kind, file_name, sha256,
    definition_md5, package_version, recorded_at)
values ('function', %(file)s, %(sha256)s, recording_finalize.function_fingerprint(%(file)s),
    %(version)s, now())
on conflict (kind, file_name) do update set
    sha256 = excluded.sha256, definition_md5 = excluded.definition_md5,
    package_version = excluded.package_version, recorded_at = excluded.recorded_at
where (file_checksums.sha256, file_checksums.definition_md5)
    is distinct from (excluded.sha256, excluded.definition_md5)
"""

FORGET_FUNCTIONS = """
delete from recording_finalize_migrations.file_checksums
where kind = 'function' and not file_name = any(%s::text[])
"""

RECORD_MIGRATE_STATE = """
insert into recording_finalize_migrations.migrate_state (singleton, schema_version,
    package_version, migrated_at)
values (true, %s, %s, now())
on conflict (singleton) do update set
    schema_version = excluded.schema_version, package_version = excluded.package_version,
    migrated_at = excluded.migrated_at
"""


@dataclass(frozen=True)
class SchemaStateRow:
    """One row of ``recording_finalize.schema_state()``."""

    kind: str
    name: str
    sha256: str | None
    recorded_md5: str | None
    live_md5: str | None
    package_version: str | None
    recorded_at: datetime | None


@dataclass(frozen=True)
class Bookkeeping:
    """Which of migrate's objects exist in the database."""

    checksums_table: bool
    fingerprint_function: bool
    schema_state_function: bool
    yoyo_table: bool


def try_migrate_lock(conn: Connection, key: int) -> bool:
    row = conn.execute(TRY_MIGRATE_LOCK, (key,)).fetchone()
    return bool(row and row[0])


def migrate_unlock(conn: Connection, key: int) -> None:
    conn.execute(MIGRATE_UNLOCK, (key,))


def move_yoyo_tables_from_public(conn: Connection, tables: Sequence[str]) -> list[str]:
    """Creates migrate's schema and moves yoyo's tables there from ``public``; returns the
    tables it moved (one transaction)."""
    from psycopg import sql

    with conn.transaction():
        conn.execute(CREATE_MIGRATIONS_SCHEMA)
        moving = [str(r[0]) for r in conn.execute(TABLES_IN_PUBLIC, (list(tables),))]
        for table in moving:
            conn.execute(sql.SQL("alter table public.{} set schema {}").format(
                sql.Identifier(table), sql.Identifier(MIGRATIONS_SCHEMA)))
    return moving


def bookkeeping(conn: Connection) -> Bookkeeping:
    row = conn.execute(HAS_OBJECT).fetchone()
    if row is None:
        raise RuntimeError("the bookkeeping probe returned no row")
    return Bookkeeping(*(bool(v) for v in row))


def has_schema_state(conn: Connection) -> bool:
    row = conn.execute(HAS_SCHEMA_STATE).fetchone()
    return bool(row and row[0])


def schema_state(conn: Connection) -> list[SchemaStateRow]:
    with conn.cursor(row_factory=class_row(SchemaStateRow)) as cur:
        return cur.execute(SCHEMA_STATE).fetchall()


def yoyo_applied_ids(conn: Connection) -> list[str]:
    return [str(r[0]) for r in conn.execute(YOYO_APPLIED_IDS)]


def set_migrate_timeouts(conn: Connection, lock_timeout_ms: int, statement_timeout_ms: int
                         ) -> None:
    """Inside a transaction: its lock and statement timeouts."""
    conn.execute(MIGRATE_TIMEOUTS, (f"{lock_timeout_ms}ms", f"{statement_timeout_ms}ms"))


def apply_sql_file(conn: Connection, text: str) -> None:
    """A whole file of statements. Without parameters psycopg uses the simple protocol, which
    takes several statements at once."""
    conn.execute(text.encode())


def function_fingerprints(conn: Connection, files: Sequence[str]) -> dict[str, str | None]:
    return {str(f): (str(md5) if md5 is not None else None)
            for f, md5 in conn.execute(FUNCTION_FINGERPRINTS, (list(files),))}


def record_migration(conn: Connection, migration_id: str, sha256: str, version: str) -> None:
    conn.execute(RECORD_MIGRATION, (migration_id, sha256, version))


def record_function(conn: Connection, file: str, sha256: str, version: str) -> None:
    conn.execute(RECORD_FUNCTION, {"file": file, "sha256": sha256, "version": version})


def forget_functions(conn: Connection, shipped: Sequence[str]) -> int:
    return conn.execute(FORGET_FUNCTIONS, (list(shipped),)).rowcount


def record_migrate_state(conn: Connection, schema_version: str, version: str) -> None:
    conn.execute(RECORD_MIGRATE_STATE, (schema_version, version))
