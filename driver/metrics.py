"""Prometheus metrics of the safety net (the names of ``docs/driver-design.md``) and the
``/metrics`` endpoint. Every metric lives in the ``CollectorRegistry`` of one ``Metrics`` object
(never the global registry), so a test can build as many as it likes."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar
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
from prometheus_client.exposition import ThreadingWSGIServer

if TYPE_CHECKING:
    from .probes import Health
    from .queries import OperatorState, ServiceEvents, Stats

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

METRICS, LIVEZ, READYZ = "/metrics", "/livez", "/readyz"

#: The gauge of the service's own events its relay left unpublished. Its name is the contract's,
#: without the ``messenger_`` prefix of the safety net's own metrics: the events are the
#: service's, and the product only watches them.
SERVICE_EVENTS_UNPUBLISHED = "recording_finalize_service_events_unpublished"

#: The gauges refreshed from ``recording_finalize.stats()`` → the column that sets each.
_STATS_GAUGES = {"backlog": "backlog", "due_rows": "due", "quarantined_rows": "quarantined"} | {
    name: name for name in ("oldest_age_seconds", "publish_backlog",
                            "oldest_unpublished_age_seconds")}

_M = TypeVar("_M", Counter, Gauge)


class _Metric(Generic[_M]):
    """One line of ``Metrics``' table, named by its attribute (a counter's without ``_total``:
    prometheus_client appends it), built per registry with every label value at 0."""

    def __init__(self, kind: type[_M], text: str, label: str = "",
                 values: Sequence[str] = ()) -> None:
        self.kind: type[_M] = kind
        self.text, self.label, self.values = text, label, values

    def __set_name__(self, owner: type[Any], attribute: str) -> None:
        self.attribute = attribute
        self.name = attribute.removesuffix("_total") if self.kind is Counter else attribute

    def __get__(self, metrics: Metrics, owner: type[Metrics]) -> _M:
        return metrics.__dict__[self.attribute]  # type: ignore[no-any-return]

    def build(self, registry: CollectorRegistry) -> _M:
        metric = self.kind(f"{PREFIX}_{self.name}", self.text, [self.label] if self.label else [],
                           registry=registry)
        for value in self.values:
            metric.labels(value)
        return metric


class Metrics:
    """Attribute names are the exposed names without the prefix: ``metrics.reconciled_total.inc()``
    moves ``messenger_recording_finalize_reconciled_total``."""

    # --- refreshed from recording_finalize.stats() at the end of every cycle --------------------
    backlog = _Metric(Gauge, "Pending finalize rows (recording_finalize_attempts).")
    due_rows = _Metric(Gauge, "Pending finalize rows due now (claimable by the next cycle).")
    oldest_age_seconds = _Metric(
        Gauge, "now() - min(created_at) of the Pending finalize rows; 0 when there are none.")
    quarantined_rows = _Metric(
        Gauge, "Quarantined finalize rows waiting for an operator (runbook: requeue).")
    publish_backlog = _Metric(Gauge, "Unpublished integration-outbox rows of the worker's topic.")
    oldest_unpublished_age_seconds = _Metric(
        Gauge, "Age of the oldest unpublished integration-outbox row of the topic; 0 when none.")
    ready = _Metric(Gauge, "1 while /readyz answers 200 (every dependency holds), else 0.")
    # --- timestamps start at the process start, not at 0: the "no successful run" alert fires
    # for a worker that never succeeds, two intervals after it started, and never at start-up.
    last_refresh_timestamp_seconds = _Metric(
        Gauge, "Unix time the database gauges (backlog, due rows, ages, quarantined, publish "
        "backlog) were last read from recording_finalize.stats(); they keep their last values "
        "while the database cannot be reached, so this says how old they are. The process start "
        "time until the first read.")
    last_success_timestamp_seconds = _Metric(
        Gauge, "Unix time of the last successful cycle; the process start time until the first "
        "one.")
    # A drain's cycle may run for RFR_MAX_RUN_DURATION (3 min): the last-success time moves
    # only when it ends, so "no run" alerts on this heartbeat, which every settled row moves.
    last_progress_timestamp_seconds = _Metric(
        Gauge, "Unix time of the last sign of work done: a row settled (reconciled, failed, "
        "republished, quarantined, closed), an event the broker acknowledged, or a successful "
        "cycle; the process start time until the first.")
    # --- the cycle's work --------------------------------------------------------------------
    reconciled_total = _Metric(
        Counter, "Recordings the safety net found in file storage and moved to Available.")
    failed_total = _Metric(
        Counter, "Recordings the safety net moved to Failed (binary missing after the SLA: "
        "Timeout).")
    republished_total = _Metric(
        Counter, "Available recordings whose lost integration event was enqueued again.")
    quarantined_total = _Metric(
        Counter, "Finalize rows moved to Quarantined (attempts exhausted or unusable metadata).")
    published_total = _Metric(
        Counter, "Outbox messages the broker acknowledged and the relay marked published.")
    publish_failures_total = _Metric(
        Counter, "Outbox messages whose delivery failed; they stay unpublished and are retried.")
    config_errors_total = _Metric(
        Counter, "Cycles stopped by a configuration failure (missing bucket, access denied, no "
        "topic).")
    service_fault = _Metric(
        Gauge, "1 while the last cycle that applied verdicts stopped because applying failed for "
        "every row for one reason of the service's schema (a privilege, a constraint, a type): "
        "attempts given back, the reason in the rows' last_error and the log.")
    cycles_total = _Metric(
        Counter, "Cycles by result: ok, degraded (storage unreachable or deliveries failed), "
        "skipped (lock busy), config_error, error, disabled.", "result", CYCLE_RESULTS)
    # --- read from recording_finalize.operator_state() once per cycle (also idle or paused) -----
    paused = _Metric(
        Gauge, "1 while the part (reconcile, relay) is paused by `recording-finalize pause`.",
        "part", PAUSE_PARTS)
    quarantined_rows_by_reason = _Metric(
        Gauge, "Quarantined finalize rows by quarantine_reason (sums to ..._quarantined_rows).",
        "reason", QUARANTINE_REASONS)
    # --- pacing of a drain (driver/pacing.py, RFR_PACING, RFR_MAX_APPLY_RATE) ---------------
    pace_rows_per_second = _Metric(
        Gauge, "The apply pace of the current (or last) drain, verdicts per second; 0 = unlimited.")
    pace_slowdowns_total = _Metric(
        Counter, "Times adaptive pacing slowed a drain to the shared rate (other logins at work, "
        "or the probe unanswered).")
    # --- storage incidents (driver/incidents.py) and the verdicts they hold back ------------
    storage_incidents_open = _Metric(
        Gauge, "Open file-storage incidents of any source (recording_finalize.storage_incidents).")
    storage_incidents_opened_total = _Metric(
        Counter, "File-storage incidents this worker opened (HeadBucket unreachable, or at least 5 "
        "HEADs and half of them transient), while the cycle runs.")
    missing_deferred_total = _Metric(
        Counter, "Missing (404) verdicts that failed no recording because a storage incident "
        "overlapping its upload window was open or ended less than RFR_UPLOAD_GRACE ago.")
    transient_total = _Metric(
        Counter, "Transient S3 check verdicts (timeouts, connection errors, 5xx, throttling).")
    attempts_held_total = _Metric(
        Counter, "Transient verdicts whose attempt was given back because the worker's own storage "
        "incident (source worker) was open: an outage the worker sees quarantines nothing, "
        "however long.")
    discovered_total = _Metric(
        Counter, "Finalize rows opened by the worker's discovery of recordings stuck past the SLA "
        "without one (the service opened none).")
    republish_held_recordings = _Metric(
        Gauge, "While republish discovery holds: the recently Available recordings the adapter's "
        "service_events does not show (more than a crash explains: an outbox that deletes what it "
        "delivered); nothing is republished for them. 0 when not held.")
    busy_total = _Metric(
        Counter, "Rows a service transaction held when the worker came to them: the attempt was "
        "given back and the row is tried again (the service's transaction goes first).")

    def __init__(self, registry: CollectorRegistry | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._clock = clock
        self._server: WSGIServer | None = None
        # process_resident_memory_bytes, process_cpu_seconds_total, ...: what a dashboard and a
        # capacity plan read first (Linux only; elsewhere the collector is silent).
        ProcessCollector(registry=self.registry)
        for attribute, metric in vars(Metrics).items():
            if isinstance(metric, _Metric):
                self.__dict__[attribute] = metric.build(self.registry)
        for gauge in (self.last_refresh_timestamp_seconds, self.last_success_timestamp_seconds,
                      self.last_progress_timestamp_seconds):
            gauge.set(clock())
        self.cycle_duration_seconds = Histogram(
            f"{PREFIX}_cycle_duration_seconds", "Wall time of a cycle, lock to unlock.",
            buckets=CYCLE_DURATION_BUCKETS, registry=self.registry)
        self.service_events_unpublished = Gauge(
            SERVICE_EVENTS_UNPUBLISHED,
            "The service's own call-recording-available events (the adapter's service_events) "
            "still unpublished RFR_SERVICE_EVENT_LAG after they were enqueued, among the newest "
            "1000 recordings Available for longer: the service's own relay is not publishing "
            "them (the product never does). Read once per cycle.", registry=self.registry)
        self.build_info = Info(
            f"{PREFIX}_build",
            "The running package: version (development: unreleased work), the schema version "
            "it ships (its last migration), the commit it was built from and the fingerprints "
            "of what it ships and of its SQL (CHANGELOG.md).",
            registry=self.registry)
        self.build_info.info(_build())

    def update_operator_state(self, state: OperatorState) -> None:
        """The pause gauges and the quarantined rows by reason (absent reasons: 0)."""
        paused = state.paused_parts()
        for part in PAUSE_PARTS:
            self.paused.labels(part=part).set(1 if part in paused else 0)
        by_reason = state.quarantined_by_reason
        for reason in {*QUARANTINE_REASONS, *by_reason}:
            self.quarantined_rows_by_reason.labels(reason=reason).set(by_reason.get(reason, 0))

    def update_from_stats(self, stats: Stats) -> None:
        """The gauges of one ``recording_finalize.stats()`` row, and when they were read."""
        for gauge, column in _STATS_GAUGES.items():
            getattr(self, gauge).set(getattr(stats, column))
        self.last_refresh_timestamp_seconds.set(self._clock())

    def update_service_events(self, events: ServiceEvents) -> None:
        self.service_events_unpublished.set(events.unpublished)

    def observe_cycle(self, result: str, duration_seconds: float) -> None:
        """Counts a finished cycle; an ``ok`` one also moves the last-success timestamp."""
        if result not in CYCLE_RESULTS:
            raise ValueError(f"unknown cycle result {result!r}; expected one of {CYCLE_RESULTS}")
        self.cycles_total.labels(result=result).inc()
        self.cycle_duration_seconds.observe(duration_seconds)
        if result == "ok":  # a success is progress too, at the same instant
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
        self.last_progress_timestamp_seconds.set(self._clock())

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def start_server(self, port: int, addr: str, health: Health) -> int | None:
        """Serves ``/metrics`` and the probes from a daemon thread; returns the port, or None for
        port 0 (disabled)."""
        if port == 0:
            return None
        self.ready.set_function(lambda: 1.0 if health.ready()[0] else 0.0)
        metrics_app = make_wsgi_app(self.registry)

        def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
            path = environ.get("PATH_INFO", "")
            if path == METRICS:
                return metrics_app(environ, start_response)  # type: ignore[no-any-return]
            if path in (LIVEZ, READYZ):
                ok, reason = health.live() if path == LIVEZ else health.ready()
                status = "200 OK" if ok else "503 Service Unavailable"
                if path == READYZ and _wants_json(environ):
                    return _text(start_response, status, json.dumps(
                        health.readiness(), separators=(",", ":")), "application/json")
                return _text(start_response, status, reason)
            # Anything else (``/`` included) is not ours: a probe or scrape pointed at a wrong
            # path must fail loudly instead of reading a 200 with the metrics in it.
            return _text(start_response, "404 Not Found",
                         f"not found: this endpoint serves {METRICS}, {LIVEZ} and {READYZ}")

        server_class = _ThreadingServer6 if ":" in addr else ThreadingWSGIServer
        server = make_server(addr, port, app, server_class, _QuietHandler)
        threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
        self._server = server
        return int(server.server_address[1])

    def stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()


def _text(start_response: StartResponse, status: str, text: str,
          content_type: str = "text/plain; charset=utf-8") -> list[bytes]:
    body = (text.rstrip("\n") + "\n").encode()
    start_response(status, [("Content-Type", content_type),
                            ("Content-Length", str(len(body))), ("Cache-Control", "no-store")])
    return [body]


def _wants_json(environ: WSGIEnvironment) -> bool:
    query = str(environ.get("QUERY_STRING", ""))
    return "format=json" in query.split("&") or "application/json" in str(
        environ.get("HTTP_ACCEPT", ""))


class _ThreadingServer6(ThreadingWSGIServer):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr: stderr carries JSON log lines only."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _build() -> dict[str, str]:
    from pathlib import Path

    from .buildinfo import commit, is_development, package_fingerprint, sql_fingerprint
    from .config import packaged_sql_dir
    from .drift import package_version, shipped_schema_version

    sql_dir = packaged_sql_dir()
    version = package_version()
    return {"version": version,
            "development": "true" if is_development(version) else "false",
            "schema_version": "-" if sql_dir is None else shipped_schema_version(sql_dir),
            "commit": commit(),
            "package_fingerprint": "-" if sql_dir is None else package_fingerprint(
                Path(__file__).resolve().parent, sql_dir),
            "sql_fingerprint": "-" if sql_dir is None else sql_fingerprint(sql_dir)}
