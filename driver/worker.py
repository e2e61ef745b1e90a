"""``recording-finalize run`` and ``run-once``: the start-up checks, /readyz's checks and the
wiring of a cycle's ``Context``. A composition root, like ``cli.py``: it may import every part
of the package. The modules that load boto3, librdkafka, prometheus_client and the OpenTelemetry
SDK are imported inside the commands, so ``--help`` answers at once."""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from types import FrameType
from typing import TYPE_CHECKING, Any
from uuid import uuid4

import psycopg

from . import cliutil, config, errors, logs, tracing
from .ops import dry_run

if TYPE_CHECKING:
    from .config import Settings
    from .cycle import Context
    from .drift import Shipped
    from .metrics import Metrics
    from .probes import Check, Health, Probe
    from .storage import Storage

# Which variables the worker reads, and which a flag may override.
_CYCLE = [v.name for v in config.VARIABLES if v.name not in ("RFR_SQL_DIR",)]
_RUN_FLAGS = [v.name for v in config.VARIABLES if v.flag and v.name != "RFR_SQL_DIR"]
_RUN_ONCE_FLAGS = [v.name for v in config.VARIABLES if v.flag and v.name not in (
    "RFR_SQL_DIR", "RFR_METRICS_PORT", "RFR_METRICS_ADDRESS")]
_OTEL_NOTE = "  OTEL_*  standard OpenTelemetry variables; spans are exported only when they ask"


def _prepare(settings: Settings) -> None:
    config.require_kafka(settings)
    tracing.configure(os.environ)


@contextmanager
def _cycle_context(settings: Settings, metrics: Metrics | None = None) -> Iterator[Context]:
    from .cycle import Context
    from .db import open_pool
    from .metrics import Metrics
    from .relay import Relay
    from .storage import Storage

    metrics = metrics or Metrics()
    pool = open_pool(settings)
    relay = Relay(settings, pool, metrics)
    context = Context(settings=settings, pool=pool, storage=Storage(settings), metrics=metrics,
                      relay=relay)
    # What start-up built lives as long as the process: out of the collector's full passes,
    # which run a few times a second while rows are finalized (collected first: no garbage kept).
    gc.collect()
    gc.freeze()
    try:
        yield context
    finally:
        relay.close()
        pool.close()
        tracing.shutdown()


class _StopSignal:
    """SIGTERM/SIGINT set ``event`` and do nothing else: a handler runs between two bytecodes
    of the main thread, possibly inside the logger while it holds its lock, so logging from
    there could deadlock; the signal is reported once the work has stopped."""

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


#: The configuration as the start-up log line shows it (field → setting): no secrets, no URLs.
_SHOWN_SETTINGS = {
    "bucket": "s3_bucket", "keyTemplate": "s3_key_template", "topic": "topic",
    "recordingsEnabled": "recordings_enabled", "pollingIntervalS": "polling_interval",
    "batchSize": "batch_size", "lockTtlS": "lock_ttl", "maxRunDurationS": "max_run_duration",
    "s3TimeoutS": "s3_timeout", "s3Concurrency": "s3_concurrency",
}


# --- the start-up self-checks of run and run-once: a failure exits 2 before any work -----------


def _start_checks(
    settings: Settings, retry: threading.Event | None = None, health: Health | None = None
) -> int | None:
    """The bucket, the database's checks, then the topic. Storage or a broker that cannot be
    reached is no verdict (the cycles back off and open the worker's incident), nor is an
    unreachable database: ``run`` tries again every polling interval until ``retry`` is set
    (exit 0); ``run-once`` raises."""
    from .db import database_target, server_message
    from .drift import shipped
    from .storage import Storage, StorageConfigError

    package, storage = shipped(settings.sql_dir), Storage(settings)
    try:
        storage.check_bucket()
    except StorageConfigError as err:
        logs.log("start-up check failed", level="error", error=err.code,
                 bucket=settings.s3_bucket, message="the file storage refuses the bucket")
        why = _bucket_refused(settings.s3_bucket, err.code)
        return cliutil.fail(f"start-up check failed: {why}", cliutil.EXIT_USAGE)
    while True:
        if health is not None:
            health.startup_attempt()
        try:
            # The database first: its settings name the server's topic when RFR_TOPIC is
            # another; then whether the broker has the topic at all.
            return _check_database(settings, package) or _check_topic(settings)
        except psycopg.Error as err:
            if retry is None:
                raise
            target, said = database_target(settings), server_message(err)
            logs.log("start-up check waiting", level="warning", error=errors.describe(err),
                     database=target, reason=said, retryInSeconds=settings.polling_interval,
                     message="the database cannot be reached; the checks are made once it can")
            if health is not None:
                health.startup_waiting(f"the database cannot be reached at {target}: {said}")
            if retry.wait(settings.polling_interval):
                return cliutil.EXIT_OK


def _check_database(settings: Settings, package: Shipped) -> int | None:
    """An answer that waiting will not change (the schema, the lock connection, the policy, a
    refusal) exits 2 with the server's own message; other errors propagate."""
    from . import queries
    from .db import LockConnectionError, check_lock_connection, refusal, server_message

    try:
        with cliutil.connect(settings) as conn:
            # The writes rehearsed (rolled back): before any row is touched.
            event, fields, why = _schema_verdict(conn, package, rehearse=True)
            if event is not None:
                logs.log(event, level="error", **fields)
                return cliutil.fail(f"start-up check failed: {why}", cliutil.EXIT_USAGE,
                                    redact=False)
            check_lock_connection(settings, conn)
            _set_policy(conn, settings)
            # Where this worker looks and how often, for explain and audit.
            queries.call_value(conn, "report_worker_config", s3_bucket=settings.s3_bucket,
                               s3_key_template=settings.s3_key_template,
                               polling_interval=queries.interval(settings.polling_interval))
        return None
    except LockConnectionError as err:
        refused = str(err)
    except config.ConfigError as err:
        # RFR_TOPIC or a policy value the server's settings refuse: named with both values.
        return cliutil.fail(f"configuration error: {err}", cliutil.EXIT_USAGE, redact=False)
    except psycopg.Error as err:
        if (meaning := refusal(err)) is None:
            raise
        logs.log("start-up check failed", level="error", error=errors.describe(err),
                 message=meaning)
        refused = f"{meaning}. The server said: {server_message(err)}"
    return cliutil.fail(f"start-up check failed: {refused}", cliutil.EXIT_USAGE)


#: The policy column the server names in a refusal (the error's COLUMN field, never its text)
#: → the variable that sets it.
_VARIABLE_OF_COLUMN = {"sla_timeout": "RFR_FINALIZE_SLA_TIMEOUT"} | {
    column: f"RFR_{column.upper()}" for column in (
        "topic", "max_attempts", "backoff_base", "backoff_factor", "backoff_cap",
        "backoff_jitter", "upload_grace", "relay_batch_size", "retention")}


def _set_policy(conn: psycopg.Connection[Any], settings: Settings) -> None:
    """Stores the retry policy on the server, which every function reads (unset: the server's
    default; several runners: the last to start wins). A value the server refuses raises
    ``ConfigError`` naming the variable, with the server's message."""
    from . import queries
    try:
        policy = queries.set_policy(conn, settings)
    except psycopg.Error as err:
        if errors.sqlstate(err) not in (errors.SqlState.INVALID_PARAMETER,
                                        errors.SqlState.TOPIC_MISMATCH,
                                        errors.SqlState.POLICY_OUT_OF_BOUNDS):
            raise
        variable = _VARIABLE_OF_COLUMN.get(err.diag.column_name or "")
        raise config.ConfigError(variable or "RFR_* (the policy)",
                                 f"what the server accepts ({err.diag.message_primary or err})",
                                 variable and config.value_text(settings, variable)) from None
    if (replaced := policy.pop("replaced", None)) is not None:
        # Who stored it says whose it was: another runner's login, or migrate's defaults.
        logs.log("policy changed", level="warning", previous=replaced, policy=policy,
                 message=f"the stored retry policy differed (stored by {replaced.get('set_by')} "
                         f"at {replaced.get('set_at')}: another runner's, or the defaults "
                         "migrate stored); the last to start wins, so every runner now works "
                         "with this one")
    else:
        logs.log("policy set", policy=policy)


def _schema_verdict(conn: psycopg.Connection[Any], package: Shipped, *, rehearse: bool,
                    limit: int = 5) -> tuple[str | None, dict[str, Any], str]:
    """Start-up's and /readyz's judgement: (None, {}, what matches) or (log event, its fields,
    why not). Each step once the one before holds: the schema (``limit``: the differences
    shown), the contract, check_adapter (``rehearse``: the writes too, rolled back)."""
    from . import adapter, contract
    from .drift import schema_drift

    drift = schema_drift(conn, package)
    if not drift.matches:
        return "schema mismatch", {"databaseIsNewer": drift.database_is_newer,
                                   "differences": drift.differences}, drift.message(limit)
    if (owner := contract.product_owner(conn)) is None:
        return None, {}, drift.message()
    if problems := contract.check(conn, owner):
        return "contract broken", {"problems": problems.items}, (
            "the contract with the messenger service's tables does not hold for the product's "
            f"owner {owner}:\n{problems.message()}")
    findings = adapter.beneath(conn, rehearse=rehearse)
    if failing := findings.get("error"):
        return "adapter fails", {"problems": failing}, (
            "the worker would fail beneath the adapter (recording_finalize.check_adapter):\n"
            + "\n".join(f"  - {line}" for line in failing))
    if rehearse:  # start-up: said once, not at every /readyz
        for line in findings.get("warning", []):
            logs.log("adapter warning", level="warning", problem=line)
    return None, {}, drift.message()


def _bucket_refused(bucket: str, code: str) -> str:
    return (f"the file storage refuses the bucket {bucket!r} ({code}): check RFR_S3_BUCKET, the "
            "endpoint and the credentials")


# --- the commands -----------------------------------------------------------------------------


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from .cycle import run_loop
    from .maintenance import start_pruner
    from .metrics import Metrics
    from .probes import Health, Watchdog, cycle_bound

    stop = _StopSignal()
    metrics = Metrics()
    health = Health(stale_after_s=2 * settings.polling_interval + settings.lock_ttl,
                    cycle_bound_s=cycle_bound(settings.lock_ttl))
    health.watch(threading.current_thread())
    # /metrics, /livez and /readyz answer from the start, also while the database is awaited.
    try:
        port = metrics.start_server(settings.metrics_port, settings.metrics_address,
                                    health=health)
    except OSError as err:
        return cliutil.fail(f"cannot serve /metrics on {settings.metrics_address} port "
                            f"{settings.metrics_port}: {err}")
    # Nobody can ask /readyz without the endpoint (RFR_METRICS_PORT=0): no checks then.
    if port is not None:
        health.start_checks(_probes(settings), max(1.0, min(settings.polling_interval, 10.0)))
    try:
        if (refused := _start_checks(settings, retry=stop.event, health=health)) is not None:
            stop.report()
            return refused
        with _cycle_context(settings, metrics) as context:
            shown = {field: getattr(settings, name) for field, name in _SHOWN_SETTINGS.items()}
            logs.log("worker started", metricsPort=port, **shown)
            health.started()
            start_pruner(settings, stop.event)
            if not settings.recordings_enabled:
                logs.log("recordings disabled", message="RECORDINGS_ENABLED=false: the worker "
                         "idles, touches no recording and publishes nothing")
            with Watchdog(health, settings.max_run_duration, logs.log).running():
                run_loop(context, stop.event, on_tick=health.cycle_started,
                         on_done=health.cycle_ended)
            stop.report()
            logs.log("worker stopped")
        return cliutil.EXIT_OK
    finally:
        health.stop_checks()
        metrics.stop_server()


def _run_once(args: argparse.Namespace, settings: Settings) -> int:
    from .cycle import CycleSummary, run_cycle

    if args.dry_run:
        try:
            return dry_run.dry_run_command(args, settings)
        except psycopg.errors.InsufficientPrivilege as err:
            # The worker's login: the dry run reads what only operators may (claim_preview).
            return cliutil.fail(f"database error: {errors.describe(err)}: {err}; `run-once "
                                "--dry-run` is an operator's command: log in as a role granted "
                                "recording_finalize_operator")
    try:
        refused = _start_checks(settings)
    except psycopg.Error as err:
        # The cycle could not have connected either: the summary says so, as a cycle's would.
        summary = CycleSummary(job_run_id=str(uuid4()), as_of=datetime.now(UTC),
                               error=errors.describe(err))
        logs.log("cycle failed", level="error", jobRunId=summary.job_run_id,
                 error=errors.describe(err), detail=str(err))
        stopped = False
    else:
        if refused is not None:
            return refused
        stop = _StopSignal()
        with _cycle_context(settings) as context:
            summary = run_cycle(context, stop.event)
        stop.report()
        stopped = stop.event.is_set()
    print(json.dumps(summary.to_dict() | {"stopped": stopped}, separators=(",", ":")), flush=True)
    return cliutil.EXIT_OK if summary.ok else cliutil.EXIT_FAILURE


# --- /readyz's checks: one per dependency (probes.py runs them) -------------------------------

KAFKA_CHECK_TIMEOUT_S = 5.0


def _probes(settings: Settings) -> dict[str, Probe]:
    """The bucket and Kafka unready past a bound when they cannot be reached (two polling
    intervals and one attempt's time): a broker restart is no reason to take every pod out."""
    from .db import CONNECT_TIMEOUT_S
    from .probes import Probe
    from .relay import delivery_timeout_for
    from .storage import Storage

    return {
        "database": Probe(database_check(settings), timeout_s=CONNECT_TIMEOUT_S),
        "storage": Probe(storage_check(Storage(settings), settings),
                         grace_s=2 * settings.polling_interval + settings.s3_timeout,
                         timeout_s=3 * settings.s3_timeout),
        "kafka": Probe(kafka_check(settings),
                       grace_s=2 * settings.polling_interval + delivery_timeout_for(settings),
                       timeout_s=KAFKA_CHECK_TIMEOUT_S),
    }


def database_check(settings: Settings) -> Check:
    """A new connection every time (a password rotated under the running worker shows here,
    while the pool's open connections still work), then the drift check and the contract."""
    from .db import database_target, refusal, server_message
    from .drift import shipped
    from .probes import Answer

    package, target = shipped(settings.sql_dir), database_target(settings)

    def check() -> Answer:
        try:
            with cliutil.connect(settings) as conn:
                event, _, why = _schema_verdict(conn, package, rehearse=False, limit=2)
        except psycopg.Error as err:
            said = server_message(err)
            if (meaning := refusal(err)) is not None:
                return Answer(False, f"the database at {target} refused the worker: {meaning} "
                              f"(the server said: {said})")
            return Answer(False, f"the database cannot be reached at {target}: {said}")
        if event is None:
            return Answer(True, why)
        # One line: a probe's body is often read as one (kubectl's events).
        why = " ".join(why.split())
        return Answer(False, f"schema mismatch: {why}" if event == "schema mismatch" else why)

    return check


def storage_check(storage: Storage, settings: Settings) -> Check:
    """HeadBucket, then whether the bucket holds the newest uploaded recordings' binaries at the
    template's keys (the apply path's rule, the database's judgement; unanswered: no verdict)."""
    from . import queries
    from .probes import Answer
    from .storage import StorageConfigError

    def check() -> Answer:
        try:
            confirmed = storage.check_bucket()
        except StorageConfigError as err:
            return Answer(False, _bucket_refused(storage.bucket, err.code))
        if not confirmed:
            return Answer(False, f"the bucket {storage.bucket!r} could not be confirmed (the "
                          "file storage cannot be reached)", transient=True)
        try:
            with cliutil.connect(settings) as conn:
                rows = queries.known_uploads(conn)
                unconfirmed = bool(rows) and queries.storage_layout_unconfirmed(
                    conn, *storage.known_upload_answers(rows))
        except psycopg.Error:
            unconfirmed = False
        if unconfirmed:
            return Answer(False, f"the bucket {storage.bucket!r} holds none of the {len(rows)} "
                          f"newest uploaded recordings at the key template's keys (e.g. "
                          f"{storage.key_for(rows[0])!r}): check RFR_S3_BUCKET and "
                          "RFR_S3_KEY_TEMPLATE; no 404 fails a recording meanwhile")
        return Answer(True, f"bucket {storage.bucket!r} confirmed")

    return check


def _topic_client(settings: Settings, role: str) -> Any:
    """A Kafka client of its own for metadata requests about the topic (``client_config``: they
    never create it). Raises ``KafkaException`` on a configuration librdkafka refuses."""
    from confluent_kafka import Producer

    from .relay import CLIENT_ID, LIBRDKAFKA_LOG, client_config

    return Producer(client_config(settings) | {
        "client.id": f"{CLIENT_ID}-{role}",
        "socket.connection.setup.timeout.ms": round(KAFKA_CHECK_TIMEOUT_S * 1000),
        "logger": LIBRDKAFKA_LOG, "error_cb": lambda _err: None})


def _check_topic(settings: Settings) -> int | None:
    """Start-up: a broker that answers without the topic exits 2 naming it. A broker that does
    not answer is no verdict (the relay's deliveries wait for it, /readyz reports it)."""
    from confluent_kafka import KafkaException

    from .relay import check_topic, kafka_error

    try:
        _, refused = check_topic(_topic_client(settings, "start-up"), settings.topic,
                                 KAFKA_CHECK_TIMEOUT_S)
    except KafkaException as exc:
        logs.log("start-up check skipped", level="warning", check="kafka topic",
                 error=kafka_error(exc).name(), topic=settings.topic,
                 message="the broker did not answer; the topic is checked by /readyz and "
                         "before the relay publishes")
        return None
    if refused is None:
        return None
    logs.log("start-up check failed", level="error", error="TopicMissing", topic=settings.topic,
             message=refused)
    return cliutil.fail(f"start-up check failed: {refused}", cliutil.EXIT_USAGE)


def kafka_check(settings: Settings) -> Check:
    """A metadata request for the topic on a client of its own, which never creates it."""
    from confluent_kafka import KafkaException

    from .probes import Answer
    from .relay import check_topic, kafka_error

    topic = settings.topic
    try:
        client = _topic_client(settings, "readiness")
    except KafkaException as exc:
        refused = Answer(False, f"the Kafka client cannot be built from the configuration "
                         f"({exc}): check KAFKA_*")
        return lambda: refused

    def check() -> Answer:
        try:
            partitions, refused = check_topic(client, topic, KAFKA_CHECK_TIMEOUT_S)
        except KafkaException as exc:
            return Answer(False, f"the broker ({settings.kafka_bootstrap_servers}) did not "
                          f"answer within {KAFKA_CHECK_TIMEOUT_S:g} s "
                          f"({kafka_error(exc).name()})", transient=True)
        if refused is not None:
            return Answer(False, refused)
        return Answer(True, f"broker answers, topic {topic!r} has {partitions} partition(s)")

    return check


RUN = cliutil.Command(
    name="run",
    summary="the long-running sidecar: a cycle every polling interval, relay, /metrics",
    description=(
        "Runs a cycle every RFR_POLLING_INTERVAL (never two at once): takes the single-runner\n"
        "lock (busy: skip the tick), claims due rows, checks each recording's binary in S3,\n"
        "records the outcome, relays the outbox to Kafka and refreshes the gauges. Serves\n"
        "Prometheus metrics on RFR_METRICS_ADDRESS:RFR_METRICS_PORT (0 disables), with the\n"
        "probes /livez (200 while starting up or while cycles start on schedule; 503 after\n"
        "2 x RFR_POLLING_INTERVAL + RFR_LOCK_TTL without one, or while a cycle runs past\n"
        "RFR_LOCK_TTL and a grace, which\n"
        "is also logged) and /readyz (200 when the database accepts the login, its schema\n"
        "matches this package and the contract with the service's tables holds, the bucket is\n"
        "confirmed and the Kafka broker knows RFR_TOPIC; an unreachable storage or broker only\n"
        "counts once it lasted 2 x RFR_POLLING_INTERVAL + its timeout; 503 and one reason per\n"
        "line otherwise, ?format=json for JSON). A failed cycle is logged, counted and retried\n"
        "on the next tick; a lost database connection is re-established. At start an\n"
        "unreachable database is waited for, logging its host, port and libpq's error (the\n"
        "endpoint answers meanwhile). SIGTERM/SIGINT: the current row is finished or left\n"
        "untouched, the lock released, exit 0."
    ),
    exits=(
        "exit 1: the worker could not start (e.g. the metrics port is taken).\n"
        "exit 2: a start-up self-check failed, before the first cycle, with the reason: the\n"
        "schema is older than this package (run this release's migrate) or newer (an old pod:\n"
        "the new release replaces it; the way back is the newer package's rollback); the\n"
        "contract with the service's tables does not hold; the server refused the login\n"
        "(password, unknown database, no recording_finalize_worker grant, never migrated);\n"
        "RFR_TOPIC or a policy value disagrees with the server's settings\n"
        "(recording_finalize.settings); the file storage refuses the bucket (missing, access\n"
        "denied, no credentials); or the lock connection goes through a transaction-pooling\n"
        "proxy."
    ),
    handler=_run,
    variables=_CYCLE,
    required=("DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS"),
    flags=_RUN_FLAGS,
    prepare=_prepare,
    env_note=_OTEL_NOTE,
    for_operators=False,
)

# As run does, but with its own flags and the operator's --dry-run.
RUN_ONCE = replace(
    RUN,
    name="run-once",
    summary="one full cycle and a relay drain; prints the cycle summary as JSON",
    description=(
        "Runs one cycle exactly as `run` does (lock, claim, S3 checks, outcomes, relay drain,\n"
        "gauges) and prints its summary as one JSON object on stdout: jobRunId, asOf, claimed,\n"
        "reconciled, failed, republished, closed, deferred, quarantined, backoff, stale,\n"
        "terminal, released, configError, published, durationMs, skipped (lock busy),\n"
        "disabled, stopped, error."
    ),
    exits=(
        "exit 0: the cycle ran, was skipped (another runner holds the lock) or is disabled.\n"
        "exit 1: the cycle failed (database/relay error, or the storage refused an object or\n"
        "the bucket during the cycle: its claimed rows get their attempt back), or\n"
        "was degraded: the storage was unreachable or the relay could not deliver (result\n"
        "\"degraded\", the reasons in \"degraded\"; also result, checked, transient,\n"
        "deferredByIncident, storageUnreachable, publishFailed).\n"
        "exit 2: a start-up self-check failed, before the cycle (as for run: schema drift,\n"
        "broken contract, refused login, a policy or topic the server refuses, a refused\n"
        "bucket, ...)."
    ),
    handler=_run_once,
    flags=_RUN_ONCE_FLAGS,
    add_arguments=dry_run.add_arguments,
)
