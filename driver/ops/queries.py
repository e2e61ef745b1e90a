"""The operator commands' SQL (as a login granted ``recording_finalize_operator``); what the worker
itself sends is in the core's ``queries.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from psycopg.rows import class_row

from ..model import Verdict
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
    quarantine_reason: str | None


@dataclass(frozen=True)
class OutcomePreview:
    """What the next cycle would do with a recording given a storage verdict
    (``preview_outcomes``): the claim's action, then, for reconcile, the verdict's result."""

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
from recording_finalize.quarantined_rows(p_limit => %(limit)s, p_reason_code => %(reason_code)s,
    p_since => %(since)s)
"""

EXPLAIN = """
select recording_finalize.explain(p_recording_id => %s)
"""

AUDIT = """
select check_name, reason, found, examples
from recording_finalize.audit(
    p_polling_interval => %(polling_interval)s, p_examples => %(examples)s
)
"""

FAILED_RECORDINGS = """
select recording_id, session_kind, session_id, failure_reason, failed_at
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
    p_recording_ids => %(ids)s::uuid[], p_from_status => %(from_status)s,
    p_operator => %(operator)s, p_reason => %(reason)s, p_strict => %(strict)s
)
"""

SET_PAUSE = """
select part, paused, paused_at, paused_by, reason
from recording_finalize.set_pause(p_part => %s, p_paused => %s, p_operator => %s, p_reason => %s)
"""


def quarantined_rows(conn: Connection, limit: int, reason_code: str | None = None,
                     since: datetime | None = None) -> list[QuarantinedRow]:
    """The quarantined rows, oldest first (of ``reason_code``, quarantined since ``since``)."""
    with conn.cursor(row_factory=class_row(QuarantinedRow)) as cur:
        return cur.execute(QUARANTINED_ROWS, {"limit": limit, "reason_code": reason_code,
                                              "since": since}).fetchall()


def explain(conn: Connection, recording_id: UUID) -> dict[str, Any]:
    """The explain document. Raises RF021 for an unknown id."""
    row = conn.execute(EXPLAIN, (recording_id,)).fetchone()
    if row is None or not isinstance(row[0], dict):
        raise RuntimeError("explain returned no document")
    return row[0]


def audit(conn: Connection, settings: Settings, examples: int = 5) -> list[AuditRow]:
    params = {"polling_interval": interval(settings.polling_interval), "examples": examples}
    with conn.cursor(row_factory=class_row(AuditRow)) as cur:
        return cur.execute(AUDIT, params).fetchall()


def failed_recordings(conn: Connection, limit: int) -> list[FailedRecording]:
    with conn.cursor(row_factory=class_row(FailedRecording)) as cur:
        return cur.execute(FAILED_RECORDINGS, (limit,)).fetchall()


def audit_repair(conn: Connection, operator: str, limit: int = 1000) -> list[RepairedRow]:
    with conn.cursor(row_factory=class_row(RepairedRow)) as cur:
        return cur.execute(AUDIT_REPAIR, (operator, limit)).fetchall()


def claim_preview(conn: Connection, limit: int) -> list[PreviewRow]:
    with conn.cursor(row_factory=class_row(PreviewRow)) as cur:
        return cur.execute(CLAIM_PREVIEW, (limit,)).fetchall()


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
    with conn.cursor(row_factory=class_row(OutcomePreview)) as cur:
        return cur.execute(PREVIEW_OUTCOMES, (json.dumps(items),)).fetchall()


def reschedule(conn: Connection, recording_ids: Sequence[UUID], from_status: str, *,
               operator: str, reason: str, strict: bool) -> list[RescheduledRow]:
    """The one audited reschedule (requeue from ``Quarantined``, retry from ``Pending``)."""
    params = {"ids": list(recording_ids), "from_status": from_status, "operator": operator,
              "reason": reason, "strict": strict}
    with conn.cursor(row_factory=class_row(RescheduledRow)) as cur:
        return cur.execute(RESCHEDULE, params).fetchall()


def set_pause(conn: Connection, part: str, paused: bool, operator: str,
              reason: str | None) -> list[PauseRow]:
    with conn.cursor(row_factory=class_row(PauseRow)) as cur:
        return cur.execute(SET_PAUSE, (part, paused, operator, reason)).fetchall()
