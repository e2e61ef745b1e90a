"""Storage incidents, wired: the worker opens one when S3 is out and closes it when S3 answers,
a 404 after it is deferred (never Failed), an outage is a ``degraded`` cycle (not ``ok``), and the
``storage-incident`` command records what the worker could not see.

The rule itself (every edge) is pgTAP's (tests/sql/outcome_decision); these tests prove the
wiring against the real database, S3 and Kafka. The HeadBucket answer and transient HEAD
verdicts are injected through the Storage object (a real S3 cannot fail on demand per request);
the outage of ``test_run_once_*`` is a real stopped S3.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import (
    CLI,
    Db,
    Stack,
    Worker,
    finalize_row,
    pipe_bytes,
    put_binary,
    recording,
    seed_available_unpublished,
    seed_stuck,
)
from recording_finalize import incidents as worker_incidents_mod
from recording_finalize import logs
from recording_finalize.config import load_settings
from recording_finalize.cycle import Context, CycleSummary, run_cycle
from recording_finalize.db import open_pool
from recording_finalize.metrics import Metrics
from recording_finalize.model import TRANSIENT, ClaimedRow, Verdict
from recording_finalize.storage import Storage


class FaultyStorage(Storage):
    """The real S3 client; ``bucket_up`` False makes HeadBucket look unreachable, ``transient``
    True makes every HEAD come back transient (a half-broken storage)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bucket_up = True
        self.transient = False

    def check_bucket(self) -> bool:
        return super().check_bucket() if self.bucket_up else False

    def check(self, row: ClaimedRow) -> Verdict:
        if self.transient:
            return Verdict(TRANSIENT, error="ReadTimeoutError")
        return super().check(row)


Run = Callable[[], tuple[CycleSummary, list[dict[str, Any]]]]
#: How many transient HEADs of a window open an incident (storage_health's rule).
TRANSIENT_MIN = 5


@pytest.fixture
def world(worker: Worker) -> Iterator[tuple[Context, FaultyStorage, Run]]:
    """One Context reused across cycles, as ``run`` does (the worker remembers its incident)."""
    settings = load_settings(worker.environ(RFR_S3_CONCURRENCY="1"))
    pool = open_pool(settings)
    storage = FaultyStorage(settings)
    ctx = Context(settings=settings, pool=pool, storage=storage, metrics=Metrics())

    def run() -> tuple[CycleSummary, list[dict[str, Any]]]:
        out = io.StringIO()
        logs.set_stream(out)
        try:
            summary = run_cycle(ctx, threading.Event())
        finally:
            logs.set_stream(None)
        return summary, [json.loads(line) for line in out.getvalue().splitlines()]

    yield ctx, storage, run
    pool.close()


def incidents(db: Db) -> list[dict[str, Any]]:
    rows = db.all("select source, started_at, ended_at, reason "
                  "from recording_finalize.storage_incidents order by id")
    return [dict(zip(("source", "started_at", "ended_at", "reason"), r, strict=True))
            for r in rows]


def make_due(db: Db, recording_id: Any) -> None:
    with db.connect() as conn:
        conn.execute("update messenger.recording_finalize_attempts set next_attempt_at = now() "
                     "where recording_id = %s", (recording_id,))


def metric(ctx: Context, line_start: str) -> float:
    for line in ctx.metrics.render().decode().splitlines():
        if line.startswith(line_start + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no series {line_start}")


def test_an_outage_opens_an_incident_and_the_404_after_it_fails_nothing(
    world: tuple[Context, FaultyStorage, Run], db: Db
) -> None:
    ctx, storage, run = world
    seeded = seed_stuck(db)  # no binary in S3: without the incident this would end Failed
    before = metric(ctx, "messenger_recording_finalize_last_success_timestamp_seconds")

    storage.bucket_up = False
    summary, events = run()
    assert summary.result == "degraded" and not summary.ok
    # The incident opens at HeadBucket, before the claim: the transient HEAD burns no attempt.
    assert summary.storage_unreachable and summary.counts["transient"] == 1
    assert (summary.counts["heldByIncident"], summary.counts["backoff"]) == (1, 0)
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0
    assert "HeadBucket" in summary.degraded[0]
    [incident] = incidents(db)
    assert incident["source"] == "worker" and incident["ended_at"] is None
    assert "cannot be reached" in incident["reason"]
    assert [e["event"] for e in events if e["event"].startswith("storage incident")] == [
        "storage incident opened"]
    assert metric(ctx, 'messenger_recording_finalize_cycles_total{result="degraded"}') == 1
    assert metric(ctx, 'messenger_recording_finalize_cycles_total{result="ok"}') == 0
    assert metric(ctx, "messenger_recording_finalize_last_success_timestamp_seconds") == before
    assert metric(ctx, "messenger_recording_finalize_storage_incidents_open") == 1
    assert metric(ctx, "messenger_recording_finalize_transient_total") == 1
    assert metric(ctx, "messenger_recording_finalize_attempts_held_total") == 1

    # S3 answers again: the incident closes, and the recording's 404 is not trusted yet.
    storage.bucket_up = True
    make_due(db, seeded.recording_id)
    summary, events = run()
    assert summary.result == "ok", (summary.degraded, summary.error, events[-3:])
    assert (summary.counts["failed"], summary.counts["deferredByIncident"]) == (0, 1)
    [incident] = incidents(db)
    assert incident["ended_at"] is not None
    row = finalize_row(db, seeded.recording_id)
    # Held, then deferred: neither cycle burned the attempt it counted at claim.
    assert row["status"] == "Pending" and row["attempts"] == 0
    assert row["last_error"].startswith("StorageIncident: worker incident")
    assert recording(db, seeded.recording_id)["status"] == "Uploading"
    assert metric(ctx, "messenger_recording_finalize_missing_deferred_total") == 1
    assert metric(ctx, "messenger_recording_finalize_storage_incidents_open") == 0
    assert metric(ctx, "messenger_recording_finalize_last_success_timestamp_seconds") > before
    due = db.one("select next_attempt_at - "
                 "(select ended_at from recording_finalize.storage_incidents) "
                 "from messenger.recording_finalize_attempts where recording_id = %s",
                 (seeded.recording_id,))[0]
    grace = db.one("select extract(epoch from (recording_finalize_internal.policy())"
                   ".upload_grace)::float8")[0]
    assert due.total_seconds() == pytest.approx(grace, abs=0.01)


def test_mostly_transient_heads_open_an_incident_a_healthy_cycle_closes_it(
    world: tuple[Context, FaultyStorage, Run], db: Db
) -> None:
    _, storage, run = world
    seeded = [seed_stuck(db) for _ in range(TRANSIENT_MIN)]
    storage.transient = True
    summary, _ = run()
    assert summary.counts["transient"] == TRANSIENT_MIN and not summary.storage_unreachable
    [incident] = incidents(db)
    assert incident["ended_at"] is None and "5 of 5 HEADs transient" in incident["reason"]
    # The first four waited for the fifth (one check at a time): none used an attempt.
    assert summary.counts["heldByIncident"] == TRANSIENT_MIN and summary.counts["backoff"] == 0
    assert {finalize_row(db, s.recording_id)["attempts"] for s in seeded} == {0}
    assert summary.result == "degraded" and "most HEADs" in summary.degraded[0]

    # HeadBucket answered all along: the next cycle's start does not close it, its HEADs do.
    storage.transient = False
    for s in seeded:
        make_due(db, s.recording_id)
    summary, _ = run()
    assert summary.counts["deferredByIncident"] == TRANSIENT_MIN and summary.counts["failed"] == 0
    [incident] = incidents(db)
    assert incident["ended_at"] is not None and "HEADs healthy again" in incident["reason"]


def test_the_open_incidents_gauge_moves_when_the_worker_opens_and_closes_one(
    world: tuple[Context, FaultyStorage, Run],
) -> None:
    """The gauge the alert `storage incident open > 15 min` reads says so from the moment the
    worker opens its incident, not only when the cycle ends: a paced drain's cycle lasts
    minutes. (A trial: S3 stopped inside a 21 s drain cycle; the incident opened 2 s in, the
    gauge said 0 for the next 17 s while `opened_total` said 1.)"""
    ctx, _, _ = world
    gauge = "messenger_recording_finalize_storage_incidents_open"
    assert metric(ctx, gauge) == 0
    with ctx.pool.connection() as conn:
        opened = worker_incidents_mod.report(conn, ctx.metrics, "job", bucket_answered=False,
                                             error="EndpointConnectionError")
        assert opened.action == "opened", opened
        assert metric(ctx, gauge) == 1
        closed = worker_incidents_mod.report(conn, ctx.metrics, "job", bucket_answered=True)
        assert closed.action == "closed", closed
        assert metric(ctx, gauge) == 0


def test_a_few_transient_heads_are_no_incident(
    world: tuple[Context, FaultyStorage, Run], db: Db
) -> None:
    _, storage, run = world
    for _ in range(TRANSIENT_MIN - 1):
        seed_stuck(db)
    storage.transient = True
    summary, _ = run()
    assert summary.counts["transient"] == TRANSIENT_MIN - 1
    assert incidents(db) == []


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_run_once_with_kafka_unreachable_exits_1_and_says_why(worker: Worker, db: Db) -> None:
    seed_available_unpublished(db)  # republished at claim: one event to deliver
    summary = worker.run_once(
        expect_rc=1, KAFKA_BOOTSTRAP_SERVERS=f"127.0.0.1:{_closed_port()}",
        RFR_LOCK_TTL="10s", RFR_MAX_RUN_DURATION="5s", RFR_S3_TIMEOUT="1s")
    assert summary["error"] is None and summary["result"] == "degraded"
    assert summary["republished"] == 1 and summary["published"] == 0
    assert summary["publishFailed"] == 1
    assert summary["degraded"] and summary["degraded"][0].startswith("relay: 1 deliveries failed")


def test_run_once_with_s3_stopped_exits_1_and_opens_an_incident(
    worker: Worker, db: Db, stack: Stack
) -> None:
    seed_stuck(db)
    stack.stop_service("s3")
    try:
        summary = worker.run_once(expect_rc=1, RFR_S3_TIMEOUT="1s")
    finally:
        stack.start_service("s3")
    assert summary["result"] == "degraded" and summary["storageUnreachable"] is True
    assert (summary["failed"], summary["heldByIncident"], summary["backoff"]) == (0, 1, 0)
    assert [i["source"] for i in incidents(db) if i["ended_at"] is None] == ["worker"]
    # Storage is back: the next run-once closes the incident and is ok again.
    summary = worker.run_once(expect_rc=0)
    assert summary["result"] == "ok"
    assert all(i["ended_at"] is not None for i in incidents(db))


@pytest.fixture
def operator_url(stack: Stack, db: Db) -> str:
    password = secrets.token_hex(12)
    with db.connect() as conn:
        exists = conn.execute("select 1 from pg_roles where rolname = 'rfr_pytest_operator'"
                              ).fetchone()
        verb = "alter" if exists else "create"
        conn.execute(f"{verb} role rfr_pytest_operator login password '{password}'")
        conn.execute("grant recording_finalize_operator to rfr_pytest_operator")
    return stack.url_for(db.name, "rfr_pytest_operator", password)


def test_storage_incident_cli(worker: Worker, db: Db, operator_url: str) -> None:
    # The worker's own role may record only source worker.
    refused = worker.cli("storage-incident", "open", "--reason", "recorders time out")
    assert refused.returncode == 1 and "RF018" in refused.stderr
    assert "recording_finalize_operator" in refused.stderr

    opened = worker.cli("storage-incident", "open", "--source", "recorder", "--at", "20m",
                        "--reason", "recorders time out on PUT", "--json",
                        DATABASE_URL=operator_url)
    assert opened.returncode == 0, opened.stderr
    body = json.loads(opened.stdout)
    assert body["source"] == "recorder" and body["open"] and body["created"]
    again = worker.cli("storage-incident", "open", "--source", "recorder", "--json",
                       DATABASE_URL=operator_url)
    assert again.returncode == 0 and json.loads(again.stdout)["id"] == body["id"]
    assert json.loads(again.stdout)["created"] is False

    listed = worker.cli("storage-incident", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)["storageIncidents"]
    assert row["open"] and 1190 < row["durationSeconds"] < 1300  # back-dated by 20 minutes

    status = worker.cli("status", "--json", DATABASE_URL=operator_url)
    assert [i["id"] for i in json.loads(status.stdout)["storageIncidents"]] == [body["id"]]

    bad_at = worker.cli("storage-incident", "close", "--source", "recorder", "--at", "soon",
                        DATABASE_URL=operator_url)
    assert bad_at.returncode == 2 and "--at" in bad_at.stderr
    future = worker.cli("storage-incident", "close", "--source", "recorder", "--at",
                        "2999-01-01T00:00:00Z", DATABASE_URL=operator_url)
    assert future.returncode == 2 and "RF017" in future.stderr
    closed = worker.cli("storage-incident", "close", "--source", "recorder", "--reason", "fixed",
                        DATABASE_URL=operator_url)
    assert closed.returncode == 0 and "closed" in closed.stdout
    twice = worker.cli("storage-incident", "close", "--source", "recorder",
                       DATABASE_URL=operator_url)
    assert twice.returncode == 1 and "no open incident" in twice.stderr
    assert worker.cli("storage-incident", "nonsense").returncode == 2


def test_the_heartbeat_moves_with_each_settled_row_and_not_with_an_outage(
    world: tuple[Context, FaultyStorage, Run], db: Db, stack: Stack, bucket: str
) -> None:
    """The "no run" alert's heartbeat (it once fired during a healthy drain): a drain's cycle
    may run for minutes, so every settled row moves it, not only the cycle's end; transient
    verdicts settle nothing and leave it where it was."""
    ctx, storage, run = world
    heartbeat = "messenger_recording_finalize_last_progress_timestamp_seconds"
    seeded = [seed_stuck(db) for _ in range(3)]
    for s in seeded:
        put_binary(stack, bucket, s.recording_id)
    moves: list[float] = []
    mark = ctx.metrics.mark_progress

    def counted() -> None:
        moves.append(time.monotonic())
        mark()

    ctx.metrics.mark_progress = counted  # type: ignore[method-assign]

    storage.transient = True
    summary, _ = run()
    assert summary.counts["transient"] == 3 and summary.counts["backoff"] == 3
    assert moves == []  # (a cycle that ends ok still moves it, as the end of any ok cycle)
    before = metric(ctx, heartbeat)

    storage.transient = False
    for s in seeded:
        make_due(db, s.recording_id)
    summary, _ = run()
    assert summary.counts["reconciled"] == 3, summary
    # One move per settled row (and one per relay batch the broker acknowledged), each while
    # the cycle runs; its success at the end moves the gauge once more.
    assert len(moves) >= 3
    assert metric(ctx, heartbeat) > before


def _seed_many(db: Db, count: int) -> list[Any]:
    """``count`` stuck recordings (sessions ended an hour ago, no callback, no binary): due now."""
    with db.connect() as conn:
        sessions = [r[0] for r in conn.execute(
            "insert into messenger.call_sessions (id, chat_id, deal_id, tenant_id, started_at) "
            "select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), "
            "now() - interval '3 hours' from generate_series(1, %s) returning id",
            (count,)).fetchall()]
        recordings = [r[0] for r in conn.execute(
            "select recording_finalize.recording_started(gen_random_uuid(), 'Direct', s, "
            "'Audio', 'Auto') from unnest(%s::uuid[]) as s", (sessions,)).fetchall()]
        conn.execute("update messenger.call_sessions set ended_at = now() - interval '1 hour' "
                     "where id = any(%s)", (sessions,))
        conn.execute("select recording_finalize.session_ended('Direct', s, '30 minutes') "
                     "from unnest(%s::uuid[]) as s", (sessions,))
    return recordings


class S3Switch:
    """A TCP proxy in front of the stack's S3 that a test turns off and on at once: off, every
    open connection is cut and every new one closed as soon as it is accepted (the worker's
    HeadBucket and HEADs fail as on a storage outage); SeaweedFS itself keeps running, so the
    outage ends the moment the test says, not when a restarted server is ready."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.up = True
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if not self.up:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self._lock:
                self._open.update((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=pipe_bytes, args=(src, dst), daemon=True).start()

    def set_up(self, up: bool) -> None:
        self.up = up
        if not up:
            with self._lock:
                cut, self._open = self._open, set()
            for sock in cut:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._server.close()
        self.set_up(False)


#: Puts a binary for each recording id read from stdin into the bucket ``argv[1]``, where the
#: recorders put them.
_UPLOAD = """
import os, sys, boto3
s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT_URL"])
for recording_id in sys.stdin.read().split():
    s3.put_object(Bucket=sys.argv[1], Key=f"recordings/{recording_id}", Body=b"0" * 64,
                  ContentType="audio/webm", Metadata={"duration-seconds": "42"})
"""


def test_an_outage_inside_a_paced_drain_is_an_outage_from_its_first_seconds(
    worker: Worker, db: Db, stack: Stack, bucket: str, tmp_path: Path
) -> None:
    """The SRE's rollout trial: a paced drain's cycle (batches of 100, a few verdicts per round
    trip) ran on through an S3 stop; every transient verdict used an attempt, and the worker's
    incident opened only when the cycle ended, after S3 was back, so the 404s of uploads that
    landed just after the outage failed their recordings. Here S3 stops while one ``run-once``
    drains, for several batches, and comes back while it still drains; the recorders' retried
    uploads land two seconds later, well within RFR_UPLOAD_GRACE."""
    recordings = _seed_many(db, 600)
    port = urlsplit(stack.env["S3_ENDPOINT_URL"]).port
    assert port is not None
    switch = S3Switch(port)
    # The log to a file: 600 rows' lines would fill a pipe nobody reads before the end.
    log = (tmp_path / "run-once.log").open("w+")
    proc = subprocess.Popen(
        [CLI, "run-once"], stdout=subprocess.PIPE, stderr=log, text=True,
        env=worker.environ(S3_ENDPOINT_URL=switch.url, RFR_PACING="off", RFR_MAX_APPLY_RATE="50",
                           RFR_BATCH_SIZE="100", RFR_S3_TIMEOUT="1s", RFR_LOCK_TTL="150s",
                           RFR_MAX_RUN_DURATION="120s"))
    settled = "select count(*) from messenger.recording_finalize_attempts where status <> 'Pending'"
    try:
        deadline = time.monotonic() + 60
        while db.one(settled)[0] < 100:  # the drain is under way: 404s before the outage fail
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        stopped_at = db.one("select now()")[0]
        switch.set_up(False)
        time.sleep(6)  # three claims of 100 at 50 verdicts a second
        switch.set_up(True)
        assert proc.poll() is None, "the drain ended during the outage: make it longer"
        # What S3 holds no binary for yet when it is back: the recorders' uploads that the
        # outage held back, landing a few seconds later (well within RFR_UPLOAD_GRACE) while
        # the drain goes on HEADing the rest.
        waiting = [r[0] for r in db.all(
            "select recording_id from messenger.recording_finalize_attempts "
            "where status = 'Pending'")]
        time.sleep(3)
        # Uploaded by another process: this one's GIL is the proxy's.
        uploaded = subprocess.run(
            [sys.executable, "-c", _UPLOAD, bucket], input="\n".join(map(str, waiting)),
            env=os.environ | stack.env, text=True, capture_output=True, timeout=120)
        assert uploaded.returncode == 0, uploaded.stderr
        out, _ = proc.communicate(timeout=180)
    finally:
        switch.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["transient"] > 0, summary

    # The incident opened while the cycle ran, within seconds of the first failing HEADs.
    worker_incidents = [i for i in incidents(db) if i["source"] == "worker"]
    assert worker_incidents, ("no storage incident was opened", summary)
    opened_after = (worker_incidents[0]["started_at"] - stopped_at).total_seconds()
    assert 0 <= opened_after < 5, (opened_after, worker_incidents)

    rows = db.all("select f.recording_id, f.status, f.attempts, f.last_error, r.status "
                  "from messenger.recording_finalize_attempts as f "
                  "join messenger.call_recordings as r on r.id = f.recording_id")
    assert len(rows) == len(recordings)
    # Nothing quarantined, and no attempt used by the outage: a row still Pending has all of
    # its attempts (transient verdicts held, 404s deferred, each attempt given back).
    assert [r for r in rows if r[1] == "Quarantined"] == []
    used = [r for r in rows if r[1] == "Pending" and r[2] != 0]
    assert used == [], (len(used), used[:3])
    # No upload that landed within the grace after the outage was failed.
    late = set(waiting)
    failed_late = [r for r in rows if r[0] in late and r[4] == "Failed"]
    assert failed_late == [], (len(failed_late), failed_late[:3])
