"""The product's promises end to end (a lost callback, a missing binary, an outage, a
republish, a poison row, two runners, a stop; docs/states.md): the real console script, as
the least-privilege worker role, against real PostgreSQL, SeaweedFS and Tansu.

Each test seeds through the recording_finalize.* lifecycle functions, runs ``recording-finalize
run-once`` (or two of them), and checks the database, the topic and the summary. SQL semantics
are pgTAP's job; these tests prove the wiring.
"""

from __future__ import annotations

import json
import re
import signal
import time
import uuid
from typing import Any

import jsonschema
import psycopg
import pytest
from conftest import (
    DEAD_PORT,
    REPO,
    Db,
    Seeded,
    SlowProxy,
    Worker,
    consume,
    finalize_row,
    log_events,
    put_binary,
    put_poison_binary,
    recording,
    seed_available_unpublished,
    seed_stuck,
)
from recording_finalize.config import DEFAULT_LOCK_KEY as LOCK_KEY

from tests.lock_bypass import with_lock_key

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
PAYLOAD_FIELDS = {
    "recordingId", "sessionKind", "sessionId", "chatId", "dealId", "tenantId", "mediaType",
    "fileId", "format", "durationSeconds", "sizeBytes", "trigger", "startedAt", "endedAt",
    "availableAt",
}


def outbox_rows(db: Db, recording_id: uuid.UUID) -> list[Any]:
    """The product's events for the recording (its own outbox, recording_finalize.outbox)."""
    return db.all("select topic, message_key, published_at from recording_finalize.outbox "
                  "where recording_id = %s", (recording_id,))


def service_rows(db: Db, recording_id: uuid.UUID) -> list[Any]:
    """The service's events for the recording: the product never writes them."""
    return db.all("select topic, message_key, published_at from messenger.integration_outbox "
                  "where dedupe_key = %s", (str(recording_id),))


def realtime_kinds(db: Db, recording_id: uuid.UUID) -> list[str]:
    return [r[0] for r in db.all(
        "select kind from messenger.realtime_outbox where reference_id = %s order by id",
        (recording_id,))]


def events(summary: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [e for e in log_events(summary["_stderr"]) if e["event"] == name]


# --- Empty batch ------------------------------------------------------------------------------


def test_empty_batch_is_a_no_op(worker: Worker, db: Db) -> None:
    not_due = seed_stuck(db, ended_ago="1 minute")  # the happy path still has its SLA
    before = finalize_row(db, not_due.recording_id)
    summary = worker.run_once()
    assert summary["claimed"] == 0 and summary["error"] is None
    assert summary["skipped"] is False and summary["configError"] is False
    assert finalize_row(db, not_due.recording_id) == before
    assert db.one("select count(*) from recording_finalize.outbox") == (0,)
    assert db.one("select count(*) from messenger.integration_outbox") == (0,)
    assert db.one("select count(*) from messenger.realtime_outbox") == (0,)
    assert consume(worker.stack, worker.topic, expect=0, idle_s=0.5) == []
    assert events(summary, "cycle started") and events(summary, "cycle completed")


# --- Lost callback, binary present -----------------------------------------------------------


def test_lost_callback_with_binary_becomes_available_and_is_published(
    worker: Worker, db: Db
) -> None:
    seeded = seed_stuck(db, kind="Conference", media_type="Video")
    key = put_binary(worker.stack, worker.bucket, seeded.recording_id, size=4321,
                     metadata={"duration-seconds": "42", "format": "WEBM"},
                     content_type="video/webm")
    summary = worker.run_once()
    assert (summary["claimed"], summary["reconciled"], summary["published"]) == (1, 1, 1)

    rec = recording(db, seeded.recording_id)
    assert rec["status"] == "Available"
    assert (rec["file_id"], rec["size_bytes"], rec["duration_seconds"], rec["format"]) == (
        key, 4321, 42, "Webm")
    assert finalize_row(db, seeded.recording_id)["status"] == "Done"
    assert realtime_kinds(db, seeded.recording_id) == ["RecordingAvailable"]

    [msg] = consume(worker.stack, worker.topic, expect=1)
    assert msg.key == str(seeded.session_id)
    assert msg.headers["event-type"] == "call-recording-available"
    uuid.UUID(msg.headers["event-id"])
    payload = msg.value
    assert set(payload) == PAYLOAD_FIELDS
    assert payload["recordingId"] == str(seeded.recording_id)
    assert payload["sessionId"] == str(seeded.session_id)
    assert payload["sessionKind"] == "Conference" and payload["mediaType"] == "Video"
    assert (payload["chatId"], payload["dealId"], payload["tenantId"]) == (
        str(seeded.chat_id), str(seeded.deal_id), str(seeded.tenant_id))
    assert (payload["fileId"], payload["format"], payload["durationSeconds"],
            payload["sizeBytes"], payload["trigger"]) == (key, "Webm", 42, 4321, "Auto")
    for field in ("startedAt", "endedAt", "availableAt"):
        assert ISO_UTC.match(payload[field]), payload[field]
    assert b"://" not in msg.raw
    schema = json.loads((REPO / "docs/contract/call-recording-available.schema.json").read_text())
    jsonschema.validate(payload, schema, format_checker=jsonschema.FormatChecker())

    [reconciled] = events(summary, "recording reconciled")
    assert reconciled["recordingId"] == str(seeded.recording_id)
    assert reconciled["sessionId"] == str(seeded.session_id)
    assert reconciled["fileId"] == key and reconciled["attempts"] == 1


def test_safety_net_and_happy_path_messages_look_the_same(worker: Worker, db: Db) -> None:
    by_worker = seed_stuck(db)
    by_callback = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, by_worker.recording_id,
               metadata={"duration-seconds": "7", "file-id": "files/a"})
    with db.connect() as conn:
        conn.execute("select recording_finalize.recording_ingest_completed(%s, 'files/b', 10, 7, "
                     "'Webm', %s)", (by_callback.recording_id, worker.topic))
    summary = worker.run_once()
    assert summary["reconciled"] == 1 and summary["published"] == 2
    messages = {m.value["recordingId"]: m for m in consume(worker.stack, worker.topic, expect=2)}
    a, b = messages[str(by_worker.recording_id)], messages[str(by_callback.recording_id)]
    assert list(a.value) == list(b.value)  # same fields, same order
    assert set(a.headers) == set(b.headers) == {"event-type", "event-id"}
    assert a.value["fileId"] == "files/a" and b.value["fileId"] == "files/b"


# --- Lost callback, no binary ----------------------------------------------------------------


def test_lost_callback_without_binary_fails_with_timeout(worker: Worker, db: Db) -> None:
    seeded = seed_stuck(db)
    summary = worker.run_once()
    assert (summary["claimed"], summary["failed"], summary["published"]) == (1, 1, 0)
    rec = recording(db, seeded.recording_id)
    assert (rec["status"], rec["failure_reason"]) == ("Failed", "Timeout")
    assert rec["failed_at"] is not None
    assert finalize_row(db, seeded.recording_id)["status"] == "Done"
    assert realtime_kinds(db, seeded.recording_id) == ["RecordingFailed"]
    # Failures have no integration event: none of the product's, none written for the service.
    assert (outbox_rows(db, seeded.recording_id), service_rows(db, seeded.recording_id)) == (
        [], [])
    [failed] = events(summary, "recording failed")
    assert failed["recordingId"] == str(seeded.recording_id)
    assert failed["failureReason"] == "Timeout" and failed["level"] == "warning"


# --- Available but unpublished ---------------------------------------------------------------


def test_available_unpublished_is_republished_once(worker: Worker, db: Db) -> None:
    seeded = seed_available_unpublished(db)
    version = recording(db, seeded.recording_id)["version"]
    summary = worker.run_once()
    assert (summary["republished"], summary["published"], summary["reconciled"]) == (1, 1, 0)
    assert recording(db, seeded.recording_id)["version"] == version  # no transition
    assert [e["recordingId"] for e in events(summary, "recording republished")] == [
        str(seeded.recording_id)]

    again = worker.run_once()
    assert (again["claimed"], again["republished"], again["published"]) == (0, 0, 0)
    messages = consume(worker.stack, worker.topic, expect=1)
    assert [m.value["recordingId"] for m in messages] == [str(seeded.recording_id)]
    assert len(outbox_rows(db, seeded.recording_id)) == 1
    assert service_rows(db, seeded.recording_id) == []


# --- Status guard: a terminal recording is never rewritten -----------------------------------


def test_callback_before_the_tick_wins_and_the_worker_does_not_touch_it(
    worker: Worker, db: Db
) -> None:
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id)
    with db.connect() as conn:
        conn.execute("select recording_finalize.recording_ingest_completed(%s, "
                     "'files/by-callback', 5, 1, 'Ogg', %s)", (seeded.recording_id, worker.topic))
    before = recording(db, seeded.recording_id)
    summary = worker.run_once()
    assert summary["claimed"] == 0 and summary["reconciled"] == 0
    after = recording(db, seeded.recording_id)
    assert (after["file_id"], after["version"]) == ("files/by-callback", before["version"])
    assert len(outbox_rows(db, seeded.recording_id)) == 1  # the callback's, not a second
    assert service_rows(db, seeded.recording_id) == []
    assert len(consume(worker.stack, worker.topic, expect=1)) == 1


# --- No finalize row: discovered ---------------------------------------------------------


def _plant_without_finalize_row(db: Db, ended_ago: str) -> uuid.UUID:
    """A recording the service never handed to the safety net (no lifecycle call): Uploading,
    its session ended ``ended_ago``, no finalize row."""
    rid, sid = uuid.uuid4(), uuid.uuid4()
    with db.connect() as conn:
        conn.execute("insert into messenger.call_sessions (id, started_at, ended_at) "
                     "values (%s, now() - interval '3 hours', now() - %s::interval)",
                     (sid, ended_ago))
        conn.execute("insert into messenger.call_recordings (id, session_kind, session_id, "
                     "media_type, trigger, status, started_at, ended_at) values "
                     "(%s, 'Direct', %s, 'Audio', 'Auto', 'Uploading', "
                     "now() - interval '3 hours', now() - %s::interval)", (rid, sid, ended_ago))
    return rid


def test_a_stuck_recording_without_a_finalize_row_is_discovered_and_finalized_in_one_cycle(
    worker: Worker, db: Db
) -> None:
    stuck = _plant_without_finalize_row(db, "2 hours")
    put_binary(worker.stack, worker.bucket, stuck)
    young = _plant_without_finalize_row(db, "5 minutes")  # the happy path still has its SLA
    summary = worker.run_once()
    assert (summary["discovered"], summary["claimed"], summary["reconciled"]) == (1, 1, 1)
    [event] = events(summary, "recordings discovered")
    assert event["rows"] == 1
    assert recording(db, stuck)["status"] == "Available"
    assert finalize_row(db, stuck)["status"] == "Done"
    assert db.one("select count(*) from messenger.recording_finalize_attempts "
                  "where recording_id = %s", (young,)) == (0,)
    assert worker.run_once()["discovered"] == 0  # opened once


# --- Storage out -> held, never backed off into quarantine -----------------------------------


def test_unreachable_storage_holds_every_claimed_row_then_recovers(
    worker: Worker, db: Db
) -> None:
    rows = [seed_stuck(db) for _ in range(3)]
    dead = f"http://127.0.0.1:{DEAD_PORT}"
    fast = {"RFR_BACKOFF_BASE": "1s", "RFR_BACKOFF_JITTER": "0", "RFR_S3_TIMEOUT": "2s"}
    # An unreachable storage is a degraded cycle (exit 1, not "ok") and a storage incident;
    # with the worker's own incident open, a transient answer burns no attempt (held).
    [claimed_after] = db.one("select now()")
    summary = worker.run_once(S3_ENDPOINT_URL=dead, expect_rc=1, **fast)
    assert (summary["claimed"], summary["heldByIncident"], summary["backoff"],
            summary["failed"]) == (3, 3, 0, 0)
    assert summary["configError"] is False
    assert summary["result"] == "degraded" and summary["storageUnreachable"] is True
    for seeded in rows:
        row = finalize_row(db, seeded.recording_id)
        # The attempt counted at claim is given back; the claim's backoff (1 s) stands.
        assert (row["status"], row["attempts"]) == ("Pending", 0)
        assert (row["next_attempt_at"] - claimed_after).total_seconds() >= 1.0
        assert row["last_error"].startswith("Transient: GenericError")
        assert "attempt given back" in row["last_error"] and "://" not in row["last_error"]
        assert recording(db, seeded.recording_id)["status"] == "Uploading"
    held = events(summary, "recording held by storage incident")
    assert {e["recordingId"] for e in held} == {str(s.recording_id) for s in rows}
    assert all("127.0.0.1" not in json.dumps(e) for e in log_events(summary["_stderr"]))

    put_binary(worker.stack, worker.bucket, rows[0].recording_id)
    time.sleep(1.2)  # the 1 s backoff runs out
    again = worker.run_once(**fast)
    # Storage answers again: the incident closes, and the two 404s right after it are not
    # trusted (RFR_UPLOAD_GRACE): deferred, their attempt given back, not Failed.
    assert (again["claimed"], again["reconciled"], again["failed"]) == (3, 1, 0)
    assert again["deferredByIncident"] == 2
    assert finalize_row(db, rows[0].recording_id)["attempts"] == 1
    assert [finalize_row(db, s.recording_id)["attempts"] for s in rows[1:]] == [0, 0]


# --- Poison -> quarantine --------------------------------------------------------------------


def test_poison_row_is_quarantined_after_max_attempts_and_left_alone(
    worker: Worker, db: Db
) -> None:
    seeded = seed_stuck(db)
    put_poison_binary(worker.stack, worker.bucket, seeded.recording_id)
    env = {"RFR_MAX_ATTEMPTS": "2", "RFR_BACKOFF_BASE": "500ms", "RFR_BACKOFF_JITTER": "0"}
    # The bucket answers and one HEAD of the cycle is transient: no storage incident, the
    # attempt counts.
    first = worker.run_once(**env)
    assert (first["backoff"], first["heldByIncident"], first["transient"]) == (1, 0, 1)
    assert finalize_row(db, seeded.recording_id)["attempts"] == 1
    time.sleep(0.7)
    summary = worker.run_once(**env)
    assert summary["quarantined"] == 1
    row = finalize_row(db, seeded.recording_id)
    assert (row["status"], row["attempts"]) == ("Quarantined", 2)
    assert row["last_error"].startswith("Transient: GenericError")
    [event] = events(summary, "recording quarantined")
    assert event["recordingId"] == str(seeded.recording_id) and event["reason"]
    assert db.one("select count(*) from recording_finalize.storage_incidents") == (0,)
    time.sleep(0.7)
    assert worker.run_once(**env)["claimed"] == 0  # excluded until requeued
    assert recording(db, seeded.recording_id)["status"] == "Uploading"


def test_unusable_metadata_quarantines_at_once_and_leaves_the_recording_alone(
    worker: Worker, db: Db
) -> None:
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id,
               metadata={"duration-seconds": "-5"})
    version = recording(db, seeded.recording_id)["version"]
    summary = worker.run_once()
    assert summary["quarantined"] == 1
    row = finalize_row(db, seeded.recording_id)
    assert row["status"] == "Quarantined"
    assert row["last_error"] == "InvalidMetadata: duration_seconds must be >= 0"
    rec = recording(db, seeded.recording_id)
    assert (rec["status"], rec["version"]) == ("Uploading", version)


# --- Parallel instances ----------------------------------------------------------------------


def test_a_busy_lock_skips_the_cycle(worker: Worker, db: Db) -> None:
    seeded = seed_stuck(db)
    with db.connect() as holder:
        assert holder.execute("select pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone() == (
            True,)
        summary = worker.run_once()
    assert summary["skipped"] is True and summary["claimed"] == 0
    assert events(summary, "cycle skipped")
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0


def test_two_run_once_at_the_same_time_one_runs_one_skips(
    worker: Worker, db: Db, slow_s3: SlowProxy
) -> None:
    for _ in range(4):
        seeded = seed_stuck(db)
        put_binary(worker.stack, worker.bucket, seeded.recording_id)
    env = {"S3_ENDPOINT_URL": slow_s3.url, "RFR_S3_CONCURRENCY": "1"}
    procs = [worker.spawn("run-once", **env)]
    time.sleep(0.3)
    procs.append(worker.spawn("run-once", **env))
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    summaries = [json.loads(out) for out, _ in outputs]
    assert sorted(s["skipped"] for s in summaries) == [False, True]
    assert sum(s["reconciled"] for s in summaries) == 4


def test_lock_bypassed_skip_locked_and_status_guard_prevent_double_finalization(
    worker: Worker, db: Db, slow_s3: SlowProxy
) -> None:
    seeded = []
    for _ in range(12):
        s = seed_stuck(db)
        put_binary(worker.stack, worker.bucket, s.recording_id)
        seeded.append(s)
    versions = {s.recording_id: recording(db, s.recording_id)["version"] for s in seeded}
    env = {"S3_ENDPOINT_URL": slow_s3.url, "RFR_BATCH_SIZE": "3", "RFR_S3_CONCURRENCY": "2"}
    # Different lock keys: the single-runner lock no longer keeps them apart.
    procs = [worker.spawn("run-once", prefix=with_lock_key(LOCK_KEY + i), **env)
             for i in range(2)]
    outputs = [p.communicate(timeout=90) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    summaries = [json.loads(out) for out, _ in outputs]
    assert all(s["skipped"] is False for s in summaries)
    assert all(s["claimed"] > 0 for s in summaries), summaries  # both really worked
    assert sum(s["reconciled"] for s in summaries) == 12
    for s in seeded:
        rec = recording(db, s.recording_id)
        assert rec["status"] == "Available"
        assert rec["version"] == versions[s.recording_id] + 1  # one transition, not two
        assert len(outbox_rows(db, s.recording_id)) == 1
        assert service_rows(db, s.recording_id) == []
        assert realtime_kinds(db, s.recording_id) == ["RecordingAvailable"]
    messages = consume(worker.stack, worker.topic, expect=12)
    assert sorted(m.value["recordingId"] for m in messages) == sorted(
        str(s.recording_id) for s in seeded)


# --- Cancellation ----------------------------------------------------------------------------


def _assert_whole_or_untouched(db: Db, seeded: list[Seeded]) -> tuple[int, int]:
    applied = untouched = 0
    for s in seeded:
        rec, row = recording(db, s.recording_id), finalize_row(db, s.recording_id)
        outbox, realtime = outbox_rows(db, s.recording_id), realtime_kinds(db, s.recording_id)
        if rec["status"] == "Available":
            assert (row["status"], len(outbox), realtime) == ("Done", 1, ["RecordingAvailable"])
            applied += 1
        else:
            assert rec["status"] == "Uploading"
            # Claimed and not applied: the stop gave the attempt back (release_claims).
            assert row["status"] == "Pending" and row["attempts"] == 0
            assert (outbox, service_rows(db, s.recording_id), realtime) == ([], [], [])
            untouched += 1
    return applied, untouched


def test_sigterm_mid_cycle_exits_0_releases_the_lock_and_applies_rows_whole(
    worker: Worker, db: Db, slow_s3: SlowProxy
) -> None:
    seeded = []
    for _ in range(15):
        s = seed_stuck(db)
        put_binary(worker.stack, worker.bucket, s.recording_id)
        seeded.append(s)
    proc = worker.spawn("run-once", S3_ENDPOINT_URL=slow_s3.url, RFR_S3_CONCURRENCY="1")
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if json.loads(line)["event"] == "recording reconciled":
            break
    proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert time.monotonic() - started < 5
    summary = json.loads(out)
    assert summary["stopped"] is True
    assert 1 <= summary["reconciled"] < 15

    applied, untouched = _assert_whole_or_untouched(db, seeded)
    assert applied == summary["reconciled"] and untouched == 15 - applied
    assert summary["releasedOnStop"] >= 1
    # On the stop the relay drained (3 s at most): the applied rows' events are out.
    assert summary["published"] == applied
    assert len(consume(worker.stack, worker.topic, expect=applied)) == applied
    assert "stop requested" in "".join(lines) + err
    with db.connect() as conn:  # the lock is free again
        assert conn.execute("select pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone() == (True,)


# --- Configuration failures ------------------------------------------------------------------


@pytest.mark.parametrize("command", ["run-once", "run"])
@pytest.mark.parametrize("case", ["missing bucket", "access denied"])
def test_storage_configuration_failure_stops_the_worker_at_start_and_burns_no_attempt(
    worker: Worker, db: Db, case: str, command: str
) -> None:
    # The storage refuses the bucket: no cycle could work, so the worker does not start one
    # (exit 2, before the lock and the first claim). A refusal in the middle of a cycle is
    # test_cycle's (its claimed rows get their attempt back: config_error_released).
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id)
    env = ({"RFR_S3_BUCKET": "rfr-no-such-bucket"} if case == "missing bucket"
           else {"AWS_SECRET_ACCESS_KEY": "not-the-secret"})
    proc = worker.cli(command, timeout=30, **env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""  # no cycle summary: no cycle ran
    code = "NoSuchBucket" if case == "missing bucket" else "AccessDenied"
    assert f"refuses the bucket '{env.get('RFR_S3_BUCKET', worker.bucket)}' ({code})" in (
        proc.stderr)
    # The JSON log lines, then the one plain line for the person at the terminal.
    *lines, last = proc.stderr.strip().splitlines()
    assert last.startswith("recording-finalize: start-up check failed: ")
    logged = log_events("\n".join(lines))
    [event] = [e for e in logged if e["event"] == "start-up check failed"]
    assert (event["level"], event["error"]) == ("error", code)
    assert not [e for e in logged if e["event"] in ("cycle started", "worker started")]
    row = finalize_row(db, seeded.recording_id)
    assert (row["status"], row["attempts"], row["claim_token"]) == ("Pending", 0, None)
    assert recording(db, seeded.recording_id)["status"] == "Uploading"
    assert "not-the-secret" not in proc.stderr


def test_recordings_disabled_idles_and_says_so(worker: Worker, db: Db) -> None:
    seeded = seed_stuck(db)
    summary = worker.run_once(RECORDINGS_ENABLED="false")
    assert summary["disabled"] is True and summary["claimed"] == 0
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0
    [idle] = events(summary, "cycle idle")
    assert "RECORDINGS_ENABLED=false" in idle["message"]


def test_the_worker_needs_no_table_privilege(db: Db) -> None:
    """The e2e runs above connect as this role; it can call the API and read no table."""
    with psycopg.connect(db.worker_url, autocommit=True) as conn:
        conn.execute("select * from recording_finalize.stats()")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select * from messenger.recording_finalize_attempts")


def test_run_once_prints_only_json_on_stdout_and_json_lines_on_stderr(
    worker: Worker, db: Db
) -> None:
    seed_stuck(db)
    proc = worker.cli("run-once")
    assert proc.returncode == 0
    json.loads(proc.stdout)
    for event in log_events(proc.stderr):  # raises if any line is not JSON
        assert {"ts", "level", "event"} <= set(event)
    assert worker.db.worker_url.split(":")[2].split("@")[0] not in proc.stderr  # the password



# --- A paused runner loses the lock; on resume it writes nothing -----------------------------


def test_a_paused_runner_loses_the_lock_to_the_server_and_writes_nothing_on_resume(
    worker: Worker, db: Db, slow_s3: SlowProxy
) -> None:
    slow_s3.delay_s = 0.2
    seeded = []
    for _ in range(5):
        s = seed_stuck(db)
        put_binary(worker.stack, worker.bucket, s.recording_id)
        seeded.append(s)
    versions = {s.recording_id: recording(db, s.recording_id)["version"] for s in seeded}
    env = {"RFR_LOCK_TTL": "4s", "RFR_MAX_RUN_DURATION": "2s", "RFR_S3_TIMEOUT": "1500ms",
           "RFR_BACKOFF_BASE": "1s", "RFR_BACKOFF_JITTER": "0"}
    paused = worker.spawn("run-once", S3_ENDPOINT_URL=slow_s3.url, RFR_S3_CONCURRENCY="1", **env)
    assert paused.stderr is not None
    for line in paused.stderr:
        if json.loads(line)["event"] == "batch claimed":
            break
    paused.send_signal(signal.SIGSTOP)
    try:
        # The lock's session idles past the TTL: the server ends it (idle_session_timeout).
        time.sleep(5)
        # Its own lock TTL is longer, so its relay gets a delivery timeout Kafka can meet.
        other = worker.run_once(**(env | {"RFR_LOCK_TTL": "30s"}))
        assert other["skipped"] is False
        assert other["reconciled"] == 5
    finally:
        paused.send_signal(signal.SIGCONT)
    out, err = paused.communicate(timeout=20)
    summary = json.loads(out)
    assert paused.returncode == 1 and summary["error"] == "LockTtlExceeded", err
    for s in seeded:
        rec = recording(db, s.recording_id)
        assert rec["status"] == "Available"
        assert rec["version"] == versions[s.recording_id] + 1  # exactly one transition
        assert len(outbox_rows(db, s.recording_id)) == 1
        assert service_rows(db, s.recording_id) == []
