"""The operator commands' SQL (as a login granted ``recording_finalize_operator``); what the worker
itself sends is in the core's ``queries.py``. Each row type is its function's columns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

from psycopg.rows import class_row

from ..model import Verdict
from ..queries import Connection, interval

_Row = TypeVar("_Row")


@dataclass(frozen=True)
class QuarantinedRow:
    recording_id: UUID
    session_kind: str
    session_id: UUID
    attempts: int
    last_error: str | None
    quarantine_reason: str | None
    quarantined_at: datetime


@dataclass(frozen=True)
class RescheduledRow:
    """One row ``reschedule`` handed back to the worker (requeue or retry)."""

    recording_id: UUID
    status: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    quarantine_reason: str | None
    quarantined_at: datetime | None


@dataclass(frozen=True)
class AuditRow:
    check_name: str
    reason: str | None
    found: int
    examples: list[str] | None


@dataclass(frozen=True)
class RecordingRow:
    """A recording and its session: a Failed one, or an orphan ``audit_repair`` repaired."""

    recording_id: UUID
    session_kind: str
    session_id: UUID


@dataclass(frozen=True)
class PreviewRow:
    """What ``claim_due`` would do with one due row."""

    recording_id: UUID
    session_kind: str
    session_id: UUID
    action: str
    attempts: int
    next_attempt_at: datetime
    detail: str | None
    quarantine_reason: str | None


@dataclass(frozen=True)
class OutcomePreview:
    """What the next cycle would do with a recording given a storage verdict: the claim's
    action, then, for reconcile, the verdict's result."""

    recording_id: UUID
    claim_action: str
    result: str
    finalize_status: str | None
    attempts: int | None
    next_attempt_at: datetime | None
    detail: str | None


@dataclass(frozen=True)
class PauseRow:
    part: str
    paused: bool
    paused_at: datetime | None
    paused_by: str | None
    reason: str | None


QUARANTINED_ROWS = """
select recording_id, session_kind, session_id, attempts, last_error, quarantine_reason,
    quarantined_at
from recording_finalize.quarantined_rows(p_limit => %s, p_reason_code => %s, p_since => %s)
"""

EXPLAIN = """
select recording_finalize.explain(p_recording_id => %s)
"""

AUDIT = """
select check_name, reason, found, examples
from recording_finalize.audit(p_polling_interval => %s, p_examples => %s)
"""

FAILED_RECORDINGS = """
select recording_id, session_kind, session_id
from recording_finalize.failed_recordings(p_limit => %s)
"""

AUDIT_REPAIR = """
select recording_id, session_kind, session_id
from recording_finalize.audit_repair(p_operator => %s, p_limit => %s)
"""

CLAIM_PREVIEW = """
select recording_id, session_kind, session_id, action, attempts, next_attempt_at, detail,
    quarantine_reason
from recording_finalize.claim_preview(p_limit => %s)
"""

PREVIEW_OUTCOMES = """
select recording_id, claim_action, result, finalize_status, attempts, next_attempt_at, detail
from recording_finalize.preview_outcomes(p_verdicts => %s::jsonb)
"""

RESCHEDULE = """
select recording_id, status, attempts, next_attempt_at, last_error, quarantine_reason,
    quarantined_at
from recording_finalize.reschedule(
    p_recording_ids => %s::uuid[], p_from_status => %s, p_operator => %s, p_reason => %s,
    p_strict => %s
)
"""

SET_PAUSE = """
select part, paused, paused_at, paused_by, reason
from recording_finalize.set_pause(p_part => %s, p_paused => %s, p_operator => %s, p_reason => %s)
"""


def _rows(conn: Connection, row: type[_Row], query: str, params: Sequence[Any]) -> list[_Row]:
    with conn.cursor(row_factory=class_row(row)) as cur:
        return cur.execute(query, params).fetchall()


def quarantined_rows(conn: Connection, limit: int, reason_code: str | None = None,
                     since: datetime | None = None) -> list[QuarantinedRow]:
    """The quarantined rows, oldest first (of ``reason_code``, quarantined since ``since``)."""
    return _rows(conn, QuarantinedRow, QUARANTINED_ROWS, (limit, reason_code, since))


def explain(conn: Connection, recording_id: UUID) -> dict[str, Any]:
    """The explain document. Raises RF021 for an unknown id."""
    row = conn.execute(EXPLAIN, (recording_id,)).fetchone()
    if row is None or not isinstance(row[0], dict):
        raise RuntimeError("explain returned no document")
    return row[0]


def audit(conn: Connection, polling_interval: float, examples: int = 5) -> list[AuditRow]:
    return _rows(conn, AuditRow, AUDIT, (interval(polling_interval), examples))


def failed_recordings(conn: Connection, limit: int) -> list[RecordingRow]:
    return _rows(conn, RecordingRow, FAILED_RECORDINGS, (limit,))


def audit_repair(conn: Connection, operator: str, limit: int = 1000) -> list[RecordingRow]:
    return _rows(conn, RecordingRow, AUDIT_REPAIR, (operator, limit))


def claim_preview(conn: Connection, limit: int) -> list[PreviewRow]:
    return _rows(conn, PreviewRow, CLAIM_PREVIEW, (limit,))


def preview_outcomes(conn: Connection, verdicts: Sequence[tuple[UUID, Verdict]],
                     bucket_confirmed: bool | None = None) -> list[OutcomePreview]:
    """What the next cycle would do with each recording, given the verdict the caller just saw
    and whether its HeadBucket answered (None: not asked): the real path's own SQL decides."""
    if not verdicts:
        return []
    items = [{"recording_id": str(rid), "outcome": v.outcome, "file_id": v.file_id,
              "size_bytes": v.size_bytes, "duration_seconds": v.duration_seconds,
              "format": v.format, "error": v.error, "bucket_confirmed": bucket_confirmed}
             for rid, v in verdicts]
    return _rows(conn, OutcomePreview, PREVIEW_OUTCOMES, (json.dumps(items),))


def reschedule(conn: Connection, recording_ids: Sequence[UUID], from_status: str, *,
               operator: str, reason: str, strict: bool) -> list[RescheduledRow]:
    """The one audited reschedule (requeue from ``Quarantined``, retry from ``Pending``)."""
    return _rows(conn, RescheduledRow, RESCHEDULE,
                 (list(recording_ids), from_status, operator, reason, strict))


def set_pause(conn: Connection, part: str, paused: bool, operator: str,
              reason: str) -> list[PauseRow]:
    return _rows(conn, PauseRow, SET_PAUSE, (part, paused, operator, reason))
