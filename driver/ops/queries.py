"""The operator commands' SQL (migration 0010 and the runbook): explain, audit and its repair,
the dry run's preview, the audited requeue/retry, the pause switch, the quarantined rows.

Operators call these as a login granted ``recording_finalize_operator``. What the worker itself
sends (its claim, apply, relay, storage incidents, pruner, ``operator_state``) is in the core's
``queries.py``, which the commands use as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from psycopg.rows import class_row

from ..queries import Connection, interval

if TYPE_CHECKING:
    from ..config import Settings


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


QUARANTINED_ROWS = """
select recording_id, session_kind, session_id, attempts, last_error, quarantined_at
from recording_finalize.quarantined_rows(p_limit => %s)
"""

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


def quarantined_rows(conn: Connection, limit: int) -> list[QuarantinedRow]:
    with conn.cursor(row_factory=class_row(QuarantinedRow)) as cur:
        return cur.execute(QUARANTINED_ROWS, (limit,)).fetchall()


def explain(conn: Connection, recording_id: UUID, settings: Settings) -> dict[str, Any]:
    """The explain document. Raises RF021 for an unknown id."""
    row = conn.execute(EXPLAIN, {
        "recording_id": recording_id,
        "max_attempts": settings.max_attempts,
        "sla_timeout": interval(settings.finalize_sla_timeout),
        "topic": settings.topic,
    }).fetchone()
    if row is None or not isinstance(row[0], dict):
        raise RuntimeError("explain returned no document")
    return row[0]


def audit(conn: Connection, settings: Settings, examples: int = 5) -> list[AuditRow]:
    params = {
        "sla_timeout": interval(settings.finalize_sla_timeout),
        "polling_interval": interval(settings.polling_interval),
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
            operator, interval(settings.finalize_sla_timeout), limit)).fetchall()


def claim_preview(conn: Connection, settings: Settings, limit: int) -> list[PreviewRow]:
    params = {
        "limit": limit,
        "max_attempts": settings.max_attempts,
        "sla_timeout": interval(settings.finalize_sla_timeout),
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
        "since_ago": None if since_ago_s is None else interval(since_ago_s),
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
