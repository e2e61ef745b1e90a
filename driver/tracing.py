"""OpenTelemetry spans: one per cycle, one per finalize attempt.

Exported only as the standard ``OTEL_*`` variables ask (``otlp`` over http/protobuf, or
``console``); otherwise a no-op tracer, with no SDK loaded. The caller hands in the environment.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from opentelemetry import trace

if TYPE_CHECKING:
    # The SDK is only imported when something is exported: the no-op path loads the API alone.
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

INSTRUMENTATION_NAME = "recording_finalize"
DEFAULT_SERVICE_NAME = "recording-finalize-retry"

CYCLE_SPAN = "recording_finalize.cycle"
ATTEMPT_SPAN = "recording_finalize.attempt"

_EXPORTERS = ("otlp", "console", "none")

_provider: TracerProvider | None = None


class TracingConfigError(ValueError):
    """An ``OTEL_*`` variable asks for something this worker cannot do."""

    def __init__(self, variable: str, rule: str, value: str) -> None:
        super().__init__(f"{variable}: {rule} (got {value!r})")


def _exporters(environ: Mapping[str, str]) -> list[str]:
    """The exporters the environment asks for, per the OpenTelemetry SDK conventions."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    raw = environ.get("OTEL_TRACES_EXPORTER", "").strip()
    if raw:
        names = [name.strip().lower() for name in raw.split(",") if name.strip()]
        for name in names:
            if name not in _EXPORTERS:
                raise TracingConfigError("OTEL_TRACES_EXPORTER",
                                         f"must be a list of {', '.join(_EXPORTERS)}", raw)
        exporters = [name for name in names if name != "none"]
    else:
        endpoint = (environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                    or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))
        exporters = ["otlp"] if endpoint else []
    if "otlp" in exporters:
        for variable in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            protocol = environ.get(variable, "").strip()
            if protocol and protocol != "http/protobuf":
                raise TracingConfigError(variable, "this worker exports OTLP over http/protobuf "
                                         "only", protocol)
    return exporters


def configure(environ: Mapping[str, str]) -> bool:
    """Sets up exporting as the ``OTEL_*`` variables of ``environ`` ask; True when it exports."""
    names = _exporters(environ)
    if not names:
        shutdown()
        return False
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    exporters: list[tuple[SpanExporter, bool]] = []
    for name in names:
        if name == "console":
            exporters.append((ConsoleSpanExporter(out=sys.stderr), False))
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporters.append((OTLPSpanExporter(), True))
    _install(environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE_NAME, exporters)
    return True


def use_exporter(exporter: SpanExporter, service_name: str = DEFAULT_SERVICE_NAME) -> None:
    """Exports every span synchronously to ``exporter`` (tests: an in-memory exporter)."""
    _install(service_name, [(exporter, False)])


def _install(service_name: str, exporters: list[tuple[SpanExporter, bool]]) -> None:
    """Replaces the current provider; a batching processor for network exporters."""
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    global _provider
    shutdown()
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service_name}))
    for exporter, batched in exporters:
        processor = BatchSpanProcessor(exporter) if batched else SimpleSpanProcessor(exporter)
        provider.add_span_processor(processor)
    _provider = provider


def shutdown() -> None:
    """Flushes and stops the exporters, if any; later spans are no-ops until reconfigured."""
    global _provider
    provider, _provider = _provider, None
    if provider is not None:
        provider.shutdown()


def enabled() -> bool:
    """True when spans are recorded and exported."""
    return _provider is not None


def tracer() -> trace.Tracer:
    """The worker's tracer: the SDK's when configured, else a no-op one."""
    if _provider is None:
        return trace.NoOpTracer()
    return _provider.get_tracer(INSTRUMENTATION_NAME)


@contextmanager
def cycle_span(job_run_id: str) -> Iterator[trace.Span]:
    """The span of one cycle, attribute ``job_run_id`` (the cycle's correlation id)."""
    with tracer().start_as_current_span(CYCLE_SPAN, attributes={"job_run_id": job_run_id}) as span:
        yield span


@contextmanager
def attempt_span(recording_id: str, phase: str, attempts: int) -> Iterator[trace.Span]:
    """The span of one finalize attempt, nested in the current cycle span (``attempts``: the
    count after the claim's increment)."""
    if _provider is None:
        # Nothing is exported: no span at all. (The API's no-op tracer would still build one and
        # attach a context for each attempt, a cost every finalized row paid for nothing.)
        yield trace.INVALID_SPAN
        return
    with tracer().start_as_current_span(ATTEMPT_SPAN, attributes={
            "recording_id": recording_id, "phase": phase, "attempts": attempts}) as span:
        yield span
