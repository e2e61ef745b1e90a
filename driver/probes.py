"""``/livez`` and ``/readyz`` (served beside ``/metrics``). Live while the loop moves: start-up
attempts and cycle starts are heartbeats, a cycle past its bound is wedged. Ready while every
dependency holds, each checked on its own thread so that a probe never waits; an unreachable one
only counts past its grace. docs/driver-design.md has the phases and the rules."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .logs import LogFn, redact

READINESS_PERIOD_S = 5.0
#: A running cycle is wedged once it is past the lock TTL by this much (at most half the TTL):
#: by then it has stopped writing (its client-side deadline is the TTL less a second).
CYCLE_GRACE_S = 5.0


def _ago(seconds: float) -> str:
    return f"{seconds:.1f} s"


def cycle_bound(lock_ttl_s: float) -> float:
    """The longest a healthy cycle runs: the lock TTL and a grace for the gauges and unlock."""
    return lock_ttl_s + min(CYCLE_GRACE_S, lock_ttl_s / 2)


@dataclass(frozen=True)
class Answer:
    """One check's answer. ``transient``: the dependency cannot be reached (``Probe.grace_s``)."""

    ok: bool
    reason: str
    transient: bool = False


Check = Callable[[], Answer]


@dataclass
class Probe:
    """One dependency's check and its last answer. ``grace_s``: how long the dependency may be
    unreachable (once reached) before the pod is unready; ``timeout_s``: how long one check may
    take (hanging three periods beyond that). No ``check``: answers are reported from outside."""

    check: Check | None = None
    grace_s: float = 0.0
    timeout_s: float = 0.0
    answer: Answer | None = None
    checked_at: float = 0.0
    reached: bool = False
    failing_since: float | None = None

    def verdict(self, now: float, period_s: float) -> tuple[bool, str]:
        answer = self.answer
        if answer is None:
            return False, "not checked yet"
        if now - self.checked_at > 3 * period_s + self.timeout_s:
            return False, (f"the check has not answered for {now - self.checked_at:.0f} s (is "
                           f"it hanging?); its last answer: {answer.reason}")
        if answer.ok or not answer.transient:
            return answer.ok, answer.reason
        if not self.reached or self.failing_since is None:
            return False, f"never reached since start: {answer.reason}"
        down = now - self.failing_since
        within = down <= self.grace_s
        return within, (f"unreachable for {_ago(down)}, {'within' if within else 'past'} its "
                        f"bound of {self.grace_s:g} s: {answer.reason}")


class Health:
    """The state both probes answer from, thread-safe. ``stale_after_s``: the longest gap between
    two cycle starts (or start-up attempts); ``cycle_bound_s``: the longest a cycle may run."""

    def __init__(self, stale_after_s: float, clock: Callable[[], float] = time.monotonic,
                 cycle_bound_s: float | None = None) -> None:
        self.stale_after_s = stale_after_s
        self.cycle_bound_s = cycle_bound_s
        self._period_s = READINESS_PERIOD_S
        self._clock = clock
        self._lock = threading.Lock()
        self._born = self._last_beat = clock()
        self._thread: threading.Thread | None = None
        self._probes: dict[str, Probe] = {}
        self._stop_checks = threading.Event()
        self._checkers: list[threading.Thread] = []
        self._phase = "starting"  # until the start-up checks passed, then "running"
        self._startup = "running the start-up checks"
        self._attempts = self._cycles = 0
        self._cycle_started: float | None = None
        self._last_cycle_s: float | None = None

    def watch(self, thread: threading.Thread) -> None:
        with self._lock:
            self._thread = thread

    def startup_attempt(self) -> None:
        with self._lock:
            self._attempts += 1
            self._last_beat = self._clock()
            self._startup = "running the start-up checks"

    def startup_waiting(self, why: str) -> None:
        with self._lock:
            self._startup = f"waiting: {why}"

    def started(self) -> None:
        with self._lock:
            self._phase = "running"
            self._last_beat = self._clock()

    def cycle_started(self) -> None:
        with self._lock:
            self._phase = "running"
            self._cycle_started = self._last_beat = self._clock()

    def cycle_ended(self) -> None:
        with self._lock:
            if self._cycle_started is not None:
                self._last_cycle_s = self._clock() - self._cycle_started
            self._cycle_started = None
            self._cycles += 1

    def cycle_running_for(self) -> float | None:
        with self._lock:
            started = self._cycle_started
        return None if started is None else self._clock() - started

    def live(self) -> tuple[bool, str]:
        with self._lock:
            now = self._clock()
            if self._thread is not None and not self._thread.is_alive():
                return False, "the cycle loop has stopped"
            idle = now - self._last_beat
            limit = f"limit {self.stale_after_s:g} s = 2 x RFR_POLLING_INTERVAL + RFR_LOCK_TTL"
            if self._phase == "starting":
                up, attempt = _ago(now - self._born), self._attempts
                if idle > self.stale_after_s:
                    return False, (f"starting up for {up}: start-up attempt {attempt} has not "
                                   f"ended for {_ago(idle)} ({limit}): hung")
                return True, (f"ok: starting up for {up}, no cycle yet (start-up attempt "
                              f"{attempt}: {self._startup})")
            if self._cycle_started is not None:
                running = now - self._cycle_started
                if self.cycle_bound_s is not None and running > self.cycle_bound_s:
                    return False, (f"a cycle has been running for {_ago(running)}, past its "
                                   f"bound of {self.cycle_bound_s:g} s (RFR_LOCK_TTL and a "
                                   "grace): the cycle is wedged")
                return True, (f"ok: a cycle is running for {_ago(running)} ({self._cycles} "
                              "done before)")
            if idle > self.stale_after_s:
                return False, f"no cycle started for {_ago(idle)} ({limit}): the loop is wedged"
            if self._cycles == 0:
                return True, f"ok: start-up checks passed {_ago(idle)} ago, first cycle next"
            took = "" if self._last_cycle_s is None else f", took {_ago(self._last_cycle_s)}"
            return True, f"ok: last cycle started {_ago(idle)} ago{took} ({self._cycles} cycles)"

    def report(self, name: str, answer: Answer) -> None:
        with self._lock:
            probe = self._probes.setdefault(name, Probe())
            probe.answer, probe.checked_at = answer, self._clock()
            probe.reached |= answer.ok
            if answer.ok:
                probe.failing_since = None
            elif probe.failing_since is None:
                probe.failing_since = probe.checked_at

    def start_checks(self, probes: Mapping[str, Probe],
                     period_s: float = READINESS_PERIOD_S) -> None:
        """Runs each probe's check every ``period_s`` on a daemon thread of its own (a hanging
        check holds no other back) until ``stop_checks``."""
        with self._lock:
            self._probes |= probes
            self._period_s = period_s
        self._checkers = [threading.Thread(target=self._check, args=(name, probe.check),
                                           name=f"readiness-{name}", daemon=True)
                          for name, probe in probes.items() if probe.check is not None]
        for thread in self._checkers:
            thread.start()

    def stop_checks(self) -> None:
        self._stop_checks.set()
        for thread in self._checkers:
            thread.join(timeout=5)

    def _check(self, name: str, check: Check) -> None:
        while not self._stop_checks.is_set():
            self.report(name, check())
            self._stop_checks.wait(self._period_s)

    def _states(self) -> list[tuple[str, bool, str, float | None]]:
        """(name, holds, reason, seconds since its last answer)."""
        with self._lock:
            now = self._clock()
            states = [(name, *probe.verdict(now, self._period_s),
                       None if probe.answer is None else now - probe.checked_at)
                      for name, probe in self._probes.items()]
            starting = self._phase == "starting"
        if starting:
            states.append(("start-up", False, "the start-up checks have not passed yet", None))
        return states

    def ready(self) -> tuple[bool, str]:
        states = self._states()
        failing = [(n, r) for n, holds, r, _ in states if not holds]
        if not failing:
            return True, "ok: " + "; ".join(f"{n}: {r}" for n, _, r, _ in states)
        # The names once, on the reasons' lines: a probe's body is often read as one line
        # (kubectl's events), where a list of names first read "not ready: storage storage: …".
        lines = [f"not ready ({len(failing)} of {len(states)} checks):"]
        lines += [f"{n}: {r}" for n, r in failing]
        return False, redact("\n".join(lines))

    def readiness(self) -> dict[str, Any]:
        """``/readyz?format=json``."""
        states = self._states()
        return {
            "ready": all(holds for _, holds, _, _ in states),
            "reasons": [f"{n}: {redact(r)}" for n, holds, r, _ in states if not holds],
            "checks": {n: {"ok": holds, "reason": redact(r),
                           "answeredSecondsAgo": None if age is None else round(age, 1)}
                       for n, holds, r, age in states},
        }


class Watchdog:
    """Logs a cycle past ``warn_after_s`` (RFR_MAX_RUN_DURATION: claiming has stopped), past the
    cycle bound (wedged: ``/livez`` fails meanwhile), and a wedged one's end."""

    def __init__(self, health: Health, warn_after_s: float, log: LogFn) -> None:
        self._health = health
        self._warn_after_s = warn_after_s
        self._log = log
        bound = health.cycle_bound_s or warn_after_s
        self._period_s = max(0.1, min(1.0, warn_after_s / 4, bound / 4))
        self._stop = threading.Event()
        self._warned = self._wedged = False
        self._running_for = 0.0

    @contextmanager
    def running(self) -> Iterator[None]:
        thread = threading.Thread(target=self._run, name="watchdog", daemon=True)
        thread.start()
        try:
            yield
        finally:
            self._stop.set()
            thread.join(timeout=5)

    def look(self) -> None:
        running = self._health.cycle_running_for()
        bound = self._health.cycle_bound_s
        if running is None:
            if self._wedged:
                self._log("cycle overrun ended", level="warning",
                          runningSeconds=round(self._running_for, 1),
                          message="the wedged cycle ended; /livez follows the cycles again")
            self._warned = self._wedged = False
            return
        self._running_for = running
        if not self._warned and running > self._warn_after_s:
            self._warned = True
            self._log("cycle running long", level="warning", runningSeconds=round(running, 1),
                      maxRunDurationSeconds=self._warn_after_s, boundSeconds=bound,
                      message="the cycle is still running past RFR_MAX_RUN_DURATION (claiming "
                      "has stopped); past its bound /livez fails")
        if not self._wedged and bound is not None and running > bound:
            self._wedged = True
            self._log("cycle wedged", level="error", runningSeconds=round(running, 1),
                      boundSeconds=bound,
                      message="the cycle has run past RFR_LOCK_TTL and its grace: /livez "
                      "answers 503 until it ends")

    def _run(self) -> None:
        while not self._stop.wait(self._period_s):
            self.look()
