"""The ``recording-finalize`` console script: migrate, run, run-once, requeue, status,
storage-incident.

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
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import TYPE_CHECKING, Any
from uuid import uuid4

import psycopg

from . import logs, queries, toolkit, tracing
from .config import (
    DURATION_DAYS_RULE,
    DURATION_RULE,
    VARIABLE_BY_NAME,
    VARIABLES,
    ConfigError,
    Settings,
    load_settings,
)
from .config import require_kafka as _require_kafka
from .errors import SqlState, describe, sqlstate
from .ops import queries as ops_queries

if TYPE_CHECKING:
    from .drift import Shipped
    from .metrics import Metrics
    from .probes import Health

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
    "storage-incident": _DB,
}
_REQUIRED = {
    "migrate": ("DATABASE_URL",),
    "run": ("DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS"),
    "run-once": ("DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS"),
    "requeue": ("DATABASE_URL",),
    "status": ("DATABASE_URL",),
    "storage-incident": ("DATABASE_URL",),
}
# Flags that override variables, per command (the rest of the variables are env-only there).
_COMMAND_FLAGS = {
    "migrate": ["RFR_SQL_DIR"],
    "run": [v.name for v in VARIABLES if v.flag and v.name != "RFR_SQL_DIR"],
    "run-once": [v.name for v in VARIABLES if v.flag and v.name not in ("RFR_SQL_DIR",
                                                                         "RFR_METRICS_PORT")],
    "requeue": [],
    "status": ["RFR_TOPIC"],
    "storage-incident": [],
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
        rule = spec.rule.replace(DURATION_RULE, "a duration").replace(
            DURATION_DAYS_RULE, "a duration (also in days: 30d)")
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
        "create or upgrade the database schema and apply the SQL functions that changed",
        "Applies the versioned migrations of sql/migrations (tracked by yoyo-migrations in\n"
        "schema recording_finalize_migrations; tables an older version left in public are\n"
        "moved there), then applies every sql/functions/*.sql whose file or definition changed\n"
        "since it was last applied, in name order, each in its own transaction. Every file runs\n"
        "with lock_timeout 1 s and statement_timeout 60 s and is retried 5 times with backoff\n"
        "when a lock is not granted, so writers queued behind migrate wait about a second at\n"
        "most. Records each file's sha256 for the schema drift check of run/run-once/status.\n"
        "Idempotent: run it on every deploy, before the sidecars. Connect as the schema owner.",
        "exit 1: a migration or function file failed, or its locks were not granted in 5 tries\n"
        "        (the files before it stay applied; the message names the file).\n"
        "exit 2: refused, nothing changed: an applied migration's file has changed since it was\n"
        "        applied, or the database is newer than this package (migrations it does not\n"
        "        ship, or last migrated by a newer version).",
    ),
    "run": (
        "the long-running sidecar: a cycle every polling interval, relay, /metrics",
        "Runs a cycle every RFR_POLLING_INTERVAL (never two at once): takes the single-runner\n"
        "lock (busy: skip the tick), claims due rows, checks each recording's binary in S3,\n"
        "records the outcome, relays the outbox to Kafka and refreshes the gauges. Serves\n"
        "Prometheus metrics on RFR_METRICS_PORT (0 disables), with the probes /livez (200 while\n"
        "cycles start on schedule; 503 after 2 x RFR_POLLING_INTERVAL + RFR_LOCK_TTL without\n"
        "one) and /readyz (200 when the database answers and its schema matches this package;\n"
        "503 and the reason otherwise). A failed cycle is logged, counted and retried on the\n"
        "next tick; a lost database connection is re-established. At start an unreachable\n"
        "database is waited for (the endpoint answers meanwhile). SIGTERM/SIGINT: the current\n"
        "row is finished or left untouched, the lock released, exit 0.",
        "exit 1: the worker could not start (e.g. the metrics port is taken).\n"
        "exit 2: a start-up self-check failed, with the reason: the schema differs from this\n"
        "package (run `recording-finalize migrate`) or is newer; the server refused the login\n"
        "(password, unknown database, no recording_finalize_worker grant, never migrated);\n"
        "RFR_TOPIC or a policy value disagrees with the server's settings\n"
        "(recording_finalize.settings); the lock connection goes through a transaction-pooling\n"
        "proxy; or the producer would not be idempotent.",
    ),
    "run-once": (
        "one full cycle and a relay drain; prints the cycle summary as JSON",
        "Runs one cycle exactly as `run` does (lock, claim, S3 checks, outcomes, relay drain,\n"
        "gauges) and prints its summary as one JSON object on stdout: jobRunId, asOf, claimed,\n"
        "reconciled, failed, republished, closed, deferred, quarantined, backoff, stale,\n"
        "terminal, released, configError, published, durationMs, skipped (lock busy),\n"
        "disabled, stopped, error.",
        "exit 0: the cycle ran, was skipped (another runner holds the lock) or is disabled.\n"
        "exit 1: the cycle failed (database/relay error, or a storage configuration error), or\n"
        "was degraded: the storage was unreachable or the relay could not deliver (result\n"
        "\"degraded\", the reasons in \"degraded\"; also result, checked, transient,\n"
        "deferredByIncident, storageUnreachable, publishFailed).\n"
        "exit 2: a start-up self-check failed (as for run: schema drift, refused login, ...).",
    ),
    "requeue": (
        "runbook: hand quarantined recordings back to the worker (one, or in bulk), audited",
        toolkit.REQUEUE_DESCRIPTION,
        toolkit.REQUEUE_EXITS,
    ),
    "status": (
        "backlog, oldest age, publish backlog and the quarantined rows",
        "Prints the safety net's gauges (Pending backlog, due now, age of the oldest Pending\n"
        "row, quarantined rows, unpublished events), the schema version of the database and\n"
        "whether it matches this package, the quarantined rows with their last error, and the\n"
        "open and recent (7 days) storage incidents: a table, or one JSON object with --json\n"
        "(its \"schema\" member: database, package, packageVersion, migratedBy, matches,\n"
        "databaseIsNewer, differences). Connect as a login granted recording_finalize_operator.",
        "",
    ),
    "storage-incident": (
        "record a file-storage incident the worker could not see; list incidents",
        "While a storage incident is open, and for RFR_UPLOAD_GRACE after it was closed, a 404\n"
        "fails no recording whose upload window (recording stop or session end, to now)\n"
        "overlapped it: the row is re-checked at incident end + grace, its attempt given back.\n"
        "The worker opens and closes incidents of source 'worker' itself (HeadBucket\n"
        "unreachable, or most HEADs of a cycle transient). Record here what it could not see,\n"
        "e.g. the recorders' path to S3 was broken while the worker's was not:\n"
        "\n"
        "  open    opens an incident of --source (idempotent: an open one is shown unchanged)\n"
        "  close   closes the open incident of --source\n"
        "  list    open incidents, then those that ended within --recent\n"
        "\n"
        "--at back-dates the start (open) or the end (close): an ISO-8601 time (no offset =\n"
        "UTC) or a duration ago (20m, 2h, 1d). Log in as a role granted\n"
        "recording_finalize_operator; the worker's role may only record source 'worker'.",
        "exit 1: close found no open incident of --source; the role may not record that\n"
        "source (RF018); a database error.\n"
        "exit 2: a bad --source, --at (in the future, before the start), --recent or --limit.",
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
    parser.add_argument("--version", action=_VersionAction,
                        help="print the package version and the schema version it ships")
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
        if name == "storage-incident":
            cmd.add_argument("action", choices=("open", "close", "list"),
                             help="open, close or list")
            cmd.add_argument("--source", default=None, metavar="S",
                             help="who saw it: a short lowercase name (default: ops; list: "
                             "every source)")
            cmd.add_argument("--at", default=None, metavar="T",
                             help="when it started (open) or ended (close): ISO-8601 or a "
                             "duration ago; default now")
            cmd.add_argument("--reason", default=None, metavar="R",
                             help="what happened (no URLs: they are masked)")
            cmd.add_argument("--recent", default="7d", metavar="DURATION",
                             help="list: ended incidents this recent (default 7d)")
            cmd.add_argument("--limit", type=int, default=100, metavar="N",
                             help="list: at most N incidents (1..10000, default 100)")
            cmd.add_argument("--json", action="store_true",
                             help="print JSON instead of text")
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


class _VersionAction(argparse.Action):
    """``--version``: the package version and the schema version (its last migration) it
    ships; computed only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None
                 ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(version_text())
        parser.exit(EXIT_OK)


def version_text() -> str:
    from .config import packaged_sql_dir
    from .drift import package_version, shipped

    sql_dir = packaged_sql_dir()
    if sql_dir is None:
        return f"{PROG} {package_version()} (schema: none, this installation ships no sql/)"
    package = shipped(sql_dir)
    return (f"{PROG} {package.version} (schema {package.schema_version}: "
            f"{len(package.migrations)} migrations, {len(package.functions)} function files)")


def _metavar(rule: str) -> str:
    if rule.startswith((DURATION_RULE, DURATION_DAYS_RULE)):
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
    try:
        code = _main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``status | head -1``): no traceback, and no second failure
        # when Python flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILURE
    return code


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in ("status", "storage-incident") and not 1 <= args.limit <= 10000:
        return _fail(f"--limit must be an integer in 1..10000; got {args.limit}", EXIT_USAGE)
    incident_args: _IncidentArgs | None = None
    if args.command == "storage-incident":
        try:
            incident_args = _incident_args(args)
        except ValueError as err:
            return _fail(str(err), EXIT_USAGE)
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
        if incident_args is not None:
            return _storage_incident(incident_args, settings)
        return handlers[args.command](args, settings)
    except psycopg.Error as err:
        hint = ""
        if err.sqlstate == "42501" and args.command not in ("migrate", "run", "run-once"):
            hint = (f"; `{args.command}` is an operator's command: log in as a role granted "
                    "recording_finalize_operator")
        return _fail(f"database error: {describe(err)}: {err}{hint}")


def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    from yoyo.exceptions import LockTimeout

    from .install.migrate import MigrateLockBusy, MigrateRefused, MissingSqlError, migrate

    def say(message: str) -> None:
        logs.log("migrate waiting", level="warning", message=message)

    try:
        result = migrate(settings, say=say)
    except MissingSqlError as err:
        return _fail(str(err), EXIT_USAGE)
    except MigrateRefused as err:
        return _fail(f"migrate refused, nothing was changed: {err}", EXIT_USAGE)
    except MigrateLockBusy as err:
        return _fail(f"migrate stopped: {err}")
    except LockTimeout:
        return _fail("another migrate holds the migration lock (yoyo_lock); try again")
    logs.log("migrated", applied=result.applied, functions=len(result.functions),
             unchanged=len(result.unchanged), movedTables=result.moved_tables,
             lockRetries=result.lock_retries, schemaVersion=result.schema_version)
    if result.moved_tables:
        print(f"moved yoyo's tables from public to recording_finalize_migrations: "
              f"{', '.join(result.moved_tables)}")
    print(f"migrations applied: {len(result.applied)}"
          + (f" ({', '.join(result.applied)})" if result.applied else " (up to date)"))
    print(f"function files applied: {len(result.functions)}"
          + (f", unchanged: {len(result.unchanged)}" if result.unchanged else ""))
    print(f"schema version: {result.schema_version} (recording-finalize {result.version})")
    return EXIT_OK


class _Worker:
    """The objects a cycle needs, built once; ``close()`` releases them."""

    def __init__(self, settings: Settings, metrics: Metrics | None = None) -> None:
        from .cycle import Context
        from .db import open_pool
        from .metrics import Metrics
        from .relay import Relay, delivery_timeout_for
        from .storage import Storage

        self.metrics = metrics or Metrics()
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


def _start_checks(
    settings: Settings, retry: threading.Event | None = None, health: Health | None = None
) -> int | None:
    """The start-up self-checks of run and run-once; a failure exits 2 before any work.

    The producer must be idempotent with acks=all (a row is marked published only after the
    broker's acknowledgement); the database's schema must match the package (applied
    migrations and function definitions, ``driver/drift.py``); RFR_TOPIC and the policy values
    must agree with the server's (recording_finalize.settings); and the lock connection must
    reach a PostgreSQL session of its own (no transaction pooling). RFR_S3_TIMEOUT <
    RFR_LOCK_TTL / 2 is a configuration rule.

    A server answer that waiting will not change (authentication failed, unknown database,
    no worker grant, never migrated) exits 2 with the server's own message. An unreachable
    database is no verdict: with ``retry`` (``run``) the checks are tried again every polling
    interval until they can be made or ``retry`` is set (stop: exit 0), and ``health`` hears
    each attempt; without it (``run-once``) the database error propagates.
    """
    from .db import LockConnectionError, check_lock_connection, refusal, server_message
    from .drift import shipped
    from .relay import ProducerConfigError, check_producer_idempotent, producer_config
    from .server_settings import check_server_settings

    try:
        check_producer_idempotent(producer_config(settings))
    except ProducerConfigError as err:
        return _fail(f"start-up check failed: the Kafka producer must be idempotent with "
                     f"acks=all: {err}", EXIT_USAGE)
    package = shipped(settings.sql_dir)
    while True:
        if health is not None:
            health.beat()
        try:
            if (refused := _check_schema(settings, package)) is not None:
                return refused
            check_lock_connection(settings)
            check_server_settings(settings)
        except LockConnectionError as err:
            return _fail(f"start-up check failed: {err}", EXIT_USAGE)
        except ConfigError as err:
            # RFR_TOPIC or a policy value the server's settings refuse: named with both values.
            return _fail(f"configuration error: {err}", EXIT_USAGE, redact=False)
        except psycopg.Error as err:
            if (meaning := refusal(err)) is not None:
                logs.log("start-up check failed", level="error", error=describe(err),
                         message=meaning)
                return _fail(f"start-up check failed: {meaning}. The server said: "
                             f"{server_message(err)}", EXIT_USAGE)
            if retry is None:
                raise
            logs.log("start-up check waiting", level="warning", error=describe(err),
                     message="the database cannot be reached; the checks are made once it can")
            if retry.wait(settings.polling_interval):
                return EXIT_OK
            continue
        return None


def _check_schema(settings: Settings, package: Shipped) -> int | None:
    """Exit 2 when the database's schema differs from the package's, else None."""
    from .drift import schema_drift

    with _connect(settings) as conn:
        drift = schema_drift(conn, package)
    if drift.matches:
        return None
    logs.log("schema mismatch", level="error", databaseIsNewer=drift.database_is_newer,
             differences=drift.differences)
    return _fail(f"start-up check failed: {drift.message()}", EXIT_USAGE)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from .cycle import run_loop
    from .drift import shipped
    from .maintenance import Pruner
    from .metrics import Metrics
    from .probes import Health, ReadinessChecker

    stop = _StopSignal()
    metrics = Metrics()
    # The cycle loop runs in this thread; liveness watches it.
    health = Health(stale_after_s=2 * settings.polling_interval + settings.lock_ttl)
    health.watch(threading.current_thread())
    # /metrics, /livez and /readyz answer from the start, also while the database is awaited.
    try:
        port = metrics.start_server(settings.metrics_port, health=health)
    except OSError as err:
        return _fail(f"cannot serve /metrics on port {settings.metrics_port}: {err}")
    readiness = ReadinessChecker(
        health, lambda: _connect(settings), shipped(settings.sql_dir),
        period_s=max(1.0, min(settings.polling_interval, 10.0)))
    readiness.start()
    try:
        if (refused := _start_checks(settings, retry=stop.event, health=health)) is not None:
            stop.report()
            return refused
        worker = _Worker(settings, metrics)
        try:
            logs.log("worker started", metricsPort=port, **_safe_settings(settings))
            Pruner(settings).start(stop.event)
            if not settings.recordings_enabled:
                logs.log("recordings disabled", message="RECORDINGS_ENABLED=false: the worker "
                         "idles, touches no recording and publishes nothing")
            run_loop(worker.context, stop.event, on_tick=health.beat)
            stop.report()
            logs.log("worker stopped")
            return EXIT_OK
        finally:
            worker.close()
    finally:
        readiness.stop()
        metrics.stop_server()


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
    from .drift import schema_drift, shipped

    package = shipped(settings.sql_dir)
    with _connect(settings) as conn:
        stats = queries.stats(conn, settings.topic)
        rows = ops_queries.quarantined_rows(conn, args.limit)
        extra_lines, extra = toolkit.status_lines(conn)
        incidents = queries.storage_incident_list(conn)
        drift = schema_drift(conn, package)
    schema_info = {
        "database": drift.database_schema_version,
        "package": package.schema_version,
        "packageVersion": package.version,
        "migratedBy": drift.database_package_version,
        "matches": drift.matches,
        "databaseIsNewer": drift.database_is_newer,
        "differences": drift.differences,
    }
    if args.json:
        print(json.dumps({
            "schema": schema_info,
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
            "storageIncidents": [_incident_json(i) for i in incidents],
        } | extra, separators=(",", ":")))
        return EXIT_OK
    verdict = "matches" if drift.matches else (
        "DATABASE IS NEWER" if drift.database_is_newer else "DIFFERS, run migrate")
    print(f"schema version                {drift.database_schema_version or '-'} (package "
          f"{package.schema_version}, recording-finalize {package.version}): {verdict}")
    print(f"backlog (Pending rows)        {stats.backlog}")
    print(f"due now                       {stats.due}")
    print(f"oldest Pending row            {_age(stats.oldest_age_seconds)}")
    print(f"quarantined rows              {stats.quarantined}")
    print(f"publish backlog               {stats.publish_backlog}")
    print(f"oldest unpublished event      {_age(stats.oldest_unpublished_age_seconds)}")
    if not drift.matches:
        print(f"schema: {drift.message()}")
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
    open_count = sum(1 for i in incidents if i.is_open)
    print(f"storage incidents open        {open_count}")
    if incidents:
        print()
        print("storage incidents (open, then ended in the last 7 days):")
        _print_incidents(incidents)
    return EXIT_OK


@dataclass(frozen=True)
class _IncidentArgs:
    action: str
    source: str | None
    at: datetime | None
    reason: str | None
    recent_s: float
    limit: int
    as_json: bool


def _incident_args(args: argparse.Namespace) -> _IncidentArgs:
    """Validates the storage-incident flags; ValueError names the flag and its rule."""
    from .config import parse_duration

    at: datetime | None = None
    if args.at is not None:
        text = args.at.strip()
        try:
            at = datetime.now(UTC) - timedelta(seconds=parse_duration(text, days=True))
        except ValueError:
            try:
                at = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(f"--at must be an ISO-8601 time (2026-12-01T08:00:00Z) or a "
                                 f"duration ago (20m, 2h, 1d); got {args.at!r}") from None
            if at.tzinfo is None:
                at = at.replace(tzinfo=UTC)
    if args.action == "list" and (args.at is not None or args.reason is not None):
        raise ValueError("--at and --reason go with open and close, not list")
    try:
        recent_s = parse_duration(args.recent, days=True)
    except ValueError:
        raise ValueError(f"--recent must be a duration (90, 5m, 1h, 30d); got {args.recent!r}") \
            from None
    source = args.source
    if source is None and args.action != "list":
        source = "ops"
    return _IncidentArgs(args.action, source, at, args.reason, recent_s, args.limit, args.json)


def _storage_incident(a: _IncidentArgs, settings: Settings) -> int:
    try:
        with _connect(settings) as conn:
            if a.action == "list":
                incidents = [i for i in queries.storage_incident_list(conn, a.recent_s, a.limit)
                             if a.source is None or i.source == a.source]
                if a.as_json:
                    print(json.dumps({"storageIncidents": [_incident_json(i) for i in incidents]},
                                     separators=(",", ":")))
                elif incidents:
                    _print_incidents(incidents)
                else:
                    print("no open storage incident, none ended recently")
                return EXIT_OK
            assert a.source is not None
            if a.action == "open":
                incident: queries.StorageIncident | None = queries.storage_incident_open(
                    conn, a.source, a.reason, a.at)
            else:
                incident = queries.storage_incident_close(conn, a.source, a.at, a.reason)
    except psycopg.Error as err:
        state = sqlstate(err)
        message = err.diag.message_primary or str(err)
        if state in (SqlState.INCIDENT_SOURCE_INVALID, SqlState.INCIDENT_TIME_INVALID):
            return _fail(f"storage-incident {a.action}: {message} ({state})", EXIT_USAGE)
        if state == SqlState.INCIDENT_SOURCE_FORBIDDEN:
            return _fail(f"storage-incident {a.action}: {message} ({state}); log in as a role "
                         "granted recording_finalize_operator")
        raise
    if incident is None:
        return _fail(f"storage-incident close: source {a.source!r} has no open incident "
                     "(see `recording-finalize storage-incident list`)")
    event = ("storage incident opened" if a.action == "open" and incident.created
             else "storage incident already open" if a.action == "open"
             else "storage incident closed")
    logs.log(event, incidentId=incident.id, source=incident.source)
    if a.as_json:
        print(json.dumps(_incident_json(incident), separators=(",", ":")))
    else:
        what = {"storage incident opened": "opened", "storage incident already open":
                "already open (unchanged)", "storage incident closed": "closed"}[event]
        print(f"storage incident {incident.id} ({incident.source}) {what}: started "
              f"{_iso(incident.started_at)}, ended {_iso(incident.ended_at)}")
        if a.action == "close":
            print("a 404 stays untrusted for RFR_UPLOAD_GRACE after the end for the recordings "
                  "whose upload window overlapped it")
    return EXIT_OK


def _incident_json(i: queries.StorageIncident) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": i.id,
        "source": i.source,
        "startedAt": _iso(i.started_at),
        "endedAt": None if i.ended_at is None else _iso(i.ended_at),
        "open": i.ended_at is None,
        "reason": i.reason,
        "openedBy": i.opened_by,
        "closedBy": i.closed_by,
    }
    if i.duration_seconds is not None:
        out["durationSeconds"] = i.duration_seconds
    if i.created is not None:
        out["created"] = i.created
    return out


def _print_incidents(incidents: list[queries.StorageIncident]) -> None:
    header = ("ID", "SOURCE", "STARTED_AT", "ENDED_AT", "DURATION", "REASON")
    table = [header] + [
        (str(i.id), i.source, _iso(i.started_at),
         "open" if i.ended_at is None else _iso(i.ended_at),
         _age(i.duration_seconds or 0.0), i.reason or "-")
        for i in incidents
    ]
    widths = [max(len(line[k]) for line in table) for k in range(len(header) - 1)]
    for line in table:
        cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=False)]
        print("  ".join([*cells, line[-1]]))


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
