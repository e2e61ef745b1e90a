"""The console script's contract: help, exit codes, validation before any connection, no
password in any output, the runbook commands (status, requeue) and migrate."""

from __future__ import annotations

import json
import socket
import subprocess
import uuid
from collections.abc import Iterator

import pytest
from conftest import (
    CLI,
    DEAD_PORT,
    REPO,
    Db,
    Stack,
    Worker,
    _base_env,
    finalize_row,
    put_binary,
    seed_stuck,
)


def run_cli(
    *args: str, env: dict[str, str], timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], env=_base_env() | env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("command", ["migrate", "run", "run-once", "requeue", "status"])
def test_every_command_explains_itself(command: str) -> None:
    proc = run_cli(command, "--help", env={})
    assert proc.returncode == 0
    text = proc.stdout
    assert "exit codes:" in text and "DATABASE_URL" in text
    if command in ("run", "run-once"):
        for name in ("RFR_POLLING_INTERVAL", "RFR_BATCH_SIZE", "RFR_LOCK_TTL", "RFR_S3_TIMEOUT",
                     "KAFKA_BOOTSTRAP_SERVERS", "RECORDINGS_ENABLED",
                     "RFR_S3_CONCURRENCY", "RFR_RELAY_BATCH_SIZE", "--batch-size"):
            assert name in text, name
        assert "RFR_LOCK_KEY" not in text and "--lock-key" not in text  # retired (CHANGELOG)


def test_top_level_help_lists_the_commands_and_no_command_is_a_usage_error() -> None:
    proc = run_cli("--help", env={})
    assert proc.returncode == 0
    for command in ("migrate", "run-once", "requeue", "status"):
        assert command in proc.stdout
    assert run_cli(env={}).returncode == 2
    assert run_cli("frobnicate", env={}).returncode == 2


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A port that records whether anything connected to it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def _nobody_connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


GOOD_ENV = {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9", "RFR_METRICS_PORT": "0"}

INVALID = [
    ("DATABASE_URL", None),
    ("DATABASE_URL", "mysql://u:pw@h/db"),
    ("DATABASE_URL", "not a url"),
    ("DATABASE_URL", "postgresql://w:pw-not-shown@[::1/db"),
    ("DATABASE_URL", "postgresql://w:pw-not-shown@127.0.0.1:notaport/db"),
    ("DATABASE_URL", "postgresql://w:pw-not-shown@127.0.0.1:99999/db"),
    ("DATABASE_URL", "postgresql://w:pw-not-shown@127.0.0.1/db?sslmode=bogus"),
    ("DATABASE_URL", "postgresql://w:pw-not-shown@127.0.0.1/db?connect_timeout=soon"),
    ("KAFKA_BOOTSTRAP_SERVERS", None),
    ("KAFKA_BOOTSTRAP_SERVERS", "no-port"),
    ("RFR_POLLING_INTERVAL", "0"),
    ("RFR_POLLING_INTERVAL", "-5s"),
    ("RFR_POLLING_INTERVAL", "soon"),
    ("RFR_POLLING_INTERVAL", "1d"),
    ("RFR_BATCH_SIZE", "0"),
    ("RFR_BATCH_SIZE", "10001"),
    ("RFR_BATCH_SIZE", "ten"),
    ("RFR_BATCH_SIZE", "1.5"),
    # The retry policy is only parsed here (the server judges its values: test_server_settings).
    ("RFR_MAX_ATTEMPTS", "1.5"),
    ("RFR_MAX_ATTEMPTS", "eight"),
    ("RFR_FINALIZE_SLA_TIMEOUT", "NaN"),
    ("RFR_FINALIZE_SLA_TIMEOUT", "-5m"),
    ("RFR_BACKOFF_BASE", "soon"),
    ("RFR_BACKOFF_FACTOR", "inf"),
    ("RFR_BACKOFF_FACTOR", "nan"),
    ("RFR_BACKOFF_CAP", "1y"),
    ("RFR_BACKOFF_JITTER", "lots"),
    ("RFR_UPLOAD_GRACE", "1w"),
    ("RFR_REPUBLISH_WINDOW", "-1h"),
    ("RFR_REPUBLISH_WINDOW", "31d"),
    ("RFR_LOCK_TTL", "3m"),  # not > max run duration (3m)
    ("RFR_LOCK_TTL", "25h"),
    ("RFR_MAX_RUN_DURATION", "0"),
    ("RFR_S3_TIMEOUT", "0"),
    ("RFR_S3_TIMEOUT", "150s"),  # >= lock TTL / 2
    ("RFR_S3_CONCURRENCY", "0"),
    ("RFR_S3_CONCURRENCY", "257"),
    ("RFR_RELAY_BATCH_SIZE", "0"),
    ("RFR_RELAY_BATCH_SIZE", "10001"),
    ("RFR_MAX_APPLY_RATE", "-1"),
    ("RFR_MAX_APPLY_RATE", "100001"),
    ("RFR_MAX_APPLY_RATE", "fast"),
    ("RFR_PACING", "fast"),
    ("RFR_PACING_SHARED_RATE", "0"),
    ("RFR_PACING_SHARED_RATE", "100001"),
    ("RFR_METRICS_PORT", "65536"),
    ("RFR_METRICS_PORT", "-1"),
    ("RECORDINGS_ENABLED", "maybe"),
    ("RFR_S3_BUCKET", "Bad_Bucket"),
    ("RFR_S3_KEY_TEMPLATE", "recordings/{id}"),
    ("RFR_S3_KEY_TEMPLATE", "recordings/static"),
    ("RFR_TOPIC", "bad topic"),
    ("S3_ENDPOINT_URL", "ftp://s3.example"),
    ("KAFKA_SECURITY_PROTOCOL", "CARRIER_PIGEON"),
    ("KAFKA_SASL_USERNAME", None),  # with SASL_SSL below
]


@pytest.mark.parametrize(("variable", "value"), INVALID,
                         ids=[f"{v}={x}" for v, x in INVALID])
def test_an_invalid_option_exits_2_naming_the_variable_before_connecting(
    listener: socket.socket, variable: str, value: str | None
) -> None:
    port = listener.getsockname()[1]
    env = GOOD_ENV | {"DATABASE_URL": f"postgresql://w:pw-not-shown@127.0.0.1:{port}/db"}
    if variable == "KAFKA_SASL_USERNAME":
        env |= {"KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "PLAIN",
                "KAFKA_SASL_PASSWORD": "pw"}
    if value is None:
        env.pop(variable, None)
    else:
        env[variable] = value
    proc = run_cli("run-once", env=env)
    assert proc.returncode == 2, proc.stderr
    assert variable in proc.stderr and "must be" in proc.stderr
    assert proc.stdout == ""
    assert "pw-not-shown" not in proc.stderr
    assert _nobody_connected(listener)


def test_a_flag_overrides_its_variable_and_is_validated_the_same_way(
    listener: socket.socket,
) -> None:
    port = listener.getsockname()[1]
    env = GOOD_ENV | {"DATABASE_URL": f"postgresql://w@127.0.0.1:{port}/db"}
    proc = run_cli("run-once", "--batch-size", "0", env=env)
    assert proc.returncode == 2
    assert "RFR_BATCH_SIZE (--batch-size)" in proc.stderr
    assert _nobody_connected(listener)


def test_the_database_password_never_appears_when_the_database_is_unreachable() -> None:
    # The file storage is unreachable too (no verdict: run-once checks the bucket first and a
    # storage it cannot reach does not stop it), so run-once gets as far as the database.
    env = GOOD_ENV | {
        "DATABASE_URL": f"postgresql://worker:Sup3rS3cret-pw@127.0.0.1:{DEAD_PORT}/db",
        "S3_ENDPOINT_URL": f"http://127.0.0.1:{DEAD_PORT}", "AWS_ACCESS_KEY_ID": "rfr-test",
        "AWS_SECRET_ACCESS_KEY": "rfr-test", "AWS_DEFAULT_REGION": "us-east-1"}
    for command in (["run-once"], ["status"], ["requeue", str(uuid.uuid4()), "--reason", "x"],
                    ["explain", str(uuid.uuid4())], ["audit"], ["migrate"]):
        proc = run_cli(*command, env=env)
        assert proc.returncode == 1, (command, proc.stderr)
        assert "Sup3rS3cret-pw" not in proc.stdout + proc.stderr
    proc = run_cli("run-once", env=env)
    assert proc.returncode == 1, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["error"] and summary["claimed"] == 0


def test_requeue_rejects_a_malformed_id_with_exit_2() -> None:
    proc = run_cli("requeue", "not-a-uuid", "--reason", "x",
                   env={"DATABASE_URL": "postgresql://u@127.0.0.1/x"})
    assert proc.returncode == 2
    assert "RECORDING_ID" in proc.stderr


def test_requeue_and_status_follow_the_runbook(worker: Worker, operator: Worker, db: Db) -> None:
    poison = seed_stuck(db)
    healthy = seed_stuck(db, ended_ago="1 minute")  # still within its SLA: stays Pending
    # Poison: the binary is there but its metadata is unusable -> quarantined at once.
    put_binary(worker.stack, worker.bucket, poison.recording_id,
               metadata={"duration-seconds": "NaN"})
    worker.run_once()

    # The runbook is the operator's: a login granted recording_finalize_operator.
    status = json.loads(operator.cli("status", "--json").stdout)
    assert status["quarantined"] == 1 and status["backlog"] == 1
    [row] = status["quarantinedRows"]
    assert row["recordingId"] == str(poison.recording_id)
    assert row["lastError"].startswith("InvalidMetadata: duration_seconds")
    text = operator.cli("status")
    assert text.returncode == 0 and str(poison.recording_id) in text.stdout
    assert "InvalidMetadata" in text.stdout

    # The worker's own login may not requeue: an operator action is not the worker's.
    proc = worker.cli("requeue", str(poison.recording_id), "--reason", "test")
    assert proc.returncode == 1 and "42501" in proc.stderr, proc.stderr
    assert "log in as a role granted recording_finalize_operator" in proc.stderr
    status = worker.cli("status")
    assert status.returncode == 1 and "recording_finalize_operator" in status.stderr
    assert finalize_row(db, poison.recording_id)["status"] == "Quarantined"

    # Not quarantined (RF006) and unknown (RF005): exit 1 with a clear message.
    # Requeue is an operator's command (recording_finalize_operator), audited with a reason.
    proc = operator.cli("requeue", str(healthy.recording_id), "--reason", "test")
    assert proc.returncode == 1 and "not Quarantined" in proc.stderr
    proc = operator.cli("requeue", str(uuid.uuid4()), "--reason", "test")
    assert proc.returncode == 1 and "no finalize row" in proc.stderr

    proc = operator.cli("requeue", str(poison.recording_id), "--json", "--reason", "re-uploaded")
    assert proc.returncode == 0, proc.stderr
    requeued = json.loads(proc.stdout)
    assert (requeued["status"], requeued["attempts"]) == ("Pending", 0)
    assert requeued["lastError"].startswith("InvalidMetadata")
    assert json.loads(operator.cli("status", "--json").stdout)["quarantined"] == 0


def test_service_sql_prints_for_the_services_dba_without_any_database() -> None:
    """service-sql never connects: the service's DBA runs it with no DATABASE_URL at all."""
    schema = run_cli("service-sql", "schema", env={})
    assert schema.returncode == 0, schema.stderr
    assert (REPO / "sql" / "service" / "schema.sql").read_text() == schema.stdout
    grants = run_cli("service-sql", "grants", "--to", "product_owner", env={})
    assert grants.returncode == 0, grants.stderr
    assert "grant usage, create on schema messenger to product_owner;" in grants.stdout
    assert run_cli("service-sql", "grants", env={}).returncode == 2  # --to is needed
    assert run_cli("service-sql", "recommended", env={}).returncode == 0
    # A command that connects still needs it.
    status = run_cli("status", env={})
    assert status.returncode == 2 and "DATABASE_URL" in status.stderr


def test_migrate_is_idempotent_and_honours_rfr_sql_dir(stack: Stack, tmp_path: object) -> None:
    name = f"rfr_mig_{uuid.uuid4().hex[:10]}"
    import psycopg

    with psycopg.connect(stack.url_for("postgres"), autocommit=True) as conn:
        conn.execute(f'create database "{name}"')
    try:
        env = {"DATABASE_URL": stack.url_for(name)}
        # An empty database has no service tables: plain migrate refuses (the contract) and
        # writes nothing; --create-service-tables is the new database's way in.
        refused = run_cli("migrate", env=env, timeout=120)
        assert refused.returncode == 2, refused.stderr
        assert "--create-service-tables" in refused.stderr
        with psycopg.connect(stack.url_for(name)) as conn:
            assert conn.execute("select count(*) from pg_namespace where nspname in "
                                "('messenger', 'recording_finalize', 'recording_finalize_internal',"
                                " 'recording_finalize_migrations')").fetchone() == (0,)
        first = run_cli("migrate", "--create-service-tables", env=env, timeout=120)
        assert first.returncode == 0, first.stderr
        migrations = len(list((REPO / "sql" / "migrations").glob("*.sql")))
        assert f"migrations applied: {migrations}" in first.stdout
        second = run_cli("migrate", env=env, timeout=120)
        assert second.returncode == 0, second.stderr
        assert "migrations applied: 0 (up to date)" in second.stdout
        again = run_cli("migrate", "--create-service-tables", env=env, timeout=120)
        assert again.returncode == 0, again.stderr
        assert "migrations applied: 0 (up to date)" in again.stdout
        missing = run_cli("migrate", env=env | {"RFR_SQL_DIR": "/nonexistent/sql"})
        assert missing.returncode == 2 and "RFR_SQL_DIR" in missing.stderr
        with psycopg.connect(stack.url_for(name)) as conn:
            applied = conn.execute(
                "select count(*) from recording_finalize_migrations._yoyo_migration").fetchone()
            functions = conn.execute(
                "select count(*) from pg_proc p join pg_namespace n on n.oid = p.pronamespace "
                "where n.nspname = 'recording_finalize'"
            ).fetchone()
        assert applied == (migrations,)
        assert functions is not None and functions[0] >= 14
    finally:
        with psycopg.connect(stack.url_for("postgres"), autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
