"""Pipelined apply (``recording_finalize.pipeline.apply_outcomes``) keeps one transaction per row.

A row the database refuses leaves the rows before and after it applied (psycopg's own pipeline
would run them all in one implicit transaction), and a pipeline without an answer gives up by
its deadline, closing its connection.
"""

from __future__ import annotations

import time

import psycopg
import pytest
from conftest import Db, Worker, finalize_row, recording, seed_stuck
from recording_finalize import pipeline, queries
from recording_finalize.config import load_settings
from recording_finalize.storage import Verdict


def test_pipelined_applies_are_one_transaction_each(worker: Worker, db: Db) -> None:
    seeded = [seed_stuck(db) for _ in range(4)]
    settings = load_settings(worker.environ(RFR_BATCH_SIZE="10"))
    with psycopg.connect(db.worker_url, autocommit=True) as conn:
        claimed = {row.recording_id: row for row in queries.claim_due(conn, settings)}
        rows = [claimed[s.recording_id] for s in seeded]

        def found(file_id: str) -> Verdict:
            return Verdict("found", file_id=file_id, size_bytes=10, duration_seconds=3,
                           format="Webm")

        answers = pipeline.apply_outcomes(conn, [
            (rows[0], found("recordings/a")),
            (rows[1], found("https://cdn.example/b")),  # refused by the database: RF002
            (rows[2], found("recordings/c")),
            (rows[3], Verdict("missing")),
        ], settings)
        # The connection is idle again and usable.
        assert conn.execute("select 1").fetchone() == (1,)

    assert [getattr(a, "result", None) for a in answers] == [
        "reconciled", None, "reconciled", "failed"]
    assert isinstance(answers[1], psycopg.Error) and answers[1].sqlstate == "RF002"
    assert recording(db, seeded[0].recording_id)["status"] == "Available"
    assert recording(db, seeded[1].recording_id)["status"] == "Uploading"  # only it rolled back
    assert finalize_row(db, seeded[1].recording_id)["status"] == "Pending"
    assert recording(db, seeded[2].recording_id)["status"] == "Available"
    assert recording(db, seeded[3].recording_id)["status"] == "Failed"
    assert db.one("select count(*) from messenger.integration_outbox") == (2,)


def test_a_pipelined_apply_without_answer_closes_its_connection(db: Db) -> None:
    seeded = seed_stuck(db)
    settings = load_settings({"DATABASE_URL": db.worker_url})
    with psycopg.connect(db.worker_url, autocommit=True) as conn, db.connect() as blocker:
        [row] = queries.claim_due(conn, settings)
        blocker.execute("begin")
        blocker.execute("select 1 from messenger.call_recordings where id = %s for update",
                        (seeded.recording_id,))
        t0 = time.monotonic()
        with pytest.raises(pipeline.PipelineTimeout):
            pipeline.apply_outcomes(conn, [(row, Verdict("missing"))], settings, timeout_s=0.5)
        assert time.monotonic() - t0 < 5
        assert conn.closed
        blocker.execute("rollback")
    # The server may still run the statement it had: the row is applied whole or not at all.
    time.sleep(0.5)
    state = (recording(db, seeded.recording_id)["status"],
             finalize_row(db, seeded.recording_id)["status"])
    assert state in (("Uploading", "Pending"), ("Failed", "Done"))
