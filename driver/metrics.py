"""Prometheus metrics of the safety net and the ``/metrics`` endpoint.

Every metric lives in the ``CollectorRegistry`` of one ``Metrics`` object (never the global
registry), so a test can build as many as it likes. The exposed names are exactly the ones in
``docs/driver-design.md``; a prometheus_client ``Counter`` appends ``_total`` on exposition, so the
counters are declared without it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from socketserver import ThreadingMixIn
from typing import Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import StartResponse, WSGIEnvironment

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
    make_wsgi_app,
)

from .probes import Health

# The ``…_created`` companion series of counters and histograms only clutter the scrape; this
# process owns its prometheus_client, so it switches them off once, for all its registries.
disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in prometheus_client

PREFIX = "messenger_recording_finalize"

#: The values of the ``result`` label of ``…_cycles_total``; all are exposed from the start, at 0.
#: ``degraded``: the cycle ran, but the file storage could not be reached or the relay could not
#: deliver; it does not count as a success (the last-success timestamp stays where it was).
CYCLE_RESULTS = ("ok", "skipped", "config_error", "error", "disabled", "degraded")

#: The parts the pause switch stops, and the quarantine reason codes (plus ``unknown``).
PAUSE_PARTS = ("reconcile", "relay")
QUARANTINE_REASONS = ("max_attempts", "crash_loop", "invalid_metadata", "recording_not_found",
                      "session_not_found", "unknown")

#: Cycle durations: a healthy cycle takes well under a second, MaxRunDuration defaults to 3 min.
CYCLE_DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 180.0,
                          300.0)


class StatsLike(Protocol):
    """What ``update_from_stats`` reads: the columns of ``recording_finalize.stats()``."""

    @property
    def backlog(self) -> int: ...

    @property
    def due(self) -> int: ...

    @property
    def oldest_age_seconds(self) -> float: ...

    @property
    def quarantined(self) -> int: ...

    @property
    def publish_backlog(self) -> int: ...

    @property
    def oldest_unpublished_age_seconds(self) -> float: ...


class Metrics:
    """The worker's metrics, registered in their own registry.

    Attribute names follow the exposed names without the ``messenger_recording_finalize_``
    prefix, so ``metrics.reconciled_total.inc()`` moves
    ``messenger_recording_finalize_reconciled_total``.
    """

    def __init__(self, registry: CollectorRegistry | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._clock = clock
        self._server: WSGIServer | None = None
        self._server_thread: threading.Thread | None = None
        # process_resident_memory_bytes, process_cpu_seconds_total, ...: what a dashboard and a
        # capacity plan read first (Linux only; elsewhere the collector is silent).
        ProcessCollector(registry=self.registry)
        self._database_gauges()
        self._timestamps()
        self._cycle_metrics()
        self._operator_metrics()
        self._incident_metrics()

    def _gauge(self, name: str, text: str, labels: Sequence[str] = ()) -> Gauge:
        return Gauge(f"{PREFIX}_{name}", text, labels, registry=self.registry)

    def _counter(self, name: str, text: str, labels: Sequence[str] = ()) -> Counter:
        """Declared without ``_total``: prometheus_client appends it on exposition."""
        return Counter(f"{PREFIX}_{name}", text, labels, registry=self.registry)

    def _database_gauges(self) -> None:
        """Refreshed from recording_finalize.stats() at the end of every cycle."""
        g = self._gauge
        self.backlog = g("backlog", "Pending finalize rows (recording_finalize_attempts).")
        self.due_rows = g("due_rows", "Pending finalize rows due now (claimable by the next "
                          "cycle).")
        self.oldest_age_seconds = g(
            "oldest_age_seconds",
            "now() - min(created_at) of the Pending finalize rows; 0 when there are none.")
        self.quarantined_rows = g(
            "quarantined_rows",
            "Quarantined finalize rows waiting for an operator (runbook: requeue).")
        self.publish_backlog = g("publish_backlog",
                                 "Unpublished integration-outbox rows of the worker's topic.")
        self.oldest_unpublished_age_seconds = g(
            "oldest_unpublished_age_seconds",
            "Age of the oldest unpublished integration-outbox row of the topic; 0 when none.")
        self.ready = g("ready", "1 while /readyz answers 200 (every dependency holds), else 0.")

    def _timestamps(self) -> None:
        """All start at the process start, not at 0: the "no successful run" alert fires for a
        worker that never succeeds, two intervals after it started, and never at start-up."""
        g = self._gauge
        self.last_refresh_timestamp_seconds = g(
            "last_refresh_timestamp_seconds",
            "Unix time the database gauges (backlog, due rows, ages, quarantined, publish "
            "backlog) were last read from recording_finalize.stats(); they keep their last "
            "values while the database cannot be reached, so this says how old they are. The "
            "process start time until the first read.")
        self.last_success_timestamp_seconds = g(
            "last_success_timestamp_seconds",
            "Unix time of the last successful cycle; the process start time until the first one.")
        # A drain's cycle may run for RFR_MAX_RUN_DURATION (3 min): the last-success time moves
        # only when it ends, so "no run" alerts on this heartbeat, which every settled row moves.
        self.last_progress_timestamp_seconds = g(
            "last_progress_timestamp_seconds",
            "Unix time of the last sign of work done: a row settled (reconciled, failed, "
            "republished, quarantined, closed), an event the broker acknowledged, or a "
            "successful cycle; the process start time until the first.")
        for gauge in (self.last_refresh_timestamp_seconds, self.last_success_timestamp_seconds,
                      self.last_progress_timestamp_seconds):
            gauge.set(self._clock())
        self.build_info = Info(
            f"{PREFIX}_build",
            "The running package: version, the schema version it ships (its last migration), "
            "the commit it was built from and the fingerprint of its SQL (CHANGELOG.md).",
            registry=self.registry)
        self.set_build_info(*_build())

    def _cycle_metrics(self) -> None:
        c = self._counter
        self.reconciled_total = c(
            "reconciled", "Recordings the safety net found in file storage and moved to Available.")
        self.failed_total = c(
            "failed",
            "Recordings the safety net moved to Failed (binary missing after the SLA: Timeout).")
        self.republished_total = c(
            "republished", "Available recordings whose lost integration event was enqueued again.")
        self.quarantined_total = c(
            "quarantined",
            "Finalize rows moved to Quarantined (attempts exhausted or unusable metadata).")
        self.published_total = c(
            "published", "Outbox messages the broker acknowledged and the relay marked published.")
        self.publish_failures_total = c(
            "publish_failures",
            "Outbox messages whose delivery failed; they stay unpublished and are retried.")
        self.config_errors_total = c(
            "config_errors",
            "Cycles stopped by a configuration failure (missing bucket, access denied).")
        self.service_fault = self._gauge(
            "service_fault",
            "1 while the last cycle that applied verdicts stopped because applying failed for "
            "every row for one reason of the service's schema (a privilege, a constraint, a "
            "type): attempts given back, the reason in the rows' last_error and the log.")
        self.cycles_total = c(
            "cycles",
            "Cycles by result: ok, degraded (storage unreachable or deliveries failed), skipped "
            "(lock busy), config_error, error, disabled.", ["result"])
        for result in CYCLE_RESULTS:
            self.cycles_total.labels(result=result)
        self.cycle_duration_seconds = Histogram(
            f"{PREFIX}_cycle_duration_seconds", "Wall time of a cycle, lock to unlock.",
            buckets=CYCLE_DURATION_BUCKETS, registry=self.registry)

    def _operator_metrics(self) -> None:
        """The pause switch and the quarantined rows by reason, read from
        recording_finalize.operator_state() once per cycle (also while idle or paused)."""
        self.paused = self._gauge(
            "paused",
            "1 while the part (reconcile, relay) is paused by `recording-finalize pause`.",
            ["part"])
        for part in PAUSE_PARTS:
            self.paused.labels(part=part)
        self.quarantined_rows_by_reason = self._gauge(
            "quarantined_rows_by_reason",
            "Quarantined finalize rows by quarantine_reason (sums to ..._quarantined_rows).",
            ["reason"])
        for reason in QUARANTINE_REASONS:
            self.quarantined_rows_by_reason.labels(reason=reason)
        # Pacing of a drain (driver/pacing.py, RFR_PACING, RFR_MAX_APPLY_RATE).
        self.pace_rows_per_second = self._gauge(
            "pace_rows_per_second",
            "The apply pace of the current (or last) drain, verdicts per second; 0 = unlimited.")
        self.pace_slowdowns_total = self._counter(
            "pace_slowdowns",
            "Times adaptive pacing slowed a drain to the shared rate (other logins at work, or "
            "the probe unanswered).")

    def _incident_metrics(self) -> None:
        """Storage incidents (driver/incidents.py, recording_finalize_internal.outcome_decision)
        and the verdicts they hold back."""
        c = self._counter
        self.storage_incidents_open = self._gauge(
            "storage_incidents_open",
            "Open file-storage incidents of any source (recording_finalize.storage_incidents).")
        self.storage_incidents_opened_total = c(
            "storage_incidents_opened",
            "File-storage incidents this worker opened (HeadBucket unreachable, or most HEADs "
            "of a cycle transient).")
        self.missing_deferred_total = c(
            "missing_deferred",
            "Missing (404) verdicts that failed no recording because a storage incident "
            "overlapping its upload window was open or ended less than RFR_UPLOAD_GRACE ago.")
        self.transient_total = c(
            "transient",
            "Transient S3 check verdicts (timeouts, connection errors, 5xx, throttling).")
        self.attempts_held_total = c(
            "attempts_held",
            "Transient verdicts whose attempt was given back because the worker's own storage "
            "incident (source worker) was open: an outage of any length quarantines nothing.")
        self.discovered_total = c(
            "discovered",
            "Finalize rows opened by the worker's discovery of recordings stuck past the SLA "
            "without one (the service opened none).")
        self.busy_total = c(
            "busy",
            "Rows a service transaction held when the worker came to them: the attempt was "
            "given back and the row is tried again (the service's transaction goes first).")

    def update_operator_state(
        self, paused: Mapping[str, bool], quarantined_by_reason: Mapping[str, int]
    ) -> None:
        """Sets the pause gauges and the quarantined-by-reason gauges (absent reasons: 0)."""
        for part in PAUSE_PARTS:
            self.paused.labels(part=part).set(1 if paused.get(part) else 0)
        for reason in {*QUARANTINE_REASONS, *quarantined_by_reason}:
            self.quarantined_rows_by_reason.labels(reason=reason).set(
                quarantined_by_reason.get(reason, 0))

    def update_from_stats(self, stats: StatsLike) -> None:
        """Sets the gauges from one ``recording_finalize.stats()`` row, and the time they were
        refreshed."""
        self.backlog.set(stats.backlog)
        self.due_rows.set(stats.due)
        self.oldest_age_seconds.set(stats.oldest_age_seconds)
        self.quarantined_rows.set(stats.quarantined)
        self.publish_backlog.set(stats.publish_backlog)
        self.oldest_unpublished_age_seconds.set(stats.oldest_unpublished_age_seconds)
        self.last_refresh_timestamp_seconds.set(self._clock())

    def watch_health(self, health: Health) -> None:
        """``…_ready`` follows ``health.ready()`` (read at each scrape)."""
        self.ready.set_function(lambda: 1.0 if health.ready()[0] else 0.0)

    def observe_cycle(self, result: str, duration_seconds: float) -> None:
        """Counts a finished cycle; an ``ok`` one also moves the last-success timestamp."""
        if result not in CYCLE_RESULTS:
            raise ValueError(f"unknown cycle result {result!r}; expected one of {CYCLE_RESULTS}")
        self.cycles_total.labels(result=result).inc()
        self.cycle_duration_seconds.observe(duration_seconds)
        if result == "ok":
            self.mark_success()

    def mark_success(self) -> None:
        """Records a successful cycle now (which is progress too)."""
        now = self._clock()
        self.last_success_timestamp_seconds.set(now)
        self.last_progress_timestamp_seconds.set(now)

    def count_published(self, acknowledged: int, failed: int) -> None:
        """One relay batch: the events the broker acknowledged (progress) and those it did not."""
        self.published_total.inc(acknowledged)
        self.publish_failures_total.inc(failed)
        if acknowledged:
            self.mark_progress()

    def mark_progress(self) -> None:
        """Records work done now: a row settled or an event acknowledged."""
        self.last_progress_timestamp_seconds.set(self._clock())

    def render(self) -> bytes:
        """The registry in the Prometheus text exposition format."""
        return generate_latest(self.registry)

    def set_build_info(self, version: str, schema_version: str, commit: str = "unknown",
                       sql_fingerprint: str = "-") -> None:
        self.build_info.info({"version": version, "schema_version": schema_version,
                              "commit": commit, "sql_fingerprint": sql_fingerprint})

    def start_server(
        self, port: int, addr: str = "0.0.0.0", health: Health | None = None
    ) -> int | None:
        """Serves ``/metrics`` (and, with ``health``, ``/livez`` and ``/readyz``) on
        ``addr:port`` from a daemon thread; returns the port, or None for port 0 (disabled)."""
        if port == 0:
            return None
        if not 0 < port < 65536:
            raise ValueError(f"metrics port must be 0 (disabled) or 1..65535, got {port}")
        if self._server is not None:
            raise RuntimeError("the metrics server is already running")
        if health is not None:
            self.watch_health(health)
        metrics_app = make_wsgi_app(self.registry)

        def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
            path = environ.get("PATH_INFO", "")
            if path in PROBE_PATHS:
                if health is None:
                    return _text(start_response, "404 Not Found", "no probes in this command")
                ok, reason = health.live() if path == LIVEZ else health.ready()
                status = "200 OK" if ok else "503 Service Unavailable"
                if path == READYZ and _wants_json(environ):
                    return _text(start_response, status, health.readiness_json(),
                                 "application/json")
                return _text(start_response, status, reason)
            if path == METRICS:
                return metrics_app(environ, start_response)  # type: ignore[no-any-return]
            # Anything else (``/`` included) is not ours: a probe or scrape pointed at a wrong
            # path must fail loudly instead of reading a 200 with the metrics in it.
            return _text(start_response, "404 Not Found",
                         f"not found: this endpoint serves {METRICS}, {LIVEZ} and {READYZ}")

        server_class = _ThreadingServer6 if ":" in addr else _ThreadingServer
        server = make_server(addr, port, app, server_class, _QuietHandler)
        thread = threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True)
        thread.start()
        self._server, self._server_thread = server, thread
        return int(server.server_address[1])

    def stop_server(self) -> None:
        """Stops the ``/metrics`` server, if one runs."""
        server, thread = self._server, self._server_thread
        self._server = self._server_thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)


METRICS, LIVEZ, READYZ = "/metrics", "/livez", "/readyz"
PROBE_PATHS = (LIVEZ, READYZ)


def _text(start_response: StartResponse, status: str, text: str,
          content_type: str = "text/plain; charset=utf-8") -> list[bytes]:
    """``text`` as the body, ending with a newline."""
    body = (text.rstrip("\n") + "\n").encode()
    start_response(status, [("Content-Type", content_type),
                            ("Content-Length", str(len(body))), ("Cache-Control", "no-store")])
    return [body]


def _wants_json(environ: WSGIEnvironment) -> bool:
    query = str(environ.get("QUERY_STRING", ""))
    return "format=json" in query.split("&") or "application/json" in str(
        environ.get("HTTP_ACCEPT", ""))


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _ThreadingServer6(_ThreadingServer):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr: stderr carries JSON log lines only."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _build() -> tuple[str, str, str, str]:
    """Version, schema version, commit and SQL fingerprint of the running package."""
    from .buildinfo import commit, sql_fingerprint
    from .config import packaged_sql_dir
    from .drift import package_version, shipped_schema_version

    sql_dir = packaged_sql_dir()
    if sql_dir is None:
        return package_version(), "-", commit(), "-"
    return (package_version(), shipped_schema_version(sql_dir), commit(),
            sql_fingerprint(sql_dir))
