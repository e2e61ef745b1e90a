"""Observability wiring: the exposed metric names, the /metrics endpoint, the spans."""

from __future__ import annotations

import contextlib
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from prometheus_client import CollectorRegistry
from recording_finalize import tracing
from recording_finalize.metrics import CYCLE_RESULTS, Metrics
from recording_finalize.probes import Health

P = "messenger_recording_finalize"

# Every series a fresh Metrics exposes, by its exposed name (docs/driver-design.md).
EXPECTED_NAMES = {
    f"{P}_backlog",
    f"{P}_due_rows",
    f"{P}_oldest_age_seconds",
    f"{P}_reconciled_total",
    f"{P}_failed_total",
    f"{P}_republished_total",
    f"{P}_quarantined_total",
    f"{P}_quarantined_rows",
    f"{P}_publish_backlog",
    f"{P}_oldest_unpublished_age_seconds",
    f"{P}_published_total",
    f"{P}_publish_failures_total",
    f"{P}_last_success_timestamp_seconds",
    f"{P}_last_progress_timestamp_seconds",
    f"{P}_last_refresh_timestamp_seconds",
    f"{P}_ready",
    f"{P}_config_errors_total",
    f"{P}_service_fault",
    f"{P}_cycles_total",
    f"{P}_cycle_duration_seconds_bucket",
    f"{P}_cycle_duration_seconds_count",
    f"{P}_cycle_duration_seconds_sum",
    # the operator toolkit: the pause switch and the quarantined rows by reason
    f"{P}_paused",
    f"{P}_quarantined_rows_by_reason",
    f"{P}_storage_incidents_open",
    f"{P}_storage_incidents_opened_total",
    f"{P}_missing_deferred_total",
    f"{P}_transient_total",
    f"{P}_attempts_held_total",
    f"{P}_discovered_total",
    f"{P}_republish_held_recordings",
    f"{P}_busy_total",
    # pacing of a drain (driver/pacing.py)
    f"{P}_pace_rows_per_second",
    f"{P}_pace_slowdowns_total",
    f"{P}_build_info",
    # republish discovery held (the adapter's service_events forgets what was delivered)
    f"{P}_republish_held_recordings",
    # the service's own events its relay left unpublished: the contract's name, no prefix
    "recording_finalize_service_events_unpublished",
    # the standard process collector (Linux /proc)
    "process_virtual_memory_bytes",
    "process_resident_memory_bytes",
    "process_start_time_seconds",
    "process_cpu_seconds_total",
    "process_open_fds",
    "process_max_fds",
}


def samples(text: str) -> dict[str, float]:
    """``{'name{labels}': value}`` of an exposition, comments skipped."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            out[series] = float(value)
    return out


def names(text: str) -> set[str]:
    return {series.split("{", 1)[0] for series in samples(text)}


@dataclass(frozen=True)
class FakeStats:
    backlog: int = 7
    due: int = 3
    oldest_age_seconds: float = 1234.5
    quarantined: int = 2
    publish_backlog: int = 1001
    oldest_unpublished_age_seconds: float = 61.25


def test_exposed_names_are_exactly_the_documented_ones() -> None:
    text = Metrics().render().decode()
    assert names(text) == EXPECTED_NAMES
    assert "_total_total" not in text
    assert "_created" not in text
    # Every cycle result is exposed from the start, so increase() sees the first one.
    for result in CYCLE_RESULTS:
        assert samples(text)[f'{P}_cycles_total{{result="{result}"}}'] == 0.0


def test_build_info_carries_the_version_and_the_schema_version() -> None:
    text = Metrics().render().decode()
    [line] = [x for x in text.splitlines() if x.startswith(f"{P}_build_info{{")]
    assert 'version="0.' in line and 'schema_version="0' in line and line.endswith(" 1.0")


def test_update_from_stats_sets_the_gauges_and_when_they_were_refreshed() -> None:
    now = [1000.0]
    m = Metrics(clock=lambda: now[0])
    # Until the first refresh: the process start (an alert on age must not fire at start-up).
    assert samples(m.render().decode())[f"{P}_last_refresh_timestamp_seconds"] == 1000.0
    now[0] = 1500.0
    m.update_from_stats(FakeStats())
    s = samples(m.render().decode())
    assert s[f"{P}_last_refresh_timestamp_seconds"] == 1500.0
    assert s[f"{P}_backlog"] == 7
    assert s[f"{P}_due_rows"] == 3
    assert s[f"{P}_oldest_age_seconds"] == 1234.5
    assert s[f"{P}_quarantined_rows"] == 2
    assert s[f"{P}_publish_backlog"] == 1001
    assert s[f"{P}_oldest_unpublished_age_seconds"] == 61.25
    # A cycle that could not read stats() (database away) leaves values and timestamp as they
    # were: the age of the timestamp is what says the values are stale.
    now[0] = 1900.0
    m.observe_cycle("error", 0.1)
    s = samples(m.render().decode())
    assert s[f"{P}_last_refresh_timestamp_seconds"] == 1500.0 and s[f"{P}_backlog"] == 7


def test_counters_and_cycles() -> None:
    now = [1000.0]
    m = Metrics(clock=lambda: now[0])
    assert samples(m.render().decode())[f"{P}_last_success_timestamp_seconds"] == 1000.0
    m.reconciled_total.inc(3)
    m.failed_total.inc()
    now[0] = 2000.0
    m.observe_cycle("skipped", 0.01)
    s = samples(m.render().decode())
    assert s[f"{P}_reconciled_total"] == 3
    assert s[f"{P}_failed_total"] == 1
    assert s[f'{P}_cycles_total{{result="skipped"}}'] == 1
    assert s[f"{P}_last_success_timestamp_seconds"] == 1000.0  # a skipped cycle is no success
    assert s[f"{P}_last_progress_timestamp_seconds"] == 1000.0  # nor any progress
    now[0] = 1500.0
    m.mark_progress()  # a row settled in a cycle that has not ended
    s = samples(m.render().decode())
    assert s[f"{P}_last_progress_timestamp_seconds"] == 1500.0
    assert s[f"{P}_last_success_timestamp_seconds"] == 1000.0
    now[0] = 2000.0
    m.observe_cycle("ok", 0.2)
    s = samples(m.render().decode())
    assert s[f'{P}_cycles_total{{result="ok"}}'] == 1
    assert s[f"{P}_last_success_timestamp_seconds"] == 2000.0
    assert s[f"{P}_last_progress_timestamp_seconds"] == 2000.0
    assert s[f"{P}_cycle_duration_seconds_count"] == 2
    with pytest.raises(ValueError, match="unknown cycle result"):
        m.observe_cycle("great", 1.0)


def test_registries_are_independent() -> None:
    a, b = Metrics(), Metrics(CollectorRegistry())
    a.published_total.inc(5)
    assert samples(a.render().decode())[f"{P}_published_total"] == 5
    assert samples(b.render().decode())[f"{P}_published_total"] == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(m: Metrics, port: int) -> Iterator[int | None]:
    try:
        yield m.start_server(port, addr="127.0.0.1", health=Health(stale_after_s=60))
    finally:
        m.stop_server()


def test_metrics_endpoint_serves_the_registry() -> None:
    m = Metrics()
    m.backlog.set(42)
    port = free_port()
    with serving(m, port) as served:
        assert served == port
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            assert resp.status == 200
            body = resp.read().decode()
        assert names(body) == EXPECTED_NAMES
        assert samples(body)[f"{P}_backlog"] == 42
    # Stopped: nothing listens any more.
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_port_zero_disables_the_endpoint() -> None:
    m = Metrics()
    with serving(m, 0) as served:
        assert served is None
    # A port out of range is the configuration's to refuse (test_cli: RFR_METRICS_PORT=65536).


# --- tracing -----------------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.use_exporter(exporter)
    try:
        yield exporter
    finally:
        tracing.shutdown()


def test_cycle_and_attempt_spans_carry_their_attributes(spans: InMemorySpanExporter) -> None:
    with tracing.cycle_span("run-1"):
        with tracing.attempt_span("11111111-1111-1111-1111-111111111111", "reconcile", 3) as s:
            s.set_attribute("outcome", "found")
        with (
            pytest.raises(RuntimeError, match="boom"),
            tracing.attempt_span("22222222-2222-2222-2222-222222222222", "reconcile", 8),
        ):
            raise RuntimeError("boom")
    finished = {span.name: span for span in spans.get_finished_spans()}
    by_recording = {
        span.attributes["recording_id"]: span
        for span in spans.get_finished_spans()
        if span.attributes and "recording_id" in span.attributes
    }
    cycle = finished[tracing.CYCLE_SPAN]
    assert cycle.attributes == {"job_run_id": "run-1"}
    ok = by_recording["11111111-1111-1111-1111-111111111111"]
    assert ok.name == tracing.ATTEMPT_SPAN
    assert ok.attributes == {
        "recording_id": "11111111-1111-1111-1111-111111111111",
        "phase": "reconcile",
        "attempts": 3,
        "outcome": "found",
    }
    bad = by_recording["22222222-2222-2222-2222-222222222222"]
    assert bad.status.status_code is StatusCode.ERROR
    assert bad.attributes is not None and bad.attributes["attempts"] == 8
    # Both attempts are children of the cycle, in the same trace.
    for attempt in (ok, bad):
        assert attempt.parent is not None
        assert attempt.parent.span_id == cycle.context.span_id
        assert attempt.context.trace_id == cycle.context.trace_id


def test_without_otel_variables_tracing_is_a_no_op() -> None:
    assert tracing.configure({}) is False
    with tracing.cycle_span("run-2") as span:
        assert not span.is_recording()
        outer = trace.get_current_span()
        with tracing.attempt_span("33333333-3333-3333-3333-333333333333", "reconcile", 1) as a:
            a.set_attribute("outcome", "found")
            # No span is built and no context attached for an attempt nobody exports.
            assert not a.is_recording()
            assert trace.get_current_span() is outer
    assert tracing.configure({"OTEL_TRACES_EXPORTER": "none"}) is False
    assert tracing.configure({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}) is False


def test_console_exporter_prints_spans_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        assert tracing.configure({"OTEL_TRACES_EXPORTER": "console"}) is True
        with tracing.cycle_span("run-3"):
            pass
    finally:
        tracing.shutdown()
    err = capsys.readouterr().err
    assert tracing.CYCLE_SPAN in err
    assert "run-3" in err


def test_an_endpoint_alone_turns_on_otlp() -> None:
    try:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
        assert tracing.configure(env) is True
        # Never ended, so never exported: shutdown has nothing to send to the closed port.
        span = tracing.tracer().start_span("probe")
        assert span.is_recording()
    finally:
        tracing.shutdown()


def test_unknown_exporter_is_a_configuration_error() -> None:
    with pytest.raises(tracing.TracingConfigError, match="OTEL_TRACES_EXPORTER"):
        tracing.configure({"OTEL_TRACES_EXPORTER": "jaeger"})
    with pytest.raises(tracing.TracingConfigError, match="OTEL_EXPORTER_OTLP_PROTOCOL"):
        tracing.configure(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            }
        )
    assert isinstance(tracing.tracer(), trace.NoOpTracer)
