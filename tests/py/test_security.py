"""Secrets and URLs: the DSN password and the S3/Kafka secrets never appear in the worker's
output — logs (stderr), stdout, the /metrics text — on any path, and neither the payloads it
writes nor its logs carry a URL.

Privileges (the worker role can only EXECUTE the API) and the hostile ``search_path`` are
proven by pgTAP: ``tests/sql/_schema/privileges.sql`` and
``tests/sql/_schema/hostile_search_path.sql``.

Every scan is over everything the worker printed on a path that exercises the code that could
leak: success, the database refusing the password, the database unreachable, S3 refusing the
secret key, S3 unreachable, the broker refusing SASL, ``status``/``requeue``, and ``run`` with
/metrics scraped after a cycle.
"""

from __future__ import annotations

import re
import secrets
import signal
import time
import urllib.request
import uuid
from collections.abc import Iterator
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest
from conftest import Db, Worker, free_port, put_binary, seed_stuck

# A URL: a scheme, "://", then something (the logger may keep "scheme://…" with nothing after).
URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://(?!…)[^\s\"'<>…]")


@pytest.fixture
def secret_role(db: Db) -> Iterator[tuple[str, str]]:
    """A worker login role whose password has every character a URL must quote."""
    name = f"rfr_sec_{uuid.uuid4().hex[:8]}"
    password = f"Pw/{secrets.token_hex(6)}:@%?#&={secrets.token_hex(6)}"
    with db.connect() as conn:
        conn.execute(f"create role {name} login password '{password}' "
                     "in role recording_finalize_worker")
    yield name, password
    with db.connect() as conn:
        conn.execute(f"drop role if exists {name}")


@pytest.fixture
def secret_operator(db: Db) -> Iterator[tuple[str, str]]:
    """An operator login role (status, requeue) with the same kind of password."""
    name = f"rfr_sec_op_{uuid.uuid4().hex[:8]}"
    password = f"Op/{secrets.token_hex(6)}:@%?#&={secrets.token_hex(6)}"
    with db.connect() as conn:
        conn.execute(f"create role {name} login password '{password}' "
                     "in role recording_finalize_operator")
    yield name, password
    with db.connect() as conn:
        conn.execute(f"drop role if exists {name}")


def dsn(db: Db, user: str, password: str, port: int | None = None) -> str:
    parts = urlsplit(db.owner_url)
    host = parts.netloc.rsplit("@", 1)[1] if port is None else f"127.0.0.1:{port}"
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def forms(secret: str) -> set[str]:
    """The secret as it may appear: as is, URL-quoted both ways."""
    return {secret, quote(secret, safe=""), quote(secret)}


def assert_clean(text: str, secret_values: list[str], where: str) -> None:
    for value in secret_values:
        for form in forms(value):
            assert form not in text, f"a secret leaked into {where}"
    match = URL.search(text)
    assert match is None, f"a URL in {where}: {text[max(0, match.start() - 80):match.end() + 80]}"


def test_no_secret_and_no_url_in_anything_the_worker_prints(
    worker: Worker, db: Db, secret_role: tuple[str, str], secret_operator: tuple[str, str]
) -> None:
    user, password = secret_role
    op_user, op_password = secret_operator
    operator = dsn(db, op_user, op_password)
    s3_secret = worker.stack.env["AWS_SECRET_ACCESS_KEY"]
    wrong_s3 = "Wr0ng-" + secrets.token_hex(12)
    sasl = "Sasl-" + secrets.token_hex(12)
    good = dsn(db, user, password)
    # A short lock budget keeps the relay's delivery wait (SASL refused) to seconds.
    fast = {"RFR_LOCK_TTL": "20s", "RFR_MAX_RUN_DURATION": "10s", "RFR_S3_TIMEOUT": "2s"}
    found, _lost = seed_stuck(db), seed_stuck(db)
    put_binary(worker.stack, worker.bucket, found.recording_id)
    dead = free_port()

    runs = {
        "success": worker.cli("run-once", DATABASE_URL=good),
        "status": worker.cli("status", "--json", DATABASE_URL=operator),
        "requeue of a row that is not quarantined": worker.cli(
            "requeue", str(found.recording_id), "--reason", "test", DATABASE_URL=operator),
        "requeue refused to the worker": worker.cli(
            "requeue", str(found.recording_id), "--reason", "test", DATABASE_URL=good),
        "database refuses the password": worker.cli(
            "run-once", DATABASE_URL=dsn(db, user, password + "x")),
        "database unreachable": worker.cli("run-once", DATABASE_URL=dsn(db, user, password,
                                                                        port=dead)),
        "S3 refuses the secret key": worker.cli("run-once", DATABASE_URL=good,
                                                AWS_SECRET_ACCESS_KEY=wrong_s3),
        "S3 unreachable": worker.cli("run-once", DATABASE_URL=good,
                                     S3_ENDPOINT_URL=f"http://127.0.0.1:{dead}", **fast),
        "broker refuses SASL": worker.cli(
            "run-once", DATABASE_URL=good, KAFKA_SECURITY_PROTOCOL="SASL_PLAINTEXT",
            KAFKA_SASL_MECHANISM="PLAIN", KAFKA_SASL_USERNAME="rfr", KAFKA_SASL_PASSWORD=sasl,
            timeout=90, **fast),
    }
    assert runs["success"].returncode == 0, runs["success"].stderr
    assert runs["status"].returncode == 0, runs["status"].stderr
    # An answer that waiting will not change: a start-up refusal, exit 2 (issue 10 item 8).
    assert runs["database refuses the password"].returncode == 2
    assert "password authentication failed" in runs["database refuses the password"].stderr
    assert runs["S3 refuses the secret key"].returncode == 1
    for name, proc in runs.items():
        _events_or_lines(proc.stderr)
        assert_clean(proc.stdout + proc.stderr,
                     [password, op_password, s3_secret, wrong_s3, sasl], name)


def _events_or_lines(stderr: str) -> None:
    for line in stderr.splitlines():
        assert line.startswith("{") or line.startswith("recording-finalize: "), line


def test_metrics_and_run_logs_carry_no_secret(
    worker: Worker, db: Db, secret_role: tuple[str, str]
) -> None:
    user, password = secret_role
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id)
    port = free_port()
    proc = worker.spawn("run", DATABASE_URL=dsn(db, user, password),
                        RFR_METRICS_PORT=str(port), RFR_POLLING_INTERVAL="300ms")
    try:
        deadline = time.monotonic() + 20
        text = ""
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                            timeout=2) as resp:
                    text = resp.read().decode()
                if "messenger_recording_finalize_reconciled_total 1.0" in text:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert "messenger_recording_finalize_reconciled_total 1.0" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    secrets_ = [password, worker.stack.env["AWS_SECRET_ACCESS_KEY"]]
    assert_clean(text, secrets_, "/metrics")
    assert_clean(out + err, secrets_, "the run's output")
    _events_or_lines(err)


def test_payloads_and_last_errors_carry_no_url(worker: Worker, db: Db) -> None:
    found, _lost = seed_stuck(db), seed_stuck(db)
    put_binary(worker.stack, worker.bucket, found.recording_id,
               metadata={"duration-seconds": "7", "file-id": "files/abc"})
    assert worker.run_once()["reconciled"] == 1
    # An unreachable endpoint: the S3 clients' messages name its URL; nothing may repeat it.
    flaky = seed_stuck(db)
    dead = free_port()
    summary = worker.run_once(S3_ENDPOINT_URL=f"http://127.0.0.1:{dead}",
                              RFR_LOCK_TTL="20s", RFR_MAX_RUN_DURATION="10s",
                              RFR_S3_TIMEOUT="2s", expect_rc=1)  # degraded: storage out
    assert summary["backoff"] == 1, summary
    assert URL.search(summary["_stderr"]) is None
    assert f"127.0.0.1:{dead}" not in summary["_stderr"]
    rows = db.all("select payload::text from messenger.integration_outbox "
                  "union all select payload::text from messenger.realtime_outbox "
                  "union all select coalesce(last_error, '') "
                  "from messenger.recording_finalize_attempts "
                  "union all select coalesce(reason, '') from messenger.storage_incidents")
    assert len(rows) >= 7
    for (text,) in rows:
        assert URL.search(text) is None, text
    error = db.one("select last_error from messenger.recording_finalize_attempts "
                   "where recording_id = %s", (flaky.recording_id,))[0]
    assert error.startswith("Transient: GenericError"), error


def test_the_worker_role_reads_no_table_even_with_its_password(
    db: Db, secret_role: tuple[str, str]
) -> None:
    """The wiring of the pgTAP privilege proof: a login role granted the worker role."""
    user, password = secret_role
    with psycopg.connect(dsn(db, user, password), autocommit=True) as conn:
        for table in ("call_recordings", "integration_outbox", "recording_finalize_attempts"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"select 1 from messenger.{table} limit 1")


def test_a_worker_login_cannot_connect_to_another_database_once_connect_is_revoked(
    db: Db, secret_role: tuple[str, str]
) -> None:
    """Roles are cluster-wide and CONNECT is granted to PUBLIC by default: a worker login made
    for one database could run another database's API. sql/README.md says: revoke connect on
    database <db> from public; grant connect on database <db> to <the worker login>. Shown here
    on two real databases of the same cluster."""
    user, password = secret_role
    other = f"rfr_other_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(db.stack.url_for("postgres"), autocommit=True) as conn:
        conn.execute(f'create database "{other}"')
    try:
        with db.connect() as conn:
            conn.execute(f'revoke connect on database "{db.name}" from public')
            conn.execute(f'grant connect on database "{db.name}" to {user}')
        with psycopg.connect(db.stack.url_for(other), autocommit=True) as conn:
            # The other service's database, locked down the same way, its own login granted.
            conn.execute(f'revoke connect on database "{other}" from public')
        # Its own database still admits the worker login (and it can run the API there)...
        with psycopg.connect(dsn(db, user, password), autocommit=True) as conn:
            assert conn.execute("select topic from recording_finalize.server_settings()"
                                ).fetchone() is not None
        # ...the other database refuses it before any statement.
        other_dsn = urlunsplit(urlsplit(dsn(db, user, password))._replace(path=f"/{other}"))
        with pytest.raises(psycopg.OperationalError) as refused:
            psycopg.connect(other_dsn, autocommit=True, connect_timeout=10).close()
        assert "permission denied for database" in str(refused.value)
    finally:
        with db.connect() as conn:  # the role goes at teardown: its grant must go first
            conn.execute(f'revoke connect on database "{db.name}" from {user}')
        with psycopg.connect(db.stack.url_for("postgres"), autocommit=True) as conn:
            conn.execute(f'drop database if exists "{other}" with (force)')
