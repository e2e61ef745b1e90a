"""The ``recording-finalize`` console script: migrate, run, run-once, requeue, status.

Exit codes: 0 success, 2 bad configuration or usage (nothing was touched), 1 failure.
The configuration is validated before anything connects; overriding flags win over the
environment.

The modules that load boto3, librdkafka and yoyo are imported inside the commands that use
them, so ``--help`` and a configuration error answer at once.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import textwrap
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from types import FrameType
from typing import Any
from uuid import uuid4

import psycopg

from . import logs, queries, toolkit, tracing
from .config import (
    DURATION_RULE,
    VARIABLE_BY_NAME,
    VARIABLES,
    ConfigError,
    Settings,
    load_settings,
)
from .config import require_kafka as _require_kafka
from .errors import describe

PROG = "recording-finalize"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

DESCRIPTION = """\
Safety net of the messenger service: drives call recordings stuck in Recording/Uploading to
Available or Failed (checking the binary in S3), republishes lost call-recording-available
events, and relays the integration outbox to Kafka.
"""

EXIT_CODES = """\
exit codes:
  0  success
  2  bad configuration or usage (the message names the variable and its rule);
     nothing was connected to
  1  failure"""

# Which variables each command reads (all of them are validated, whatever the command).
_DB = ["DATABASE_URL"]
_CYCLE = [v.name for v in VARIABLES if v.name not in ("RFR_SQL_DIR",)]
_COMMAND_VARIABLES = {
    "migrate": [*_DB, "RFR_SQL_DIR"],
    "run": _CYCLE,
    "run-once": _CYCLE,
    "requeue": _DB,
    "status": [*_DB, "RFR_TOPIC"],
}
_REQUIRED = {
    "migrate": ("DATABASE_URL",),
    "run": ("DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS"),
    "run-once": ("DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS"),
    "requeue": ("DATABASE_URL",),
    "status": ("DATABASE_URL",),
}
# Flags that override variables, per command (the rest of the variables are env-only there).
_COMMAND_FLAGS = {
    "migrate": ["RFR_SQL_DIR"],
    "run": [v.name for v in VARIABLES if v.flag and v.name != "RFR_SQL_DIR"],
    "run-once": [v.name for v in VARIABLES if v.flag and v.name not in ("RFR_SQL_DIR",
                                                                         "RFR_METRICS_PORT")],
    "requeue": [],
    "status": ["RFR_TOPIC"],
}
# The operator toolkit's commands (driver/toolkit.py): explain, audit, retry, pause, resume, prune.
_COMMAND_VARIABLES |= toolkit.COMMAND_VARIABLES
_REQUIRED |= toolkit.REQUIRED
_COMMAND_FLAGS |= toolkit.COMMAND_FLAGS


def _environment_help(command: str) -> str:
    lines = [
        "environment (a flag, where listed, overrides its variable; durations are a number of",
        "seconds or a number with ms/s/m/h: 90, 250ms, 5m, 1h):",
    ]
    for name in _COMMAND_VARIABLES[command]:
        spec = VARIABLE_BY_NAME[name]
        if name in _REQUIRED.get(command, ()):
            default = "required"
        else:
            default = "default: unset" if spec.default is None else f"default: {spec.default}"
        flag = f", flag {spec.flag}" if spec.flag and name in _COMMAND_FLAGS[command] else ""
        lines.append(f"  {name}  ({default}{flag})")
        rule = spec.rule.replace(DURATION_RULE, "a duration")
        lines += textwrap.wrap(f"{spec.help}; {rule}", width=94, initial_indent="      ",
                               subsequent_indent="      ")
    if command in ("run", "run-once"):
        lines.append("  OTEL_*  standard OpenTelemetry variables; spans are exported only when "
                     "they ask")
    return "\n".join(lines)


def _epilog(command: str, extra: str = "") -> str:
    parts = [extra.rstrip()] if extra else []
    parts += [_environment_help(command), EXIT_CODES]
    return "\n\n".join(parts)


COMMANDS = {
    "migrate": (
        "create or upgrade the database schema and (re)apply the SQL functions",
        "Applies the versioned migrations of sql/migrations (tracked by yoyo-migrations in\n"
        "_yoyo_migration), then re-applies every sql/functions/*.sql in name order, each in its\n"
        "own transaction. Idempotent: run it on every deploy. Connect as the schema owner.",
        "exit 1: a migration or function file failed (the files before it stay applied).",
    ),
    "run": (
        "the long-running sidecar: a cycle every polling interval, relay, /metrics",
        "Runs a cycle every RFR_POLLING_INTERVAL (never two at once): takes the single-runner\n"
        "lock (busy: skip the tick), claims due rows, checks each recording's binary in S3,\n"
        "records the outcome, relays the outbox to Kafka and refreshes the gauges. Serves\n"
        "Prometheus metrics on RFR_METRICS_PORT (0 disables). A failed cycle is logged, counted\n"
        "and retried on the next tick; a lost database connection is re-established.\n"
        "SIGTERM/SIGINT: the current row is finished or left untouched, the lock released,\n"
        "exit 0.",
        "exit 1: the worker could not start (e.g. the metrics port is taken).\n"
        "exit 2: a start-up self-check failed: the lock connection goes through a\n"
        "transaction-pooling proxy, the producer would not be idempotent, or RFR_TOPIC or a\n"
        "policy value disagrees with the server's settings (recording_finalize.settings).",
    ),
    "run-once": (
        "one full cycle and a relay drain; prints the cycle summary as JSON",
        "Runs one cycle exactly as `run` does (lock, claim, S3 checks, outcomes, relay drain,\n"
        "gauges) and prints its summary as one JSON object on stdout: jobRunId, asOf, claimed,\n"
        "reconciled, failed, republished, closed, deferred, quarantined, backoff, stale,\n"
        "terminal, released, configError, published, durationMs, skipped (lock busy),\n"
        "disabled, stopped, error.",
        "exit 0: the cycle ran, was skipped (another runner holds the lock) or is disabled.\n"
        "exit 1: the cycle failed (database/relay error, or a storage configuration error).\n"
        "exit 2: a start-up self-check failed (as for run).",
    ),
    "requeue": (
        "runbook: hand quarantined recordings back to the worker (one, or in bulk), audited",
        toolkit.REQUEUE_DESCRIPTION,
        toolkit.REQUEUE_EXITS,
    ),
    "status": (
        "backlog, oldest age, publish backlog and the quarantined rows",
        "Prints the safety net's gauges (Pending backlog, due now, age of the oldest Pending\n"
        "row, quarantined rows, unpublished events) and the quarantined rows with their last\n"
        "error: a table, or one JSON object with --json. Connect as a login granted\n"
        "recording_finalize_operator.",
        "",
    ),
}


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=100)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=DESCRIPTION,
        epilog="Run `recording-finalize COMMAND --help` for a command's variables and flags.\n\n"
        + EXIT_CODES,
        formatter_class=_Formatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (summary, description, exits) in COMMANDS.items():
        cmd = sub.add_parser(
            name, help=summary, description=description, epilog=_epilog(name, exits),
            formatter_class=_Formatter,
        )
        if name == "requeue":
            toolkit.extend_requeue(cmd)
        if name == "run-once":
            toolkit.add_dry_run(cmd)
        if name in ("requeue", "status"):
            cmd.add_argument("--json", action="store_true",
                             help="print one JSON object instead of text")
        if name == "status":
            cmd.add_argument("--limit", type=int, default=50, metavar="N",
                             help="list at most N quarantined rows (1..10000, default 50)")
        for variable in _COMMAND_FLAGS[name]:
            spec = VARIABLE_BY_NAME[variable]
            flag = spec.flag or "--sql-dir"
            cmd.add_argument(flag, dest=variable, metavar=_metavar(spec.rule), default=None,
                             help=f"overrides {variable}")
    for name, (summary, description, exits) in toolkit.COMMANDS.items():
        cmd = sub.add_parser(
            name, help=summary, description=description, epilog=_epilog(name, exits),
            formatter_class=_Formatter,
        )
        toolkit.add_arguments(name, cmd)
    return parser


def _metavar(rule: str) -> str:
    if rule.startswith(DURATION_RULE):
        return "DURATION"
    if rule.startswith("an integer"):
        return "N"
    return "VALUE"


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {
        name: value for name in _COMMAND_FLAGS[args.command]
        if (value := getattr(args, name, None)) is not None
    }
    settings = load_settings(os.environ, overrides)
    if args.command in ("run", "run-once"):
        _require_kafka(settings)
        tracing.configure(os.environ)
    return settings


def _fail(message: str, code: int = EXIT_FAILURE, redact: bool = True) -> int:
    text = logs.redact(message) if redact else message
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "status" and not 1 <= args.limit <= 10000:
        return _fail(f"--limit must be an integer in 1..10000; got {args.limit}", EXIT_USAGE)
    try:
        settings = _settings(args)
    except (ConfigError, tracing.TracingConfigError) as err:
        # ConfigError masks secret values itself; its rule texts may show a URL form.
        return _fail(f"configuration error: {err}", EXIT_USAGE, redact=False)
    logs.add_secrets(settings.secrets())
    logs.capture_library_logs()

    handlers: dict[str, Callable[[argparse.Namespace, Settings], int]] = {
        "migrate": _migrate,
        "run": _run,
        "run-once": _run_once,
        "status": _status,
        "requeue": toolkit.requeue_command,
        "explain": toolkit.explain_command,
        "audit": toolkit.audit_command,
        "retry": toolkit.retry_command,
        "pause": toolkit.pause_command,
        "resume": toolkit.pause_command,
        "prune": toolkit.prune_command,
    }
    try:
        return handlers[args.command](args, settings)
    except psycopg.Error as err:
        return _fail(f"database error: {describe(err)}: {err}")


def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    from yoyo.exceptions import LockTimeout

    from .migrate import MissingSqlError, migrate

    try:
        result = migrate(settings)
    except MissingSqlError as err:
        return _fail(str(err), EXIT_USAGE)
    except LockTimeout:
        return _fail("another migrate holds the migration lock (yoyo_lock); try again")
    logs.log("migrated", applied=result.applied, functions=len(result.functions))
    print(f"migrations applied: {len(result.applied)}"
          + (f" ({', '.join(result.applied)})" if result.applied else " (up to date)"))
    print(f"function files applied: {len(result.functions)}")
    return EXIT_OK


class _Worker:
    """The objects a cycle needs, built once; ``close()`` releases them."""

    def __init__(self, settings: Settings) -> None:
        from .cycle import Context
        from .db import open_pool
        from .metrics import Metrics
        from .relay import Relay, delivery_timeout_for
        from .storage import Storage

        self.metrics = Metrics()
        self.pool = open_pool(settings)
        self.relay = Relay(settings, self.pool, self.metrics, logs.log,
                           delivery_timeout_s=delivery_timeout_for(settings))
        self.context = Context(
            settings=settings, pool=self.pool, storage=Storage(settings),
            metrics=self.metrics, relay=self.relay,
        )

    def close(self) -> None:
        self.relay.close()
        self.pool.close()
        self.metrics.stop_server()
        tracing.shutdown()


class _StopSignal:
    """SIGTERM/SIGINT set ``event``; the handler does nothing else.

    A handler runs between two bytecodes of the main thread, possibly inside the logger while
    it holds its lock: logging from here could deadlock, so the signal is only recorded and
    reported once the work has stopped.
    """

    def __init__(self) -> None:
        self.event = threading.Event()
        self.received: str | None = None
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.received = self.received or signal.Signals(signum).name
        self.event.set()

    def report(self) -> None:
        if self.received:
            logs.log("stop requested", signal=self.received,
                     message="stopped gracefully: no row half-applied, lock released")


def _safe_settings(settings: Settings) -> dict[str, Any]:
    """The configuration as the start-up log line shows it: no secrets, no URLs."""
    return {
        "bucket": settings.s3_bucket,
        "keyTemplate": settings.s3_key_template,
        "topic": settings.topic,
        "recordingsEnabled": settings.recordings_enabled,
        "pollingIntervalS": settings.polling_interval,
        "batchSize": settings.batch_size,
        "maxAttempts": settings.max_attempts,
        "finalizeSlaTimeoutS": settings.finalize_sla_timeout,
        "lockTtlS": settings.lock_ttl,
        "maxRunDurationS": settings.max_run_duration,
        "s3TimeoutS": settings.s3_timeout,
        "s3Concurrency": settings.s3_concurrency,
    }


def _start_checks(settings: Settings, retry: threading.Event | None = None) -> int | None:
    """The start-up self-checks of run and run-once; a failure exits 2 before any work.

    The producer must be idempotent with acks=all (a row is marked published only after the
    broker's acknowledgement), and the lock connection must reach a PostgreSQL session of its
    own (no transaction pooling). RFR_S3_TIMEOUT < RFR_LOCK_TTL / 2 is a configuration rule.
    RFR_TOPIC and the policy values must agree with the server's (recording_finalize.settings).

    An unreachable database is no verdict: with ``retry`` (``run``) the check is tried again
    every polling interval until it can be made or ``retry`` is set (stop: exit 0); without it
    (``run-once``) the database error propagates.
    """
    from .db import LockConnectionError, check_lock_connection
    from .relay import ProducerConfigError, check_producer_idempotent, producer_config
    from .server_settings import check_server_settings

    try:
        check_producer_idempotent(producer_config(settings))
    except ProducerConfigError as err:
        return _fail(f"start-up check failed: the Kafka producer must be idempotent with "
                     f"acks=all: {err}", EXIT_USAGE)
    while True:
        try:
            check_lock_connection(settings)
            check_server_settings(settings)
        except LockConnectionError as err:
            return _fail(f"start-up check failed: {err}", EXIT_USAGE)
        except ConfigError as err:
            # RFR_TOPIC or a policy value the server's settings refuse: named with both values.
            return _fail(f"configuration error: {err}", EXIT_USAGE, redact=False)
        except psycopg.Error as err:
            if retry is None:
                raise
            logs.log("start-up check waiting", level="warning", error=describe(err),
                     message="the database cannot be reached; the lock connection is checked "
                     "once it can")
            if retry.wait(settings.polling_interval):
                return EXIT_OK
            continue
        return None


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from .cycle import run_loop

    stop = _StopSignal()
    if (refused := _start_checks(settings, retry=stop.event)) is not None:
        stop.report()
        return refused
    worker = _Worker(settings)
    try:
        try:
            port = worker.metrics.start_server(settings.metrics_port)
        except OSError as err:
            return _fail(f"cannot serve /metrics on port {settings.metrics_port}: {err}")
        logs.log("worker started", metricsPort=port, **_safe_settings(settings))
        toolkit.start_pruner(settings, stop.event)
        if not settings.recordings_enabled:
            logs.log("recordings disabled", message="RECORDINGS_ENABLED=false: the worker "
                     "idles, touches no recording and publishes nothing")
        run_loop(worker.context, stop.event)
        stop.report()
        logs.log("worker stopped")
        return EXIT_OK
    finally:
        worker.close()


def _run_once(args: argparse.Namespace, settings: Settings) -> int:
    from .cycle import CycleSummary, run_cycle

    if args.dry_run:
        return toolkit.dry_run_command(args, settings)
    try:
        refused = _start_checks(settings)
    except psycopg.Error as err:
        # The cycle could not have connected either: the summary says so, as a cycle's would.
        summary = CycleSummary(job_run_id=str(uuid4()), as_of=datetime.now(UTC),
                               error=describe(err))
        logs.log("cycle failed", level="error", jobRunId=summary.job_run_id,
                 error=describe(err), detail=str(err))
        print(json.dumps(summary.to_dict() | {"stopped": False}, separators=(",", ":")),
              flush=True)
        return EXIT_FAILURE
    if refused is not None:
        return refused
    stop = _StopSignal()
    worker = _Worker(settings)
    try:
        summary = run_cycle(worker.context, stop.event)
    finally:
        worker.close()
    stop.report()
    result = summary.to_dict()
    result["stopped"] = stop.event.is_set()
    print(json.dumps(result, separators=(",", ":")), flush=True)
    return EXIT_OK if summary.ok else EXIT_FAILURE


def _status(args: argparse.Namespace, settings: Settings) -> int:
    with _connect(settings) as conn:
        stats = queries.stats(conn, settings.topic)
        rows = queries.quarantined_rows(conn, args.limit)
        extra_lines, extra = toolkit.status_lines(conn)
    if args.json:
        print(json.dumps({
            "backlog": stats.backlog,
            "due": stats.due,
            "oldestAgeSeconds": stats.oldest_age_seconds,
            "quarantined": stats.quarantined,
            "publishBacklog": stats.publish_backlog,
            "oldestUnpublishedAgeSeconds": stats.oldest_unpublished_age_seconds,
            "quarantinedRows": [
                {
                    "recordingId": str(r.recording_id),
                    "sessionKind": r.session_kind,
                    "sessionId": str(r.session_id),
                    "attempts": r.attempts,
                    "lastError": r.last_error,
                    "quarantinedAt": _iso(r.quarantined_at),
                }
                for r in rows
            ],
        } | extra, separators=(",", ":")))
        return EXIT_OK
    print(f"backlog (Pending rows)        {stats.backlog}")
    print(f"due now                       {stats.due}")
    print(f"oldest Pending row            {_age(stats.oldest_age_seconds)}")
    print(f"quarantined rows              {stats.quarantined}")
    print(f"publish backlog               {stats.publish_backlog}")
    print(f"oldest unpublished event      {_age(stats.oldest_unpublished_age_seconds)}")
    for extra_line in extra_lines:
        print(extra_line)
    if rows:
        print()
        print(f"quarantined (oldest first, {len(rows)} of {stats.quarantined}):")
        header = ("RECORDING_ID", "KIND", "ATTEMPTS", "QUARANTINED_AT", "LAST_ERROR")
        table = [header] + [
            (str(r.recording_id), r.session_kind, str(r.attempts), _iso(r.quarantined_at),
             r.last_error or "-")
            for r in rows
        ]
        widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
        for line in table:
            cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=False)]
            print("  ".join([*cells, line[-1]]))
    return EXIT_OK


def _connect(settings: Settings) -> psycopg.Connection[Any]:
    from .db import connect

    return connect(settings)


def _iso(value: datetime | None) -> str:
    """UTC ISO-8601, whatever the session's TimeZone."""
    if value is None:
        return "-"
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _age(seconds: float) -> str:
    total = int(seconds)
    if total == 0:
        return "-"
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{hours}h " if hours else "") + (f"{minutes}m " if hours or minutes else "") \
        + f"{secs}s"


if __name__ == "__main__":
    sys.exit(main())
