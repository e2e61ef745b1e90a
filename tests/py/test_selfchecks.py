"""Start-up self-checks of ``run`` and ``run-once``: each refuses to start (exit 2, a message
that says what is wrong) before any row is touched.

- the lock connection goes through a transaction-pooling proxy — a real PgBouncer in
  ``pool_mode = transaction`` between the worker and PostgreSQL;
- a proxy drops the connection options (PgBouncer in session mode with
  ``ignore_startup_parameters = options``): the lock TTL's ``idle_session_timeout`` is lost;
- the S3 timeout is not well below the lock TTL.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from conftest import Db, Worker, finalize_row, free_port, seed_stuck

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


class PgBouncer:
    """A real PgBouncer on a free loopback port in front of the test database."""

    def __init__(self, db: Db, user: str, password: str, pool_mode: str) -> None:
        if not os.path.exists(PGBOUNCER):
            pytest.fail("pgbouncer is not installed: run scripts/bootstrap.sh")
        self.port = free_port()
        self.tmp = Path(tempfile.mkdtemp(prefix="rfr-pgbouncer-", dir="/tmp"))
        pg = urlsplit(db.owner_url)
        (self.tmp / "userlist.txt").write_text(f'"{user}" "{password}"\n')
        (self.tmp / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"{db.name} = host=127.0.0.1 port={pg.port} dbname={db.name}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = plain\n"
            f"auth_file = {self.tmp / 'userlist.txt'}\n"
            f"pool_mode = {pool_mode}\n"
            "default_pool_size = 4\n"
            # What an operator adds when a client's options make PgBouncer refuse it.
            "ignore_startup_parameters = options,extra_float_digits\n"
            f"logfile = {self.tmp / 'pgbouncer.log'}\n"
            f"pidfile = {self.tmp / 'pgbouncer.pid'}\n"
        )
        run_as: list[str] = []
        if os.geteuid() == 0:  # PgBouncer refuses to run as root
            postgres = pwd.getpwnam("postgres")
            for path in (self.tmp, *self.tmp.iterdir()):
                os.chown(path, postgres.pw_uid, postgres.pw_gid)
            run_as = ["runuser", "-u", "postgres", "--"]
        self.proc = subprocess.Popen([*run_as, PGBOUNCER, str(self.tmp / "pgbouncer.ini")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not self._listening():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = (self.tmp / "pgbouncer.log")
                raise AssertionError("pgbouncer did not start: " + (
                    log.read_text() if log.exists() else str(self.proc.stderr)))
            time.sleep(0.05)

    def _listening(self) -> bool:
        import socket

        with socket.socket() as s:
            s.settimeout(0.2)
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def url(self, worker_url: str) -> str:
        parts = urlsplit(worker_url)
        netloc = parts.netloc.rsplit("@", 1)[0] + f"@127.0.0.1:{self.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture
def pgbouncer(db: Db) -> Iterator[Callable[[str], PgBouncer]]:
    started: list[PgBouncer] = []
    parts = urlsplit(db.worker_url)
    user, password = parts.username or "", parts.password or ""

    def start(pool_mode: str) -> PgBouncer:
        bouncer = PgBouncer(db, user, password, pool_mode)
        started.append(bouncer)
        return bouncer

    yield start
    for bouncer in started:
        bouncer.close()


@pytest.mark.parametrize("command", ["run-once", "run"])
def test_transaction_pooling_in_front_of_the_lock_is_refused(
    worker: Worker, db: Db, pgbouncer: Callable[[str], PgBouncer], command: str
) -> None:
    seeded = seed_stuck(db)
    bouncer = pgbouncer("transaction")
    proc = worker.cli(command, timeout=30, DATABASE_URL=bouncer.url(db.worker_url))
    assert proc.returncode == 2, proc.stderr
    assert "start-up check failed" in proc.stderr
    assert "transaction-pooling" in proc.stderr
    assert proc.stdout == ""
    # Refused before any work: the row was not claimed.
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0


def test_a_proxy_that_drops_connection_options_is_refused(
    worker: Worker, db: Db, pgbouncer: Callable[[str], PgBouncer]
) -> None:
    """Session pooling keeps the advisory lock safe, but PgBouncer cannot pass the lock
    connection's idle_session_timeout: a paused runner would hold the lock past its TTL."""
    seeded = seed_stuck(db)
    bouncer = pgbouncer("session")
    proc = worker.cli("run-once", timeout=30, DATABASE_URL=bouncer.url(db.worker_url))
    assert proc.returncode == 2, proc.stderr
    assert "idle_session_timeout" in proc.stderr and "RFR_LOCK_TTL" in proc.stderr
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0


def test_a_direct_connection_passes_the_checks(worker: Worker, db: Db) -> None:
    seed_stuck(db)
    summary = worker.run_once()
    assert summary["claimed"] == 1 and summary["error"] is None


def test_an_s3_timeout_not_well_below_the_lock_ttl_is_refused(worker: Worker, db: Db) -> None:
    seeded = seed_stuck(db)
    proc = worker.cli("run-once", RFR_LOCK_TTL="20s", RFR_MAX_RUN_DURATION="10s",
                      RFR_S3_TIMEOUT="10s")
    assert proc.returncode == 2
    assert "RFR_S3_TIMEOUT" in proc.stderr and "RFR_LOCK_TTL / 2" in proc.stderr
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0


def test_run_waits_for_an_unreachable_database_instead_of_skipping_the_check(
    worker: Worker,
) -> None:
    """No verdict without a database: ``run`` retries the check, and SIGTERM still stops it."""
    dead = free_port()
    url = urlsplit(worker.db.worker_url)
    dsn = urlunsplit((url.scheme, url.netloc.rsplit("@", 1)[0] + f"@127.0.0.1:{dead}",
                      url.path, "", ""))
    proc = worker.spawn("run", DATABASE_URL=dsn, RFR_POLLING_INTERVAL="200ms")
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert '"start-up check waiting"' in first, first
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
