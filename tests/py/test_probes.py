"""The sidecar's probes and its start-up (issue 10 items 4, 8, 9): ``/livez`` and ``/readyz``
beside ``/metrics`` of a real running ``run``, a wedged loop, and a start-up that says what is
wrong instead of waiting for an answer that will not change."""

from __future__ import annotations

import secrets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import CLI, DEAD_PORT, Db, Stack, Worker, _base_env, free_port, planted_body
from recording_finalize.metrics import Metrics
from recording_finalize.probes import Health
from test_run import Running, wait_for

# Short enough that "no cycle for 2 x interval + lock TTL" (2.4 s) is seen within seconds.
FAST = {"RFR_POLLING_INTERVAL": "200ms", "RFR_LOCK_TTL": "2s", "RFR_MAX_RUN_DURATION": "1s",
        "RFR_S3_TIMEOUT": "500ms"}


def probe(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as err:
        return int(err.code), err.read().decode()


@pytest.fixture
def launch(worker: Worker) -> Iterator[Callable[..., Running]]:
    """Starts ``run`` (or the given argv) and waits until its endpoint answers."""
    started: list[Running] = []

    def start(argv: list[str] | None = None, **env: str) -> Running:
        port = free_port()
        proc = subprocess.Popen(argv or [CLI, "run"],
                                env=worker.environ(RFR_METRICS_PORT=str(port), **env),
                                text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        running = Running(proc, port)
        started.append(running)

        def answers() -> bool:
            assert proc.poll() is None, "".join(running.lines)
            try:
                probe(port, "/livez")
            except OSError:
                return False
            return True

        wait_for(answers, 15, "the endpoint to answer", running)
        return running

    yield start
    for running in started:
        if running.proc.poll() is None:
            running.proc.kill()
            running.proc.wait()


def test_a_running_run_is_live_and_ready_and_unready_while_its_schema_differs(
    worker: Worker, db: Db, launch: Callable[..., Running]
) -> None:
    running = launch(**FAST)
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 10, "ready", running)
    assert probe(running.metrics_port, "/livez")[0] == 200
    _, body = probe(running.metrics_port, "/readyz")
    assert body.startswith("ok: the database schema matches") and body.count("\n") == 1
    assert "messenger_recording_finalize_build_info{" in running.metrics()

    # A function changed by hand under the running worker: no longer ready, still live.
    definition = db.one("select pg_get_functiondef('recording_finalize.stats(text)'"
                        "::regprocedure)")[0]
    with db.connect() as conn:
        conn.execute(planted_body(definition, "by hand"))
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 503, 10, "unready", running)
    _status, body = probe(running.metrics_port, "/readyz")
    assert body.startswith("schema mismatch:") and "recording_finalize.stats.sql" in body
    assert "run `recording-finalize migrate`" in body
    assert probe(running.metrics_port, "/livez")[0] == 200

    fixed = subprocess.run([CLI, "migrate"], env=_base_env() | {"DATABASE_URL": db.owner_url},
                           capture_output=True, text=True, timeout=60)
    assert fixed.returncode == 0, fixed.stderr
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 10, "ready again",
             running)
    assert running.stop() < 5 and running.proc.returncode == 0


# The injected fault: a wedged loop cannot be produced on demand by a real server (every call
# the loop makes has a timeout), so this wrapper — a test-only stand-in, not part of the
# product — starts the real `recording-finalize run` with cycle.run_cycle wrapped to block
# while the file named by RFR_TEST_WEDGE_FILE exists. The HTTP server, the heartbeat and the
# liveness rule are the product's own.
WEDGE = """
import os, sys, time
from recording_finalize import cycle, cli
real = cycle.run_cycle
def wedged(ctx, stop):
    while os.path.exists(os.environ["RFR_TEST_WEDGE_FILE"]):
        time.sleep(0.05)
    return real(ctx, stop)
cycle.run_cycle = wedged
sys.exit(cli.main(sys.argv[1:]))
"""


def test_livez_turns_503_when_the_loop_is_wedged_and_200_when_it_moves_again(
    worker: Worker, launch: Callable[..., Running], tmp_path: Path
) -> None:
    wedge = tmp_path / "wedge"
    running = launch([sys.executable, "-c", WEDGE, "run"], RFR_TEST_WEDGE_FILE=str(wedge),
                     **FAST)
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 10, "ready", running)
    assert probe(running.metrics_port, "/livez")[0] == 200
    wedge.touch()
    waited = wait_for(lambda: probe(running.metrics_port, "/livez")[0] == 503, 10,
                      "livez 503", running)
    assert 2.0 <= waited <= 4.5, waited  # the limit is 2 x 200 ms + 2 s
    _status, body = probe(running.metrics_port, "/livez")
    assert "no cycle started for" in body and "limit 2.4 s" in body
    assert probe(running.metrics_port, "/readyz")[0] == 200  # the database is fine
    wedge.unlink()
    wait_for(lambda: probe(running.metrics_port, "/livez")[0] == 200, 5, "live again", running)
    assert running.stop() < 5


def test_a_disabled_worker_stays_live(worker: Worker, launch: Callable[..., Running]) -> None:
    running = launch(RECORDINGS_ENABLED="false", **FAST)
    time.sleep(3.0)  # longer than the 2.4 s limit
    status, body = probe(running.metrics_port, "/livez")
    assert status == 200, body
    assert probe(running.metrics_port, "/readyz")[0] == 200
    assert running.stop() < 5


def test_livez_is_503_once_the_loop_thread_has_ended() -> None:
    """The loop runs in ``run``'s main thread, whose end ends the process; the rule itself is
    checked here on a real endpoint with a thread that ended."""
    health = Health(stale_after_s=60)
    ended = threading.Thread(target=lambda: None)
    ended.start()
    ended.join()
    metrics = Metrics()
    port = free_port()
    metrics.start_server(port, addr="127.0.0.1", health=health)
    try:
        health.watch(threading.current_thread())
        assert probe(port, "/livez")[0] == 200
        health.watch(ended)
        assert probe(port, "/livez") == (503, "the cycle loop has stopped\n")
        assert probe(port, "/readyz")[0] == 503  # never checked
    finally:
        metrics.stop_server()


# --- start-up: an answer that will not change by waiting exits 2 --------------------------


def refused(worker: Worker, url: str) -> subprocess.CompletedProcess[str]:
    proc = worker.cli("run", DATABASE_URL=url, timeout=30, **FAST)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    return proc


def test_a_wrong_password_exits_2_with_the_servers_message(worker: Worker, db: Db) -> None:
    url = db.stack.url_for(db.name, "rfr_worker_login", "Wr0ng-Passw0rd-xyz")
    proc = refused(worker, url)
    assert "authentication failed" in proc.stderr
    assert 'password authentication failed for user "rfr_worker_login"' in proc.stderr
    assert "Wr0ng-Passw0rd-xyz" not in proc.stderr + proc.stdout


def test_a_login_without_the_worker_grant_exits_2(worker: Worker, db: Db) -> None:
    role, password = f"rfr_nogrant_{uuid.uuid4().hex[:8]}", secrets.token_hex(12)
    with db.connect() as conn:
        conn.execute(f"create role {role} login password '{password}'")
    try:
        proc = refused(worker, db.stack.url_for(db.name, role, password))
        assert "grant recording_finalize_worker" in proc.stderr.lower()
        assert "permission denied for schema recording_finalize" in proc.stderr
        assert password not in proc.stderr
    finally:
        with db.connect() as conn:
            conn.execute(f"drop role {role}")


def test_an_unknown_database_exits_2(worker: Worker, db: Db) -> None:
    # The owner's real credentials (a role's password is cluster-wide: leave the worker's be).
    url = db.stack.url_for("rfr_no_such_db")
    proc = refused(worker, url)
    assert 'database "rfr_no_such_db" does not exist' in proc.stderr
    assert db.stack.env["PGPASSWORD"] not in proc.stderr


def test_a_never_migrated_database_exits_2_saying_so(worker: Worker, stack: Stack,
                                                    db: Db) -> None:
    name = f"rfr_empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(stack.url_for("postgres"), autocommit=True) as conn:
        conn.execute(f'create database "{name}"')
    try:
        proc = refused(worker, db.worker_url.rsplit("/", 1)[0] + f"/{name}")
        assert "never migrated" in proc.stderr and "recording-finalize migrate" in proc.stderr
    finally:
        with psycopg.connect(stack.url_for("postgres"), autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


def test_an_unreachable_server_is_waited_for_while_the_endpoint_answers(
    worker: Worker, launch: Callable[..., Running]
) -> None:
    url = f"postgresql://rfr_worker_login:Sec-ret-pw1@127.0.0.1:{DEAD_PORT}/rfr"
    running = launch(DATABASE_URL=url, **FAST)
    wait_for(lambda: bool(running.events("start-up check waiting")), 10, "waiting", running)
    time.sleep(3.0)  # past the liveness limit: waiting counts as on schedule
    assert running.proc.poll() is None
    assert probe(running.metrics_port, "/livez")[0] == 200
    assert "messenger_recording_finalize_backlog" in running.metrics()
    status, body = probe(running.metrics_port, "/readyz")
    assert status == 503 and "the database cannot be reached" in body
    assert running.stop() < 5 and running.proc.returncode == 0
    assert "Sec-ret-pw1" not in "".join(running.lines)


def test_status_into_a_closed_pipe_exits_quietly(worker: Worker, db: Db) -> None:
    """``status | head -1``: the reader is gone before status writes (closed here at once, so
    the broken pipe is certain, not a race with head)."""
    proc = subprocess.Popen([CLI, "status"], env=worker.environ(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=30) == 1
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


def test_version_names_the_package_and_the_schema_it_ships() -> None:
    proc = subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=30,
                          env=_base_env())
    assert proc.returncode == 0, proc.stderr
    repo = Path(__file__).resolve().parents[2]
    last = max(p.stem for p in (repo / "sql" / "migrations").glob("*.sql"))
    assert proc.stdout.startswith("recording-finalize 0.") and f"schema {last}" in proc.stdout
