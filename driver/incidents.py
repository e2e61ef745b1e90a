"""The worker's own storage incident (source ``worker``): the driver reports what its S3 checks
saw, as they come, and the database decides (``recording_finalize.storage_health``: the rule,
its thresholds and the incident's kind live there). Here: the reports, and what they did,
logged and counted.

Why it matters: while the worker's incident is open a transient verdict costs no attempt, and
while it is open and for ``RFR_UPLOAD_GRACE`` after it ended a 404 fails no recording whose
upload window it overlaps (``outcome_decision``). So it must open while a cycle runs, within a
few HEADs of the storage going out: a paced drain's cycle lasts minutes.
"""

from __future__ import annotations

from . import model, queries
from .logs import log
from .metrics import Metrics

#: Verdicts as the cycle applies them: row, verdict, check seconds.
Item = tuple[model.ClaimedRow, model.Verdict, float]


def report(
    conn: queries.Connection, metrics: Metrics, job_run_id: str, *,
    bucket_answered: bool | None = None, transient: int | None = None,
    checked: int | None = None, cycle_end: bool = False, error: str | None = None,
) -> queries.StorageHealth:
    """``storage_health`` with these facts; logs and counts what it did."""
    health = queries.storage_health(conn, bucket_answered=bucket_answered, transient=transient,
                                    checked=checked, cycle_end=cycle_end, error=error)
    if health.action in ("opened", "closed"):
        # The gauge of open incidents (any source) is otherwise refreshed at the end of a
        # cycle: it would say 0 for the rest of a paced drain's cycle (minutes) while the
        # worker's incident is open. Read again when it opens or closes one (rare).
        metrics.storage_incidents_open.set(
            sum(1 for i in queries.storage_incident_list(conn) if i.is_open))
    if health.action == "opened":
        metrics.storage_incidents_opened_total.inc()
        log("storage incident opened", level="warning", jobRunId=job_run_id,
            incidentId=health.incident_id, source="worker", kind=health.kind,
            message="no attempt is used and no 404 believed until the incident has been "
                    "closed for RFR_UPLOAD_GRACE")
    elif health.action == "closed" and health.started_at and health.ended_at:
        log("storage incident closed", jobRunId=job_run_id, incidentId=health.incident_id,
            source="worker", kind=health.kind,
            durationSeconds=(health.ended_at - health.started_at).total_seconds())
    return health


class HeadWindow:
    """One cycle's HEAD verdicts as ``storage_health`` counts them, and the verdicts it holds.

    A window begins at the first transient verdict while the worker's incident is closed (the
    healthy ones before it belong to none, so they are not reported: no call while all is well),
    at the first verdict while it is open; the database says when it is decided (count anew) and
    whether its verdicts wait (``hold``): undecided transient answers may be the first of an
    outage, so none of them is applied, and no 404 among them, before the window is judged."""

    def __init__(self, conn: queries.Connection, metrics: Metrics, job_run_id: str) -> None:
        self._conn, self._metrics, self._job = conn, metrics, job_run_id
        self.transient = self.checked = 0
        #: The worker's incident is open, as the database last said.
        self.open = False
        #: A decided window left the incident open: the storage failed in this cycle.
        self.failing = False
        self._held: list[Item] = []

    def bucket_answered(self, answered: bool, error: str | None = None) -> None:
        self._seen(report(self._conn, self._metrics, self._job, bucket_answered=answered,
                          error=error))

    def judge(self, batch: list[Item]) -> list[Item]:
        """What to apply now of ``batch`` and of the verdicts held before it, in arrival order."""
        if not batch:
            return []  # nothing new to judge by: what is held stays held
        outcomes = [verdict.outcome for _, verdict, _ in batch]
        if not self.open and not self.checked:
            first = next((i for i, o in enumerate(outcomes) if o == model.TRANSIENT), None)
            if first is None:
                return self._release(batch)  # all well: nothing to report
            outcomes = outcomes[first:]
        self.transient += outcomes.count(model.TRANSIENT)
        self.checked += len(outcomes)
        error = next((v.error for _, v, _ in reversed(batch) if v.outcome == model.TRANSIENT),
                     None)
        health = self._seen(report(self._conn, self._metrics, self._job,
                                   transient=self.transient, checked=self.checked, error=error))
        if health.hold:
            self._held.extend(batch)
            return []
        return self._release(batch)

    def flush(self) -> list[Item]:
        """The cycle's claims are done: the window is judged with what it holds; the verdicts
        held are returned, to be applied."""
        if self.checked:
            self._seen(report(self._conn, self._metrics, self._job, transient=self.transient,
                              checked=self.checked, cycle_end=True))
        return self._release([])

    def drop(self) -> list[Item]:
        """The cycle stops (a stop, a configuration error, a service fault): the held verdicts
        are returned unapplied, and the window is forgotten."""
        self.transient = self.checked = 0
        held, self._held = self._held, []
        return held

    def _seen(self, health: queries.StorageHealth) -> queries.StorageHealth:
        self.open = health.is_open
        if health.decided:
            self.failing = self.failing or health.is_open
            self.transient = self.checked = 0
        return health

    def _release(self, batch: list[Item]) -> list[Item]:
        items, self._held = [*self._held, *batch], []
        return items
