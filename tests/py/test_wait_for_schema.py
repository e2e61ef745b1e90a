"""``wait-for-schema`` (the init container) waits only for what waiting can fix: a database it
cannot reach, or one not migrated yet. A wrong password, a login without the worker grant or a
database that does not exist exit 2 at once, naming the cause and the fix, as ``run`` does
(tests/py/test_probes.py) - against the real local PostgreSQL."""

from __future__ import annotations

import secrets
import subprocess
import time
import uuid

import psycopg
from conftest import DEAD_PORT, Db, Stack, Worker

#: The deploy's own --timeout: a refusal must not wait for it.
DEPLOY_TIMEOUT = "15m"
#: "At once": one connection, not one poll interval (5 s) of waiting.
AT_ONCE_S = 4.0


def wait_for_schema(worker: Worker, url: str, timeout: str = DEPLOY_TIMEOUT
                    ) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = worker.cli("wait-for-schema", "--timeout", timeout, DATABASE_URL=url, timeout=60)
    return proc, time.monotonic() - started


def refused_at_once(worker: Worker, url: str) -> str:
    proc, took = wait_for_schema(worker, url)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert took < AT_ONCE_S, f"took {took:.1f} s: a refusal was waited out"
    assert "waiting for schema" not in proc.stderr
    return proc.stderr


def test_it_passes_a_migrated_database(worker: Worker, db: Db) -> None:
    proc, _ = wait_for_schema(worker, db.worker_url)
    assert proc.returncode == 0, proc.stderr
    assert "matches recording-finalize" in proc.stdout


def test_a_wrong_password_exits_2_at_once_naming_it(worker: Worker, db: Db) -> None:
    url = db.stack.url_for(db.name, "rfr_worker_login", "Wr0ng-Passw0rd-xyz")
    stderr = refused_at_once(worker, url)
    assert "authentication failed: check the user and password in DATABASE_URL" in stderr
    assert 'password authentication failed for user "rfr_worker_login"' in stderr
    assert "Wr0ng-Passw0rd-xyz" not in stderr


def test_a_login_without_the_worker_grant_exits_2_at_once_with_the_grant(
        worker: Worker, db: Db) -> None:
    role, password = f"rfr_nogrant_{uuid.uuid4().hex[:8]}", secrets.token_hex(12)
    with db.connect() as conn:
        conn.execute(f"create role {role} login password '{password}'")
    try:
        stderr = refused_at_once(worker, db.stack.url_for(db.name, role, password))
        assert "GRANT recording_finalize_worker TO <login role>" in stderr
        assert "permission denied" in stderr
        assert password not in stderr
    finally:
        with db.connect() as conn:
            conn.execute(f"drop role {role}")


def test_a_database_that_does_not_exist_exits_2_at_once(worker: Worker, db: Db) -> None:
    stderr = refused_at_once(worker, db.stack.url_for("rfr_no_such_db"))
    assert 'database "rfr_no_such_db" does not exist' in stderr
    assert db.stack.env["PGPASSWORD"] not in stderr


def test_a_database_not_migrated_yet_is_waited_for(worker: Worker, stack: Stack, db: Db
                                                   ) -> None:
    """What the migrate Job is about to do: wait, then give up with exit 1 (the kubelet tries
    the init container again)."""
    name = f"rfr_empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(stack.url_for("postgres"), autocommit=True) as conn:
        conn.execute(f'create database "{name}"')
    try:
        url = db.worker_url.rsplit("/", 1)[0] + f"/{name}"
        proc, _ = wait_for_schema(worker, url, timeout="2s")
        assert proc.returncode == 1, proc.stderr
        assert "gave up after 2s" in proc.stderr and "never migrated" in proc.stderr
    finally:
        with psycopg.connect(stack.url_for("postgres"), autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


def test_an_unreachable_server_is_waited_for_and_named(worker: Worker) -> None:
    url = f"postgresql://rfr_worker_login:Sec-ret-pw1@127.0.0.1:{DEAD_PORT}/rfr"
    proc, _ = wait_for_schema(worker, url, timeout="2s")
    assert proc.returncode == 1, proc.stderr
    assert f"127.0.0.1:{DEAD_PORT}/rfr as rfr_worker_login cannot be reached" in proc.stderr
    assert "Connection refused" in proc.stderr and "Sec-ret-pw1" not in proc.stderr
