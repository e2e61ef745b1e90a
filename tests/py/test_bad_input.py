"""The bad-input catalogue: every kind of bad input gets a clear error or a quarantine with a
readable ``last_error``, and nothing is lost or corrupted.

Real worker (the console script, as the least-privilege role), real S3 and PostgreSQL. The SQL
functions' own argument checks (RF001 for every out-of-range parameter) are pgTAP's, in
``tests/sql/*/invalid_parameters.sql``; the CLI's option rules are table-driven in
``tests/py/test_cli.py``; here: what reaches the worker from outside.
"""

from __future__ import annotations

import subprocess
import uuid
from typing import Any

import psycopg
import pytest
from conftest import (
    Db,
    Worker,
    finalize_row,
    put_binary,
    recording,
    seed_stuck,
)


def outbox_count(db: Db, recording_id: uuid.UUID) -> tuple[int, int]:
    """The recording's events: (the product's own, in recording_finalize.outbox; the service's,
    in messenger.integration_outbox, which the product never writes)."""
    return db.one(
        "select (select count(*) from recording_finalize.outbox where recording_id = %s), "
        "(select count(*) from messenger.integration_outbox where dedupe_key = %s)",
        (recording_id, str(recording_id)))


def realtime(db: Db, recording_id: uuid.UUID) -> list[str]:
    return [r[0] for r in db.all("select kind from messenger.realtime_outbox "
                                 "where reference_id = %s order by id", (recording_id,))]


def untouched(db: Db, recording_id: uuid.UUID, version: int) -> None:
    rec = recording(db, recording_id)
    assert (rec["status"], rec["version"], rec["file_id"]) == ("Uploading", version, None)
    assert outbox_count(db, recording_id) == (0, 0) and realtime(db, recording_id) == []


# --- object metadata -----------------------------------------------------------------------

# The worker converts what the object says and apply_outcome judges it (metadata_problem, whose
# every rule pgTAP covers): one case per way a value reaches the rules, end to end.
BAD_METADATA = [
    ("negative duration", {"duration-seconds": "-5"}, "audio/webm",
     "duration_seconds must be >= 0"),
    ("non-numeric duration", {"duration-seconds": "NaN"}, "audio/webm",
     "duration_seconds is required (duration-seconds is not a whole number)"),
    ("absurdly large duration", {"duration-seconds": "999999999999"}, "audio/webm",
     "duration_seconds is more than 604800 (7 days)"),
    ("missing duration", {}, "audio/webm",
     "duration_seconds is required (no duration-seconds metadata)"),
    ("unknown format", {"duration-seconds": "5", "format": "Flac"}, "audio/webm",
     "format must be one of Webm, Mp4, Ogg, M4a"),
    ("unknown content type", {"duration-seconds": "5"}, "application/octet-stream",
     "format is required (no format metadata, and the Content-Type names no known format)"),
    ("URL as file id", {"duration-seconds": "5", "file-id": "https://cdn.example/x.webm"},
     "audio/webm", "file_id is a URL, not a storage reference"),
]


@pytest.mark.parametrize(("case", "metadata", "content_type", "reason"), BAD_METADATA,
                         ids=[c[0] for c in BAD_METADATA])
def test_unusable_object_metadata_is_quarantined_with_a_readable_reason(
    worker: Worker, db: Db, case: str, metadata: dict[str, str], content_type: str,
    reason: str,
) -> None:
    seeded = seed_stuck(db)
    good = seed_stuck(db)  # a neighbour in the same batch is not held back
    put_binary(worker.stack, worker.bucket, seeded.recording_id, metadata=metadata,
               content_type=content_type)
    put_binary(worker.stack, worker.bucket, good.recording_id)
    version = recording(db, seeded.recording_id)["version"]
    summary = worker.run_once()
    assert summary["quarantined"] == 1 and summary["reconciled"] == 1, summary
    row = finalize_row(db, seeded.recording_id)
    assert row["status"] == "Quarantined"
    assert row["last_error"] == f"InvalidMetadata: {reason}"
    assert "://" not in row["last_error"]
    untouched(db, seeded.recording_id, version)
    assert recording(db, good.recording_id)["status"] == "Available"


# --- rows that point at nothing, impossible states ------------------------------------------


def test_a_finalize_row_whose_recording_does_not_exist_is_quarantined(
    worker: Worker, db: Db
) -> None:
    ghost = uuid.uuid4()
    with db.connect() as conn:
        conn.execute(
            "insert into messenger.recording_finalize_attempts "
            "(recording_id, session_kind, session_id, next_attempt_at) "
            "values (%s, 'Direct', %s, now() - interval '1 minute')", (ghost, uuid.uuid4()))
    summary = worker.run_once()
    assert summary["quarantined"] == 1 and summary["error"] is None
    row = finalize_row(db, ghost)
    assert row["status"] == "Quarantined"
    # The product sees recordings only through the adapter's view (docs/contract/adapter.md).
    assert row["last_error"] == (
        "RecordingNotFound: recording_finalize_adapter.recordings shows no such recording")
    assert outbox_count(db, ghost) == (0, 0)


def test_a_recording_whose_session_does_not_exist_is_quarantined(
    worker: Worker, db: Db
) -> None:
    rid, sid = uuid.uuid4(), uuid.uuid4()
    with db.connect() as conn:
        conn.execute(
            "insert into messenger.call_recordings (id, session_kind, session_id, media_type, "
            "trigger, status) values (%s, 'Conference', %s, 'Video', 'Manual', 'Uploading')",
            (rid, sid))
        conn.execute(
            "insert into messenger.recording_finalize_attempts "
            "(recording_id, session_kind, session_id, next_attempt_at) "
            "values (%s, 'Conference', %s, now() - interval '1 minute')", (rid, sid))
    summary = worker.run_once()
    assert summary["quarantined"] == 1
    row = finalize_row(db, rid)
    assert row["status"] == "Quarantined"
    assert row["last_error"] == f"SessionNotFound: no Conference session {sid}"
    assert recording(db, rid)["status"] == "Uploading"


@pytest.mark.parametrize(("sql", "constraint"), [
    ("update messenger.call_recordings set status = 'Archived' where id = %s",
     "call_recordings_status_ck"),
    ("update messenger.call_recordings set status = 'Available' where id = %s",
     "call_recordings_available_complete_ck"),
    ("update messenger.call_recordings set status = 'Failed' where id = %s",
     "call_recordings_failed_complete_ck"),
    ("update messenger.call_recordings set size_bytes = -1 where id = %s",
     "call_recordings_size_bytes_ck"),
    ("update messenger.call_recordings set file_id = 'https://x/y' where id = %s",
     "call_recordings_file_id_not_url_ck"),
], ids=["unknown status", "Available without metadata", "Failed without reason",
        "negative size", "URL file id"])
def test_an_impossible_state_is_refused_by_a_named_constraint(
    db: Db, sql: str, constraint: str
) -> None:
    seeded = seed_stuck(db)
    with pytest.raises(psycopg.errors.CheckViolation) as err:
        db.one(sql, (seeded.recording_id,))
    assert err.value.diag.constraint_name == constraint
    assert recording(db, seeded.recording_id)["status"] == "Uploading"


def test_a_pending_row_of_a_failed_recording_is_closed_without_an_event(
    worker: Worker, db: Db
) -> None:
    """An operator (or a bug elsewhere) failed the recording but left its row Pending."""
    seeded = seed_stuck(db)
    with db.connect() as conn:
        conn.execute("update messenger.call_recordings set status = 'Failed', "
                     "failure_reason = 'RecorderError', failed_at = now(), "
                     "version = version + 1 where id = %s", (seeded.recording_id,))
    version = recording(db, seeded.recording_id)["version"]
    summary = worker.run_once()
    assert summary["closed"] == 1
    assert finalize_row(db, seeded.recording_id)["status"] == "Done"
    rec = recording(db, seeded.recording_id)
    assert (rec["status"], rec["failure_reason"], rec["version"]) == (
        "Failed", "RecorderError", version)
    assert outbox_count(db, seeded.recording_id) == (0, 0)


def test_a_terminal_recording_cannot_be_moved_back(worker: Worker, db: Db) -> None:
    """The product never moves an Available or Failed recording (its functions answer
    already_available / already_failed, test below); the table-level guard for every writer is
    the service's choice, its tables being its own: `service-sql recommended`, applied as it is
    by the tables' owner, refuses a direct move back with RF008 and leaves the product's own
    path working."""
    seeded = seed_stuck(db)
    assert ingest(db, seeded.recording_id, worker.topic) == "available"
    recommended = worker.cli("service-sql", "recommended")
    assert recommended.returncode == 0, recommended.stderr
    applied = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", db.owner_url],
                             input=recommended.stdout, capture_output=True, text=True,
                             timeout=60)
    assert applied.returncode == 0, applied.stderr
    with pytest.raises(psycopg.Error) as err:
        db.one("update messenger.call_recordings set status = 'Uploading' where id = %s",
               (seeded.recording_id,))
    assert err.value.sqlstate == "RF008"
    assert recording(db, seeded.recording_id)["status"] == "Available"
    # With the guard in place the product's own writers still work: a late duplicate callback
    # is a no-op, and a cycle finalizes a stuck recording and relays both events.
    assert ingest(db, seeded.recording_id, worker.topic) == "already_available"
    other = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, other.recording_id)
    summary = worker.run_once()
    assert (summary["reconciled"], summary["published"], summary["error"]) == (1, 2, None)
    assert recording(db, other.recording_id)["status"] == "Available"


# --- the happy path's callback: duplicated, late, malformed ----------------------------------


def ingest(db: Db, recording_id: uuid.UUID, topic: str | None, file_id: str = "files/a",
           size: int = 10, duration: int = 5, fmt: str = "Webm") -> Any:
    return db.one("select recording_finalize.recording_ingest_completed(%s, %s, %s, %s, %s, %s)",
                  (recording_id, file_id, size, duration, fmt, topic))[0]


def test_a_duplicated_callback_changes_nothing(worker: Worker, db: Db) -> None:
    seeded = seed_stuck(db)
    assert ingest(db, seeded.recording_id, worker.topic) == "available"
    before = recording(db, seeded.recording_id)
    assert ingest(db, seeded.recording_id, worker.topic, file_id="files/other",
                  size=999) == "already_available"
    after = recording(db, seeded.recording_id)
    assert after == before
    assert outbox_count(db, seeded.recording_id) == (1, 0)
    assert realtime(db, seeded.recording_id) == ["RecordingAvailable"]
    summary = worker.run_once()
    assert summary["published"] == 1 and summary["claimed"] == 0


def test_a_callback_later_than_the_worker_is_a_no_op(worker: Worker, db: Db) -> None:
    found, lost = seed_stuck(db), seed_stuck(db)
    put_binary(worker.stack, worker.bucket, found.recording_id)
    summary = worker.run_once()
    assert summary["reconciled"] == 1 and summary["failed"] == 1
    versions = {r: recording(db, r)["version"] for r in (found.recording_id, lost.recording_id)}
    assert ingest(db, found.recording_id, worker.topic) == "already_available"
    # The safety net gave up on it: terminal is never left, and no event is invented.
    assert ingest(db, lost.recording_id, worker.topic) == "already_failed"
    assert recording(db, lost.recording_id)["status"] == "Failed"
    for rid, version in versions.items():
        assert recording(db, rid)["version"] == version
    assert outbox_count(db, found.recording_id) == (1, 0)
    assert outbox_count(db, lost.recording_id) == (0, 0)


@pytest.mark.parametrize(("args", "sqlstate"), [
    ({"size": -1}, "RF002"),
    ({"duration": -3}, "RF002"),
    ({"fmt": "Flac"}, "RF002"),
    ({"file_id": ""}, "RF002"),
    ({"file_id": "s3://bucket/key"}, "RF002"),
], ids=["negative size", "negative duration", "unknown format", "empty file id",
        "URL file id"])
def test_a_malformed_callback_is_refused_and_changes_nothing(
    db: Db, args: dict[str, Any], sqlstate: str
) -> None:
    seeded = seed_stuck(db)
    version = recording(db, seeded.recording_id)["version"]
    with pytest.raises(psycopg.Error) as err:
        ingest(db, seeded.recording_id, None, **args)  # None: the server's topic
    assert err.value.sqlstate == sqlstate
    assert "unusable file metadata" in str(err.value)
    untouched(db, seeded.recording_id, version)
    assert finalize_row(db, seeded.recording_id)["status"] == "Pending"


def test_a_callback_for_an_unknown_recording_is_refused(db: Db) -> None:
    with pytest.raises(psycopg.Error) as err:
        ingest(db, uuid.uuid4(), None)
    assert err.value.sqlstate == "RF003"


# --- options out of range --------------------------------------------------------------------

MORE_INVALID = [
    ("RFR_POLLING_INTERVAL", "0"),
    ("RFR_POLLING_INTERVAL", "-1s"),
    ("RFR_POLLING_INTERVAL", "1d"),
    ("RFR_BATCH_SIZE", "10001"),
    ("RFR_BATCH_SIZE", "ten"),
    ("RFR_MAX_ATTEMPTS", str(2**31)),
    ("RFR_BACKOFF_BASE", "-1m"),
    ("RFR_BACKOFF_CAP", "0"),
    ("RFR_LOCK_TTL", "0"),
    ("RFR_MAX_RUN_DURATION", "10m"),  # > lock TTL (5m)
    ("RFR_S3_KEY_TEMPLATE", "/recordings/{recording_id}"),
    ("RFR_S3_KEY_TEMPLATE", "recordings/{recording_id!r}"),
    ("RFR_S3_KEY_TEMPLATE", "recordings/{recording_id}/"),
    ("RFR_S3_KEY_TEMPLATE", "recordings//{recording_id}"),
    ("RFR_S3_BUCKET", "a"),
    ("DATABASE_URL", "mysql://u:p@h/db"),
]


@pytest.mark.parametrize(("variable", "value"), MORE_INVALID,
                         ids=[f"{v}={x}" for v, x in MORE_INVALID])
def test_every_option_out_of_range_exits_2_naming_it(
    worker: Worker, db: Db, variable: str, value: str
) -> None:
    """Complements test_cli's table: exit 2 names the variable, and no row was touched."""
    seeded = seed_stuck(db)
    proc = worker.cli("run-once", **{variable: value})
    assert proc.returncode == 2, proc.stderr
    assert variable in proc.stderr and "must be" in proc.stderr
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0


def test_a_short_lock_budget_still_publishes(worker: Worker, db: Db) -> None:
    """Regression: with RFR_LOCK_TTL - RFR_MAX_RUN_DURATION under ~36 s (a valid setting) the
    relay used to find no room for a batch, and nothing was ever published."""
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id)
    summary = worker.run_once(RFR_LOCK_TTL="20s", RFR_MAX_RUN_DURATION="10s",
                              RFR_S3_TIMEOUT="5s")
    assert summary["reconciled"] == 1
    assert summary["published"] == 1, summary
