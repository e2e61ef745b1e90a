"""``recording-finalize run``, the sidecar: the SLO with compressed durations, /metrics, a
database restart survived without help, the disabled flag, and a graceful SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    DEAD_PORT,
    WORKER_ROLE,
    Db,
    Worker,
    consume,
    free_port,
    log_events,
    put_binary,
    recording,
    seed_available_unpublished,
    seed_stuck,
)


class Running:
    """A ``run`` process whose stderr is collected in the background."""

    def __init__(self, proc: subprocess.Popen[str], metrics_port: int) -> None:
        self.proc = proc
        self.metrics_port = metrics_port
        self.lines: list[str] = []
        assert proc.stderr is not None
        stderr = proc.stderr
        self._reader = threading.Thread(target=lambda: self.lines.extend(stderr), daemon=True)
        self._reader.start()

    def events(self, name: str) -> list[dict[str, Any]]:
        return [e for e in log_events("".join(self.lines)) if e["event"] == name]

    def metrics(self) -> str:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as resp:
            return str(resp.read().decode())

    def stop(self) -> float:
        """SIGTERM; returns how long the process took to exit."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=15)
        self._reader.join(timeout=5)
        return time.monotonic() - t0


def wait_for(predicate: Callable[[], bool], timeout: float, what: str,
             running: Running | None = None) -> float:
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > timeout:
            log = "".join(running.lines[-30:]) if running else ""
            raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{log}")
        time.sleep(0.1)
    return time.monotonic() - t0


@pytest.fixture
def start_run(worker: Worker) -> Iterator[Callable[..., Running]]:
    started: list[Running] = []

    def start(**env: str) -> Running:
        port = free_port()
        proc = worker.spawn("run", RFR_METRICS_PORT=str(port), **env)
        running = Running(proc, port)
        started.append(running)
        wait_for(lambda: bool(running.events("worker started")) or proc.poll() is not None,
                 15, "the worker to start")
        assert proc.poll() is None, "".join(running.lines)
        return running

    yield start
    for running in started:
        if running.proc.poll() is None:
            running.proc.kill()
            running.proc.wait()


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not exposed")


def test_slo_every_stuck_recording_ends_terminal_within_sla_plus_one_interval(
    worker: Worker, db: Db, start_run: Callable[..., Running]
) -> None:
    sla, interval = 2.0, 1.0
    running = start_run(RFR_FINALIZE_SLA_TIMEOUT=f"{sla}s", RFR_POLLING_INTERVAL=f"{interval}s")
    # Two recordings whose sessions end now: one binary uploaded, one lost for good.
    found_id = uuid.uuid4()
    put_binary(worker.stack, worker.bucket, found_id)
    found = seed_stuck(db, ended_ago="0 seconds", sla=f"{sla} seconds", recording_id=found_id)
    lost = seed_stuck(db, ended_ago="0 seconds", sla=f"{sla} seconds")
    wait_for(lambda: all(recording(db, s.recording_id)["status"] in ("Available", "Failed")
                         for s in (found, lost)), sla + interval + 8, "both terminal")

    # The database's clock: from the session's end to the terminal transition.
    lag = db.all(
        "select r.status, extract(epoch from coalesce(r.available_at, r.failed_at) - s.ended_at) "
        "from messenger.call_recordings r join messenger.call_sessions s on s.id = r.session_id "
        "where r.id = any(%s) order by r.status",
        ([found.recording_id, lost.recording_id],),
    )
    assert [status for status, _ in lag] == ["Available", "Failed"]
    for _, seconds in lag:
        # Not before the happy path's SLA ran out, and within SLA + one interval (+ work).
        assert sla <= float(seconds) <= sla + interval + 1.5, lag

    # Available-unpublished: published within one polling interval (+ the relay's work).
    t0 = time.monotonic()
    republish = seed_available_unpublished(db)
    [msg] = consume(worker.stack, worker.topic, expect=2, idle_s=0.1, timeout_s=10)[1:]
    assert msg.value["recordingId"] == str(republish.recording_id)
    assert time.monotonic() - t0 <= interval + 2.0

    names = db.all("select distinct application_name from pg_stat_activity "
                   "where datname = %s and usename = %s", (db.name, WORKER_ROLE))
    assert names == [("recording-finalize",)]

    text = running.metrics()
    assert metric(text, "messenger_recording_finalize_reconciled_total") == 1
    assert metric(text, "messenger_recording_finalize_failed_total") == 1
    assert metric(text, "messenger_recording_finalize_republished_total") == 1
    assert metric(text, "messenger_recording_finalize_backlog") == 0
    assert metric(text, 'messenger_recording_finalize_cycles_total{result="ok"}') >= 3
    assert metric(text, "messenger_recording_finalize_last_success_timestamp_seconds") > (
        time.time() - 5)

    assert running.stop() < 5
    assert running.proc.returncode == 0
    assert running.events("worker stopped")
    assert running.events("stop requested")[0]["signal"] == "SIGTERM"


def test_run_survives_a_database_restart_without_help(
    worker: Worker, db: Db, start_run: Callable[..., Running]
) -> None:
    running = start_run(RFR_POLLING_INTERVAL="500ms")
    wait_for(lambda: bool(running.events("cycle completed")), 10, "a first cycle")
    worker.stack.stop_service("postgres")
    try:
        wait_for(lambda: bool(running.events("cycle failed")), 10, "a failed cycle")
        assert running.proc.poll() is None  # still running
    finally:
        worker.stack.start_service("postgres")
    # The binary first: the running worker would otherwise fail the recording in between.
    rid = uuid.uuid4()
    put_binary(worker.stack, worker.bucket, rid)
    seeded = seed_stuck(db, recording_id=rid)
    wait_for(lambda: recording(db, seeded.recording_id)["status"] == "Available", 15,
             "the recording reconciled after the restart", running)
    assert metric(running.metrics(), 'messenger_recording_finalize_cycles_total{result="error"}'
                  ) >= 1
    failed = running.events("cycle failed")[0]
    assert failed["level"] == "error" and failed["error"]
    assert worker.db.worker_url.split(":")[2].split("@")[0] not in "".join(running.lines)
    assert running.stop() < 5 and running.proc.returncode == 0


def test_a_database_restart_mid_drain_costs_no_row_an_attempt(
    worker: Worker, db: Db, start_run: Callable[..., Running]
) -> None:
    """The claim counts an attempt before the check; a restart of the database mid-drain left
    the rows claimed and not applied with it, through no fault of theirs. The next cycle gives
    it back: every row ends Done with the one attempt that settled it."""
    ids = []
    for _ in range(40):
        rid = uuid.uuid4()
        put_binary(worker.stack, worker.bucket, rid)
        ids.append(seed_stuck(db, recording_id=rid).recording_id)
    # Slow enough that the drain is under way when the database goes.
    running = start_run(RFR_POLLING_INTERVAL="500ms", RFR_MAX_APPLY_RATE="10", RFR_PACING="off")
    wait_for(lambda: bool(running.events("batch claimed")), 15, "a claimed batch", running)
    worker.stack.stop_service("postgres")
    try:
        wait_for(lambda: bool(running.events("cycle failed")), 15, "a failed cycle", running)
    finally:
        worker.stack.start_service("postgres")
    wait_for(lambda: all(recording(db, rid)["status"] == "Available" for rid in ids), 60,
             "every recording reconciled after the restart", running)
    [released] = running.events("claims released after an outage")
    assert released["released"] >= 1, released
    attempts = db.all("select attempts, count(*) from messenger.recording_finalize_attempts "
                      "where recording_id = any(%s) group by 1", (ids,))
    assert attempts == [(1, 40)], attempts
    assert running.stop() < 5 and running.proc.returncode == 0


def test_run_with_recordings_disabled_idles_and_says_so(
    worker: Worker, db: Db, start_run: Callable[..., Running]
) -> None:
    seeded = seed_stuck(db)
    running = start_run(RECORDINGS_ENABLED="false", RFR_POLLING_INTERVAL="200ms")
    wait_for(lambda: len(running.events("cycle idle")) >= 2, 10, "idle cycles")
    assert running.events("recordings disabled")
    # The counter moves after the cycle's log line: wait for it rather than race it.
    wait_for(lambda: metric(running.metrics(),
                            'messenger_recording_finalize_cycles_total{result="disabled"}') >= 2,
             10, "two disabled cycles counted")
    assert running.stop() < 5 and running.proc.returncode == 0
    assert db.one("select attempts from messenger.recording_finalize_attempts "
                  "where recording_id = %s", (seeded.recording_id,)) == (0,)


def test_run_refuses_a_taken_metrics_port(worker: Worker) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = worker.cli("run", RFR_METRICS_PORT=str(port), timeout=30)
    assert proc.returncode == 1
    assert "metrics" in proc.stderr and json.dumps(port) in proc.stderr


def test_sigterm_while_the_broker_is_away_stops_well_within_the_grace_period(
    worker: Worker, db: Db, start_run: Callable[..., Running]
) -> None:
    """With Kafka down a relay batch waits for its delivery reports for the
    whole delivery timeout (30 s here); a SIGTERM then took 32 s against Kubernetes' 30 s
    terminationGracePeriodSeconds. A stop now cuts that wait: the event stays unpublished and
    goes out later."""
    seeded = seed_available_unpublished(db)
    running = start_run(KAFKA_BOOTSTRAP_SERVERS=f"127.0.0.1:{DEAD_PORT}")
    wait_for(lambda: bool(running.events("recording republished")), 15, "the republish",
             running)
    time.sleep(2.0)  # the relay is waiting for a broker that is not there
    took = running.stop()
    assert running.proc.returncode == 0
    assert took < 10, f"SIGTERM took {took:.1f} s"
    published = db.one("select published_at from recording_finalize.outbox "
                       "where recording_id = %s", (seeded.recording_id,))
    assert published == (None,)  # not acknowledged: not marked, delivered later


def _listening(port: int) -> set[str]:
    """The IPv4 addresses a socket listens on at ``port`` (/proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        host, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.add(".".join(str(b) for b in reversed(bytes.fromhex(host))))
    return found


def test_the_endpoint_binds_the_address_it_is_given(
    worker: Worker, start_run: Callable[..., Running]
) -> None:
    """/metrics, /livez and /readyz used to bind 0.0.0.0 whatever one wanted;
    RFR_METRICS_ADDRESS keeps them on the host (the default stays every interface, as a
    scraped pod needs). A host name is refused: what to bind must not hang on a resolver."""
    local = start_run(RFR_METRICS_ADDRESS="127.0.0.1")
    assert _listening(local.metrics_port) == {"127.0.0.1"}
    assert "messenger_recording_finalize_backlog" in local.metrics()
    everywhere = start_run()
    assert _listening(everywhere.metrics_port) == {"0.0.0.0"}
    proc = worker.cli("run", RFR_METRICS_ADDRESS="localhost", timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert "RFR_METRICS_ADDRESS" in proc.stderr and "an IPv4 or IPv6 address" in proc.stderr


def test_the_gauges_say_what_waits_while_the_relay_waits_for_kafka(
    worker: Worker, db: Db, start_run: Callable[..., Running]
) -> None:
    """With Kafka away the relay waits its whole delivery timeout (30 s here)
    each cycle; the database gauges were read only after it, so /metrics said publish backlog 0
    while the events waited. They are read before the relay too."""
    seeded = [seed_available_unpublished(db) for _ in range(3)]
    running = start_run(KAFKA_BOOTSTRAP_SERVERS=f"127.0.0.1:{DEAD_PORT}")
    wait_for(lambda: len(running.events("recording republished")) == len(seeded), 15,
             "the republishes", running)
    wait_for(lambda: metric(running.metrics(), "messenger_recording_finalize_publish_backlog")
             == len(seeded), 5, "the publish backlog on /metrics", running)
    assert not running.events("cycle completed")  # the relay is still waiting
    assert running.stop() < 10
