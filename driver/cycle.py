"""One cycle of the safety net: lock → claim → check → apply (until done) → relay → gauges.

No transaction and no row lock is open while S3 is asked: ``claim_due`` commits on its own
(autocommit), the HEADs run in a bounded thread pool, and each verdict is applied by one
``apply_outcome`` statement — its own short transaction — from this thread. The verdicts that
are in when this thread comes to apply go out together, pipelined (``pipeline.apply_outcomes``:
one round trip, still one statement and one transaction per row).

Read top-down: ``run_cycle`` (lock, summary, metrics) → ``_locked_cycle`` (pause switch,
``_reconcile``, ``_relay``, gauges) → ``_claim_loop`` (one ``claim_due`` per batch) →
``_check_and_apply``, whose three parts are **check** (``_Checks``: the HEADs and their queue),
**pace** (``pacing.Pacer``: adaptive pacing, RFR_MAX_APPLY_RATE) and **apply** (``_apply_many``,
one pipelined round trip; ``_record`` counts and logs the database's answers). A refused
metadata set is handled in one place (``_refused_metadata``), a configuration failure in one
(``_config_error_release``). The pause switch and the idle gauge refresh are maintenance's
(``maintenance.py``).

Before claiming, the cycle's discovery opens finalize rows for recordings stuck past the SLA
that have none (``_discover``: the service needs no change to be rescued).

Three things stop a cycle early. The stop event (SIGTERM/SIGINT) is checked before every
storage call and between rows: the row being applied is applied whole or not at all, and the
rows claimed but not applied get their attempt back (``_release_on_stop``); the relay then
drains for a few seconds. ``RFR_MAX_RUN_DURATION`` ends claiming. And a
client-side deadline at the lock TTL: past it the server may already have ended the lock's
session (``idle_session_timeout``) and another runner may own the rows, so nothing more is
written — any stale verdict would be a no-op anyway, thanks to the claim token.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol
from uuid import uuid4

import psycopg
from psycopg_pool import ConnectionPool

from . import pipeline, queries, tracing
from .config import Settings
from .db import RunnerLock
from .errors import describe
from .incidents import StorageWatch
from .logs import log
from .maintenance import CycleMaintenance, Maintenance
from .metrics import Metrics
from .model import (
    BUSY,
    CONFIG_ERROR,
    CONFIG_ERROR_RELEASED,
    DEFERRED_BY_INCIDENT,
    DEFERRED_BY_SLA,
    FOUND,
    HELD_BY_INCIDENT,
    MISSING,
    TRANSIENT,
    ClaimedRow,
    Verdict,
)
from .pacing import Pacer
from .queries import AppliedResult
from .storage import Storage, StorageConfigError

# Stop writing this long before the lock TTL runs out: the server's clock and ours differ a bit.
LOCK_MARGIN_S = 1.0
# How often the apply loop wakes up to look at the stop event while HEADs are in flight.
POLL_S = 0.2
# At most this many verdicts go out in one pipelined round trip.
PIPELINE_MAX = 100
# At most this many finalize rows are opened by one cycle's discovery.
DISCOVER_LIMIT = 1000
# On a stop, the relay drains what is enqueued for at most this long before the worker exits.
STOP_DRAIN_S = 3.0
# The answers that settle a row (progress, the "no run" alert's heartbeat). A backoff, a busy
# row or a deferred 404 settles nothing: an outage of S3 must not look like work being done.
SETTLED_BY_APPLY = frozenset({"reconciled", "failed", "quarantined", "terminal"})
SETTLED_AT_CLAIM = frozenset({"republished", "quarantined", "closed"})


class RelayResultLike(Protocol):
    @property
    def published(self) -> int: ...

    @property
    def failed(self) -> int: ...

    @property
    def reason(self) -> str: ...


class RelayLike(Protocol):
    def drain(self, deadline: float, stop: threading.Event, *,
              bounded: bool = False) -> RelayResultLike: ...


@dataclass
class Context:
    """What a cycle works with; built once by ``worker.py`` and shared by every cycle."""

    settings: Settings
    pool: ConnectionPool[psycopg.Connection[Any]]
    storage: Storage
    metrics: Metrics
    relay: RelayLike | None = None
    #: The worker's own storage incident across cycles; built on the first cycle if None.
    watch: StorageWatch | None = None
    #: The pause switch and the idle gauge refresh; built on the first cycle if None.
    maintenance: CycleMaintenance | None = None


@dataclass
class CycleSummary:
    """What one cycle did; ``to_json()`` is what ``run-once`` prints."""

    job_run_id: str
    as_of: datetime
    claimed: int = 0
    reconciled: int = 0
    failed: int = 0
    republished: int = 0
    closed: int = 0
    #: claim time: rows whose session has not reached the SLA yet (claim_due's ``deferred``).
    deferred_by_sla: int = 0
    quarantined: int = 0
    backoff: int = 0
    stale: int = 0
    terminal: int = 0
    #: rows a configuration failure gave their attempt back (apply_outcome's ``released``).
    config_error_released: int = 0
    #: finalize rows opened by this cycle's discovery of stuck recordings that had none.
    discovered: int = 0
    #: rows a service transaction held (claim or apply): attempt given back, tried again later.
    busy: int = 0
    #: transient verdicts whose attempt was given back: the worker's own incident is open.
    held_by_incident: int = 0
    #: claimed rows a stop (SIGTERM) left unchecked: their attempt given back.
    released_on_stop: int = 0
    config_error: bool = False
    #: Set once the storage showed this cycle that it holds what it should (a binary found, or
    #: the newest uploaded ones): its 404s may be applied (``_look_before_failing``).
    storage_layout_confirmed: bool = False
    #: Set when the cycle stopped on a fault every row met (``ServiceFault``).
    service_fault: str | None = None
    published: int = 0
    duration_ms: int = 0
    skipped: bool = False
    disabled: bool = False
    error: str | None = None
    #: Parts skipped by the pause switch (``recording-finalize pause``): reconcile, relay.
    paused: tuple[str, ...] = ()
    #: S3 checks made, and how many of them came back transient.
    checked: int = 0
    transient: int = 0
    #: apply time: missing verdicts a storage incident held back (apply_outcome's ``deferred``,
    #: recording_finalize_internal.outcome_decision).
    deferred_by_incident: int = 0
    storage_unreachable: bool = False
    publish_failed: int = 0
    #: Why the cycle is ``degraded`` (it ran, but did not do its job): empty when it is not.
    degraded: list[str] = field(default_factory=list)
    #: How pacing went (``Pacer.summary()``: mode, limited, reason, rowsPerSecond, slowdowns,
    #: heldMs); None when nothing was claimed.
    pacing: dict[str, Any] | None = None

    @property
    def result(self) -> str:
        """The ``result`` label of ``…_cycles_total``."""
        if self.disabled:
            return "disabled"
        if self.skipped:
            return "skipped"
        if self.error is not None or self.service_fault is not None:
            return "error"
        if self.config_error:
            return "config_error"
        if self.degraded:
            return "degraded"
        return "ok"

    @property
    def ok(self) -> bool:
        """False when the cycle failed (an error, a configuration failure) or was degraded
        (storage unreachable, deliveries failed)."""
        return self.result in ("ok", "skipped", "disabled")

    def counts(self) -> dict[str, Any]:
        """The counts under the names of the run-once JSON and the log (a contract)."""
        return {
            "claimed": self.claimed,
            "reconciled": self.reconciled,
            "failed": self.failed,
            "republished": self.republished,
            "closed": self.closed,
            "deferred": self.deferred_by_sla,
            "quarantined": self.quarantined,
            "backoff": self.backoff,
            "stale": self.stale,
            "terminal": self.terminal,
            "released": self.config_error_released,
            "discovered": self.discovered,
            "busy": self.busy,
            "heldByIncident": self.held_by_incident,
            "releasedOnStop": self.released_on_stop,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "jobRunId": self.job_run_id,
            "asOf": self.as_of.isoformat().replace("+00:00", "Z"),
            **self.counts(),
            "configError": self.config_error,
            **({"serviceFault": self.service_fault} if self.service_fault else {}),
            "published": self.published,
            "durationMs": self.duration_ms,
            "skipped": self.skipped,
            "disabled": self.disabled,
            "error": self.error,
            "paused": list(self.paused),
            "result": self.result,
            "checked": self.checked,
            "transient": self.transient,
            "deferredByIncident": self.deferred_by_incident,
            "storageUnreachable": self.storage_unreachable,
            "publishFailed": self.publish_failed,
            "degraded": self.degraded,
            "pacing": self.pacing,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))


@dataclass(frozen=True)
class _Checked:
    """One S3 check's result; no verdict when the check was not made."""

    verdict: Verdict | None
    seconds: float = 0.0
    past_deadline: bool = False


class _Deadline(Exception):
    """The cycle reached the lock TTL; it stops writing."""


def run_cycle(ctx: Context, stop: threading.Event) -> CycleSummary:
    """Runs one cycle and returns its summary; never raises for a failed cycle (the summary's
    ``error`` says what failed, the metrics and the log count it)."""
    started = time.monotonic()
    summary = CycleSummary(job_run_id=str(uuid4()), as_of=datetime.now(UTC))
    if ctx.maintenance is None:
        ctx.maintenance = Maintenance(ctx.settings, ctx.pool, ctx.metrics)
    maintenance = ctx.maintenance
    if not ctx.settings.recordings_enabled:
        summary.disabled = True
        log("cycle idle", jobRunId=summary.job_run_id,
            message="recordings are disabled (RECORDINGS_ENABLED=false): the worker idles")
    else:
        try:
            with RunnerLock(ctx.settings) as lock:
                if not lock.acquired:
                    summary.skipped = True
                    log("cycle skipped", jobRunId=summary.job_run_id,
                        reason="another runner holds the lock")
                else:
                    with tracing.cycle_span(summary.job_run_id):
                        _locked_cycle(ctx, maintenance, stop, summary, started)
        except _Deadline:
            summary.error = "LockTtlExceeded"
            log("cycle aborted", level="error", jobRunId=summary.job_run_id,
                message="the cycle ran into the lock TTL and stopped writing",
                lockTtlSeconds=ctx.settings.lock_ttl)
        except Exception as err:  # noqa: BLE001 - the cycle boundary: log, count, retry next tick
            summary.error = describe(err)
            fields: dict[str, Any] = {"error": describe(err), "detail": str(err)}
            log("cycle failed", level="error", jobRunId=summary.job_run_id,
                **fields, **summary.counts())
    if summary.disabled or summary.skipped:
        maintenance.refresh_gauges()  # no cycle ran here: /metrics stays as fresh as status
    elapsed = time.monotonic() - started
    summary.duration_ms = round(elapsed * 1000)
    ctx.metrics.observe_cycle(summary.result, elapsed)
    if not (summary.skipped or summary.disabled or summary.error):
        log("cycle completed", level="warning" if summary.degraded else "info",
            jobRunId=summary.job_run_id, result=summary.result,
            **summary.counts(), published=summary.published, durationMs=summary.duration_ms,
            transient=summary.transient, deferredByIncident=summary.deferred_by_incident,
            **({"degraded": summary.degraded} if summary.degraded else {}),
            **({"pacing": summary.pacing} if summary.pacing else {}))
    return summary


def run_loop(
    ctx: Context, stop: threading.Event, on_tick: Callable[[], None] | None = None,
    on_done: Callable[[], None] | None = None,
) -> None:
    """``run``: a cycle every polling interval until stopped. Cycles never overlap: the next
    one starts an interval after the previous one started, or at once if it overran.
    ``on_tick`` is told when each cycle starts and ``on_done`` when it ended (the liveness
    probe and its watchdog)."""
    while not stop.is_set():
        tick = time.monotonic()
        if on_tick is not None:
            on_tick()
        try:
            run_cycle(ctx, stop)
        finally:
            if on_done is not None:
                on_done()
        stop.wait(max(0.0, tick + ctx.settings.polling_interval - time.monotonic()))


def _locked_cycle(
    ctx: Context, maintenance: CycleMaintenance, stop: threading.Event, summary: CycleSummary,
    started: float,
) -> None:
    """The cycle under the lock: pause switch → reconcile → relay → gauges."""
    lock_deadline = started + ctx.settings.lock_ttl - LOCK_MARGIN_S
    log("cycle started", jobRunId=summary.job_run_id, asOf=summary.as_of)
    # The pause switch, read once per cycle by every runner (logged and exposed when set).
    summary.paused = tuple(sorted(maintenance.read_pauses(summary.job_run_id)))
    if ctx.watch is None:
        ctx.watch = StorageWatch(ctx.metrics, log)
    _reconcile(ctx, ctx.watch, stop, summary, started, lock_deadline)
    if ctx.relay is not None and "relay" not in summary.paused:
        # The relay may wait its whole delivery timeout (30 s with Kafka away): the gauges say
        # what the reconcile phase left meanwhile (they showed a publish backlog of 0 while 300
        # events waited).
        _refresh_gauges(ctx)
        _relay(ctx.relay, stop, summary, lock_deadline)
    _refresh_gauges(ctx)


def _refresh_gauges(ctx: Context) -> None:
    with ctx.pool.connection() as conn:
        ctx.metrics.update_from_stats(queries.stats(conn, ctx.settings.topic))
        ctx.metrics.storage_incidents_open.set(
            sum(1 for i in queries.storage_incident_list(conn) if i.is_open))


def _reconcile(
    ctx: Context, watch: StorageWatch, stop: threading.Event, summary: CycleSummary,
    started: float, lock_deadline: float,
) -> None:
    """HeadBucket, the claim loop, then the cycle's HEAD verdicts for the worker's storage
    incident; nothing while reconcile is paused."""
    try:
        bucket_confirmed = False if "reconcile" in summary.paused else ctx.storage.check_bucket()
    except StorageConfigError as err:
        _config_error(ctx, summary, err.code)
        return
    if "reconcile" in summary.paused:
        return
    with ctx.pool.connection() as conn:
        _record_bucket_answer(ctx, conn, summary, bucket_confirmed)
        _discover(ctx, conn, summary)
        _claim_loop(ctx, conn, stop, summary, started, lock_deadline, bucket_confirmed)
        if not summary.storage_unreachable and not summary.config_error:
            watch.head_verdicts_counted(conn, summary.job_run_id, summary.transient,
                                        summary.checked)


#: How many recordings known to be uploaded a cycle HEADs before it trusts a 404.
KNOWN_UPLOADS = 3


def _look_before_failing(
    ctx: Context, conn: queries.Connection, batch: list[tuple[ClaimedRow, Verdict, float]],
    summary: CycleSummary,
) -> tuple[list[tuple[ClaimedRow, Verdict, float]], Verdict | None]:
    """A bucket that exists is not yet the recorders' bucket. Before the cycle applies its first
    404, the storage must have shown that it holds what it should: a HEAD of this cycle found a
    binary, or the binaries of the newest Available recordings are there (``known_uploads``).
    When it answers 404 for each of those, the bucket, prefix or key template is wrong: the 404
    verdicts are held back and returned as a configuration error (their rows get their attempt
    back), never applied as Failed. With fewer than two to look at (a new system), the HeadBucket
    alone stands, as before."""
    if summary.storage_layout_confirmed:
        return batch, None
    if any(verdict.outcome == FOUND for _, verdict, _ in batch):
        summary.storage_layout_confirmed = True
        return batch, None
    if not any(verdict.outcome == MISSING for _, verdict, _ in batch):
        return batch, None
    known = queries.known_uploads(conn, KNOWN_UPLOADS)
    if ctx.storage.holds_known_uploads(known) is not False:
        summary.storage_layout_confirmed = True
        return batch, None
    sample = ctx.storage.key_for(known[0])
    code = (f"KeyLayoutUnconfirmed: bucket {ctx.storage.bucket!r} holds none of the "
            f"{len(known)} newest uploaded recordings (e.g. key {sample!r}); check "
            "RFR_S3_BUCKET and RFR_S3_KEY_TEMPLATE")
    kept = [entry for entry in batch if entry[1].outcome != MISSING]
    return kept, Verdict(CONFIG_ERROR, error=code)


def _discover(ctx: Context, conn: queries.Connection, summary: CycleSummary) -> None:
    """Opens finalize rows for recordings stuck past the SLA without one (the service opened
    none): the claim that follows takes them. Bounded per cycle; the rest is the next cycle's."""
    summary.discovered = queries.discover_stuck(conn, DISCOVER_LIMIT)
    # The republish phase for a service that never opens a row: Available, no event anywhere.
    summary.discovered += queries.discover_unpublished(conn, ctx.settings, DISCOVER_LIMIT)
    if summary.discovered:
        ctx.metrics.discovered_total.inc(summary.discovered)
        log("recordings discovered", jobRunId=summary.job_run_id, rows=summary.discovered,
            message="stuck past the SLA without a finalize row: rows opened, due now")


def _relay(
    relay: RelayLike, stop: threading.Event, summary: CycleSummary, lock_deadline: float
) -> None:
    _check_deadline(lock_deadline)
    if stop.is_set():
        # Stopping: what this cycle enqueued is published now, for a few seconds at most, rather
        # than at the next start (a stop that was not asked for cannot end this drain early).
        relayed = relay.drain(min(lock_deadline, time.monotonic() + STOP_DRAIN_S),
                              threading.Event(), bounded=True)
    else:
        relayed = relay.drain(lock_deadline, stop)
    summary.published = relayed.published
    summary.publish_failed = relayed.failed
    if relayed.failed or relayed.reason in ("delivery_failed", "fatal"):
        summary.degraded.append(
            f"relay: {relayed.failed} deliveries failed ({relayed.reason}); the events stay "
            "unpublished and are retried next cycle")


def _record_bucket_answer(
    ctx: Context, conn: queries.Connection, summary: CycleSummary, bucket_confirmed: bool
) -> None:
    """HeadBucket's answer: the summary notes an unreachable storage, and the worker's storage
    incident opens or closes on it."""
    assert ctx.watch is not None
    if bucket_confirmed:
        ctx.watch.bucket_confirmed(conn, summary.job_run_id)
        return
    if not summary.storage_unreachable:
        summary.storage_unreachable = True
        summary.degraded.append("storage: HeadBucket could not be answered (unreachable); "
                                "claimed rows back off, none fails")
        log("storage unreachable", level="warning", jobRunId=summary.job_run_id,
            message="the bucket could not be confirmed: no row fails, rows back off")
    ctx.watch.unreachable(conn, summary.job_run_id, "HeadBucket unanswered")


def _claim_loop(
    ctx: Context,
    conn: queries.Connection,
    stop: threading.Event,
    summary: CycleSummary,
    started: float,
    lock_deadline: float,
    bucket_confirmed: bool,
) -> None:
    settings = ctx.settings
    claim_until = started + settings.max_run_duration
    pacer: Pacer | None = None
    try:
        while not stop.is_set():
            if time.monotonic() >= claim_until:
                log("max run duration reached", jobRunId=summary.job_run_id,
                    message="claiming stops; the rest waits for the next cycle")
                return
            # A slow pace claims less at a time: no claim outlives the pace by much.
            limit = pacer.claim_size(settings.batch_size) if pacer else settings.batch_size
            rows = queries.claim_due(conn, replace(settings, batch_size=limit))
            if not rows:
                return
            pacer = pacer or Pacer.for_drain(settings, ctx.pool, ctx.metrics, stop,
                                             summary.job_run_id)
            pacer.claimed(len(rows), limit)
            summary.claimed += len(rows)
            log("batch claimed", jobRunId=summary.job_run_id, rows=len(rows),
                actions=dict(Counter(row.action for row in rows)))
            _settled_at_claim(ctx, rows, summary)

            reconcile = [row for row in rows if row.action == "reconcile"]
            if reconcile:
                if not bucket_confirmed:
                    try:
                        bucket_confirmed = ctx.storage.check_bucket()
                    except StorageConfigError as err:
                        _config_error_release(ctx, conn, reconcile, err.code, summary,
                                              lock_deadline)
                        return
                    if bucket_confirmed:
                        _record_bucket_answer(ctx, conn, summary, True)
                if not _check_and_apply(
                    ctx, conn, reconcile, bucket_confirmed, stop, summary, lock_deadline, pacer
                ):
                    return
            # A short batch means nothing else was due when it was claimed: done for this cycle
            # (rows that fall due meanwhile, e.g. with a tiny backoff, wait for the next one).
            if len(rows) < limit:
                return
    finally:
        if pacer is not None:
            pacer.close()
            summary.pacing = pacer.summary()


def _settled_at_claim(ctx: Context, rows: list[ClaimedRow], summary: CycleSummary) -> None:
    """Counts and logs the rows claim_due settled itself (no S3 check needed)."""
    for row in rows:
        rid = row.recording_id
        if row.action == "republished":
            summary.republished += 1
            ctx.metrics.republished_total.inc()
            log("recording republished", jobRunId=summary.job_run_id, recordingId=rid)
        elif row.action == "quarantined":
            summary.quarantined += 1
            ctx.metrics.quarantined_total.inc()
            log("recording quarantined", level="warning", jobRunId=summary.job_run_id,
                recordingId=rid, attempts=row.attempts, reason=row.detail)
        elif row.action == "closed":
            summary.closed += 1
        elif row.action == DEFERRED_BY_SLA:
            summary.deferred_by_sla += 1
        elif row.action == BUSY:
            summary.busy += 1
            ctx.metrics.busy_total.inc()
            log("recording busy", jobRunId=summary.job_run_id, recordingId=rid,
                message="a service transaction is writing its event: the claim let it go first")
        else:
            continue
        if row.action in SETTLED_AT_CLAIM:
            ctx.metrics.mark_progress()
        with tracing.attempt_span(str(rid), row.action, row.attempts):
            pass  # settled inside claim_due: the span marks the attempt, it has no work of its own


# ------------------------------------------------------------------------------------------
# check, pace, apply: the reconcile rows of one claimed batch


def _check_and_apply(
    ctx: Context,
    conn: queries.Connection,
    rows: list[ClaimedRow],
    bucket_confirmed: bool,
    stop: threading.Event,
    summary: CycleSummary,
    lock_deadline: float,
    pacer: Pacer | None = None,
) -> bool:
    """HEADs ``rows`` with bounded concurrency (``_Checks``) and applies the verdicts as they
    arrive: every time this thread comes to apply, it takes all the verdicts that are in (in
    arrival order, at most a pacer's burst) and applies them in one pipelined round trip
    (``_apply_many``), then waits as the pacer says (``pacing.Pacer``).

    Returns False when the cycle must stop (stop requested, configuration failure).
    """
    checks = _Checks(ctx, rows, bucket_confirmed, stop, lock_deadline)
    unapplied = dict.fromkeys(rows, True)
    try:
        while checks.waiting:
            ready = checks.arrived(pacer.burst(PIPELINE_MAX) if pacer else PIPELINE_MAX)
            if stop.is_set():
                _release_on_stop(ctx, conn, [r for r in rows if unapplied.get(r)], summary)
                return False
            if ready is None:
                continue
            batch, config_error = _verdicts(ready)
            if config_error is None:
                batch, config_error = _look_before_failing(ctx, conn, batch, summary)
            if config_error is not None:
                checks.config_failed.set()  # the checks not yet begun make no storage call
            # The verdicts that came in before a configuration error are recorded.
            try:
                _apply_many(ctx, conn, batch, summary, lock_deadline)
            except ServiceFault as fault:
                checks.config_failed.set()  # stop the checks: nothing can be applied
                _service_fault(ctx, conn, fault, [r for r in rows if unapplied.get(r)], summary)
                return False
            for row, _, _ in batch:
                unapplied.pop(row, None)
            if config_error is not None:
                left = [r for r in rows if unapplied.get(r)]
                _config_error_release(ctx, conn, left, config_error.error or "ConfigError",
                                      summary, lock_deadline)
                return False
            if pacer:
                pacer.applied(len(batch), lock_deadline)
            if stop.is_set():
                _release_on_stop(ctx, conn, [r for r in rows if unapplied.get(r)], summary)
                return False
        return not stop.is_set()
    finally:
        checks.close()


def _service_fault(ctx: Context, conn: queries.Connection, fault: ServiceFault,
                   rows: list[ClaimedRow], summary: CycleSummary) -> None:
    """Every row of a batch failed for one reason of the service's schema: each claimed row not
    applied keeps the reason as its last_error and gets its attempt back; the cycle stops."""
    given_back = queries.record_apply_failure(conn, rows, fault.text, give_back=True)
    summary.service_fault = summary.error = fault.text
    ctx.metrics.service_fault.set(1)
    log("cycle stopped by a service fault", level="error", jobRunId=summary.job_run_id,
        error=fault.text, rows=len(rows), givenBack=given_back,
        message="applying fails for every row for one reason the database gives: no row is "
                "quarantined for it; fix it (the error names the object) and the next cycle "
                "goes on")


def _release_on_stop(ctx: Context, conn: queries.Connection, rows: list[ClaimedRow],
                     summary: CycleSummary) -> None:
    """A stop (SIGTERM) between claim and apply: the rows not applied get their attempt back
    and are due at once, for the next runner (their checks in flight are dropped)."""
    if not rows:
        return
    summary.released_on_stop += queries.release_claims(conn, rows)
    log("claims released on stop", jobRunId=summary.job_run_id, rows=len(rows),
        released=summary.released_on_stop,
        message="stopping: the claimed rows not checked yet got their attempt back")


class _Checks:
    """The S3 checks of one batch in a bounded thread pool; their results arrive, in the order
    they come in, in a queue that the applying thread reads (``arrived``)."""

    def __init__(self, ctx: Context, rows: list[ClaimedRow], bucket_confirmed: bool,
                 stop: threading.Event, lock_deadline: float) -> None:
        self._ctx = ctx
        self._bucket_confirmed = bucket_confirmed
        self._stop = stop
        self._lock_deadline = lock_deadline
        #: Set on a configuration failure: the checks not yet begun make no storage call.
        self.config_failed = threading.Event()
        self._arrived: queue.SimpleQueue[tuple[ClaimedRow, _Checked | BaseException]] = (
            queue.SimpleQueue())
        self._todo: queue.SimpleQueue[ClaimedRow] = queue.SimpleQueue()
        for row in rows:
            self._todo.put(row)
        self._closed = False
        threads = min(ctx.settings.s3_concurrency, len(rows))
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="s3-check")
        # One task per thread, each taking the next row itself: a task per row would cost the
        # applying thread a future and a thread hand-off for every row.
        for _ in range(threads):
            self._executor.submit(self._take_rows)
        #: Results not yet taken by ``arrived``.
        self.waiting = len(rows)

    def _take_rows(self) -> None:
        while not self._closed:
            try:
                row = self._todo.get_nowait()
            except queue.Empty:
                return
            self._run(row)

    def _run(self, row: ClaimedRow) -> None:
        try:
            self._arrived.put((row, self._check(row)))
        except BaseException as err:  # noqa: BLE001 - handed to the applying thread to raise
            self._arrived.put((row, err))

    def _check(self, row: ClaimedRow) -> _Checked:
        # Checked before every storage call: a stop, a configuration failure of another row,
        # or a check that could not finish before the lock TTL means no call at all.
        if self._stop.is_set() or self.config_failed.is_set():
            return _Checked(None)
        if time.monotonic() + self._ctx.settings.s3_timeout > self._lock_deadline:
            return _Checked(None, past_deadline=True)
        t0 = time.monotonic()
        verdict = self._ctx.storage.check(row, self._bucket_confirmed)
        return _Checked(verdict, time.monotonic() - t0)

    def arrived(self, most: int) -> list[tuple[ClaimedRow, _Checked | BaseException]] | None:
        """Waits up to ``POLL_S`` for a result, then takes those already in, ``most`` at most;
        None when none came in (the caller looks at the stop event and asks again)."""
        try:
            first = self._arrived.get(timeout=POLL_S)
        except queue.Empty:
            return None
        ready = [first]
        while len(ready) < most:
            try:
                ready.append(self._arrived.get_nowait())
            except queue.Empty:
                break
        self.waiting -= len(ready)
        return ready

    def close(self) -> None:
        # Checks still in flight end on their own (bounded by the S3 timeouts); their
        # verdicts are dropped, and the rows keep the backoff set at claim. No thread takes
        # another row.
        self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)


def _verdicts(
    ready: list[tuple[ClaimedRow, _Checked | BaseException]],
) -> tuple[list[tuple[ClaimedRow, Verdict, float]], Verdict | None]:
    """The verdicts to apply, in arrival order, up to a ``config_error`` one (returned apart:
    it stops the cycle). A check that raised is raised here, one that could not be made before
    the lock TTL raises ``_Deadline``."""
    batch: list[tuple[ClaimedRow, Verdict, float]] = []
    for row, checked in ready:
        if isinstance(checked, BaseException):
            raise checked
        if checked.past_deadline:
            raise _Deadline
        verdict = checked.verdict
        if verdict is None:
            continue  # not checked (stop, config failure): the claim's backoff stands
        if verdict.outcome == CONFIG_ERROR:
            return batch, verdict
        batch.append((row, verdict, checked.seconds))
    return batch, None


def _check_deadline(lock_deadline: float) -> None:
    if time.monotonic() >= lock_deadline:
        raise _Deadline


def _apply_many(
    ctx: Context,
    conn: queries.Connection,
    batch: list[tuple[ClaimedRow, Verdict, float]],
    summary: CycleSummary,
    lock_deadline: float,
) -> None:
    """Applies several verdicts in one pipelined round trip, then counts and logs each.

    Every row is its own transaction: an error of one row leaves the others applied, and is
    raised once every other row is recorded. Metadata the database refuses is not an error:
    ``apply_outcome`` returns it quarantined (``invalid_metadata``), decided in one place, the
    SQL's ``metadata_problem``.
    """
    if not batch:
        return
    _check_deadline(lock_deadline)
    answers = pipeline.apply_outcomes(
        conn, [(row, verdict) for row, verdict, _ in batch],
        timeout_s=max(0.0, lock_deadline - time.monotonic()),
    )
    failures: list[tuple[ClaimedRow, psycopg.Error]] = []
    for (row, verdict, check_s), answer in zip(batch, answers, strict=True):
        if isinstance(answer, psycopg.Error):
            failures.append((row, answer))
            continue
        with tracing.attempt_span(str(row.recording_id), "reconcile", row.attempts) as span:
            span.set_attribute("outcome", verdict.outcome)
            span.set_attribute("result", answer.result)
            span.set_attribute("check_ms", round(check_s * 1000))
            span.set_attribute("pipelined", len(batch))
        _record(ctx, row, verdict, answer, summary)
    if not failures:
        ctx.metrics.service_fault.set(0)
        return
    if failures:
        fault = ServiceFault.of(failures, len(batch))
        if fault is not None:
            raise fault
        # One row's own failure: its attempt stands, its error is kept for the quarantine.
        first = failures[0][1]
        queries.record_apply_failure(conn, [row for row, _ in failures], describe(first),
                                     give_back=False)
        raise first


#: SQLSTATE classes of a fault that is the service schema's, not a row's: a privilege (42), a
#: constraint (23), a value's type or form (22).
FAULT_CLASSES = ("42", "23", "22")


class ServiceFault(Exception):
    """apply_outcome failed for every row of a batch for one reason the service's schema gives
    (SPEC section 9): not poison. The cycle stops and the attempts are given back."""

    def __init__(self, text: str, rows: list[ClaimedRow]) -> None:
        super().__init__(text)
        self.text = text
        self.rows = rows

    @classmethod
    def of(cls, failures: list[tuple[ClaimedRow, psycopg.Error]], batch_size: int
           ) -> ServiceFault | None:
        states = {err.sqlstate for _, err in failures}
        state = next(iter(states)) if len(states) == 1 else None
        if state is None or state[:2] not in FAULT_CLASSES:
            return None
        # A privilege is never one row's; a constraint or a value is the schema's when it
        # refuses every row of a batch of more than one.
        if state[:2] != "42" and not (len(failures) == batch_size and batch_size > 1):
            return None
        diag = failures[0][1].diag
        where = ", ".join(f"{k} {v}" for k, v in (
            ("table", diag.table_name), ("column", diag.column_name),
            ("constraint", diag.constraint_name)) if v)
        return cls(f"ServiceFault: {state} {diag.message_primary or ''}"
                   + (f" ({where})" if where else ""), [row for row, _ in failures])


def _apply(
    ctx: Context,
    conn: queries.Connection,
    row: ClaimedRow,
    verdict: Verdict,
    summary: CycleSummary,
    lock_deadline: float,
    check_s: float = 0.0,
) -> AppliedResult:
    """Applies one verdict in one statement (a configuration failure's release)."""
    _check_deadline(lock_deadline)
    with tracing.attempt_span(str(row.recording_id), "reconcile", row.attempts) as span:
        result = queries.apply_outcome(conn, row, verdict)
        span.set_attribute("outcome", verdict.outcome)
        span.set_attribute("result", result.result)
        span.set_attribute("check_ms", round(check_s * 1000))
    _record(ctx, row, verdict, result, summary)
    return result


def _record(
    ctx: Context, row: ClaimedRow, verdict: Verdict, result: AppliedResult, summary: CycleSummary
) -> None:
    """Counts and logs one applied verdict by the database's answer (not by our guess)."""
    if result.result in SETTLED_BY_APPLY:
        ctx.metrics.mark_progress()
    job, rid = summary.job_run_id, row.recording_id
    attempts = result.attempts if result.attempts is not None else row.attempts
    if verdict.outcome != CONFIG_ERROR:
        summary.checked += 1
    if verdict.outcome == TRANSIENT:
        summary.transient += 1
        ctx.metrics.transient_total.inc()
    if result.result == DEFERRED_BY_INCIDENT:
        summary.deferred_by_incident += 1
        ctx.metrics.missing_deferred_total.inc()
        log("recording deferred by storage incident", jobRunId=job, recordingId=rid,
            attempts=attempts, message="404 not trusted: a storage incident overlapped its "
            "upload window; the attempt is given back")
    elif result.result == "reconciled":
        summary.reconciled += 1
        ctx.metrics.reconciled_total.inc()
        log("recording reconciled", jobRunId=job, recordingId=rid, sessionId=row.session_id,
            fileId=verdict.file_id, attempts=attempts)
    elif result.result == "failed":
        summary.failed += 1
        ctx.metrics.failed_total.inc()
        log("recording failed", level="warning", jobRunId=job, recordingId=rid,
            sessionId=row.session_id, failureReason="Timeout", attempts=attempts)
    elif result.result == "backoff":
        summary.backoff += 1
        log("recording backoff", jobRunId=job, recordingId=rid, attempts=attempts,
            error=verdict.error)
    elif result.result == "quarantined":
        summary.quarantined += 1
        ctx.metrics.quarantined_total.inc()
        log("recording quarantined", level="warning", jobRunId=job, recordingId=rid,
            attempts=attempts, reason=result.detail)
    elif result.result == HELD_BY_INCIDENT:
        summary.held_by_incident += 1
        ctx.metrics.attempts_held_total.inc()
        log("recording held by storage incident", jobRunId=job, recordingId=rid,
            attempts=attempts, message="transient answer while the worker's storage incident "
            "is open: the attempt is given back")
    elif result.result == BUSY:
        summary.busy += 1
        ctx.metrics.busy_total.inc()
        log("recording busy", jobRunId=job, recordingId=rid, attempts=attempts,
            message="a service transaction held the recording: the attempt is given back and "
            "the row tried again after the backoff base")
    elif result.result == CONFIG_ERROR_RELEASED:
        summary.config_error_released += 1
    elif result.result == "terminal":
        summary.terminal += 1
        log("recording already terminal", jobRunId=job, recordingId=rid,
            message="the status guard left it alone")
    elif result.result == "stale":
        summary.stale += 1
        log("stale claim", jobRunId=job, recordingId=rid,
            message="another runner re-claimed or settled the row")


def _config_error_release(
    ctx: Context,
    conn: queries.Connection,
    rows: list[ClaimedRow],
    code: str,
    summary: CycleSummary,
    lock_deadline: float,
) -> None:
    """A configuration failure (the storage refused the bucket or an object): ``rows`` get
    ``config_error`` applied — their attempt back, due again — and the cycle counts one
    configuration error and stops."""
    verdict = Verdict(CONFIG_ERROR, error=code)
    for row in rows:
        _apply(ctx, conn, row, verdict, summary, lock_deadline)
    _config_error(ctx, summary, code)


def _config_error(ctx: Context, summary: CycleSummary, code: str) -> None:
    summary.config_error = True
    ctx.metrics.config_errors_total.inc()
    log("config error", level="error", jobRunId=summary.job_run_id,
        message="the file storage is not as configured: cycle stopped, no attempt counted",
        bucket=ctx.settings.s3_bucket, error=code)
