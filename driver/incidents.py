"""Storage incidents as the worker sees them: opened when the file storage is out, closed when
it answers again (source ``worker`` of ``recording_finalize.storage_incidents``).

Why it matters: while an incident is open, and for ``RFR_UPLOAD_GRACE`` after it ended, a 404
fails no recording whose upload window overlapped it (the incident rule of
``recording_finalize_internal.outcome_decision``): the outage held the recorder's upload back,
and its retried upload may land a moment after the worker's HEAD.

When the worker opens one (the cycle calls ``StorageWatch`` at these points):

- **unreachable**: HeadBucket could not be answered (timeout, connection refused, 5xx);
- **transient**: HeadBucket answered, but at least ``TRANSIENT_MIN`` HEADs of the cycle, and at
  least ``TRANSIENT_SHARE`` of them, came back transient — the bucket answers, the objects do not
  (an overloaded or half-broken storage).

When it closes it: an *unreachable* incident as soon as HeadBucket answers again; a *transient*
one at the end of the first cycle whose HEADs are below the threshold again (HeadBucket answers
all along then, so it cannot be the signal). An incident of source ``worker`` this process did
not open (a previous process died during an outage) is closed by the first confirmed HeadBucket.
Incidents of other sources (operators, the recorder) are never touched by the worker.

The open/close calls are idempotent on the server, so a lost answer costs nothing but a retry.
"""

from __future__ import annotations

from . import queries
from .logs import LogFn
from .metrics import Metrics

SOURCE = "worker"
#: How the reason of an incident the worker opened because HeadBucket went unanswered begins:
#: ``outcome_decision`` tells by it that the next answered HeadBucket closes it (the previews).
UNREACHABLE_PREFIX = "HeadBucket:"
#: A cycle's HEADs count as an incident when at least this many came back transient ...
TRANSIENT_MIN = 5
#: ... and they are at least this share of the HEADs the cycle made.
TRANSIENT_SHARE = 0.5


class StorageWatch:
    """Tracks the worker's own incident across cycles (one per process, used by one thread)."""

    def __init__(self, metrics: Metrics, log: LogFn) -> None:
        self._metrics = metrics
        self._log = log
        #: Why this process holds the worker's incident open: unreachable, transient or None.
        self.cause: str | None = None
        #: False until this process has asked the database once (an incident may be left over).
        self._synced = False

    def unreachable(self, conn: queries.Connection, job_run_id: str, error: str) -> None:
        """HeadBucket failed as unreachable: the storage is out."""
        self._open(conn, job_run_id, "unreachable",
                   f"{UNREACHABLE_PREFIX} the file storage cannot be reached ({error})")
        self.cause = "unreachable"

    def bucket_confirmed(self, conn: queries.Connection, job_run_id: str) -> None:
        """HeadBucket answered: an unreachable (or left-over) incident ends now."""
        if self.cause == "transient":
            return  # HeadBucket answered throughout; the HEADs decide (head_verdicts_counted)
        if self.cause is None and self._synced:
            return
        self._close(conn, job_run_id, "HeadBucket answers again")

    def head_verdicts_counted(
        self, conn: queries.Connection, job_run_id: str, transient: int, checked: int
    ) -> None:
        """The cycle's HEAD verdicts, once the bucket was confirmed: too many transient ones
        open an incident; a healthy cycle closes one opened for that reason."""
        if transient >= TRANSIENT_MIN and transient >= TRANSIENT_SHARE * checked:
            self._open(conn, job_run_id, "transient",
                       f"{transient} of {checked} HEADs of a cycle were transient")
            if self.cause is None:
                self.cause = "transient"
        elif self.cause == "transient" and checked > 0:
            self._close(conn, job_run_id,
                        f"HEADs healthy again ({transient} of {checked} transient)")

    def _open(self, conn: queries.Connection, job_run_id: str, cause: str, reason: str) -> None:
        incident = queries.storage_incident_open(conn, SOURCE, reason)
        self._synced = True
        if incident.created:
            self._metrics.storage_incidents_opened_total.inc()
            self._log("storage incident opened", level="warning", jobRunId=job_run_id,
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
            self._log("storage incident closed", jobRunId=job_run_id, incidentId=incident.id,
                      source=SOURCE, durationSeconds=seconds, reason=note)
