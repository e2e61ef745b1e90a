"""Look before failing: a bucket that exists but is not the recorders', or a key
template that is not theirs, fails no recording. Before any 404 is trusted the worker HEADs the
binaries of the newest Available recordings; when none is there, the cycle stops as a
configuration error (nothing claimed, no attempt counted) and /readyz names bucket and template.
Real S3 (SeaweedFS) and PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
from conftest import Db, Worker, finalize_row, put_binary, recording, seed_stuck


def _available_with_binary(worker: Worker, db: Db) -> uuid.UUID:
    """A recording the happy path finished: Available, its binary where the recorder put it."""
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id)
    with db.connect() as conn:
        conn.execute(
            "update messenger.call_recordings set status = 'Available', "
            "file_id = 'recordings/' || id::text, size_bytes = 2048, duration_seconds = 42, "
            "format = 'Webm', available_at = now() where id = %s", (seeded.recording_id,))
        conn.execute("update messenger.recording_finalize_attempts set status = 'Done' "
                     "where recording_id = %s", (seeded.recording_id,))
    return seeded.recording_id


@pytest.mark.parametrize("wrong", ["bucket", "key template"])
def test_a_wrong_bucket_or_key_template_fails_no_recording(
    worker: Worker, db: Db, wrong: str
) -> None:
    for _ in range(3):
        _available_with_binary(worker, db)
    stuck = [seed_stuck(db) for _ in range(5)]
    for s in stuck:  # their binaries are there, in the right place
        put_binary(worker.stack, worker.bucket, s.recording_id)
    if wrong == "bucket":
        empty = f"rfr-t-empty-{uuid.uuid4().hex[:8]}"
        worker.stack.s3().create_bucket(Bucket=empty)
        env = {"RFR_S3_BUCKET": empty}
    else:
        env = {"RFR_S3_KEY_TEMPLATE": "uploads/{recording_id}.webm"}
    summary = worker.run_once(expect_rc=1, **env)
    assert summary["configError"] is True and summary["failed"] == 0, summary
    assert "KeyLayoutUnconfirmed" in summary["_stderr"]
    for s in stuck:
        row = finalize_row(db, s.recording_id)
        assert (row["status"], row["attempts"]) == ("Pending", 0), row
        assert recording(db, s.recording_id)["status"] == "Uploading"

    # The same storage, configured right: every stuck recording is found.
    summary = worker.run_once()
    assert summary["reconciled"] == 5 and summary["failed"] == 0, summary


def test_a_404_for_a_missing_binary_names_bucket_and_key(worker: Worker, db: Db) -> None:
    for _ in range(2):
        _available_with_binary(worker, db)
    seeded = seed_stuck(db)
    summary = worker.run_once()
    assert summary["failed"] == 1, summary
    error = finalize_row(db, seeded.recording_id)["last_error"]
    assert f"bucket '{worker.bucket}'" in error and f"key 'recordings/{seeded.recording_id}'" \
        in error, error


def test_readyz_names_the_bucket_and_the_key_when_the_bucket_holds_none(
    worker: Worker, db: Db
) -> None:
    """/readyz's storage check: HeadBucket alone says "confirmed" for any bucket that exists;
    the check also asks whether the bucket holds the newest uploaded recordings' binaries."""
    from recording_finalize.config import load_settings
    from recording_finalize.storage import Storage
    from recording_finalize.worker import storage_check

    for _ in range(2):
        _available_with_binary(worker, db)
    empty = f"rfr-t-empty-{uuid.uuid4().hex[:8]}"
    worker.stack.s3().create_bucket(Bucket=empty)

    settings = load_settings(worker.environ())
    right = storage_check(Storage(settings), settings)()
    assert right.ok, right.reason
    wrong_bucket = load_settings(worker.environ(RFR_S3_BUCKET=empty))
    wrong = storage_check(Storage(wrong_bucket), wrong_bucket)()
    assert not wrong.ok and not wrong.transient
    assert repr(empty) in wrong.reason and "RFR_S3_KEY_TEMPLATE" in wrong.reason
    assert "recordings/" in wrong.reason, wrong.reason
