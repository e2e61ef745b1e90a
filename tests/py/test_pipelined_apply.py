"""Pipelined apply (``recording_finalize.pipeline.apply_outcomes``) keeps one transaction per row.

A row the database refuses leaves the rows before and after it applied (psycopg's own pipeline
would run them all in one implicit transaction), and a pipeline without an answer gives up by
its deadline, closing its connection.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from conftest import Db, SlowProxy, Worker, finalize_row, recording, seed_stuck
from recording_finalize import pipeline, queries
from recording_finalize.config import load_settings
from recording_finalize.model import Verdict


def refuse_realtime_rows_of(db: Db, recording_id: object) -> None:
    """A trigger of the service's (the test's) that raises for one recording's push, after
    apply_outcome has already moved the recording: a statement error mid-transaction that
    apply_outcome does not turn into a result."""
    with db.connect() as conn:
        conn.execute(f"""
            create function public.rfr_test_refuse() returns trigger language plpgsql as $$
            begin
                if new.reference_id = '{recording_id}'::uuid then
                    raise exception 'the service refuses this push' using errcode = 'P0001';
                end if;
                return new;
            end $$""")
        conn.execute("create trigger rfr_test_refuse before insert on messenger.realtime_outbox "
                     "for each row execute function public.rfr_test_refuse()")


def test_pipelined_applies_are_one_transaction_each(worker: Worker, db: Db) -> None:
    seeded = [seed_stuck(db) for _ in range(5)]
    refuse_realtime_rows_of(db, seeded[1].recording_id)
    settings = load_settings(worker.environ(RFR_BATCH_SIZE="10"))
    with psycopg.connect(db.worker_url, autocommit=True) as conn:
        claimed = {row.recording_id: row for row in queries.claim_due(conn, settings)}
        rows = [claimed[s.recording_id] for s in seeded]

        def found(file_id: str) -> Verdict:
            return Verdict("found", file_id=file_id, size_bytes=10, duration_seconds=3,
                           format="Webm")

        answers = pipeline.apply_outcomes(conn, [
            (rows[0], found("recordings/a")),
            (rows[1], found("recordings/b")),  # raises in the service's trigger
            (rows[2], found("https://cdn.example/c")),  # refused metadata: a result, no error
            (rows[3], found("recordings/d")),
            (rows[4], Verdict("missing")),
        ])
        # The connection is idle again and usable.
        assert conn.execute("select 1").fetchone() == (1,)

    assert [getattr(a, "result", None) for a in answers] == [
        "reconciled", None, "quarantined", "reconciled", "failed"]
    assert isinstance(answers[1], psycopg.Error) and answers[1].sqlstate == "P0001"
    assert recording(db, seeded[0].recording_id)["status"] == "Available"
    # Only its own transaction rolled back: the recording it had moved is Uploading again.
    assert recording(db, seeded[1].recording_id)["status"] == "Uploading"
    assert finalize_row(db, seeded[1].recording_id)["status"] == "Pending"
    assert finalize_row(db, seeded[2].recording_id)["status"] == "Quarantined"
    assert recording(db, seeded[3].recording_id)["status"] == "Available"
    assert recording(db, seeded[4].recording_id)["status"] == "Failed"
    # The two reconciled rows' events, in the product's own outbox; none in the service's.
    assert db.one("select count(*) from recording_finalize.outbox") == (2,)
    assert db.one("select count(*) from messenger.integration_outbox") == (0,)


def test_a_pipelined_apply_without_answer_closes_its_connection(db: Db) -> None:
    seeded = seed_stuck(db)
    settings = load_settings({"DATABASE_URL": db.worker_url})
    # apply_outcome never waits for a row (SKIP LOCKED, lock_timeout): the silence is the
    # network's, a proxy that starts holding every chunk once the row is claimed.
    proxy = SlowProxy(int(urlsplit(db.worker_url).port or 5432), delay_s=0.0)
    parts = urlsplit(db.worker_url)
    via_proxy = urlunsplit(parts._replace(
        netloc=parts.netloc.rsplit(":", 1)[0] + f":{proxy.port}"))
    try:
        with psycopg.connect(via_proxy, autocommit=True) as conn:
            [row] = queries.claim_due(conn, settings)
            proxy.delay_s = 3.0
            t0 = time.monotonic()
            with pytest.raises(pipeline.PipelineTimeout):
                pipeline.apply_outcomes(conn, [(row, Verdict("missing"))],
                                        timeout_s=0.5)
            assert time.monotonic() - t0 < 2.5
            assert conn.closed
    finally:
        proxy.close()
    # The server may still get and run the statement it was sent: the row is applied whole or
    # not at all.
    time.sleep(3.5)
    state = (recording(db, seeded.recording_id)["status"],
             finalize_row(db, seeded.recording_id)["status"])
    assert state in (("Uploading", "Pending"), ("Failed", "Done"))
