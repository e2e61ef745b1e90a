"""Storage incidents as the worker sees them: opened when the file storage is out, closed when
it answers again (source ``worker`` of ``recording_finalize.storage_incidents``).

Why it matters: while an incident is open, and for ``RFR_UPLOAD_GRACE`` after it ended, a 404
fails no recording whose upload window overlapped it (``outcome_decision``'s incident rule):
the outage held the recorder's upload back, and its retry may land just after the worker's HEAD.

The worker opens one when HeadBucket goes unanswered (*unreachable*), or when the bucket answers
but at least ``TRANSIENT_MIN`` HEADs of a cycle, and ``TRANSIENT_SHARE`` of them, are transient
(*transient*: an overloaded or half-broken storage). It closes an unreachable one (or one a
previous process left) when HeadBucket answers again, a transient one at the end of the first
cycle whose HEADs are below the threshold. Other sources' incidents are never touched. The
open/close calls are idempotent on the server, so a lost answer costs nothing but a retry.
"""

from __future__ import annotations

from . import queries
from .logs import log
from .metrics import Metrics

SOURCE = "worker"
#: How the reason of an unreachable incident begins: ``outcome_decision`` tells by it that the
#: next answered HeadBucket closes it (the previews).
UNREACHABLE_PREFIX = "HeadBucket:"
TRANSIENT_MIN = 5
TRANSIENT_SHARE = 0.5


class StorageWatch:
    """Tracks the worker's own incident across cycles (one per process, used by one thread)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics
        #: Why this process holds the worker's incident open: unreachable, transient or None.
        self.cause: str | None = None
        #: False until this process has asked the database once (an incident may be left over).
        self._synced = False

    def unreachable(self, conn: queries.Connection, job_run_id: str, error: str) -> None:
        self._open(conn, job_run_id, "unreachable",
                   f"{UNREACHABLE_PREFIX} the file storage cannot be reached ({error})")
        self.cause = "unreachable"

    def bucket_confirmed(self, conn: queries.Connection, job_run_id: str) -> None:
        if self.cause == "transient":
            return  # HeadBucket answered throughout; the HEADs decide (head_verdicts_counted)
        if self.cause is not None or not self._synced:
            self._close(conn, job_run_id, "HeadBucket answers again")

    def head_verdicts_counted(
        self, conn: queries.Connection, job_run_id: str, transient: int, checked: int
    ) -> None:
        if transient >= TRANSIENT_MIN and transient >= TRANSIENT_SHARE * checked:
            self._open(conn, job_run_id, "transient",
                       f"{transient} of {checked} HEADs of a cycle were transient")
            self.cause = self.cause or "transient"
        elif self.cause == "transient" and checked > 0:
            self._close(conn, job_run_id,
                        f"HEADs healthy again ({transient} of {checked} transient)")

    def _open(self, conn: queries.Connection, job_run_id: str, cause: str, reason: str) -> None:
        incident = queries.storage_incident_open(conn, SOURCE, reason)
        self._synced = True
        if incident.created:
            self._metrics.storage_incidents_opened_total.inc()
            log("storage incident opened", level="warning", jobRunId=job_run_id,
                incidentId=incident.id, source=SOURCE, cause=cause, reason=reason,
                message="a 404 fails no recording until the incident has been closed "
                "for RFR_UPLOAD_GRACE")

    def _close(self, conn: queries.Connection, job_run_id: str, note: str) -> None:
        incident = queries.storage_incident_close(conn, SOURCE, reason=note)
        self._synced = True
        self.cause = None
        if incident is not None:
            seconds = (incident.ended_at - incident.started_at).total_seconds() \
                if incident.ended_at is not None else None
            log("storage incident closed", jobRunId=job_run_id, incidentId=incident.id,
                source=SOURCE, durationSeconds=seconds, reason=note)
