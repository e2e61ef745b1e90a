"""One cycle of the safety net: lock → claim → check → apply (until done) → relay → gauges.

No transaction and no row lock is open while S3 is asked: ``claim_due`` commits on its own, the
HEADs run in a bounded thread pool, and the verdicts that are in go out pipelined, each its own
transaction (``pipeline``), with what the cycle saw of the storage as a whole: the database
judges a 404 by it (``queries.StorageFacts``).

A cycle stops early on the stop event (SIGTERM/SIGINT: the rows claimed but not applied get
their attempt back), at ``RFR_MAX_RUN_DURATION`` (claiming ends) and at the lock TTL: past it
another runner may own the rows, so nothing more is written (a stale verdict would be a no-op
anyway, thanks to the claim token).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import uuid4

import psycopg
from psycopg_pool import ConnectionPool

from . import model, pipeline, queries, tracing
from .config import Settings
from .db import RunnerLock
from .errors import describe
from .incidents import HeadWindow
from .logs import log
from .metrics import Metrics
from .pacing import Pacer
from .storage import KnownAnswers, Storage, StorageConfigError

if TYPE_CHECKING:
    # Only its type: the relay (and Kafka's client) is the worker's to build.
    from .relay import Relay

# Stop writing this long before the lock TTL runs out: the server's clock and ours differ a bit.
LOCK_MARGIN_S = 1.0
# How often the apply loop wakes up to look at the stop event while HEADs are in flight.
POLL_S = 0.2
PIPELINE_MAX = 100  # verdicts in one pipelined round trip
DISCOVER_LIMIT = 1000  # finalize rows one cycle's discovery opens
# On a stop, the relay drains what is enqueued for at most this long before the worker exits.
STOP_DRAIN_S = 3.0
# The counts of a settled row (progress, the "no run" alert's heartbeat). A backoff, a busy row
# or a deferred 404 settles nothing: an outage of S3 must not look like work being done.
SETTLED = frozenset({"reconciled", "failed", "quarantined", "terminal", "republished", "closed"})
#: The counts of one cycle under their names in the run-once JSON and the log (a contract), in
#: the JSON's order, each with what it counts.
COUNTS = {
    "claimed": "rows claim_due returned, whatever their action",
    "reconciled": "apply time: the object was found, the recording made Available",
    "failed": "apply time: the recording made Failed (failureReason Timeout)",
    "republished": "claim time: Available without its event: the event enqueued again",
    "closed": "claim time: Failed, or Available with its event: the row is Done",
    "deferred": "claim time: rows whose session is not past the SLA yet (deferred_by_sla)",
    "quarantined": "claim or apply time: rows set aside for an operator",
    "backoff": "apply time: verdicts that leave the row due again after its backoff",
    "stale": "apply time: no-op, another runner re-claimed or settled the row",
    "terminal": "apply time: no-op, the status guard left a terminal recording alone",
    "released": "rows a configuration failure gave their attempt back (config_error_released)",
    "discovered": "finalize rows this cycle's discovery opened for stuck recordings",
    "busy": "rows a service transaction held (claim or apply): attempt given back, retried",
    "heldByIncident": "transient verdicts given their attempt back: the worker's incident is open",
    "releasedOnStop": "claimed rows a stop (SIGTERM) left unchecked: their attempt given back",
    "releasedAfterOutage": "claimed rows the database's outage left unapplied in the last cycle: "
    "their attempt given back",
}


@dataclass
class Context:
    """What a cycle works with; built once by ``worker.py`` and shared by every cycle."""

    settings: Settings
    pool: ConnectionPool[psycopg.Connection[Any]]
    storage: Storage
    metrics: Metrics
    relay: Relay | None = None
    #: Rows a cycle claimed and could not apply because the database went away: the attempt
    #: the claim counted is theirs to get back, at the next cycle (the process's memory only).
    lost_claims: list[model.ClaimedRow] = field(init=False, default_factory=list)
    #: Whether republish discovery was held after the last cycle (its end is logged once);
    #: None until the process's first cycle reads it from the database (a run-once too).
    republish_held: bool | None = field(init=False, default=None)
    #: The S3 checks' threads, kept for the process: a pool started for every claimed batch
    #: cost the worker about 0.1 ms of CPU per row (docs/benchmarks.md). Threads start on
    #: first use; idle ones wait for the next batch.
    check_threads: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.check_threads = ThreadPoolExecutor(
            max_workers=self.settings.s3_concurrency, thread_name_prefix="s3-check")


@dataclass
class CycleSummary:
    """What one cycle did; ``to_dict()`` is what ``run-once`` prints."""

    job_run_id: str
    as_of: datetime
    #: By their JSON names: ``COUNTS``, and after them ``published``, ``publishFailed``,
    #: ``checked`` (S3 checks made), ``transient`` (checks the database read as transient) and
    #: ``deferredByIncident`` (apply time: 404s a storage incident held back).
    counts: Counter[str] = field(default_factory=Counter)
    config_error: bool = False
    #: Set when the cycle stopped on a fault every row met (``ServiceFault``: the database's
    #: word, ``record_apply_failure``).
    service_fault: str | None = None
    duration_ms: int = 0
    skipped: bool = False
    disabled: bool = False
    error: str | None = None
    #: Parts skipped by the pause switch (``recording-finalize pause``): reconcile, relay.
    paused: list[str] = field(default_factory=list)
    storage_unreachable: bool = False
    #: Why the cycle is ``degraded`` (it ran, but did not do its job): empty when it is not.
    degraded: list[str] = field(default_factory=list)
    #: How pacing went (``Pacer.summary()``); None when nothing was claimed.
    pacing: dict[str, Any] | None = None

    @property
    def result(self) -> str:
        """The ``result`` label of ``…_cycles_total``."""
        if self.disabled:
            return "disabled"
        if self.skipped:
            return "skipped"
        if self.error is not None:  # a service fault's too
            return "error"
        if self.config_error:
            return "config_error"
        return "degraded" if self.degraded else "ok"

    @property
    def ok(self) -> bool:
        return self.result in ("ok", "skipped", "disabled")

    def table(self) -> dict[str, int]:
        return {name: self.counts[name] for name in COUNTS}

    def to_dict(self) -> dict[str, Any]:
        counts = self.counts
        return {
            "jobRunId": self.job_run_id,
            "asOf": self.as_of.isoformat().replace("+00:00", "Z"),
            **self.table(),
            "configError": self.config_error,
            **({"serviceFault": self.service_fault} if self.service_fault else {}),
            "published": counts["published"], "durationMs": self.duration_ms,
            "skipped": self.skipped, "disabled": self.disabled, "error": self.error,
            "paused": self.paused, "result": self.result, "checked": counts["checked"],
            "transient": counts["transient"], "deferredByIncident": counts["deferredByIncident"],
            "storageUnreachable": self.storage_unreachable,
            "publishFailed": counts["publishFailed"], "degraded": self.degraded,
            "pacing": self.pacing,
        }


#: One S3 check's verdict (None: not made) and its seconds, or what it raised.
_Checked = tuple[model.Verdict | None, float] | BaseException
#: Verdicts to apply, each with its row and its check's seconds.
_Batch = list[tuple[model.ClaimedRow, model.Verdict, float]]


class _Deadline(Exception):
    """The cycle reached the lock TTL; it stops writing."""


def run_cycle(ctx: Context, stop: threading.Event) -> CycleSummary:
    """Runs one cycle and returns its summary; never raises for a failed cycle (the summary's
    ``error`` says what failed, the metrics and the log count it)."""
    started = time.monotonic()
    summary = CycleSummary(job_run_id=str(uuid4()), as_of=datetime.now(UTC))
    job = summary.job_run_id
    if not ctx.settings.recordings_enabled:
        summary.disabled = True
        log("cycle idle", jobRunId=job,
            message="recordings are disabled (RECORDINGS_ENABLED=false): the worker idles")
    else:
        try:
            with RunnerLock(ctx.settings) as lock:
                if not lock.acquired:
                    summary.skipped = True
                    log("cycle skipped", jobRunId=job, reason="another runner holds the lock")
                else:
                    with tracing.cycle_span(job):
                        _locked_cycle(ctx, stop, summary, started)
        except _Deadline:
            summary.error = "LockTtlExceeded"
            log("cycle aborted", level="error", jobRunId=job,
                message="the cycle ran into the lock TTL and stopped writing",
                lockTtlSeconds=ctx.settings.lock_ttl)
        except Exception as err:  # noqa: BLE001 - the cycle boundary: log, count, retry next tick
            summary.error = describe(err)
            log("cycle failed", level="error", jobRunId=job, error=describe(err),
                detail=str(err), **summary.table())
    if summary.disabled or summary.skipped:
        try:  # no cycle ran here: /metrics stays as fresh as ``status``
            _refresh_gauges(ctx)
        except psycopg.Error as err:
            log("gauges not refreshed", level="warning", error=describe(err))
    elapsed = time.monotonic() - started
    summary.duration_ms = round(elapsed * 1000)
    ctx.metrics.observe_cycle(summary.result, elapsed)
    if not (summary.skipped or summary.disabled or summary.error):
        log("cycle completed", level="warning" if summary.degraded else "info",
            jobRunId=job, result=summary.result,
            **summary.table(), published=summary.counts["published"],
            durationMs=summary.duration_ms, transient=summary.counts["transient"],
            deferredByIncident=summary.counts["deferredByIncident"],
            **({"degraded": summary.degraded} if summary.degraded else {}),
            **({"pacing": summary.pacing} if summary.pacing else {}))
    return summary


def run_loop(ctx: Context, stop: threading.Event, on_tick: Callable[[], None],
             on_done: Callable[[], None]) -> None:
    """``run``: a cycle every polling interval until stopped, never overlapping (the next
    starts an interval after the previous one started, or at once if it overran); ``on_tick``
    and ``on_done`` tell the liveness probe and its watchdog."""
    while not stop.is_set():
        tick = time.monotonic()
        on_tick()
        try:
            run_cycle(ctx, stop)
        finally:
            on_done()
        stop.wait(max(0.0, tick + ctx.settings.polling_interval - time.monotonic()))


def _locked_cycle(
    ctx: Context, stop: threading.Event, summary: CycleSummary, started: float
) -> None:
    lock_deadline = started + ctx.settings.lock_ttl - LOCK_MARGIN_S
    log("cycle started", jobRunId=summary.job_run_id, asOf=summary.as_of)
    # The pause switch, read once per cycle by every runner (logged and exposed when set).
    with ctx.pool.connection() as conn:
        state = queries.operator_state(conn)
    ctx.metrics.update_operator_state(state)  # and the quarantined rows by reason
    summary.paused = state.paused_parts()
    if summary.paused:
        log("cycle paused", jobRunId=summary.job_run_id, paused=summary.paused,
            pauses=state.pauses,
            message="skipped by the pause switch: recording-finalize resume PART")
    if "reconcile" not in summary.paused:
        _reconcile(ctx, stop, summary, started + ctx.settings.max_run_duration, lock_deadline)
    # Before the relay, which may wait its whole delivery timeout (30 s with Kafka away): the
    # gauges say what the reconcile phase left meanwhile (they showed a publish backlog of 0
    # while 300 events waited). A reconcile moved the quarantined rows: their state is read again.
    _refresh_gauges(ctx, state if "reconcile" in summary.paused else None)
    if ctx.relay is not None and "relay" not in summary.paused:
        _relay(ctx.relay, stop, summary, lock_deadline)
        with ctx.pool.connection() as conn:  # the relay moves the outbox, nothing else
            ctx.metrics.update_from_stats(queries.stats(conn, ctx.settings.topic))


def _refresh_gauges(ctx: Context, state: queries.OperatorState | None = None) -> None:
    """The gauges of stats(), service_events_unpublished(), operator_state() (``state`` if just
    read) and open incidents."""
    with ctx.pool.connection() as conn:
        ctx.metrics.update_from_stats(queries.stats(conn, ctx.settings.topic))
        ctx.metrics.update_service_events(
            queries.service_events_unpublished(conn, ctx.settings.service_event_lag))
        ctx.metrics.update_operator_state(state or queries.operator_state(conn))
        ctx.metrics.storage_incidents_open.set(
            sum(1 for i in queries.storage_incident_list(conn) if i.is_open))


def _reconcile(
    ctx: Context, stop: threading.Event, summary: CycleSummary, claim_until: float,
    lock_deadline: float,
) -> None:
    try:
        bucket_confirmed = ctx.storage.check_bucket()
    except StorageConfigError as err:
        _config_error(ctx, summary, err.code)
        return
    with ctx.pool.connection() as conn:
        if ctx.lost_claims:
            # release_claims gives back only the rows still holding these claims' tokens.
            summary.counts["releasedAfterOutage"] = queries.call_value(
                conn, "release_claims", **queries.claims(ctx.lost_claims))
            log("claims released after an outage", jobRunId=summary.job_run_id,
                rows=len(ctx.lost_claims), released=summary.counts["releasedAfterOutage"],
                message="the database went away mid-cycle: the rows claimed and not applied "
                "got their attempt back")
            ctx.lost_claims.clear()
        run = _Reconcile(ctx, conn, stop, summary, lock_deadline)
        try:
            run.bucket_answered(bucket_confirmed)
            run.discover()
            run.claim_loop(claim_until)
        except psycopg.OperationalError:
            # The connection is gone (a restart, a failover): the rows claimed and not applied
            # keep the attempt their claim counted through no fault of theirs.
            ctx.lost_claims.extend(run.unapplied)
            raise


def _relay(
    relay: Relay, stop: threading.Event, summary: CycleSummary, lock_deadline: float
) -> None:
    if time.monotonic() >= lock_deadline:
        raise _Deadline
    if stop.is_set():
        # Stopping: what this cycle enqueued is published now, for a few seconds at most, rather
        # than at the next start (a stop that was not asked for cannot end this drain early).
        relayed = relay.drain(min(lock_deadline, time.monotonic() + STOP_DRAIN_S),
                              threading.Event(), bounded=True)
    else:
        relayed = relay.drain(lock_deadline, stop)
    summary.counts.update(published=relayed.published, publishFailed=relayed.failed)
    if relayed.reason == "no_topic":
        # Counted by the relay (config_errors_total); the rows wait, unclaimed.
        summary.config_error = True
    if relayed.failed or relayed.reason in ("delivery_failed", "fatal"):
        summary.degraded.append(
            f"relay: {relayed.failed} deliveries failed ({relayed.reason}); the events stay "
            "unpublished and are retried next cycle")


class _Reconcile:
    """The reconcile phase of one cycle on its connection, and what the cycle saw of the
    storage as a whole: the facts every verdict goes out with (``facts``), and the HEADs the
    database judges the worker's storage incident by as they come (``window``)."""

    def __init__(self, ctx: Context, conn: queries.Connection, stop: threading.Event,
                 summary: CycleSummary, lock_deadline: float) -> None:
        self.ctx, self.conn, self.stop, self.summary = ctx, conn, stop, summary
        self.lock_deadline = lock_deadline
        self.pacer: Pacer | None = None
        self.bucket_confirmed = False
        #: Objects the cycle's HEADs found so far, the known uploads' included.
        self.objects_found = 0
        #: The known uploads' answers, once the cycle looked at them (at most once).
        self.known: KnownAnswers | None = None
        self.window = HeadWindow(conn, ctx.metrics, summary.job_run_id)
        #: The rows claimed for a check and not applied yet (held ones included).
        self.unapplied: set[model.ClaimedRow] = set()

    def bucket_answered(self, confirmed: bool) -> None:
        summary = self.summary
        self.bucket_confirmed = confirmed
        self.window.bucket_answered(confirmed, None if confirmed else "HeadBucket unanswered")
        if confirmed:
            return
        summary.storage_unreachable = True  # once a cycle: later answers are confirmations
        summary.degraded.append("storage: HeadBucket could not be answered (unreachable); "
                                "claimed rows back off, none fails")
        log("storage unreachable", level="warning", jobRunId=summary.job_run_id,
            message="the bucket could not be confirmed: no row fails, no attempt is used")

    def discover(self) -> None:
        """Opens finalize rows (bounded per cycle) for recordings stuck past the SLA without
        one, and for Available recordings that never got their event, so the service needs no
        change to be rescued: the claim that follows takes them."""
        summary, ctx = self.summary, self.ctx
        stuck = queries.call_value(self.conn, "discover_stuck", limit=DISCOVER_LIMIT)
        if ctx.republish_held is None:
            ctx.republish_held = queries.republish_hold(self.conn).held
        # The republish phase for a service that never opens a row: Available, no event anywhere.
        unpublished = queries.discover_unpublished(self.conn, ctx.settings, DISCOVER_LIMIT)
        summary.counts["discovered"] = stuck + unpublished
        if stuck + unpublished:
            ctx.metrics.discovered_total.inc(stuck + unpublished)
        if stuck:
            log("recordings discovered", jobRunId=summary.job_run_id, rows=stuck,
                phase="finalize-reconcile",
                message="stuck past the SLA without a finalize row: rows opened, due now")
        if unpublished:
            log("recordings discovered", jobRunId=summary.job_run_id, rows=unpublished,
                phase="republish",
                message="Available past the SLA with no event of the service's or ours: rows "
                "opened, due now")
        # Held: the database judged that service_events does not show what the service delivered.
        hold = queries.republish_hold(self.conn)
        ctx.metrics.republish_held_recordings.set((hold.unshown or 0) if hold.held else 0)
        was_held, ctx.republish_held = ctx.republish_held, hold.held
        if hold.held:
            log("republish held", level="warning", jobRunId=summary.job_run_id,
                unshown=hold.unshown, sampled=hold.sampled, heldSince=hold.held_since,
                message=f"{hold.problem}; {hold.fix}")
        elif was_held:
            log("republish hold ended", jobRunId=summary.job_run_id, sampled=hold.sampled,
                unshown=hold.unshown, message="recordings the hold kept back stay as they are")

    def claim_loop(self, claim_until: float) -> None:
        """Claims and checks batch after batch; then the verdicts the storage's window still
        holds are judged and applied (given back on a stop)."""
        summary = self.summary
        try:
            go_on = self.claim_batches(claim_until)
        finally:
            if self.pacer is not None:
                self.pacer.close()
                summary.pacing = self.pacer.summary()
        if self.stop.is_set():
            held = [row for row, _, _ in self.window.drop()]
            if held:
                self.release_on_stop(held)
        elif go_on:
            try:
                code = self.apply(self.window.flush())
            except ServiceFault as fault:
                self.service_fault(fault)
            else:
                if code is not None:  # a 404 among them said the key layout is wrong
                    _config_error(self.ctx, summary, code)
        if self.window.failing:
            summary.degraded.append(
                "storage: most HEADs came back transient; the worker's storage incident is "
                "open: no attempt used, no 404 believed")

    def claim_batches(self, claim_until: float) -> bool:
        """False when the cycle must stop (stop requested, configuration failure, fault)."""
        settings, summary = self.ctx.settings, self.summary
        while not self.stop.is_set():
            if time.monotonic() >= claim_until:
                log("max run duration reached", jobRunId=summary.job_run_id,
                    message="claiming stops; the rest waits for the next cycle")
                return True
            # A slow pace claims less at a time: no claim outlives the pace by much.
            limit = (self.pacer.claim_size(settings.batch_size) if self.pacer
                     else settings.batch_size)
            rows = queries.claim_due(self.conn, replace(settings, batch_size=limit))
            if not rows:
                return True
            self.pacer = self.pacer or Pacer.for_drain(
                settings, self.ctx.pool, self.ctx.metrics, self.stop, summary.job_run_id)
            self.pacer.claimed(len(rows), limit)
            summary.counts["claimed"] += len(rows)
            log("batch claimed", jobRunId=summary.job_run_id, rows=len(rows),
                actions=dict(Counter(row.action for row in rows)))
            _settled_at_claim(self.ctx, rows, summary)
            reconcile = [row for row in rows if row.action == "reconcile"]
            if reconcile and not self.check_and_apply(reconcile, self.pacer):
                return False
            # A short batch means nothing else was due when it was claimed: done for this
            # cycle (rows that fall due meanwhile, e.g. with a tiny backoff, wait for the next).
            if len(rows) < limit:
                return True
        return False

    def check_and_apply(self, rows: list[model.ClaimedRow], pacer: Pacer) -> bool:
        """HEADs ``rows`` in the check threads and applies the verdicts as they arrive, all that
        are in (at most a pacer's burst) in one round trip, then waits as the pacer says. The
        database judges the storage by them first (``HeadWindow``): it may hold them a while.
        False when the cycle must stop (stop requested, configuration failure, service fault)."""
        self.unapplied.update(rows)
        if not self.bucket_confirmed:  # asked again before each batch while unconfirmed
            try:
                if self.ctx.storage.check_bucket():
                    self.bucket_answered(True)
            except StorageConfigError as err:
                self.window.drop()
                self.release_for_config_error(self.pending(), err.code)
                return False
        checks = _Checks(self.ctx, rows, self.stop, self.lock_deadline)
        try:
            while checks.waiting:
                ready = checks.arrived(pacer.burst(PIPELINE_MAX))
                if self.stop.is_set():
                    self.window.drop()
                    self.release_on_stop(self.pending())
                    return False
                if ready is None:
                    continue
                batch, config_error = _verdicts(ready)
                if config_error is not None:
                    checks.config_failed.set()  # the checks not yet begun make no storage call
                try:
                    # The verdicts that came in before a configuration error are recorded.
                    batch = self.window.judge(batch)
                    judged = self.apply(batch)
                except ServiceFault as fault:
                    checks.config_failed.set()  # stop the checks: nothing can be applied
                    self.window.drop()
                    self.service_fault(fault)
                    return False
                code = (config_error.error or "ConfigError") if config_error else judged
                if code is not None:
                    checks.config_failed.set()
                    self.window.drop()
                    self.release_for_config_error(self.pending(), code)
                    return False
                pacer.applied(len(batch), self.lock_deadline)
            return not self.stop.is_set()
        finally:
            checks.close()

    def pending(self) -> list[model.ClaimedRow]:
        """The rows claimed for a check and not applied yet, in no particular order."""
        return list(self.unapplied)

    def facts(self, batch: _Batch) -> queries.StorageFacts:
        """What the cycle saw of the storage, this batch included. The known uploads are HEADed
        once, at the first 404 before any object was found: only then can they tell
        ``outcome_decision`` anything (its key-layout rule)."""
        self.objects_found += sum(verdict.outcome == model.FOUND for _, verdict, _ in batch)
        if (self.known is None and self.bucket_confirmed and not self.objects_found
                and any(verdict.outcome == model.MISSING for _, verdict, _ in batch)):
            self.known = self.ctx.storage.known_upload_answers(queries.known_uploads(self.conn))
            self.objects_found += self.known.found
        known = self.known
        return queries.StorageFacts(
            bucket_confirmed=self.bucket_confirmed, objects_found=self.objects_found,
            known_missing=None if known is None else known.missing,
            known_other=None if known is None else known.other)

    def apply(self, batch: _Batch) -> str | None:
        """Applies the verdicts in one round trip and counts each; returns the configuration
        error the database read in a 404 (KeyLayoutUnconfirmed), if any. One row's error leaves
        the others applied (each is its own transaction); the database then says whether it is
        a service fault (``ServiceFault`` raised: the attempts were given back) or the row's own
        (its error raised once the others are counted)."""
        if not batch:
            return None
        facts = self.facts(batch)
        if time.monotonic() >= self.lock_deadline:
            raise _Deadline
        answers = pipeline.apply_outcomes(
            self.conn, [(row, verdict) for row, verdict, _ in batch],
            timeout_s=max(0.0, self.lock_deadline - time.monotonic()), facts=facts)
        failures: list[tuple[model.ClaimedRow, psycopg.Error]] = []
        judged: str | None = None
        for (row, verdict, check_s), answer in zip(batch, answers, strict=True):
            self.unapplied.discard(row)
            if isinstance(answer, psycopg.Error):
                failures.append((row, answer))
                continue
            with tracing.attempt_span(str(row.recording_id), "reconcile", row.attempts) as span:
                span.set_attributes({"outcome": verdict.outcome, "result": answer.result,
                                     "check_ms": round(check_s * 1000), "pipelined": len(batch)})
            _record(self.ctx, row, verdict, answer, self.summary)
            if answer.result == "config_error_released" and verdict.outcome != model.CONFIG_ERROR:
                judged = (answer.detail or "ConfigError").removeprefix("ConfigError: ")
        if not failures:
            self.ctx.metrics.service_fault.set(0)
            return judged
        recorded = queries.record_apply_failure(self.conn, failures, len(batch),
                                                self.pending())
        if recorded.service_fault:
            self.unapplied.clear()  # every one given back
            raise ServiceFault(recorded.last_error, recorded.recorded)
        # One row's own failure: its attempt stands, its error is kept for the quarantine.
        raise failures[0][1]

    def release_for_config_error(self, rows: list[model.ClaimedRow], code: str) -> None:
        """``rows`` get ``config_error`` applied (their attempt back, due again)."""
        verdict = model.Verdict(model.CONFIG_ERROR, error=code)
        for start in range(0, len(rows), PIPELINE_MAX):
            self.apply([(row, verdict, 0.0) for row in rows[start:start + PIPELINE_MAX]])
        _config_error(self.ctx, self.summary, code)

    def service_fault(self, fault: ServiceFault) -> None:
        """The cycle stops: the rows not applied kept the fault as their last_error and got their
        attempt back (``record_apply_failure`` did, as it decided)."""
        summary, text = self.summary, str(fault)
        summary.service_fault = summary.error = text
        self.ctx.metrics.service_fault.set(1)
        log("cycle stopped by a service fault", level="error", jobRunId=summary.job_run_id,
            error=text, givenBack=fault.given_back,
            message="applying fails for every row for one reason the database gives: no row is "
                    "quarantined for it; fix it (the error names the object) and the next cycle "
                    "goes on")

    def release_on_stop(self, rows: list[model.ClaimedRow]) -> None:
        """A stop between claim and apply: the rows not applied are due at once, attempt back."""
        summary = self.summary
        self.unapplied.difference_update(rows)
        summary.counts["releasedOnStop"] += queries.call_value(
            self.conn, "release_claims", **queries.claims(rows))
        log("claims released on stop", jobRunId=summary.job_run_id, rows=len(rows),
            released=summary.counts["releasedOnStop"],
            message="stopping: the claimed rows not checked yet got their attempt back")


#: How a settled row is counted: (summary count, metric, log event, level, message).
_Counted = tuple[str, str | None, str | None, str, str | None]
#: The rows claim_due settled itself (no S3 check needed), by action.
_AT_CLAIM: dict[str, _Counted] = {
    "republished": ("republished", "republished_total", "recording republished", "info", None),
    "quarantined": ("quarantined", "quarantined_total", "recording quarantined", "warning",
                    None),
    "closed": ("closed", None, None, "info", None),
    "deferred_by_sla": ("deferred", None, None, "info", None),
    "busy": ("busy", "busy_total", "recording busy", "info",
             "a service transaction is writing its event: the claim let it go first"),
}


def _settled_at_claim(ctx: Context, rows: list[model.ClaimedRow], summary: CycleSummary) -> None:
    for row in rows:
        if row.action == "reconcile":
            continue  # checked and applied by the caller
        if row.action not in _AT_CLAIM:
            raise model.UnknownWord("claim_due action", row.action)
        _count_and_log(ctx, summary, _AT_CLAIM[row.action], row,
                       {"attempts": row.attempts, "reason": row.detail}
                       if row.action == "quarantined" else {})
        with tracing.attempt_span(str(row.recording_id), row.action, row.attempts):
            pass  # settled inside claim_due: the span marks the attempt, it has no work of its own


class _Checks:
    """The S3 checks of one batch in a bounded thread pool; the applying thread reads their
    results in arrival order (``arrived``)."""

    def __init__(self, ctx: Context, rows: list[model.ClaimedRow], stop: threading.Event,
                 lock_deadline: float) -> None:
        self._ctx = ctx
        self._stop = stop
        self._lock_deadline = lock_deadline
        #: Set on a configuration failure: the checks not yet begun make no storage call.
        self.config_failed = threading.Event()
        self._arrived: queue.SimpleQueue[tuple[model.ClaimedRow, _Checked]] = queue.SimpleQueue()
        self._todo = deque(rows)  # deque's pops are thread-safe
        # One task per thread, each taking the next row itself: a task per row would cost the
        # applying thread a future and a thread hand-off for every row.
        for _ in range(min(ctx.settings.s3_concurrency, len(rows))):
            ctx.check_threads.submit(self._take_rows)
        self.waiting = len(rows)

    def _take_rows(self) -> None:
        while True:
            try:
                row = self._todo.popleft()
            except IndexError:
                return
            try:
                self._arrived.put((row, self._check(row)))
            except BaseException as err:  # noqa: BLE001 - handed to the applying thread to raise
                self._arrived.put((row, err))

    def _check(self, row: model.ClaimedRow) -> tuple[model.Verdict | None, float]:
        # Checked before every storage call: a stop, a configuration failure of another row,
        # or a check that could not finish before the lock TTL means no call at all.
        if self._stop.is_set() or self.config_failed.is_set():
            return None, 0.0
        if time.monotonic() + self._ctx.settings.s3_timeout > self._lock_deadline:
            raise _Deadline
        t0 = time.monotonic()
        verdict = self._ctx.storage.check(row)
        return verdict, time.monotonic() - t0

    def arrived(self, most: int) -> list[tuple[model.ClaimedRow, _Checked]] | None:
        """Waits up to ``POLL_S`` for a result, then takes those in, ``most`` at most; None when
        none came (the caller looks at the stop event and asks again)."""
        try:
            ready = [self._arrived.get(timeout=POLL_S)]
        except queue.Empty:
            return None
        while len(ready) < most:
            try:
                ready.append(self._arrived.get_nowait())
            except queue.Empty:
                break
        self.waiting -= len(ready)
        return ready

    def close(self) -> None:
        # The tasks find no row left and end; checks in flight end on their own (bounded by
        # the S3 timeouts), their verdicts are dropped, and the rows keep the claim's backoff.
        self._todo.clear()


def _verdicts(
    ready: list[tuple[model.ClaimedRow, _Checked]],
) -> tuple[_Batch, model.Verdict | None]:
    """The verdicts to apply, in arrival order, up to a ``config_error`` one (returned apart:
    it stops the cycle). What a check raised (``_Deadline`` too) is raised here."""
    batch: _Batch = []
    for row, checked in ready:
        if isinstance(checked, BaseException):
            raise checked
        verdict, seconds = checked
        if verdict is None:
            continue  # not checked (stop, config failure): the claim's backoff stands
        if verdict.outcome == model.CONFIG_ERROR:
            return batch, verdict
        batch.append((row, verdict, seconds))
    return batch, None


class ServiceFault(Exception):
    """apply_outcome failed for one reason of the service's schema, not a poison row, as
    ``record_apply_failure`` decided: the cycle stops; ``given_back`` rows got their attempt
    back. The text is the last_error it wrote (SQLSTATE, message, the object it names)."""

    def __init__(self, text: str, given_back: int) -> None:
        super().__init__(text)
        self.given_back = given_back


#: How apply_outcome's answers are counted, by result: the database's answer, not our guess.
_BY_RESULT: dict[str, _Counted] = {
    "reconciled": ("reconciled", "reconciled_total", "recording reconciled", "info", None),
    "failed": ("failed", "failed_total", "recording failed", "warning", None),
    "backoff": ("backoff", None, "recording backoff", "info", None),
    "quarantined": ("quarantined", "quarantined_total", "recording quarantined", "warning",
                    None),
    "deferred_by_incident": (
        "deferredByIncident", "missing_deferred_total",
        "recording deferred by storage incident", "info", "404 not trusted: a storage "
        "incident overlapped its upload window; the attempt is given back"),
    "held_by_incident": (
        "heldByIncident", "attempts_held_total", "recording held by storage incident", "info",
        "transient answer while the worker's storage incident is open: the attempt is given "
        "back"),
    "busy": ("busy", "busy_total", "recording busy", "info",
             "a service transaction held the recording: the attempt is given back and the row "
             "tried again after the backoff base"),
    "config_error_released": ("released", None, None, "info", None),
    "terminal": ("terminal", None, "recording already terminal", "info",
                 "the status guard left it alone"),
    "stale": ("stale", None, "stale claim", "info",
              "another runner re-claimed or settled the row"),
}
#: The results of a verdict the database read as transient (a 404 with the bucket unconfirmed).
_READ_AS_TRANSIENT = frozenset({"backoff", "held_by_incident"})


def _record(
    ctx: Context, row: model.ClaimedRow, verdict: model.Verdict, result: queries.AppliedResult,
    summary: CycleSummary,
) -> None:
    if verdict.outcome != model.CONFIG_ERROR:
        summary.counts["checked"] += 1
    if verdict.outcome == model.TRANSIENT or (verdict.outcome == model.MISSING
                                        and result.result in _READ_AS_TRANSIENT):
        summary.counts["transient"] += 1
        ctx.metrics.transient_total.inc()
    if result.result not in _BY_RESULT:
        raise model.UnknownWord("apply_outcome result", result.result)
    by_result: dict[str, dict[str, Any]] = {
        "reconciled": {"sessionId": row.session_id, "fileId": verdict.file_id},
        "failed": {"sessionId": row.session_id, "failureReason": "Timeout"},
        "backoff": {"error": verdict.error},
        "quarantined": {"reason": result.detail},
    }
    fields = by_result.get(result.result, {})
    if result.result not in ("terminal", "stale"):
        fields["attempts"] = result.attempts if result.attempts is not None else row.attempts
    _count_and_log(ctx, summary, _BY_RESULT[result.result], row, fields)


def _count_and_log(ctx: Context, summary: CycleSummary, spec: _Counted, row: model.ClaimedRow,
                   fields: dict[str, Any]) -> None:
    count, metric, event, level, message = spec
    summary.counts[count] += 1
    if count in SETTLED:
        ctx.metrics.mark_progress()
    if metric is not None:
        getattr(ctx.metrics, metric).inc()
    if event is not None:
        log(event, level=level, jobRunId=summary.job_run_id, recordingId=row.recording_id,
            **fields, **({"message": message} if message else {}))


def _config_error(ctx: Context, summary: CycleSummary, code: str) -> None:
    summary.config_error = True
    ctx.metrics.config_errors_total.inc()
    log("config error", level="error", jobRunId=summary.job_run_id,
        message="the file storage is not as configured: cycle stopped, no attempt counted",
        bucket=ctx.settings.s3_bucket, error=code)
