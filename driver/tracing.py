"""OpenTelemetry spans: one per cycle, one per finalize attempt.

Exported only as the standard ``OTEL_*`` variables ask (``otlp`` over http/protobuf, or
``console``); otherwise a no-op tracer, with no SDK loaded. The caller hands in the environment.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from opentelemetry import trace

if TYPE_CHECKING:
    # The SDK is only imported when something is exported: the no-op path loads the API alone.
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

DEFAULT_SERVICE_NAME = "recording-finalize-retry"

CYCLE_SPAN = "recording_finalize.cycle"
ATTEMPT_SPAN = "recording_finalize.attempt"

_EXPORTERS = ("otlp", "console", "none")

_provider: TracerProvider | None = None


class TracingConfigError(ValueError):
    """An ``OTEL_*`` variable asks for something this worker cannot do."""


def _exporters(environ: Mapping[str, str]) -> list[str]:
    """The exporters the environment asks for, per the OpenTelemetry SDK conventions."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    raw = environ.get("OTEL_TRACES_EXPORTER", "").strip()
    if raw:
        names = [name.strip().lower() for name in raw.split(",") if name.strip()]
        if not set(names) <= set(_EXPORTERS):
            raise TracingConfigError(f"OTEL_TRACES_EXPORTER: must be a list of "
                                     f"{', '.join(_EXPORTERS)} (got {raw!r})")
        exporters = [name for name in names if name != "none"]
    else:
        endpoint = (environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                    or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))
        exporters = ["otlp"] if endpoint else []
    if "otlp" in exporters:
        for variable in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            protocol = environ.get(variable, "").strip()
            if protocol and protocol != "http/protobuf":
                raise TracingConfigError(f"{variable}: this worker exports OTLP over "
                                         f"http/protobuf only (got {protocol!r})")
    return exporters


def configure(environ: Mapping[str, str]) -> bool:
    """Sets up exporting as ``environ``'s ``OTEL_*`` variables ask; True when it exports."""
    names = _exporters(environ)
    if not names:
        shutdown()
        return False
    from opentelemetry.sdk.trace import export

    processors: list[SpanProcessor] = []
    if "console" in names:
        processors.append(export.SimpleSpanProcessor(export.ConsoleSpanExporter(out=sys.stderr)))
    if "otlp" in names:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        processors.append(export.BatchSpanProcessor(OTLPSpanExporter()))  # network: batched
    _install(environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE_NAME, processors)
    return True


def use_exporter(exporter: SpanExporter) -> None:
    """Exports every span synchronously to ``exporter`` (tests: an in-memory exporter)."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    _install(DEFAULT_SERVICE_NAME, [SimpleSpanProcessor(exporter)])


def _install(service_name: str, processors: list[SpanProcessor]) -> None:
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    global _provider
    shutdown()
    _provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service_name}))
    for processor in processors:
        _provider.add_span_processor(processor)


def shutdown() -> None:
    """Flushes and stops the exporters, if any; later spans are no-ops until reconfigured."""
    global _provider
    provider, _provider = _provider, None
    if provider is not None:
        provider.shutdown()


def tracer() -> trace.Tracer:
    if _provider is None:
        return trace.NoOpTracer()
    return _provider.get_tracer("recording_finalize")


def cycle_span(job_run_id: str) -> AbstractContextManager[trace.Span]:
    return tracer().start_as_current_span(CYCLE_SPAN, attributes={"job_run_id": job_run_id})


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
