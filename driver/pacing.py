"""Pacing of a backlog drain: unlimited while nobody else is on the database, a fixed shared
rate while somebody is. docs/pacing.md is the law (``Pacer._law`` is its table) and says why
the probe (``queries.CONTENTION_SAMPLE``) looks many times a second.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg_pool import ConnectionPool

from . import queries
from .config import Settings
from .logs import LogFn, log

if TYPE_CHECKING:
    from .metrics import Metrics

#: Why pacing held the drain back (the summary's ``pacing.reason``, the log's ``reason``).
REASON_RAMP = "ramp_up"  # the probe has not watched long enough to say nobody is here
REASON_OTHERS = "others_active"  # another login's sessions were seen at work
REASON_NO_SIGNAL = "no_signal"  # the probe stopped answering
REASON_MAX_RATE = "max_apply_rate"  # RFR_MAX_APPLY_RATE (the ceiling, or the fixed rate)
#: The reasons that slow a drain down to the shared rate: entering one is a slowdown.
HELD = (REASON_OTHERS, REASON_NO_SIGNAL)

#: The other logins' sessions at work right now (the probe's one statement).
OthersAtWork = Callable[[], int]
#: Opens the probe for the sampler's lifetime (``database_probe``).
ProbeSource = Callable[[], AbstractContextManager[OthersAtWork]]


@dataclass(frozen=True)
class Tuning:
    """Rates in rows per second (RFR_PACING_SHARED_RATE, RFR_MAX_APPLY_RATE: 0 = no ceiling),
    times in seconds. A round trip carries at most ``burst_s`` worth of rows, a claim
    ``claim_horizon_s`` worth (no large claim at a slow pace)."""

    shared_rate: float
    ceiling: float = 0.0
    presence_window_s: float = 10.0
    open_after_s: float = 2.0
    stale_s: float = 2.0
    #: One probe every ``sample_s`` on average, jittered by ±50 % (a fixed period aliases with
    #: a service that runs on a fixed schedule).
    sample_s: float = 0.05
    burst_s: float = 0.05
    claim_horizon_s: float = 5.0


@dataclass(frozen=True)
class Change:
    """A move of the pace (``rate`` None = unlimited)."""

    at: float
    rate: float | None
    reason: str | None
    slowdown: bool


@contextmanager
def database_probe(pool: ConnectionPool[psycopg.Connection[Any]]) -> Iterator[OthersAtWork]:
    with pool.connection() as conn:
        yield lambda: queries.contention_sample(conn)


class Pacer:
    """The pace of one cycle's drain, shared by the applying thread and the sampler thread;
    ``observe()`` and ``wait_after()`` are the law without a thread or a wait (tests)."""

    def __init__(self, tuning: Tuning, stop: threading.Event, *, adaptive: bool = True,
                 metrics: Metrics | None = None, log: LogFn | None = None,
                 job_run_id: str = "", clock: Callable[[], float] = time.monotonic,
                 source: ProbeSource | None = None) -> None:
        self.tuning, self.stop, self.adaptive = tuning, stop, adaptive
        self.metrics, self.log, self.job_run_id, self.clock = metrics, log, job_run_id, clock
        self._source = source if adaptive else None
        self._ceiling = tuning.ceiling if tuning.ceiling > 0 else None
        self.rate: float | None = self._ceiling
        self.reason: str | None = REASON_MAX_RATE if self._ceiling else None
        self.slowdowns = 0
        self.changes: list[Change] = []
        #: Seconds the drain was made to wait, by reason.
        self.held_s: dict[str, float] = {}
        self._lock = threading.Lock()
        self._sampling_since: float | None = None
        self._last_answer = self._answering_since = self._last_seen = -math.inf
        self._due = clock()
        self._done = threading.Event()
        self._sampler: threading.Thread | None = None
        if metrics is not None:
            metrics.pace_rows_per_second.set(self.rate or 0)

    @classmethod
    def for_drain(cls, settings: Settings, pool: ConnectionPool[psycopg.Connection[Any]],
                  metrics: Metrics | None, stop: threading.Event,
                  job_run_id: str = "") -> Pacer:
        tuning = Tuning(shared_rate=settings.pacing_shared_rate, ceiling=settings.max_apply_rate)
        return cls(tuning, stop, adaptive=settings.pacing == "adaptive", metrics=metrics,
                   log=log, job_run_id=job_run_id, source=lambda: database_probe(pool))

    def observe(self, at: float, others: int) -> None:
        """One answer of the probe at ``at`` (the pacer's clock): ``others`` logins at work. The
        first one starts the law, if ``claimed`` did not."""
        with self._lock:
            if self._sampling_since is None:
                self._begin(at)
            if at - self._last_answer > self.tuning.stale_s:
                self._answering_since = at  # the first answer after a silence
            self._last_answer = max(self._last_answer, at)
            if others > 0:
                self._last_seen = max(self._last_seen, at)
            self._move(at)

    def wait_after(self, rows: int) -> float:
        """``rows`` were just applied: the seconds to wait before the next round trip."""
        now = self.clock()
        with self._lock:
            self._move(now)
            if self.rate is None or rows <= 0:
                self._due = now
                return 0.0
            # A pause (slow checks, a claim) earns at most one burst's worth of credit.
            self._due = max(self._due, now - self.tuning.burst_s) + rows / self.rate
            wait = max(0.0, self._due - now)
            if wait > 0 and self.reason is not None:
                self.held_s[self.reason] = self.held_s.get(self.reason, 0.0) + wait
            return wait

    def _law(self, now: float) -> tuple[float | None, str | None]:
        """The pace at ``now``, and what holds the drain to it."""
        t = self.tuning
        if not self.adaptive or self._sampling_since is None:
            reason = None  # pacing off, or no drain yet: the ceiling alone
        elif now - self._last_answer > t.stale_s:
            reason = REASON_NO_SIGNAL
        elif now - self._last_seen <= t.presence_window_s:
            reason = REASON_OTHERS
        elif now - self._answering_since < t.open_after_s:
            reason = REASON_RAMP
        else:
            reason = None
        if reason is None or (self._ceiling is not None and self._ceiling <= t.shared_rate):
            return self._ceiling, REASON_MAX_RATE if self._ceiling else None
        return t.shared_rate, reason

    def _begin(self, now: float) -> None:
        self._sampling_since = self._last_answer = self._answering_since = now
        self._move(now)

    def _move(self, now: float) -> None:
        """Moves the pace where the law says (under the lock); a slowdown enters ``HELD``."""
        rate, reason = self._law(now)
        if (rate, reason) == (self.rate, self.reason):
            return
        slowdown = reason in HELD and self.reason not in HELD
        opened = self.rate is not None and (rate is None or rate > self.rate)
        self.rate, self.reason = rate, reason
        self.changes.append(Change(now, rate, reason, slowdown))
        self.slowdowns += 1 if slowdown else 0
        if self.metrics is not None:
            self.metrics.pace_rows_per_second.set(rate or 0)
            if slowdown:
                self.metrics.pace_slowdowns_total.inc()
        if self.log is not None and (slowdown or opened):
            self.log("pace slowed" if slowdown else "pace opened", level="info",
                     jobRunId=self.job_run_id, rowsPerSecond=rate or 0, reason=reason)

    def claimed(self, rows: int, limit: int) -> None:
        """A full claim means a backlog: the sampler starts (adaptive mode)."""
        if rows < limit or self._source is None:
            return
        source, self._source = self._source, None
        with self._lock:
            self._begin(self.clock())
        self._sampler = threading.Thread(target=self._sample, args=(source,),
                                         name="pace-sampler", daemon=True)
        self._sampler.start()

    def applied(self, rows: int, lock_deadline: float) -> None:
        """Waits until ``rows`` more are due; never past ``lock_deadline`` nor a stop."""
        wait = min(self.wait_after(rows), lock_deadline - self.clock())
        if wait > 0:
            self.stop.wait(wait)

    def burst(self, most: int) -> int:
        rate = self.rate
        return most if rate is None else max(1, min(most, int(rate * self.tuning.burst_s)))

    def claim_size(self, batch_size: int) -> int:
        rate = self.rate
        return batch_size if rate is None else max(
            1, min(batch_size, math.ceil(rate * self.tuning.claim_horizon_s)))

    def close(self) -> None:
        self._done.set()
        if self._sampler is not None:
            self._sampler.join(timeout=5)

    def summary(self) -> dict[str, Any]:
        """The cycle summary's ``pacing`` (docs/pacing.md)."""
        with self._lock:
            held = sum(self.held_s.values())
            return {
                "mode": "adaptive" if self.adaptive else "off",
                "limited": held > 0,
                "reason": max(self.held_s, key=self.held_s.__getitem__) if held else None,
                "rowsPerSecond": round(self.rate, 1) if self.rate is not None else 0,
                "slowdowns": self.slowdowns,
                "heldMs": round(held * 1000),
            }

    def _sample(self, source: ProbeSource) -> None:
        """The sampler thread. A failing probe ends the sampling: the silence then holds the
        drain to the shared rate (``no_signal``) until the cycle ends."""
        try:
            with source() as others_at_work:
                while not self._done.is_set() and not self.stop.is_set():
                    others = others_at_work()
                    self.observe(self.clock(), others)
                    self._done.wait(self.tuning.sample_s * (0.5 + random.random()))
        except Exception as err:  # noqa: BLE001 - the drain goes on, at the shared rate
            if self.log is not None:
                self.log("pace probe failed", level="warning", jobRunId=self.job_run_id,
                         error=type(err).__name__, detail=str(err),
                         message="the drain is held to the shared rate until the cycle ends")
