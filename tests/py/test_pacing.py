"""Adaptive pacing's law (driver/pacing.py), deterministic: a synthetic database, a fake clock.

The synthetic database answers the probe in ~0.3 ms, except a share of the probes that wait
2 ms more for a core; that share grows once the drain applies faster than the database's
``knee`` (what a shared two-core server does: docs/pacing.md). Another
login's sessions show in a fifth of the samples while they are ``present``. The drain is
simulated as the cycle runs it: round trips of ``burst()`` rows, each costing 0.7 ms per row,
then the wait ``applied()`` asks for. Everything is seeded: the same run every time.

End to end (the real stack, ``run-once`` as the worker's login): a drain finishes with pacing on
by default; another login at work holds it back, and it still finishes.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
import uuid
from collections import deque
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
    REASON_CONTENTION,
    REASON_MAX_RATE,
    REASON_NO_SIGNAL,
    REASON_OTHERS,
    ContentionProbe,
    PaceController,
    Pacer,
    Sample,
    Tuning,
)

APPLY_S_PER_ROW = 0.0007
PIPELINE_MAX = 100


@dataclass
class SyntheticDb:
    knee: float  # rows/s beyond which the probes' tail stretches
    present: Callable[[float], bool] = lambda t: True
    answers: Callable[[float], bool] = lambda t: True
    #: The tail the others' own load stretches, whatever the drain does (a share of probes).
    own_load: Callable[[float], float] = lambda t: 0.0
    #: At most this share of the probes wait: below a half the median stays put (what the
    #: bench measured), above it the median moves too (a database saturated by others).
    most_delayed: float = 0.4
    rng: random.Random = field(default_factory=lambda: random.Random(7))

    def delayed_share(self, rate: float, t: float = 0.0) -> float:
        ours = 0.3 * max(0.0, rate - self.knee) / max(self.knee, 1.0)
        return min(self.most_delayed, 0.03 + ours + self.own_load(t))

    def sample(self, t: float, rate: float) -> Sample:
        latency = 0.0003 * (1 + 0.2 * self.rng.random())
        if self.rng.random() < self.delayed_share(rate, t):
            latency += 0.002
        others = 1 if self.present(t) and self.rng.random() < 0.2 else 0
        return Sample(t, latency, others)


@dataclass
class Run:
    rates: list[tuple[float, float | None]]  # (t, controller rate) after every round trip
    applied: list[tuple[float, int]]  # (t, rows) of every round trip
    controller: PaceController

    def rows_between(self, start: float, end: float) -> int:
        return sum(rows for t, rows in self.applied if start <= t < end)

    def finite_rates_between(self, start: float, end: float) -> list[float]:
        return [r for t, r in self.rates if start <= t < end and r is not None]


def simulate(db: SyntheticDb, seconds: float, tuning: Tuning | None = None,
             adaptive: bool = True) -> Run:
    """Discrete-event drain: the sampler every ~50 ms, the applying thread round trip after
    round trip; the synthetic database sees the pace of the last tenth of a second."""
    c = PaceController(tuning or Tuning(), 0.0, adaptive=adaptive)
    jitter = random.Random(3)
    recent: deque[tuple[float, int]] = deque()
    run = Run([], [], c)
    next_sample, next_apply = 0.0, 0.0
    while min(next_sample, next_apply) < seconds:
        if next_sample <= next_apply:
            t = next_sample
            while recent and recent[0][0] < t - 0.1:
                recent.popleft()
            if db.answers(t):
                c.observe(db.sample(t, 10.0 * sum(rows for _, rows in recent)))
            next_sample = t + c.sample_interval(jitter.random)
        else:
            t = next_apply
            rows = c.burst(PIPELINE_MAX)
            done = t + rows * APPLY_S_PER_ROW
            recent.append((done, rows))
            run.applied.append((done, rows))
            wait = c.applied(rows, done)
            run.rates.append((done, c.rate))
            next_apply = done + wait
    return run


#: A shared ceiling above the synthetic database's knee, so that the cuts find it.
HIGH_SHARED = Tuning(shared_max=400, increase=2.0)


def test_others_present_hold_the_pace_at_the_shared_ceiling() -> None:
    # A database whose tail never stretches where the drain may go while others are present:
    # from 50 up to RFR_PACING_SHARED_RATE (100) in 25 s, then there, without a cut.
    run = simulate(SyntheticDb(knee=1000), 90)
    c = run.controller
    assert c.rate == c.tuning.shared_max == 100 and c.slowdowns == 1
    assert max(run.finite_rates_between(1, 90)) <= 100
    assert 0.95 * 100 * 50 <= run.rows_between(40, 90) <= 1.05 * 100 * 50


def test_converges_below_the_knee_with_others_present_and_never_stalls() -> None:
    # Others are there from the start; the tail stretches beyond 120 rows/s, and the shared
    # ceiling is far above it. The pace must settle around the knee — not pinned to the
    # floor, not run away — and keep draining.
    run = simulate(SyntheticDb(knee=120), 180, HIGH_SHARED)
    c = run.controller
    assert c.rate is not None
    late = run.finite_rates_between(60, 180)
    assert len(late) == len([r for t, r in run.rates if 60 <= t < 180])  # never unlimited
    assert min(late) >= c.tuning.floor
    applied = run.rows_between(60, 180) / 120
    assert 50 <= applied <= 170, applied
    assert max(late) <= 2 * 120
    # AIMD saw-tooth: it cut more than once, every cut for contention after the first
    assert c.slowdowns >= 3
    assert {ch.reason for ch in c.changes if ch.slowdown} <= {REASON_OTHERS, REASON_CONTENTION}
    # Nothing changed between minute 2 and 3 that a minute 1-2 did not see: stable.
    second, third = run.rows_between(60, 120), run.rows_between(120, 180)
    assert abs(second - third) <= 0.35 * max(second, third)


def test_a_drain_that_hurts_even_at_its_slowest_still_drains_at_the_floor() -> None:
    run = simulate(SyntheticDb(knee=1), 60, Tuning(floor=20))
    rates = run.finite_rates_between(0, 60)
    assert min(rates) >= 20
    assert run.controller.rate == 20
    assert run.rows_between(10, 60) >= 0.9 * 20 * 50


def test_a_median_that_moves_with_the_drain_is_contention_too() -> None:
    # Beyond the knee most probes wait: p90 ÷ p50 of a window is back near 1, but the median
    # is far above the quietest one of the drain, and that is what the spread compares with.
    run = simulate(SyntheticDb(knee=120, most_delayed=0.9), 120, HIGH_SHARED)
    assert run.rows_between(60, 120) / 60 <= 170
    assert any(ch.reason == REASON_CONTENTION for ch in run.controller.changes)


def test_a_tail_the_others_stretch_themselves_cuts_nothing() -> None:
    # From second 20 on, their own load stretches the probes' tail whether we drain or not:
    # the tests see it without us, so the pace holds instead of falling to the floor.
    run = simulate(SyntheticDb(knee=1000, own_load=lambda t: 0.3 if t >= 20 else 0.0), 80)
    c = run.controller
    before = [r for t, r in run.rates if t < 20][-1]
    after = run.finite_rates_between(30, 80)
    assert before is not None and c.tests_not_ours >= 5
    assert len([ch for ch in c.changes if ch.slowdown and ch.at >= 20]) <= 2
    assert min(after) >= 0.7 * before  # one cut at most, by chance
    # Holding still to look costs at most a hush (0.5 s) every 3 s.
    assert run.rows_between(30, 80) >= 0.8 * 50 * min(after)


def test_nobody_else_here_opens_to_unlimited_within_a_second() -> None:
    run = simulate(SyntheticDb(knee=120, present=lambda t: False), 20)
    opened = next(t for t, r in run.rates if r is None)
    assert opened <= 0.8
    assert all(r is None for t, r in run.rates if t > opened)
    # Unlimited here is the cost of a row: 1 / 0.7 ms.
    assert run.rows_between(2, 20) >= 0.95 * 18 / APPLY_S_PER_ROW
    assert run.controller.slowdowns == 0


def test_others_arriving_cut_the_pace_at_once_and_leaving_reopens_it() -> None:
    present = lambda t: 10 <= t < 40  # noqa: E731
    run = simulate(SyntheticDb(knee=120, present=present), 60)
    c = run.controller
    cut = next(ch for ch in c.changes if ch.slowdown)
    assert cut.reason == REASON_OTHERS and 10 <= cut.at <= 11
    assert cut.rate == c.tuning.shared_rate
    assert all(r is not None for t, r in run.rates if 11 <= t < 40)
    # The presence window (5 s) outlives them a little; then the pace doubles up to unlimited.
    reopened = next(t for t, r in run.rates if t >= 40 and r is None)
    assert reopened <= 40 + c.tuning.presence_window_s + 2.0


def test_a_probe_that_stops_answering_slows_the_drain_to_the_floor_not_to_a_stop() -> None:
    run = simulate(SyntheticDb(knee=1000, present=lambda t: False, answers=lambda t: t < 5), 30)
    c = run.controller
    assert c.rate == c.tuning.floor
    assert any(ch.reason == REASON_NO_SIGNAL for ch in c.changes)
    assert run.rows_between(15, 30) >= 0.9 * c.tuning.floor * 15


def test_the_ceiling_holds_and_is_the_reason() -> None:
    run = simulate(SyntheticDb(knee=1000, present=lambda t: False), 10, Tuning(ceiling=100))
    c = run.controller
    assert c.rate == 100 and c.main_reason == REASON_MAX_RATE and c.limited
    assert 0.9 * 100 * 9 <= run.rows_between(1, 10) <= 1.1 * 100 * 9


def test_off_is_the_fixed_rate_of_max_apply_rate() -> None:
    c = PaceController(Tuning(ceiling=4), 0.0, adaptive=False)
    assert c.burst(PIPELINE_MAX) == 1 and c.claim_size(100) == 20
    waits = [c.applied(1, 0.0) for _ in range(4)]
    assert waits == [0.25, 0.5, 0.75, 1.0]  # each row due 1/4 s after the one before
    # A pause (slow checks) earns one burst's worth of credit (50 ms), not a burst of rows.
    assert c.applied(1, 11.0) == pytest.approx(0.2)
    unlimited = PaceController(Tuning(), 0.0, adaptive=False)
    assert unlimited.applied(100, 0.0) == 0 and unlimited.rate is None
    assert unlimited.burst(PIPELINE_MAX) == PIPELINE_MAX and unlimited.claim_size(500) == 500
    assert not unlimited.limited and unlimited.main_reason is None


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


def test_the_pacer_moves_the_metrics_logs_the_slowdowns_and_sums_up() -> None:
    clock = [0.0]
    metrics = FakeMetrics()
    lines: list[tuple[str, dict[str, object]]] = []
    pacer = Pacer.create("adaptive", 0.0, 20.0, threading.Event(), metrics,
                         lambda event, **fields: lines.append((event, fields)), "job",
                         clock=lambda: clock[0])
    assert metrics.pace_rows_per_second.value == 400  # the start, before anything is known
    for i in range(40):  # 2 s of samples that see another login at work
        clock[0] = i * 0.05
        pacer.observe(Sample(clock[0], 0.0003, 1))
    # Down to the shared pace at the first tick, then up by 2 rows/s a tick (nobody suffers).
    assert 50 < metrics.pace_rows_per_second.value <= 50 + 2 * 8
    assert metrics.pace_slowdowns_total.value == 1
    assert lines and lines[0][0] == "pace slowed" and lines[0][1]["reason"] == REASON_OTHERS
    pacer.applied(10, lock_deadline=clock[0])  # would wait 0.2 s, but the deadline is now
    summary = pacer.summary()
    assert summary == {"mode": "adaptive", "limited": True, "reason": REASON_OTHERS,
                       "rowsPerSecond": summary["rowsPerSecond"], "slowdowns": 1,
                       "heldMs": summary["heldMs"]}
    assert summary["rowsPerSecond"] >= 50 and summary["heldMs"] > 0


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
    cycle._claim_loop(ctx, no_pool, threading.Event(), summary, time.monotonic(),
                      time.monotonic() + 60, True)
    assert asked == [100, 20, 20, 20]  # the first before any pace is known; the last is short
    assert summary.closed == summary.claimed == 150 and left == [0]
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
        summary = worker.run_once(RFR_BATCH_SIZE="50", RFR_PACING_MIN_RATE="40")
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        other.join(timeout=5)
    assert summary["reconciled"] == 200 and summary["result"] == "ok"
    assert all(recording(db, s.recording_id)["status"] == "Available" for s in seeded)
    pacing = summary["pacing"]
    assert pacing["mode"] == "adaptive" and pacing["limited"] is True
    assert pacing["reason"] in ("others_active", "contention")
    assert pacing["slowdowns"] >= 1 and pacing["rowsPerSecond"] > 0
    # 200 rows at the shared pace (50 rows/s, rising by 2 a second) take seconds, not 0.2 s.
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
    def source() -> Iterator[ContentionProbe]:
        opened.append(1)
        yield ContentionProbe(lambda: 0)

    stop = threading.Event()
    pacer = Pacer.create("adaptive", 0.0, 20.0, stop)
    pacer._source = source
    pacer.claimed(5, 100)  # a few rows due: no backlog, no sampler, no connection
    assert pacer._sampler is None and not pacer.controller.sampling
    assert pacer.controller.tick(10.0) == [] and pacer.controller.rate == 400  # no law yet
    pacer.claimed(100, 100)
    try:
        deadline = time.monotonic() + 5
        while not opened and time.monotonic() < deadline:
            time.sleep(0.01)
        assert opened == [1] and pacer.controller.sampling
    finally:
        pacer.close()
