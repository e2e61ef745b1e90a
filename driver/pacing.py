"""Adaptive pacing of a backlog drain: fast on a database nobody else uses, polite on a shared one.

A drain shares PostgreSQL with the messenger's happy path. On the bench's two cores an
unthrottled drain multiplies the service's p99 by about five, a fixed ``RFR_MAX_APPLY_RATE`` is
too slow on an idle database (docs/pacing.md). So while it drains, the
worker looks at two things it can see cheaply and honestly with its least-privileged login:

1. **Is anybody else here?** ``pg_stat_activity`` hides the ``state``, ``wait_event`` and
   ``query`` of other logins' sessions from a role without ``pg_read_all_stats``, but not their
   ``backend_xmin`` / ``backend_xid``: a session holding a snapshot or a transaction id is
   running a statement or a transaction right now. The share of samples that see at least one
   such session of another login is the *presence* (our own login's sessions — the relay, a
   standby runner — do not count; nor do autovacuum and the other background processes, which
   have no login). On a database nobody else uses it was 0 in every sample of every run; the
   bench's service, 200 short statements a second, shows in 4-9 % of the worker's samples.
2. **Do they suffer because of us?** The round trip of that same sampling statement stands for
   a statement of theirs arriving now. Its median hardly moves under load (half of the probes
   still find a free core), its tail does: the *spread*, the last second's p90 ÷ the quietest
   one-second median of this drain, is 1.5 (median; 2.0 at the 80th percentile) on an idle
   database and 4-6 during an unthrottled drain. A high spread alone does not say whose load
   it is (the others' own, the machine's), so it calls a *test*: the drain holds still for
   ``hush_s``, then drains on for as long, the sampler four times as often throughout (BBR's
   ProbeRTT also stops to see the path without its own queue). Only if the tail with us is
   above the limit and half again the tail without us is the contention ours.

The other candidates were measured and set aside (docs/pacing.md): ``pg_stat_database``
counters (``xact_commit``, ``active_time``) are visible but each backend flushes them at most
once a second, so the drain's own ~1,000 transactions a second cannot be subtracted from a
service's 200 at that resolution; the worker's own ``apply_outcome`` round trips move with its
pipeline depth (0.7 ms a row at 60 rows a round trip, 1.4 ms at one), not with a light service;
a probe's latency alone rises with the drain's own load on an idle database too.

The law (AIMD: additive increase, multiplicative decrease, as TCP, with gh-ost's and
pt-online-schema-change's idea of pausing for others' load), evaluated every ``tick_s``:

- nobody else present: the pace doubles each tick until it passes ``open_above``, and the drain
  runs unlimited (or at the ceiling, ``RFR_MAX_APPLY_RATE``). A drain starts at ``start_rate``
  and opens within about a second: before the first samples nobody knows who is there.
- somebody arrives: down to ``shared_rate`` at once (a slowdown, reason ``others_active``),
  then ``increase`` per tick up to ``shared_max`` (``RFR_PACING_SHARED_RATE``) as long as the
  spread stays within ``spread_limit``; a spread above it calls a test and stops the rise;
- a test finds the contention ours: the pace times ``decrease`` (a slowdown, reason
  ``contention``); the next spread looks only at probes taken after the cut, as TCP cuts once
  per round trip. Not ours: no cut. At most one test every ``hush_every_s`` (holding still
  costs at most a sixth of the drain while the tail stays stretched; nothing while it is calm);
- presence ends once no sample of the last ``presence_window_s`` saw anybody: the pace doubles
  back up to unlimited;
- no probe answered for ``stale_s``: treated as contention (reason ``no_signal``) — a probe that
  does not come back is the strongest sign of all, and a broken probe must not unleash a drain.

Why a ceiling while others are present, rather than climbing until they are seen to suffer: the
service's p99 is a rare-event statistic. On the bench a drain at 100-150 rows/s adds about one
slow call in a hundred — enough to move the p99 — and changes the probes' tail by less than a
second of 20 probes can tell from chance; the probe sees the drains that hurt a lot (an
unthrottled one) at once, not those that hurt a little. A backlog is already late (past the
SLA), so minutes more to drain it cost less than every live user's slow call.

Never below ``floor`` (``RFR_PACING_MIN_RATE``; no tests there): a drain always progresses. The
pace is enforced after each pipelined round trip, as ``RFR_MAX_APPLY_RATE`` always was: the
applying thread waits until the rows applied so far are due, a round trip carries at most
``burst_s`` worth of rows, and a cycle claims at most ``claim_horizon_s`` worth of rows at a
time, so a slow pace never holds a large claim (nor runs a cycle into its lock TTL).

``PaceController`` is the law alone: no clock, no thread, no I/O — it is fed samples and asked
how long to wait. ``ContentionProbe`` is the signal source (one statement, timed; the SQL is
``queries.CONTENTION_SAMPLE``); ``PaceSampler`` runs it on a thread of its own during a drain
(from the cycle's first full claim: a cycle that finds a few rows due samples nothing);
``Pacer`` is what a cycle holds: the controller behind a lock, the sampler, the waits, the
metrics, the log lines and the summary's ``pacing``.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg
from psycopg_pool import ConnectionPool

from . import queries
from .config import Settings
from .logs import LogFn, log

MODES = ("adaptive", "off")

#: Why pacing held the drain back (the summary's ``pacing.reason``, the log's ``reason``).
REASON_RAMP = "ramp_up"  # the first second of a drain, or after the others left
REASON_OTHERS = "others_active"  # another login's sessions are at work: the shared pace
REASON_CONTENTION = "contention"  # ... and the probe's tail stretched: slower still
REASON_NO_SIGNAL = "no_signal"  # the probe did not answer: treated as contention
REASON_MAX_RATE = "max_apply_rate"  # RFR_MAX_APPLY_RATE (the ceiling, or the fixed rate)


@dataclass(frozen=True)
class Tuning:
    """The controller's constants. Rates in rows per second, times in seconds."""

    #: RFR_PACING_MIN_RATE: the slowest a drain goes.
    floor: float = 20.0
    #: RFR_MAX_APPLY_RATE: never faster (0 = no ceiling).
    ceiling: float = 0.0
    #: Where a drain starts, before the first samples say whether anybody else is here: open
    #: (past ``open_above``) after two doublings, half a second.
    start_rate: float = 400.0
    #: Beyond this, with nobody else here, the drain runs unlimited.
    open_above: float = 1500.0
    #: RFR_PACING_SHARED_RATE: the most a drain applies while other logins are at work.
    shared_max: float = 100.0
    #: The pace the drain drops to at once when another login's sessions appear (at most
    #: ``shared_max``), before it climbs towards ``shared_max``.
    shared_rate: float = 50.0
    #: Additive increase per tick while others are present and do not suffer (2 rows/s a
    #: second: from the shared start to the shared maximum in 25 s).
    increase: float = 0.5
    #: Multiplicative decrease when they do.
    decrease: float = 0.7
    #: How often the law is evaluated.
    tick_s: float = 0.25
    #: The probes the spread is taken over (the last ``window_s``; at least ``min_probes``).
    window_s: float = 1.0
    min_probes: int = 8
    #: The window's p90 ÷ the quietest window median of the drain above this: contention.
    spread_limit: float = 2.5
    #: Presence: the share of the last ``presence_window_s`` of samples that saw another
    #: login at work must reach ``presence_share``; it ends when none of them did.
    presence_window_s: float = 5.0
    presence_share: float = 0.02
    #: Before a cut for contention, a test: the drain holds still for ``hush_s`` (its first
    #: ``hush_settle_s`` not judged: the round trips and checks in flight end), then drains
    #: ``hush_s`` more at its pace, the sampler four times as often all along. The cut comes
    #: only if the tail with us is above the limit and ``ours_factor`` times the tail without
    #: us. Both halves come after the window that called the test, so a spike that called it
    #: does not count in either (a window picked for being high is followed by an ordinary
    #: one). At most one test every ``hush_every_s``.
    hush_s: float = 0.5
    hush_settle_s: float = 0.1
    hush_every_s: float = 3.0
    hush_sampling: float = 4.0
    ours_factor: float = 1.5
    #: No probe answered for this long: contention.
    stale_s: float = 2.0
    #: Sampling: one probe every ``sample_s`` on average, jittered by ±50 % (a fixed period
    #: aliases with a service that runs on a fixed schedule).
    sample_s: float = 0.05
    #: A round trip carries at most this much worth of rows at the current pace.
    burst_s: float = 0.05
    #: A claim takes at most this much worth of rows at the current pace.
    claim_horizon_s: float = 5.0


@dataclass(frozen=True)
class Sample:
    """One look at the database: when it was taken (monotonic seconds), the probe's round trip,
    and how many sessions of other logins were at work."""

    at: float
    latency_s: float
    others: int


@dataclass(frozen=True)
class Change:
    """A decision that changed the pace (``rate`` None = unlimited)."""

    at: float
    rate: float | None
    reason: str | None
    slowdown: bool
    spread: float | None = None
    presence: float | None = None


def _quantile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank quantile of an ascending list."""
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


class PaceController:
    """The pacing law: fed ``Sample``s, asked how long to wait. Pure: the caller passes the time.

    ``adaptive=False`` is a fixed rate (``Tuning.ceiling``; 0 = no limit), the behaviour of
    ``RFR_MAX_APPLY_RATE`` with ``RFR_PACING=off``.
    """

    def __init__(self, tuning: Tuning, now: float, adaptive: bool = True) -> None:
        self.tuning = tuning
        self.adaptive = adaptive
        ceiling = tuning.ceiling if tuning.ceiling > 0 else None
        self._ceiling = ceiling
        self._floor = min(tuning.floor, ceiling) if ceiling else tuning.floor
        self.rate: float | None
        self.reason: str | None
        if adaptive:
            self.rate = self._capped(tuning.start_rate)
            self.reason = REASON_RAMP if self.rate != ceiling else REASON_MAX_RATE
        else:
            self.rate = ceiling
            self.reason = REASON_MAX_RATE if ceiling else None
        self.slowdowns = 0
        self.changes: list[Change] = []
        #: Seconds the drain was made to wait, by reason.
        self.held_s: dict[str, float] = {}
        self.last_presence = 0.0
        self.last_spread: float | None = None
        self._samples: deque[Sample] = deque()
        self._started = now
        self._next_tick = now + tuning.tick_s
        self._cut_at = now  # the last decrease: the spread looks only at probes after it
        self._present = False
        self._best_p50: float | None = None
        self._last_sample_at = now
        #: The law runs once samples come (a cycle samples only once it has a backlog).
        self.sampling = False
        self._due = now  # when the rows applied so far are due at the pace
        self._hush: float | None = None  # when the running test's quiet half began
        self._last_hush_at = -math.inf
        #: Tests that found the contention ours (a cut followed), and not ours.
        self.tests_ours = 0
        self.tests_not_ours = 0

    # ---- inputs ------------------------------------------------------------------------------

    def start_sampling(self, now: float) -> None:
        """Samples come from now on: the law starts (and the probe's silence counts from now).
        Until then the pace stays where it started."""
        if not self.sampling:
            self.sampling = True
            self._last_sample_at = self._cut_at = self._started = now
            self._next_tick = now + self.tuning.tick_s

    def observe(self, sample: Sample) -> None:
        """One sample of the signal source; the law runs for every tick it completes."""
        self.start_sampling(sample.at)
        self.tick(sample.at)
        self._samples.append(sample)
        self._last_sample_at = max(self._last_sample_at, sample.at + sample.latency_s)
        horizon = sample.at - max(self.tuning.presence_window_s, self.tuning.window_s)
        while self._samples and self._samples[0].at < horizon:
            self._samples.popleft()

    def tick(self, now: float) -> list[Change]:
        """Runs the law for every tick due by ``now``; returns the changes it made."""
        made: list[Change] = []
        if not self.adaptive or not self.sampling:
            return made
        while now >= self._next_tick:
            change = self._step(self._next_tick)
            self._next_tick += self.tuning.tick_s
            if change is not None:
                made.append(change)
        return made

    # ---- outputs -----------------------------------------------------------------------------

    def applied(self, rows: int, now: float) -> float:
        """``rows`` were just applied: the seconds to wait before the next round trip."""
        self.tick(now)
        if self.rate is None or rows <= 0:
            self._due = now
            return 0.0
        # A pause (slow checks, a claim) earns at most one burst's worth of credit.
        self._due = max(self._due, now - self.tuning.burst_s) + rows / self.rate
        if self._hush is not None and now < self._hush + self.tuning.hush_s:
            self._due = max(self._due, self._hush + self.tuning.hush_s)
        wait = max(0.0, self._due - now)
        if wait > 0 and self.reason is not None:
            self.held_s[self.reason] = self.held_s.get(self.reason, 0.0) + wait
        return wait

    def burst(self, most: int) -> int:
        """Rows one pipelined round trip may carry (at most ``most``)."""
        if self.rate is None:
            return most
        return max(1, min(most, int(self.rate * self.tuning.burst_s)))

    def claim_size(self, batch_size: int) -> int:
        """Rows one claim may take: at most ``claim_horizon_s`` worth at the current pace."""
        if self.rate is None:
            return batch_size
        return max(1, min(batch_size, math.ceil(self.rate * self.tuning.claim_horizon_s)))

    def sample_interval(self, rng: Callable[[], float] = random.random) -> float:
        """Seconds until the next sample: ``sample_s`` jittered by ±50 % (during a hush,
        ``hush_sampling`` times as often)."""
        period = self.tuning.sample_s
        if self._hush is not None:
            period /= self.tuning.hush_sampling
        return period * (0.5 + rng())

    @property
    def testing(self) -> bool:
        """True while a test (hold still, then drain) tells whether the contention is ours."""
        return self._hush is not None

    @property
    def limited(self) -> bool:
        """True once pacing made the drain wait."""
        return sum(self.held_s.values()) > 0

    @property
    def main_reason(self) -> str | None:
        """The reason that held the drain back the longest."""
        if not self.held_s:
            return None
        return max(self.held_s.items(), key=lambda kv: kv[1])[0]

    # ---- the law -----------------------------------------------------------------------------

    def _capped(self, rate: float) -> float | None:
        """``rate`` within floor and ceiling; None (unlimited) past ``open_above``."""
        if self._ceiling is not None:
            return max(self._floor, min(rate, self._ceiling))
        if rate >= self.tuning.open_above:
            return None
        return max(self._floor, rate)

    def _presence(self, now: float) -> float:
        since = now - self.tuning.presence_window_s
        window = [s for s in self._samples if since <= s.at <= now]
        if not window:
            return 0.0
        seen = sum(1 for s in window if s.others > 0)
        return seen / len(window) if seen else 0.0

    def _window(self, now: float, since: float | None = None) -> tuple[float, float] | None:
        """p50 and p90 of the probe round trips since ``since`` (default: the last window);
        None with too few."""
        since = now - self.tuning.window_s if since is None else since
        probes = sorted(s.latency_s for s in self._samples if since <= s.at <= now)
        if len(probes) < self.tuning.min_probes:
            return None
        return _quantile(probes, 0.5), _quantile(probes, 0.9)

    def _spread(self, now: float) -> float | None:
        """The last window's p90 ÷ the quietest window median of the drain so far; None within
        a window of the last cut (its probes must all come after it), or with too few probes.

        Against the quietest median, not the window's own: a database so busy that most probes
        wait moves its median too, and p90 ÷ p50 alone would call that calm."""
        window = self._window(now)
        if window is None:
            return None
        p50, p90 = window
        self._best_p50 = p50 if self._best_p50 is None else min(self._best_p50, p50)
        if now - self._cut_at < self.tuning.window_s or self._best_p50 <= 0:
            return None
        return p90 / self._best_p50

    def _set(self, now: float, rate: float | None, reason: str | None,
             spread: float | None = None, presence: float | None = None) -> Change | None:
        """Moves to ``rate`` for ``reason``; a lower rate is a slowdown (and a cut: the next
        spread looks only at probes taken after it)."""
        if rate is not None and self._ceiling is not None and rate >= self._ceiling:
            reason = REASON_MAX_RATE  # at the ceiling, the ceiling is what holds it back
        slowdown = rate is not None and (self.rate is None or rate < self.rate)
        if slowdown:
            self.slowdowns += 1
        if rate == self.rate and reason == self.reason:
            return None
        self.rate, self.reason = rate, reason
        change = Change(now, rate, reason, slowdown, spread, presence)
        self.changes.append(change)
        return change

    def _step(self, now: float) -> Change | None:
        t = self.tuning
        presence = self._presence(now)
        self.last_presence = presence
        if now - self._last_sample_at > t.stale_s:
            # No probe answered for a while: slower, once per window, as for contention.
            self._hush = None
            if now - self._cut_at < t.window_s:
                return None
            self._cut_at = now
            current = t.shared_rate if self.rate is None else min(self.rate, t.shared_rate)
            return self._set(now, self._capped(current * t.decrease), REASON_NO_SIGNAL)
        spread = self._spread(now)
        self.last_spread = spread
        # Hysteresis: present from presence_share on; absent again only once no sample of the
        # presence window saw anybody (a light service is not lost between two samples).
        present = presence >= t.presence_share if not self._present else presence > 0
        if present and not self._present:
            # Somebody else arrived (or was there from the start): the shared pace at once.
            self._present = True
            self._cut_at = now
            current = math.inf if self.rate is None else self.rate
            return self._set(now, self._capped(min(current, t.shared_rate, t.shared_max)),
                             REASON_OTHERS, presence=presence)
        if not present:
            # Nobody else here: double up to unlimited (or the ceiling).
            self._present = False
            self._hush = None
            if self.rate is None:
                return self._set(now, None, None, presence=presence)
            opened = self._capped(self.rate * 2)
            reason = None if opened is None else REASON_RAMP
            return self._set(now, opened, reason, presence=presence)
        if self._hush is not None:
            return self._end_hush(now, presence)
        if spread is None or self.rate is None:
            return None
        if spread > t.spread_limit:
            if now - self._last_hush_at >= t.hush_every_s and self.rate > self._floor:
                # Ours or not? Hold still and look (the cut, if any, comes when it ends).
                self._hush = now
                self._last_hush_at = now
            return None  # no cut without a hush that says so; no rise either
        raised = self._capped(min(self.rate + t.increase, max(t.shared_max, self._floor)))
        reason = self.reason if self.reason in (REASON_OTHERS, REASON_CONTENTION) else (
            REASON_OTHERS)
        return self._set(now, raised, None if raised is None else reason, spread, presence)

    def _end_hush(self, now: float, presence: float) -> Change | None:
        """Judges a test once both halves are over: the tail with us against the tail without
        us, each its p90 ÷ the quietest median."""
        assert self._hush is not None
        t = self.tuning
        start = self._hush
        resumed = start + t.hush_s
        if now < resumed + t.hush_s:
            return None
        self._hush = None
        self._cut_at = now
        alone = self._window(resumed, since=start + t.hush_settle_s)
        along = self._window(now, since=resumed + t.hush_settle_s)
        if alone is None or along is None or not self._best_p50 or self.rate is None:
            return None
        without, with_us = alone[1] / self._best_p50, along[1] / self._best_p50
        if with_us <= t.spread_limit or with_us < t.ours_factor * without:
            # Calm with us, or as stretched without us: their own load, not a cut.
            self.tests_not_ours += 1
            return None
        self.tests_ours += 1
        return self._set(now, self._capped(self.rate * t.decrease), REASON_CONTENTION,
                         with_us, presence)


# ---- the signal source -------------------------------------------------------------------------


class SampleQuery(Protocol):
    """What the probe runs: one statement, returning the sessions of other logins at work."""

    def __call__(self) -> int: ...


class ContentionProbe:
    """The signal source: one statement (``queries.contention_sample``), timed on our clock."""

    def __init__(self, query: SampleQuery, clock: Callable[[], float] = time.monotonic) -> None:
        self._query = query
        self._clock = clock

    def sample(self) -> Sample:
        start = self._clock()
        others = self._query()
        return Sample(start, self._clock() - start, others)


@contextmanager
def database_probe(pool: ConnectionPool[psycopg.Connection[Any]]) -> Iterator[ContentionProbe]:
    """The signal source on a connection of the work pool, held while the sampler runs."""
    with pool.connection() as conn:
        yield ContentionProbe(lambda: queries.contention_sample(conn))


# ---- what a cycle holds ------------------------------------------------------------------------


class PaceMetrics(Protocol):
    """The two metrics pacing moves (``metrics.Metrics`` has them)."""

    @property
    def pace_rows_per_second(self) -> Any: ...

    @property
    def pace_slowdowns_total(self) -> Any: ...


@dataclass
class Pacer:
    """The controller of one cycle's drain, shared by the applying thread and the sampler.

    ``applied()`` after each pipelined round trip (it waits), ``burst()`` and ``claim_size()``
    for the sizes, ``observe()`` from the sampler; ``summary()`` for the cycle summary.
    """

    controller: PaceController
    stop: threading.Event
    metrics: PaceMetrics | None = None
    log: LogFn | None = None
    job_run_id: str = ""
    clock: Callable[[], float] = time.monotonic
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _sampler: PaceSampler | None = field(default=None, repr=False)
    _source: Callable[[], AbstractContextManager[ContentionProbe]] | None = field(
        default=None, repr=False)
    _published_slowdowns: int = field(default=0, repr=False)

    @classmethod
    def create(cls, mode: str, ceiling: float, floor: float, stop: threading.Event,
               metrics: PaceMetrics | None = None, log: LogFn | None = None,
               job_run_id: str = "", clock: Callable[[], float] = time.monotonic,
               shared_max: float = Tuning.shared_max) -> Pacer:
        tuning = Tuning(floor=floor, ceiling=ceiling, shared_max=shared_max,
                        shared_rate=min(Tuning.shared_rate, shared_max))
        pacer = cls(PaceController(tuning, clock(), adaptive=mode == "adaptive"), stop,
                    metrics, log, job_run_id, clock)
        pacer._publish([])
        return pacer

    @classmethod
    def for_drain(cls, settings: Settings, pool: ConnectionPool[psycopg.Connection[Any]],
                  metrics: PaceMetrics | None, stop: threading.Event,
                  job_run_id: str = "") -> Pacer:
        """What a cycle builds when its first claim brings rows: the pacer of its settings.
        Its sampler (adaptive mode) starts with the first full claim (``claimed``), on a
        connection of the work pool: a cycle that finds a few rows due opens no connection
        and starts no thread for them."""
        pacer = cls.create(settings.pacing, settings.max_apply_rate, settings.pacing_min_rate,
                           stop, metrics, log, job_run_id,
                           shared_max=settings.pacing_shared_rate)
        pacer._source = lambda: database_probe(pool)
        return pacer

    def claimed(self, rows: int, limit: int) -> None:
        """A claim brought ``rows`` of at most ``limit``: a full one means a backlog, and the
        sampling (adaptive mode) starts."""
        if rows >= limit and self._source is not None:
            source, self._source = self._source, None
            self.start_sampling(source)

    @property
    def adaptive(self) -> bool:
        return self.controller.adaptive

    def observe(self, sample: Sample) -> None:
        with self._lock:
            before = len(self.controller.changes)
            self.controller.observe(sample)
            made = self.controller.changes[before:]
        self._publish(made)

    def applied(self, rows: int, lock_deadline: float) -> None:
        """Waits until ``rows`` more are due at the pace; never past ``lock_deadline``, and not
        at all once the stop event is set."""
        now = self.clock()
        with self._lock:
            before = len(self.controller.changes)
            wait = self.controller.applied(rows, now)
            made = self.controller.changes[before:]
        self._publish(made)
        wait = min(wait, lock_deadline - now)
        if wait > 0:
            self.stop.wait(wait)

    def burst(self, most: int) -> int:
        with self._lock:
            return self.controller.burst(most)

    def claim_size(self, batch_size: int) -> int:
        with self._lock:
            return self.controller.claim_size(batch_size)

    def start_sampling(self, source: Callable[[], AbstractContextManager[ContentionProbe]]
                       ) -> None:
        """Starts the sampler thread (adaptive mode only); ``source`` opens the signal source
        for the sampler's lifetime (``database_probe``)."""
        if self.adaptive and self._sampler is None:
            with self._lock:
                self.controller.start_sampling(self.clock())
            self._sampler = PaceSampler(self, source)
            self._sampler.start()

    def close(self) -> None:
        """Stops the sampler (if any)."""
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            sampler.finish()

    def summary(self) -> dict[str, Any]:
        """The cycle summary's ``pacing``: the mode, whether pacing held the drain back and
        mostly why, the pace at the end (0 = unlimited), slowdowns and the time held."""
        with self._lock:
            c = self.controller
            return {
                "mode": "adaptive" if c.adaptive else "off",
                "limited": c.limited,
                "reason": c.main_reason,
                "rowsPerSecond": round(c.rate, 1) if c.rate is not None else 0,
                "slowdowns": c.slowdowns,
                "heldMs": round(sum(c.held_s.values()) * 1000),
            }

    def _publish(self, made: list[Change]) -> None:
        c = self.controller
        if self.metrics is not None:
            self.metrics.pace_rows_per_second.set(c.rate or 0)
            new = c.slowdowns - self._published_slowdowns
            if new > 0:
                self.metrics.pace_slowdowns_total.inc(new)
                self._published_slowdowns = c.slowdowns
        if self.log is None:
            return
        for change in made:
            if change.slowdown or change.rate is None or change.reason == REASON_MAX_RATE:
                self.log("pace slowed" if change.slowdown else "pace opened",
                         level="info", jobRunId=self.job_run_id,
                         rowsPerSecond=round(change.rate, 1) if change.rate else 0,
                         reason=change.reason,
                         **({"spread": round(change.spread, 2)} if change.spread else {}),
                         **({"presence": round(change.presence, 3)}
                            if change.presence is not None else {}))


class PaceSampler(threading.Thread):
    """Feeds a ``Pacer`` with samples of its signal source until ``finish()``.

    A failing probe is logged once and ends the sampling: the controller, left without
    samples, paces as for contention (``no_signal``) rather than drain blind.
    """

    def __init__(self, pacer: Pacer,
                 source: Callable[[], AbstractContextManager[ContentionProbe]]) -> None:
        super().__init__(name="pace-sampler", daemon=True)
        self._pacer = pacer
        self._source = source
        self._done = threading.Event()

    def finish(self) -> None:
        self._done.set()
        self.join(timeout=5)

    def run(self) -> None:
        try:
            with self._source() as probe:
                while not self._done.is_set() and not self._pacer.stop.is_set():
                    self._pacer.observe(probe.sample())
                    self._done.wait(self._pacer.controller.sample_interval())
        except Exception as err:  # noqa: BLE001 - the drain goes on, paced as for contention
            if self._pacer.log is not None:
                self._pacer.log("pace probe failed", level="warning",
                                jobRunId=self._pacer.job_run_id, error=type(err).__name__,
                                detail=str(err), message="the drain is paced as for contention "
                                "until the cycle ends")
