"""The operator toolkit against the real stack: explain, audit [--repair], audited requeue
(single and bulk) and retry, pause/resume, run-once --dry-run, prune and RFR_RETENTION.

The operator commands run as a login granted only recording_finalize_operator (``operator``),
the cycle as the worker role (``worker``); seeding is done as the owner.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
import uuid
from datetime import datetime
from typing import Any

import psycopg
import pytest
from conftest import (
    CLI,
    DEAD_PORT,
    Db,
    Seeded,
    Worker,
    _base_env,
    db_fingerprint,
    finalize_row,
    free_port,
    log_events,
    put_binary,
    put_poison_binary,
    recording,
    seed_available_unpublished,
    seed_stuck,
)


def _json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, (proc.returncode, proc.stdout, proc.stderr)
    data: dict[str, Any] = json.loads(lines[0])
    return data


def _actions(db: Db, recording_id: uuid.UUID | None = None) -> list[tuple[Any, ...]]:
    if recording_id is None:
        return db.all("select recording_id, action_kind, operator_name, reason "
                      "from recording_finalize.operator_actions order by id")
    return db.all("select recording_id, action_kind, operator_name, reason "
                  "from recording_finalize.operator_actions where recording_id = %s "
                  "order by id", (recording_id,))


def _plant_orphan(db: Db) -> uuid.UUID:
    """A recording the lifecycle never handed to the safety net: Uploading, its session ended
    two hours ago, and no finalize row (written directly, as a buggy service would)."""
    rid, sid = uuid.uuid4(), uuid.uuid4()
    with db.connect() as conn:
        conn.execute("insert into messenger.call_sessions (id, started_at, ended_at) "
                     "values (%s, now() - interval '3 hours', now() - interval '2 hours')", (sid,))
        conn.execute("insert into messenger.call_recordings (id, session_kind, session_id, "
                     "media_type, trigger, status, started_at, ended_at) values "
                     "(%s, 'Direct', %s, 'Audio', 'Auto', 'Uploading', "
                     "now() - interval '3 hours', now() - interval '2 hours')", (rid, sid))
    return rid


def _quarantine_by_metadata(worker: Worker, db: Db, n: int) -> list[Seeded]:
    seeded = [seed_stuck(db) for _ in range(n)]
    for s in seeded:
        put_binary(worker.stack, worker.bucket, s.recording_id,
                   metadata={"duration-seconds": "NaN"})
    worker.run_once()
    for s in seeded:
        assert finalize_row(db, s.recording_id)["status"] == "Quarantined"
    return seeded


@pytest.mark.parametrize("command", ["explain", "audit", "retry", "pause", "resume", "prune",
                                     "requeue", "run-once"])
def test_every_toolkit_command_explains_itself(command: str) -> None:
    proc = subprocess.run([CLI, command, "--help"], env=_base_env(), capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "exit codes:" in proc.stdout and "DATABASE_URL" in proc.stdout
    expected = {"requeue": ["--quarantined", "--reason-code", "--since", "--yes", "--dry-run",
                            "--operator"],
                "run-once": ["--dry-run", "RFR_RETENTION"], "prune": ["--older-than"],
                "audit": ["--repair", "--json"], "explain": ["--json"]}
    for flag in expected.get(command, ["--reason"]):
        assert flag in proc.stdout, flag


def test_explain_tells_a_backing_off_recording_and_what_happens_next(
    worker: Worker, operator: Worker, db: Db
) -> None:
    stuck = seed_stuck(db)
    # Storage unreachable: a degraded cycle (exit 1) opens the worker's storage incident; the
    # row's transient answer gives its attempt back (held) and it waits out the claim's backoff.
    summary = worker.run_once(expect_rc=1, S3_ENDPOINT_URL=f"http://127.0.0.1:{DEAD_PORT}")
    assert summary["heldByIncident"] == 1, summary
    before = db_fingerprint(db)

    proc = operator.cli("explain", str(stuck.recording_id), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = _json(proc)
    assert doc["recording"]["status"] == "Uploading"
    assert doc["session"]["endedAt"] and doc["session"]["slaDueAt"]
    assert doc["finalize"]["status"] == "Pending" and doc["finalize"]["attempts"] == 0
    assert doc["finalize"]["lastError"].startswith("Transient")
    assert doc["s3"]["outcome"] == "missing" and doc["s3"]["present"] is False
    # No event yet, neither the product's (outbox) nor the service's; realtime rows are not
    # the product's to list (it only inserts them).
    assert doc["outbox"] is None and doc["serviceEvent"] is None and "realtime" not in doc
    assert doc["next"]["action"] == "reconcile" and doc["next"]["due"] is False
    assert "attempt 1 of 8" in doc["next"]["sentence"]
    # The storage is back, but the incident the outage opened holds the 404 back (the
    # database's decision, preview_outcomes): not Failed.
    assert doc["next"]["outcome"]["result"] == "deferred_by_incident"
    assert "a storage incident holds the 404 back" in doc["next"]["sentence"]
    assert "Failed (Timeout)" not in doc["next"]["sentence"]

    put_binary(worker.stack, worker.bucket, stuck.recording_id, size=777)
    text = operator.cli("explain", str(stuck.recording_id))
    assert text.returncode == 0, text.stderr
    assert "777 bytes; verdict found" in text.stdout
    assert "so it becomes Available and its event is published" in text.stdout
    assert db_fingerprint(db) == before, "explain wrote something"

    unknown = operator.cli("explain", str(uuid.uuid4()))
    assert unknown.returncode == 1 and "no recording and no finalize row" in unknown.stderr
    bad = operator.cli("explain", "nope")
    assert bad.returncode == 2 and "RECORDING_ID" in bad.stderr


# An adapter whose recordings take their session's kind from the session itself (the kind lives
# only there): once the service's retention purges the session, the kind is NULL.
_KIND_FROM_THE_SESSION = """
create or replace view recording_finalize_adapter.recordings as
select r.id,
    coalesce(
        (select 'Direct'::text from messenger.call_sessions as s where s.id = r.session_id),
        (select 'Conference'::text from messenger.conference_sessions as s
            where s.id = r.session_id)) as session_kind,
    r.session_id, r.status::text as status, r.file_id::text as file_id, r.size_bytes,
    r.duration_seconds, r.format::text as format, r.failure_reason::text as failure_reason,
    r.media_type::text as media_type, r.trigger::text as trigger, r.started_at, r.ended_at,
    r.available_at
from messenger.call_recordings as r
"""


def test_explain_looks_at_the_binary_of_a_recording_whose_session_is_gone(
    worker: Worker, operator: Worker, db: Db
) -> None:
    """A person deciding about such a recording (audit: recordings_without_session) wants to
    know whether its binary is there; a key made of the recording's id alone needs no session.
    """
    # Stuck with no finalize row, then its session purged: nothing but the view tells its kind.
    lost = _plant_orphan(db)
    put_binary(worker.stack, worker.bucket, lost, size=555)
    with db.connect() as conn:
        conn.execute(_KIND_FROM_THE_SESSION)
        conn.execute("delete from messenger.call_sessions where id = (select session_id from "
                     "messenger.call_recordings where id = %s)", (lost,))
    audit = _json(operator.cli("audit", "--json"))
    checks = {c["check"]: c for c in audit["checks"]}
    assert checks["recordings_without_session"]["examples"] == [str(lost)], checks

    doc = _json(operator.cli("explain", str(lost), "--json"))
    assert doc["session"]["kind"] is None, doc["session"]
    assert doc["s3"]["present"] is True and doc["s3"]["sizeBytes"] == 555, doc["s3"]
    assert doc["s3"]["key"] == f"recordings/{lost}"
    # A key that names the session's kind cannot be built without it: said, not guessed.
    doc = _json(operator.cli("explain", str(lost), "--json",
                             RFR_S3_KEY_TEMPLATE="{session_kind}/{recording_id}"))
    assert doc["s3"]["present"] is None, doc["s3"]
    assert doc["s3"]["error"] == "no session to build the key from"


def test_audit_finds_a_planted_orphan_and_is_clean_after_repair_and_one_cycle(
    worker: Worker, operator: Worker, db: Db
) -> None:
    assert operator.cli("audit").returncode == 0
    orphan = _plant_orphan(db)

    proc = operator.cli("audit", "--json")
    assert proc.returncode == 1, proc.stderr
    report = _json(proc)
    checks = {c["check"]: c for c in report["checks"]}
    assert checks["orphaned_recordings"]["found"] == 1
    assert checks["orphaned_recordings"]["examples"] == [str(orphan)]
    assert report["clean"] is False
    text = operator.cli("audit")
    assert text.returncode == 1 and str(orphan) in text.stdout

    repaired = operator.cli("audit", "--repair", "--json", "--operator", "ann")
    assert _json(repaired)["repaired"] == [str(orphan)]
    assert finalize_row(db, orphan)["status"] == "Pending"
    assert _actions(db, orphan) == [(orphan, "repair", "ann", _actions(db, orphan)[0][3])]

    summary = worker.run_once()
    assert summary["failed"] == 1, summary  # no binary: Failed (Timeout)
    final = operator.cli("audit")
    assert final.returncode == 0, final.stdout
    assert final.stdout.strip().endswith("clean")


def test_audit_reports_failed_recordings_whose_binary_is_in_s3(
    worker: Worker, operator: Worker, db: Db
) -> None:
    late = seed_stuck(db)
    worker.run_once()
    assert recording(db, late.recording_id)["status"] == "Failed"
    assert operator.cli("audit").returncode == 0
    put_binary(worker.stack, worker.bucket, late.recording_id)  # the upload arrived too late
    proc = operator.cli("audit", "--json")
    assert proc.returncode == 1
    checks = {c["check"]: c for c in _json(proc)["checks"]}
    assert checks["failed_with_binary"]["examples"] == [str(late.recording_id)]


def test_audit_says_when_it_checked_only_the_newest_failed_recordings(
    worker: Worker, operator: Worker, db: Db
) -> None:
    """--failed-limit bounds the HEADs to the newest Failed recordings: a text audit must say
    that the older ones were not checked, or "clean" after an incident that failed more than
    the limit reads as "no Failed recording has its binary". (A trial: 2,200 Failed, 353 of
    them with their binary, `audit` said failed_with_binary 0 and clean.)"""
    older = seed_stuck(db)
    worker.run_once()
    newer = seed_stuck(db)
    worker.run_once()
    assert {recording(db, r.recording_id)["status"] for r in (older, newer)} == {"Failed"}
    put_binary(worker.stack, worker.bucket, older.recording_id)
    bounded = operator.cli("audit", "--failed-limit", "1")
    assert bounded.returncode == 0, bounded.stdout
    assert ("the newest 1 Failed recordings only (--failed-limit reached: older ones, if any, "
            "not checked)") in bounded.stdout, bounded.stdout
    every = operator.cli("audit", "--failed-limit", "3")
    assert every.returncode == 1 and str(older.recording_id) in every.stdout, every.stdout
    assert "every Failed recording (2)" in every.stdout, every.stdout


def test_bulk_requeue_dry_run_changes_nothing_and_yes_audits_every_recording(
    worker: Worker, operator: Worker, db: Db
) -> None:
    seeded = _quarantine_by_metadata(worker, db, 3)
    before = db_fingerprint(db)

    dry = operator.cli("requeue", "--quarantined", "--reason", "metadata fixed", "--dry-run",
                       "--json")
    assert dry.returncode == 0, dry.stderr
    listed = _json(dry)
    assert listed["matched"] == 3 and listed["requeued"] == 0
    assert {r["quarantineReason"] for r in listed["rows"]} == {"invalid_metadata"}
    assert db_fingerprint(db) == before, "the dry run changed the database"

    assert operator.cli("requeue", "--quarantined", "--reason", "x").returncode == 2
    assert operator.cli("requeue", "--quarantined", "--dry-run").returncode == 2  # no --reason
    assert operator.cli("requeue", "--quarantined", "--reason", "x", "--since", "yesterday",
                        "--yes").returncode == 2

    first = operator.cli("requeue", "--quarantined", "--reason-code", "invalid_metadata",
                         "--since", "1h", "--limit", "2", "--reason", "metadata fixed",
                         "--operator", "ann", "--yes", "--json")
    assert first.returncode == 0, first.stderr
    assert _json(first)["requeued"] == 2
    rest = operator.cli("requeue", "--quarantined", "--reason", "metadata fixed", "--yes")
    assert rest.returncode == 0 and "requeued 1 quarantined row(s)" in rest.stdout
    for s in seeded:
        assert finalize_row(db, s.recording_id)["status"] == "Pending"
    actions = _actions(db)
    assert sorted(a[0] for a in actions) == sorted(s.recording_id for s in seeded)
    assert {(a[1], a[3]) for a in actions} == {("requeue", "metadata fixed")}
    assert sum(1 for a in actions if a[2] == "ann") == 2

    doc = _json(operator.cli("explain", str(seeded[0].recording_id), "--json"))
    assert doc["operatorActions"][0]["reason"] == "metadata fixed"


def test_retry_makes_a_backing_off_row_due_now_keeping_its_attempts(
    worker: Worker, operator: Worker, db: Db
) -> None:
    stuck = seed_stuck(db)
    # Its HEAD fails while the storage answers: the row backs off, its attempt counted.
    put_poison_binary(worker.stack, worker.bucket, stuck.recording_id)
    assert worker.run_once()["backoff"] == 1
    row = finalize_row(db, stuck.recording_id)
    assert row["in_future"] and row["attempts"] == 1

    assert operator.cli("retry", str(stuck.recording_id)).returncode == 2  # --reason missing
    proc = operator.cli("retry", str(stuck.recording_id), "--reason", "S3 is back", "--json")
    assert proc.returncode == 0, proc.stderr
    assert _json(proc)["attempts"] == 1
    row = finalize_row(db, stuck.recording_id)
    assert not row["in_future"] and row["attempts"] == 1
    assert [a[1] for a in _actions(db, stuck.recording_id)] == ["retry"]

    put_binary(worker.stack, worker.bucket, stuck.recording_id)
    assert worker.run_once()["reconciled"] == 1
    done = operator.cli("retry", str(stuck.recording_id), "--reason", "again")
    assert done.returncode == 1 and "not Pending" in done.stderr
    assert operator.cli("retry", str(uuid.uuid4()), "--reason", "x").returncode == 1


def test_pause_stops_every_runner_from_its_next_cycle_and_resume_restarts_it(
    worker: Worker, operator: Worker, db: Db
) -> None:
    stuck = seed_stuck(db)
    lost = seed_available_unpublished(db)
    assert operator.cli("pause", "reconcile", "--reason", "S3 migration").returncode == 0
    assert operator.cli("pause", "claim").returncode == 2

    summary = worker.run_once()
    assert summary["claimed"] == 0 and summary["paused"] == ["reconcile"], summary
    assert any(e["event"] == "cycle paused" for e in log_events(summary["_stderr"]))
    assert finalize_row(db, stuck.recording_id)["attempts"] == 0
    status = json.loads(operator.cli("status", "--json").stdout)
    assert status["paused"] == ["reconcile"] and status["pauses"][0]["reason"] == "S3 migration"
    assert "paused reconcile" in operator.cli("status").stdout

    # Relay paused too: the republish waits for it; resume all and both run.
    assert operator.cli("resume", "reconcile").returncode == 0
    assert operator.cli("pause", "relay").returncode == 0
    summary = worker.run_once()
    assert summary["republished"] == 1 and summary["published"] == 0, summary
    assert operator.cli("resume", "all", "--reason", "done").returncode == 0
    summary = worker.run_once()
    assert summary["published"] == 1 and summary["paused"] == [], summary
    assert [a[1] for a in _actions(db)] == ["pause", "resume", "pause", "resume"]
    assert lost.recording_id  # the republished recording


def _metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def _wait_metric(port: int, name: str, value: float, timeout: float = 20) -> dict[str, float]:
    deadline = time.monotonic() + timeout
    seen: dict[str, float] = {}
    while time.monotonic() < deadline:
        try:
            seen = _metrics(port)
        except OSError:
            seen = {}
        if seen.get(name) == value:
            return seen
        time.sleep(0.3)
    raise AssertionError(f"{name} never became {value}: {seen.get(name)}")


@pytest.mark.parametrize("mode", ["paused", "disabled"])
def test_metrics_stay_fresh_while_paused_or_disabled(
    worker: Worker, operator: Worker, db: Db, mode: str
) -> None:
    port = free_port()
    env = {"RFR_METRICS_PORT": str(port), "RFR_POLLING_INTERVAL": "500ms"}
    if mode == "disabled":
        env["RECORDINGS_ENABLED"] = "false"
    else:
        assert operator.cli("pause", "all").returncode == 0
    proc = worker.spawn("run", **env)
    try:
        if mode == "paused":
            _wait_metric(port, 'messenger_recording_finalize_paused{part="reconcile"}', 1.0)
        _wait_metric(port, "messenger_recording_finalize_backlog", 0.0)
        seed_stuck(db)  # appears while the worker idles
        seen = _wait_metric(port, "messenger_recording_finalize_backlog", 1.0)
        status = json.loads(operator.cli("status", "--json").stdout)
        assert status["backlog"] == seen["messenger_recording_finalize_backlog"]
        assert proc.poll() is None, "the worker must stay up"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_quarantined_metric_is_labelled_by_reason(
    worker: Worker, operator: Worker, db: Db
) -> None:
    _quarantine_by_metadata(worker, db, 2)
    port = free_port()
    proc = worker.spawn("run", RFR_METRICS_PORT=str(port), RFR_POLLING_INTERVAL="500ms")
    try:
        _wait_metric(port, "messenger_recording_finalize_quarantined_rows", 2.0)
        seen = _wait_metric(
            port, 'messenger_recording_finalize_quarantined_rows_by_reason'
            '{reason="invalid_metadata"}', 2.0)
        assert seen['messenger_recording_finalize_quarantined_rows_by_reason'
                    '{reason="crash_loop"}'] == 0.0
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_run_once_dry_run_reports_phase_and_verdict_and_writes_nothing(
    worker: Worker, operator: Worker, db: Db
) -> None:
    present = seed_stuck(db)
    absent = seed_stuck(db)
    lost = seed_available_unpublished(db)
    young = seed_stuck(db, ended_ago="1 minute")
    put_binary(worker.stack, worker.bucket, present.recording_id)
    before = db_fingerprint(db)

    # The dry run asks the operator's preview functions: the worker's login may not.
    refused = worker.cli("run-once", "--dry-run")
    assert refused.returncode == 1
    assert "`run-once --dry-run` is an operator's command" in refused.stderr
    proc = operator.cli("run-once", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    report = _json(proc)
    assert db_fingerprint(db) == before, "the dry run wrote something"
    rows = {r["recordingId"]: r for r in report["rows"]}
    assert report["dryRun"] is True and report["due"] == 3
    assert str(young.recording_id) not in rows  # not due yet
    assert rows[str(present.recording_id)]["phase"] == "reconcile"
    assert rows[str(present.recording_id)]["s3"]["outcome"] == "found"
    assert rows[str(present.recording_id)]["result"] == "reconciled"
    assert rows[str(absent.recording_id)]["result"] == "failed"
    assert rows[str(lost.recording_id)]["phase"] == "republished"

    # What the real cycle then does is what the dry run said.
    summary = worker.run_once()
    assert (summary["reconciled"], summary["failed"], summary["republished"]) == (1, 1, 1)


def test_prune_deletes_old_finished_rows_and_a_late_duplicate_callback_sends_nothing(
    worker: Worker, operator: Worker, db: Db
) -> None:
    old = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, old.recording_id)
    assert worker.run_once()["published"] == 1
    keep = seed_stuck(db)
    with db.connect() as conn:
        # Everything is 40 days old; only the product's own rows may go.
        for table, column in (("integration_outbox", "published_at"),
                              ("realtime_outbox", "created_at")):
            conn.execute(f"update messenger.{table} set {column} = now() - interval '40 days'")
        conn.execute("update messenger.realtime_outbox set dispatched_at = now() - "
                     "interval '40 days'")
        conn.execute("update messenger.recording_finalize_attempts set updated_at = now() - "
                     "interval '40 days', next_attempt_at = now() - interval '40 days' "
                     "where status = 'Done'")
    before = db_fingerprint(db)

    assert operator.cli("prune", "--older-than", "30s").returncode == 2
    dry = operator.cli("prune", "--older-than", "30d", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert {k: _json(dry)[k] for k in ("finalize", "leases", "incidents")} == \
        {"finalize": 1, "leases": 0, "incidents": 0}
    assert db_fingerprint(db) == before

    proc = operator.cli("prune", "--older-than", "30d", "--batch-size", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    result = _json(proc)
    assert (result["finalize"], result["leases"], result["incidents"]) == (1, 0, 0)
    assert result["statements"] == 2  # batches of one row: a full batch, then an empty one
    assert db.one("select count(*) from messenger.recording_finalize_attempts "
                  "where recording_id = %s", (old.recording_id,)) == (0,)
    assert finalize_row(db, keep.recording_id)["status"] == "Pending"
    # The service's rows are the service's retention: untouched, however old.
    after = db_fingerprint(db)
    assert {t: after[t] for t in ("integration_outbox", "realtime_outbox", "call_recordings")} \
        == {t: before[t] for t in ("integration_outbox", "realtime_outbox", "call_recordings")}

    # The service's retention removes the old event too; then the recorder's callback comes
    # again, late: no second event, neither from the callback nor from a later cycle.
    with db.connect() as conn:
        conn.execute("delete from messenger.integration_outbox")
        answer = conn.execute("select recording_finalize.recording_ingest_completed(%s, 'f', 1, "
                              "1, 'Ogg', %s)", (old.recording_id, worker.topic)).fetchone()
    assert answer == ("already_available",)
    assert db.one("select count(*) from messenger.integration_outbox") == (0,)
    assert worker.run_once()["published"] == 0


def test_run_prunes_by_itself_unless_retention_is_0(worker: Worker, db: Db) -> None:
    old = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, old.recording_id)
    assert worker.run_once()["published"] == 1
    with db.connect() as conn:
        conn.execute("update messenger.recording_finalize_attempts set updated_at = now() - "
                     "interval '2 days' where status = 'Done'")
        # The product's own published event, older than republish discovery's longest look
        # back (30 days + sla_timeout_max): prunable.
        conn.execute("update recording_finalize.outbox set published_at = now() - "
                     "interval '60 days' where recording_id = %s", (old.recording_id,))
        # A published event of the service's own, as old: the service's to prune, not the
        # product's.
        conn.execute("insert into messenger.integration_outbox (topic, message_key, "
                     "event_type, dedupe_key, payload, published_at) values (%s, 'k', "
                     "'call-recording-available', %s, '{}', now() - interval '60 days')",
                     (worker.topic, str(uuid.uuid4())))
    service_events = db.all("select id, xmin::text, published_at "
                            "from messenger.integration_outbox order by id")

    def product_events() -> int:
        return int(db.one("select count(*) from recording_finalize.outbox "
                          "where recording_id = %s", (old.recording_id,))[0])

    assert product_events() == 1
    assert worker.cli("status", RFR_RETENTION="5").returncode == 2  # below one minute
    assert "RFR_RETENTION" in worker.cli("status", RFR_RETENTION="soon").stderr

    def done_rows() -> int:
        return int(db.one("select count(*) from messenger.recording_finalize_attempts "
                          "where recording_id = %s", (old.recording_id,))[0])

    proc = worker.spawn("run", RFR_RETENTION="0", RFR_POLLING_INTERVAL="500ms")
    time.sleep(3)
    proc.terminate()
    _, err = proc.communicate(timeout=20)
    assert any(e["event"] == "retention off" for e in log_events(err))
    assert done_rows() == 1 and product_events() == 1

    proc = worker.spawn("run", RFR_RETENTION="1d", RFR_POLLING_INTERVAL="500ms")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (done_rows() or product_events()):
        time.sleep(0.3)
    proc.terminate()
    _, err = proc.communicate(timeout=20)
    pruned = [e for e in log_events(err) if e["event"] == "pruned"]
    assert pruned and (pruned[0]["finalize"], pruned[0]["events"]) == (1, 1), err[-2000:]
    assert done_rows() == 0 and product_events() == 0
    # The service's published event is the service's to prune: there, unwritten.
    assert db.all("select id, xmin::text, published_at from messenger.integration_outbox "
                  "order by id") == service_events and len(service_events) == 1


# ------------------------------------------------------------------------------------------
# preview equals reality: explain and run-once --dry-run against the cycle that follows

#: What a cycle's log says it did with one recording, by the database's answer.
_EVENT_RESULTS = {
    "recording reconciled": "reconciled",
    "recording failed": "failed",
    "recording backoff": "backoff",
    "recording quarantined": "quarantined",
    "recording held by storage incident": "held_by_incident",
    "recording deferred by storage incident": "deferred_by_incident",
    "recording busy": "busy",
    "recording already terminal": "terminal",
    "stale claim": "stale",
    "recording republished": "republished",
}
#: The finalize row's status each claim-time action leaves.
_CLAIM_STATUS = {"quarantined": "Quarantined", "deferred_by_sla": "Pending",
                 "republished": "Done", "closed": "Done"}


def _matrix_rows(worker: Worker, db: Db) -> dict[str, uuid.UUID]:
    """One recording per (state, verdict): states of the finalize row, verdicts of the real
    storage (found, 404, a HEAD that always fails, unusable metadata), all due now."""
    rows: dict[str, uuid.UUID] = {}

    def make(state: str, verdict: str) -> None:
        seeded = seed_stuck(db, ended_ago="31 minutes" if state == "sla_just_expired"
                            else "1 minute" if state == "within_sla" else "1 hour")
        rid = seeded.recording_id
        attempts, last_outcome = {"backoff_due": (3, "transient"),
                                  "last_attempt": (7, "transient"),
                                  "exhausted": (8, "transient"),
                                  "exhausted_unanswered": (8, None)}.get(state, (0, None))
        with db.connect() as conn:
            conn.execute("update messenger.recording_finalize_attempts set attempts = %s, "
                         "last_outcome = %s, last_error = case when %s::text is not null then "
                         "'Transient: GenericError' end, next_attempt_at = now() - "
                         "interval '1 second' where recording_id = %s",
                         (attempts, last_outcome, last_outcome, rid))
        if verdict == "found":
            put_binary(worker.stack, worker.bucket, rid)
        elif verdict == "transient":
            put_poison_binary(worker.stack, worker.bucket, rid)
        elif verdict == "invalid":
            put_binary(worker.stack, worker.bucket, rid, metadata={"duration-seconds": "NaN"})
        rows[f"{state}/{verdict}"] = rid

    for state in ("fresh", "backoff_due", "last_attempt", "sla_just_expired"):
        for verdict in ("found", "missing", "transient", "invalid"):
            make(state, verdict)
    # Settled at claim, whatever the storage says.
    make("exhausted", "found")
    make("exhausted_unanswered", "missing")
    make("within_sla", "found")
    return rows


@pytest.mark.parametrize("incident", [
    "none",
    "recorders",
    # A worker's incident left open while the storage answers again: the run-once closes it
    # before it claims, so its transient verdicts back off (and a last attempt is quarantined);
    # explain and the dry run, which write nothing, tell preview_outcomes that their HeadBucket
    # answered (bucket_confirmed) and say the same. Seen failing before they did.
    "worker",
])
def test_explain_and_the_dry_run_predict_exactly_what_the_next_cycle_does(
    worker: Worker, operator: Worker, db: Db, incident: str
) -> None:
    """For rows in every state and every storage verdict, the result, finalize status, attempts
    and next attempt that ``explain`` and ``run-once --dry-run`` predict are what the next
    ``run-once`` does. A 404 under a storage incident is the case an earlier preview got wrong
    (it said Failed where the cycle deferred)."""
    rows = _matrix_rows(worker, db)
    fast = {"RFR_BACKOFF_JITTER": "0"}
    if incident == "recorders":
        opened = operator.cli("storage-incident", "open", "--source", "recorders", "--at", "2h",
                              "--reason", "recorders cannot upload")
        assert opened.returncode == 0, opened.stderr
    elif incident == "worker":
        # Left open by a worker that died during an outage (its HeadBucket went unanswered);
        # the storage answers again.
        with psycopg.connect(db.worker_url, autocommit=True) as conn:
            conn.execute("select recording_finalize.storage_health(p_bucket_answered => false)")
    before = db_fingerprint(db)
    t0 = time.monotonic()

    explained: dict[str, dict[str, Any]] = {}
    for name, rid in rows.items():
        doc = _json(operator.cli("explain", str(rid), "--json", **fast))
        nxt = doc["next"]
        if nxt["action"] == "reconcile":
            out = nxt["outcome"]
            explained[name] = {"result": out["result"], "status": out["finalizeStatus"],
                               "attempts": out["attempts"], "next": out["nextAttemptAt"]}
        else:
            explained[name] = {"result": nxt["action"], "status": _CLAIM_STATUS[nxt["action"]],
                               "attempts": nxt["attempt"], "next": None}
    dry = operator.cli("run-once", "--dry-run", **fast)
    assert dry.returncode == 0, dry.stderr
    report = {r["recordingId"]: r for r in _json(dry)["rows"]}
    assert db_fingerprint(db) == before, "a preview wrote something"
    dried: dict[str, dict[str, Any]] = {}
    for name, rid in rows.items():
        r = report[str(rid)]
        if r["phase"] == "reconcile":
            dried[name] = {"result": r["result"], "status": r["finalizeStatus"],
                           "attempts": r["attemptsAfter"], "next": r["nextAttemptAfter"]}
        else:
            dried[name] = {"result": r["phase"], "status": _CLAIM_STATUS[r["phase"]],
                           "attempts": r["attempts"], "next": None}

    summary = worker.run_once(**fast)
    elapsed = time.monotonic() - t0
    events: dict[str, list[str]] = {}
    for event in log_events(summary["_stderr"]):
        if event["event"] in _EVENT_RESULTS and "recordingId" in event:
            events.setdefault(event["recordingId"], []).append(_EVENT_RESULTS[event["event"]])
    mismatches = []
    for name, rid in rows.items():
        row = finalize_row(db, rid)
        results = events.get(str(rid), [])
        assert len(results) <= 1, (name, results)
        # The claim re-times a row within its SLA without a log line of its own.
        did = {"result": results[0] if results else "deferred_by_sla", "status": row["status"],
               "attempts": row["attempts"]}
        for source, predicted in (("explain", explained[name]), ("dry run", dried[name])):
            said = {k: predicted[k] for k in ("result", "status", "attempts")}
            if said != did:
                mismatches.append(f"{name}: {source} said {said}, the cycle did {did}")
            elif predicted["next"] is not None and row["status"] == "Pending":
                # Predicted before the cycle: off by at most the time between the two.
                off = abs((datetime.fromisoformat(predicted["next"]) -
                           row["next_attempt_at"]).total_seconds())
                if off > elapsed + 2:
                    mismatches.append(f"{name}: {source} said next attempt {predicted['next']}, "
                                      f"the cycle set {row['next_attempt_at']}")
    assert not mismatches, "\n".join(mismatches)
    # The matrix covers what it claims to (a sanity check of the seeding, not of the preview).
    did_results = {name: explained[name]["result"] for name in rows}
    assert did_results["fresh/found"] == "reconciled"
    assert did_results["fresh/invalid"] == "quarantined"
    assert did_results["last_attempt/transient"] == "quarantined"
    assert did_results["exhausted/found"] == "quarantined"
    assert did_results["within_sla/found"] == "deferred_by_sla"
    assert did_results["fresh/missing"] == ("failed" if incident == "none"
                                            else "deferred_by_incident")
    assert did_results["fresh/transient"] == "backoff"


def test_audit_judges_overdue_events_by_the_workers_interval(operator: Worker, db: Db) -> None:
    """"Overdue" is the worker's polling interval, which lives in the worker's environment, not
    the operator's: audit uses what the worker reported at start, and before any worker has,
    this environment's (--polling-interval); the bound used and whose it is are said."""
    with db.connect() as conn:
        conn.execute(
            "insert into recording_finalize.outbox (recording_id, topic, message_key, headers, "
            "payload, created_at) values (%s, 't', 'k', '{}', '{}', now() - interval "
            "'5 minutes')", (uuid.uuid4(),))
    hourly = operator.cli("audit", "--json", "--polling-interval", "1h")
    report = _json(hourly)
    assert (report["overdueAfterSeconds"], report["settingsOf"]) == (3600, "environment")
    assert {c["check"]: c["found"] for c in report["checks"]}["unpublished_overdue"] == 0
    minutely = operator.cli("audit", "--polling-interval", "60s")
    assert minutely.returncode == 1
    assert "unpublished_overdue: older than 60 s" in minutely.stdout
    assert re.search(r"^unpublished_overdue\s+1\b", minutely.stdout, re.M), minutely.stdout
    # A worker that polls hourly started: its interval wins over the operator's.
    with psycopg.connect(db.schema_owner_url, autocommit=True) as conn:
        conn.execute("select recording_finalize.report_worker_config('b', "
                     "'recordings/{recording_id}', interval '1 hour')")
    report = _json(operator.cli("audit", "--json", "--polling-interval", "60s"))
    assert (report["overdueAfterSeconds"], report["settingsOf"]) == (3600, "worker")
    assert {c["check"]: c["found"] for c in report["checks"]}["unpublished_overdue"] == 0
