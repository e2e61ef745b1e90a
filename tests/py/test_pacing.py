"""Pacing's law (driver/pacing.py), deterministic: a synthetic database, a fake clock.

The probe answers every ~50 ms (seeded jitter); while another login is ``present`` its sessions
show in a share of the samples (``seen``: the bench's service showed in 4-9 %). The drain is
simulated as the cycle runs it: round trips of ``burst()`` rows, each costing 0.7 ms a row,
then the wait ``wait_after()`` asks for. Everything is seeded: the same run every time.

End to end (the real stack, ``run-once`` as the worker's login): a drain finishes with pacing on
by default; another login at work holds it to the shared rate, and it still finishes.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from conftest import Db, Worker, log_events, put_binary, recording, seed_stuck
from prometheus_client import CollectorRegistry
from recording_finalize import cycle
from recording_finalize.config import Settings, load_settings
from recording_finalize.metrics import Metrics
from recording_finalize.model import ClaimedRow
from recording_finalize.pacing import (
    REASON_MAX_RATE,
    REASON_NO_SIGNAL,
    REASON_OTHERS,
    REASON_RAMP,
    OthersAtWork,
    Pacer,
    Tuning,
)

# The law's tests pace at a round rate of their own, not at RFR_PACING_SHARED_RATE's default.
SHARED_RATE = 100.0
APPLY_S_PER_ROW = 0.0007
PIPELINE_MAX = 100


@dataclass
class Run:
    rates: list[tuple[float, float | None]]  # (t, pace) after every round trip
    applied: list[tuple[float, int]]  # (t, rows) of every round trip
    pacer: Pacer

    def rows_between(self, start: float, end: float) -> int:
        return sum(rows for t, rows in self.applied if start <= t < end)

    def rates_between(self, start: float, end: float) -> set[float | None]:
        return {r for t, r in self.rates if start <= t < end}


def simulate(seconds: float, present: Callable[[float], bool] = lambda t: False,
             seen: float = 0.2, answers: Callable[[float], bool] = lambda t: True,
             tuning: Tuning | None = None, adaptive: bool = True,
             log: Callable[..., None] | None = None, metrics: Any = None) -> Run:
    """Discrete-event drain from t = 0, when its first full claim starts the sampler."""
    clock = [0.0]
    pacer = Pacer(tuning or Tuning(SHARED_RATE), threading.Event(), adaptive=adaptive, log=log,
                  metrics=metrics, clock=lambda: clock[0])
    if adaptive:
        pacer.observe(0.0, 0)
    rng = random.Random(7)
    run = Run([], [], pacer)
    next_sample, next_apply = 0.0, 0.0
    while min(next_sample, next_apply) < seconds:
        if next_sample <= next_apply:
            t = clock[0] = next_sample
            if adaptive and answers(t):
                pacer.observe(t, 1 if present(t) and rng.random() < seen else 0)
            next_sample = t + pacer.tuning.sample_s * (0.5 + rng.random())
        else:
            rows = pacer.burst(PIPELINE_MAX)
            done = clock[0] = next_apply + rows * APPLY_S_PER_ROW
            run.applied.append((done, rows))
            wait = pacer.wait_after(rows)
            run.rates.append((done, pacer.rate))
            next_apply = done + wait
    return run


def test_nobody_else_here_opens_to_unlimited_after_two_seconds() -> None:
    run = simulate(20)
    p = run.pacer
    assert run.rates_between(0, 1.99) == {100} and p.changes[0].reason == REASON_RAMP
    assert run.rates_between(2.01, 20) == {None}
    # Unlimited here is the cost of a row: 1 / 0.7 ms.
    assert run.rows_between(3, 20) >= 0.95 * 17 / APPLY_S_PER_ROW
    assert p.slowdowns == 0 and p.summary()["reason"] == REASON_RAMP


def test_others_present_hold_the_drain_at_the_shared_rate() -> None:
    lines: list[tuple[str, dict[str, Any]]] = []
    metrics = FakeMetrics()
    run = simulate(60, present=lambda t: True, seen=0.05,
                   log=lambda event, **fields: lines.append((event, fields)), metrics=metrics)
    p = run.pacer
    # A light service (5 % of the samples) is never taken for gone: never unlimited.
    assert run.rates_between(0, 60) == {100} and p.reason == REASON_OTHERS
    assert 0.95 * 100 * 58 <= run.rows_between(2, 60) <= 1.02 * 100 * 58
    assert p.slowdowns == 1 and metrics.pace_slowdowns_total.value == 1
    assert metrics.pace_rows_per_second.value == 100
    assert lines == [("pace slowed", {"level": "info", "jobRunId": "", "rowsPerSecond": 100,
                                      "reason": REASON_OTHERS})]
    summary = p.summary()
    assert summary == {"mode": "adaptive", "limited": True, "reason": REASON_OTHERS,
                       "rowsPerSecond": 100, "slowdowns": 1, "heldMs": summary["heldMs"]}
    assert summary["heldMs"] >= 50_000


def test_others_arriving_slow_the_drain_at_once_and_leaving_reopens_it() -> None:
    lines: list[str] = []
    run = simulate(60, present=lambda t: 10 <= t < 30,
                   log=lambda event, **fields: lines.append(f"{event} {fields['reason']}"))
    p = run.pacer
    slowed = next(ch for ch in p.changes if ch.slowdown)
    assert slowed.reason == REASON_OTHERS and slowed.rate == 100 and 10 <= slowed.at <= 11
    # (a round trip under way when the sample came still ends at the pace it began with)
    assert run.rates_between(slowed.at + 0.1, 30) == {100}
    # The presence window (10 s) outlives them: the pace opens once no sample of it saw them.
    reopened = next(t for t, r in run.rates if t >= 30 and r is None)
    assert 30 + p.tuning.presence_window_s - 1 <= reopened <= 30 + p.tuning.presence_window_s + 0.2
    assert lines == ["pace opened None", "pace slowed others_active", "pace opened None"]


def test_a_probe_that_stops_answering_holds_the_drain_to_the_shared_rate() -> None:
    run = simulate(30, answers=lambda t: t < 5 or t >= 20)
    p = run.pacer
    assert run.rates_between(3, 5) == {None}
    silent = next(ch for ch in p.changes if ch.reason == REASON_NO_SIGNAL)
    assert silent.slowdown and abs(silent.at - (5 + p.tuning.stale_s)) <= 0.1
    assert run.rates_between(silent.at + 0.1, 20) == {100}  # slower, never stopped
    assert run.rows_between(8, 20) >= 0.95 * 100 * 12
    # Answers again: two more seconds of them before it opens (ramp_up).
    assert run.rates_between(20, 21.9) == {100} and run.rates_between(22.1, 30) == {None}


def test_max_apply_rate_is_the_open_pace_and_bounds_the_shared_one() -> None:
    run = simulate(10, tuning=Tuning(SHARED_RATE, ceiling=300))
    assert run.rates_between(2.1, 10) == {300} and run.pacer.reason == REASON_MAX_RATE
    assert 0.95 * 300 * 7 <= run.rows_between(3, 10) <= 1.05 * 300 * 7
    low = simulate(10, present=lambda t: True, tuning=Tuning(SHARED_RATE, ceiling=40))
    assert low.rates_between(0, 10) == {40} and low.pacer.summary()["reason"] == REASON_MAX_RATE
    assert low.pacer.slowdowns == 0  # the ceiling held it all along: pacing slowed nothing


def test_off_is_the_fixed_rate_of_max_apply_rate() -> None:
    clock = [0.0]
    p = Pacer(Tuning(SHARED_RATE, ceiling=4), threading.Event(), adaptive=False,
              clock=lambda: clock[0])
    p.observe(0.0, 1)  # off ignores any sample: the rate stays fixed
    assert p.burst(PIPELINE_MAX) == 1 and p.claim_size(100) == 20
    waits = [p.wait_after(1) for _ in range(4)]
    assert waits == [0.25, 0.5, 0.75, 1.0]  # each row due 1/4 s after the one before
    # A pause (slow checks) earns one burst's worth of credit (50 ms), not a burst of rows.
    clock[0] = 11.0
    assert p.wait_after(1) == pytest.approx(0.2)
    unlimited = Pacer(Tuning(SHARED_RATE), threading.Event(), adaptive=False)
    assert unlimited.wait_after(100) == 0 and unlimited.rate is None
    assert unlimited.burst(PIPELINE_MAX) == PIPELINE_MAX and unlimited.claim_size(500) == 500
    assert unlimited.summary() == {"mode": "off", "limited": False, "reason": None,
                                   "rowsPerSecond": 0, "slowdowns": 0, "heldMs": 0}


class FakeGauge:
    def __init__(self) -> None:
        self.value = -1.0

    def set(self, value: float) -> None:
        self.value = value


class FakeCounter:
    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


@dataclass
class FakeMetrics:
    pace_rows_per_second: FakeGauge = field(default_factory=FakeGauge)
    pace_slowdowns_total: FakeCounter = field(default_factory=FakeCounter)



def test_a_claim_cut_to_the_pace_that_comes_back_full_does_not_end_the_drain(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # At 4 rows/s a claim takes 20 rows (5 s worth), not RFR_BATCH_SIZE (100). Such a claim,
    # full, is not the short batch that ends the claim loop: the drain goes on to the end.
    # (claim_due is a stand-in here, and every row comes back settled at claim: no S3, no wait.)
    left = [150]
    asked: list[int] = []

    def claim_due(conn: object, settings: Settings) -> list[ClaimedRow]:
        asked.append(settings.batch_size)
        n = min(settings.batch_size, left[0])
        left[0] -= n
        return [ClaimedRow(uuid.uuid4(), "Direct", uuid.uuid4(), "closed", 1, None, None, None)
                for _ in range(n)]

    monkeypatch.setattr(cycle.queries, "claim_due", claim_due)
    settings = load_settings({"DATABASE_URL": "postgresql://w@127.0.0.1/db",
                              "RFR_PACING": "off", "RFR_MAX_APPLY_RATE": "4"})
    no_pool: Any = None  # nothing here connects: the claims are stand-ins, pacing is off
    ctx = cycle.Context(settings, no_pool, no_pool, Metrics(CollectorRegistry()))
    summary = cycle.CycleSummary("job", datetime.now(UTC))
    reconcile = cycle._Reconcile(ctx, no_pool, threading.Event(), summary, time.monotonic() + 60)
    reconcile.claim_loop(time.monotonic() + settings.max_run_duration)
    assert asked == [100, 20, 20, 20]  # the first before any pace is known; the last is short
    assert summary.counts["closed"] == summary.counts["claimed"] == 150 and left == [0]
    assert summary.pacing is not None and summary.pacing["rowsPerSecond"] == 4


# ---- end to end: run-once against the real stack -----------------------------------------------


def _backlog(worker: Worker, db: Db, n: int) -> list[Any]:
    seeded = [seed_stuck(db) for _ in range(n)]
    for s in seeded:
        put_binary(worker.stack, worker.bucket, s.recording_id)
    return seeded


def test_a_drain_finishes_with_adaptive_pacing_on_by_default(worker: Worker, db: Db) -> None:
    seeded = _backlog(worker, db, 120)
    summary = worker.run_once(RFR_BATCH_SIZE="50")
    assert summary["reconciled"] == 120 and summary["result"] == "ok"
    assert all(recording(db, s.recording_id)["status"] == "Available" for s in seeded)
    pacing = summary["pacing"]
    assert set(pacing) == {"mode", "limited", "reason", "rowsPerSecond", "slowdowns", "heldMs"}
    assert pacing["mode"] == "adaptive"
    # Nobody else works in the database: pacing never slowed the drain (at most the first
    # second's ramp, before the samples said so, held it back).
    assert pacing["slowdowns"] == 0 and pacing["reason"] in (None, "ramp_up")
    completed = [e for e in log_events(summary["_stderr"]) if e["event"] == "cycle completed"]
    assert completed[0]["pacing"] == pacing


def test_another_login_at_work_holds_the_drain_back_and_it_still_finishes(
        worker: Worker, db: Db) -> None:
    seeded = _backlog(worker, db, 200)
    stop = threading.Event()

    def busy() -> None:
        # Another login (the tables' owner) running statements back to back: the service.
        with db.connect() as conn:
            while not stop.is_set():
                conn.execute("select pg_sleep(0.01)")

    other = threading.Thread(target=busy, daemon=True)
    other.start()
    try:
        time.sleep(0.3)
        t0 = time.monotonic()
        summary = worker.run_once(RFR_BATCH_SIZE="50")
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        other.join(timeout=5)
    assert summary["reconciled"] == 200 and summary["result"] == "ok"
    assert all(recording(db, s.recording_id)["status"] == "Available" for s in seeded)
    pacing = summary["pacing"]
    assert pacing["mode"] == "adaptive" and pacing["limited"] is True
    assert pacing["reason"] == "others_active"
    assert pacing["slowdowns"] >= 1 and pacing["rowsPerSecond"] == 50
    # 200 rows at the shared pace (50 rows/s) take seconds, not 0.2 s.
    assert pacing["heldMs"] >= 1000 and elapsed >= 2.0
    events = log_events(summary["_stderr"])
    assert any(e["event"] == "pace slowed" and e["reason"] == "others_active" for e in events)


def test_pacing_off_and_a_bad_mode(worker: Worker, db: Db) -> None:
    _backlog(worker, db, 5)
    summary = worker.run_once(RFR_PACING="off")
    assert summary["reconciled"] == 5
    assert summary["pacing"] == {"mode": "off", "limited": False, "reason": None,
                                 "rowsPerSecond": 0, "slowdowns": 0, "heldMs": 0}
    proc = worker.cli("run-once", RFR_PACING="fast")
    assert proc.returncode == 2 and "RFR_PACING" in proc.stderr and "adaptive or off" in proc.stderr


def test_the_sampler_starts_with_the_first_full_claim_only() -> None:
    opened: list[int] = []

    @contextlib.contextmanager
    def source() -> Iterator[OthersAtWork]:
        opened.append(1)
        yield lambda: 0

    pacer = Pacer(Tuning(SHARED_RATE), threading.Event(), source=source)
    pacer.claimed(5, 100)  # a few rows due: no backlog, no sampler, no connection, no pace
    assert pacer.wait_after(5) == 0 and pacer.rate is None and pacer.burst(100) == 100
    pacer.claimed(100, 100)
    try:
        assert pacer.rate == 100 and pacer.reason == REASON_RAMP  # until it has looked
        deadline = time.monotonic() + 5
        while not opened and time.monotonic() < deadline:
            time.sleep(0.01)
        assert opened == [1]
    finally:
        pacer.close()
    assert pacer.summary()["slowdowns"] == 0
