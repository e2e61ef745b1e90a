"""The cycle in-process, for the races and failures a subprocess cannot time: a callback that
lands during the S3 check, a configuration failure in the middle of a batch, the database
refusing metadata (apply_outcome quarantines it), the lock-TTL deadline, and the spans and
metrics a cycle leaves.

Real database (as the worker role), real S3; only the storage object is wrapped to inject the
event at the right moment.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import (
    Db,
    Worker,
    finalize_row,
    put_binary,
    recording,
    seed_available_unpublished,
    seed_stuck,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from recording_finalize import logs, tracing
from recording_finalize.config import load_settings
from recording_finalize.cycle import Context, CycleSummary, run_cycle
from recording_finalize.db import open_pool
from recording_finalize.metrics import Metrics
from recording_finalize.model import CONFIG_ERROR, FOUND, ClaimedRow, Verdict
from recording_finalize.storage import Storage

Hook = Callable[[ClaimedRow, Verdict], Verdict]


class HookedStorage(Storage):
    """The real S3 check, then ``hook(row, verdict)`` decides what the cycle sees."""

    def __init__(self, *args: Any, hook: Hook, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hook = hook
        self.calls = 0
        self.bucket_answer: bool | None = None

    def check_bucket(self) -> bool:
        return super().check_bucket() if self.bucket_answer is None else self.bucket_answer

    def check(self, row: ClaimedRow) -> Verdict:
        self.calls += 1
        return self.hook(row, super().check(row))


@pytest.fixture
def cycle(worker: Worker) -> Iterator[Callable[..., tuple[CycleSummary, Context, list[dict]]]]:
    pools = []

    def run(
        hook: Hook | None = None, bucket_answer: bool | None = None, **env: str
    ) -> tuple[CycleSummary, Context, list[dict]]:
        settings = load_settings(worker.environ(RFR_S3_CONCURRENCY="1", **env))
        pool = open_pool(settings)
        pools.append(pool)
        storage = HookedStorage(settings, hook=hook or (lambda _row, v: v))
        storage.bucket_answer = bucket_answer
        ctx = Context(settings=settings, pool=pool, storage=storage, metrics=Metrics())
        out = io.StringIO()
        logs.set_stream(out)
        try:
            summary = run_cycle(ctx, threading.Event())
        finally:
            logs.set_stream(None)
        return summary, ctx, [json.loads(line) for line in out.getvalue().splitlines()]

    yield run
    for pool in pools:
        pool.close()


def test_a_callback_during_the_check_wins_and_the_worker_applies_nothing(
    worker: Worker, db: Db, cycle: Any
) -> None:
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id)

    def callback_lands(row: ClaimedRow, verdict: Verdict) -> Verdict:
        with db.connect() as conn:
            conn.execute("select recording_finalize.recording_ingest_completed(%s, "
                         "'files/by-callback', 9, 3, 'Mp4', %s)", (row.recording_id, worker.topic))
        return verdict

    summary, _, events = cycle(callback_lands)
    counts = summary.counts
    assert (counts["terminal"], counts["reconciled"], counts["stale"]) in ((1, 0, 0), (0, 0, 1))
    rec = recording(db, seeded.recording_id)
    assert (rec["status"], rec["file_id"]) == ("Available", "files/by-callback")
    # One event, the callback's (the product's lifecycle function writes the product's own
    # outbox): the worker added none, and wrote nothing to the service's outbox.
    assert db.one("select count(*) from recording_finalize.outbox") == (1,)
    assert db.one("select count(*) from messenger.integration_outbox") == (0,)
    assert db.one("select count(*) from messenger.realtime_outbox") == (1,)
    assert finalize_row(db, seeded.recording_id)["status"] == "Done"
    assert not [e for e in events if e["event"] == "recording reconciled"]


def test_config_error_mid_batch_releases_the_rest_and_stops(
    worker: Worker, db: Db, cycle: Any
) -> None:
    seeded = [seed_stuck(db) for _ in range(4)]
    for s in seeded:
        put_binary(worker.stack, worker.bucket, s.recording_id)
    seen: list[ClaimedRow] = []

    def denied_on_second(row: ClaimedRow, verdict: Verdict) -> Verdict:
        seen.append(row)
        if len(seen) == 3:
            time.sleep(0.5)  # the cycle learns of the failure while this one is in flight
        return Verdict(CONFIG_ERROR, error="ClientError 403") if len(seen) == 2 else verdict

    summary, ctx, events = cycle(denied_on_second)
    assert summary.config_error and summary.result == "config_error" and not summary.ok
    counts = summary.counts
    assert (counts["claimed"], counts["reconciled"], counts["released"]) == (4, 1, 3)
    first = seen[0].recording_id
    assert recording(db, first)["status"] == "Available"
    for s in seeded:
        if s.recording_id == first:
            continue
        row = finalize_row(db, s.recording_id)
        # The attempt counted at claim is given back, and the row is due again.
        assert (row["status"], row["attempts"], row["in_future"]) == ("Pending", 0, False)
        assert row["last_error"] == "ConfigError: ClientError 403"
        assert recording(db, s.recording_id)["status"] == "Uploading"
    assert ctx.storage.calls == 3  # nothing is HEADed once the failure is known
    assert ctx.metrics.config_errors_total._value.get() == 1
    assert [e["error"] for e in events if e["event"] == "config error"] == ["ClientError 403"]


def test_metadata_the_database_refuses_is_quarantined_as_invalid(
    worker: Worker, db: Db, cycle: Any
) -> None:
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id)

    def url_as_file_id(_row: ClaimedRow, verdict: Verdict) -> Verdict:
        assert verdict.outcome == FOUND
        return Verdict(FOUND, file_id="https://cdn.example/rec.webm", size_bytes=1,
                       duration_seconds=1, format="Webm")

    summary, _, _ = cycle(url_as_file_id)
    assert summary.counts["quarantined"] == 1 and summary.error is None
    row = finalize_row(db, seeded.recording_id)
    assert row["status"] == "Quarantined"
    # Decided by the SQL (metadata_problem), not by the driver's parser: the hook hands the
    # database a URL the parser would have refused.
    assert row["last_error"].startswith("InvalidMetadata: ")
    assert "file_id is a URL" in row["last_error"] and "https://" not in row["last_error"]
    assert recording(db, seeded.recording_id)["status"] == "Uploading"


def test_a_cycle_that_runs_into_the_lock_ttl_stops_writing(
    worker: Worker, db: Db, cycle: Any
) -> None:
    seeded = [seed_stuck(db) for _ in range(2)]
    for s in seeded:
        put_binary(worker.stack, worker.bucket, s.recording_id)

    def slow(_row: ClaimedRow, verdict: Verdict) -> Verdict:
        time.sleep(2.2)  # a paused process, a stuck socket...
        return verdict

    summary, _, events = cycle(slow, RFR_LOCK_TTL="3s", RFR_MAX_RUN_DURATION="1s",
                               RFR_S3_TIMEOUT="1s")
    assert summary.error == "LockTtlExceeded" and summary.result == "error"
    for s in seeded:
        row = finalize_row(db, s.recording_id)
        assert row["status"] == "Pending" and row["attempts"] == 1  # claimed, never applied
        assert row["claim_token"] is not None
        assert recording(db, s.recording_id)["status"] == "Uploading"
    assert [e["level"] for e in events if e["event"] == "cycle aborted"] == ["error"]
    with db.connect() as conn:
        assert conn.execute("select pg_try_advisory_lock(5928001741300501)").fetchone() == (True,)


def test_a_cycle_leaves_spans_and_metrics(worker: Worker, db: Db, cycle: Any) -> None:
    stuck = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, stuck.recording_id)
    lost = seed_available_unpublished(db)
    exporter = InMemorySpanExporter()
    tracing.use_exporter(exporter)
    try:
        summary, ctx, events = cycle()
    finally:
        tracing.shutdown()
    assert (summary.counts["reconciled"], summary.counts["republished"]) == (1, 1)

    spans = exporter.get_finished_spans()
    [cycle_span] = [s for s in spans if s.name == "recording_finalize.cycle"]
    assert cycle_span.attributes is not None
    assert cycle_span.attributes["job_run_id"] == summary.job_run_id
    attempts = {s.attributes["recording_id"]: s for s in spans
                if s.name == "recording_finalize.attempt" and s.attributes}
    assert set(attempts) == {str(stuck.recording_id), str(lost.recording_id)}
    assert attempts[str(stuck.recording_id)].attributes["phase"] == "reconcile"
    assert attempts[str(lost.recording_id)].attributes["phase"] == "republished"
    assert all(s.attributes["attempts"] == 1 for s in attempts.values())
    assert all(s.parent is not None and s.parent.span_id == cycle_span.context.span_id
               for s in attempts.values())

    text = ctx.metrics.render().decode()
    for line in ("messenger_recording_finalize_reconciled_total 1.0",
                 "messenger_recording_finalize_republished_total 1.0",
                 'messenger_recording_finalize_cycles_total{result="ok"} 1.0',
                 "messenger_recording_finalize_backlog 0.0"):
        assert line in text, line
    started = [e for e in events if e["event"] == "cycle started"]
    assert started[0]["jobRunId"] == summary.job_run_id and started[0]["asOf"]
    [claimed] = [e for e in events if e["event"] == "batch claimed"]
    assert claimed["rows"] == 2 and claimed["actions"] == {"reconcile": 1, "republished": 1}


def test_a_404_without_a_confirmed_bucket_never_fails_a_recording(
    worker: Worker, db: Db, cycle: Any
) -> None:
    seeded = seed_stuck(db)  # no binary: with the bucket confirmed this would be Failed
    summary, _, events = cycle(bucket_answer=False)
    # The unconfirmed bucket opens the worker's storage incident, so the 404 (which the
    # database reads as transient) also gives its attempt back: held, not backed off, and never
    # failed.
    counts = summary.counts
    assert (counts["failed"], counts["heldByIncident"], counts["backoff"]) == (0, 1, 0)
    row = finalize_row(db, seeded.recording_id)
    assert row["status"] == "Pending" and "bucket unconfirmed" in row["last_error"]
    assert row["attempts"] == 0 and row["in_future"]
    assert recording(db, seeded.recording_id)["status"] == "Uploading"
    assert [e["level"] for e in events if e["event"] == "storage unreachable"] == ["warning"]


def test_max_apply_rate_paces_the_applies(worker: Worker, db: Db, cycle: Any) -> None:
    # RFR_MAX_APPLY_RATE=4: six verdicts take at least 1.5 s to apply (the sixth is due at
    # 6 / 4 s after the first claim); unthrottled the same cycle takes a fraction of that.
    seeded = [seed_stuck(db) for _ in range(6)]
    for s in seeded:
        put_binary(worker.stack, worker.bucket, s.recording_id)
    t0 = time.monotonic()
    summary, _, _ = cycle(RFR_MAX_APPLY_RATE="4")
    elapsed = time.monotonic() - t0
    assert summary.counts["reconciled"] == 6 and summary.error is None
    assert elapsed >= 1.4
    for s in seeded:
        assert recording(db, s.recording_id)["status"] == "Available"
