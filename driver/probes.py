"""``/livez`` and ``/readyz``: what an orchestrator asks a sidecar (served beside ``/metrics``).

- **Live** while the cycle loop runs and starts its cycles on schedule: 503 once no cycle (or,
  before the first one, no start-up attempt) has started for longer than
  ``2 x RFR_POLLING_INTERVAL + RFR_LOCK_TTL`` (a cycle never runs past the lock TTL), or when
  the loop's thread has ended. A paused or disabled worker still starts (idle) cycles: live.
- **Ready** when the database answers and its schema matches the package: a background thread
  checks it every ``READINESS_PERIOD_S`` (so a probe never waits for the database), and a
  check that has not answered for three periods is itself a reason to be unready.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from .drift import Shipped, schema_drift
from .errors import describe

READINESS_PERIOD_S = 5.0


class Health:
    """The state both probes answer from; every method is thread-safe."""

    def __init__(self, stale_after_s: float, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self.stale_after_s = stale_after_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last_beat = clock()
        self._thread: threading.Thread | None = None
        self._ready = False
        self._reason = "starting: the database has not been checked yet"
        self._checked_at: float | None = None
        self.check_period_s = READINESS_PERIOD_S

    def watch(self, thread: threading.Thread) -> None:
        """The thread that runs the cycle loop: live only while it is alive."""
        with self._lock:
            self._thread = thread

    def beat(self) -> None:
        """A cycle (or a start-up attempt) starts now."""
        with self._lock:
            self._last_beat = self._clock()

    def set_ready(self, ready: bool, reason: str) -> None:
        with self._lock:
            self._ready, self._reason, self._checked_at = ready, reason, self._clock()

    def live(self) -> tuple[bool, str]:
        with self._lock:
            thread, last = self._thread, self._last_beat
        if thread is not None and not thread.is_alive():
            return False, "the cycle loop has stopped"
        idle = self._clock() - last
        if idle > self.stale_after_s:
            return False, (f"no cycle started for {idle:.1f} s (limit {self.stale_after_s:g} s "
                           "= 2 x RFR_POLLING_INTERVAL + RFR_LOCK_TTL): the loop is wedged")
        return True, f"ok: last cycle started {idle:.1f} s ago"

    def ready(self) -> tuple[bool, str]:
        with self._lock:
            ready, reason, checked = self._ready, self._reason, self._checked_at
        if checked is not None and self._clock() - checked > 3 * self.check_period_s:
            return False, (f"the readiness check has not answered for "
                           f"{self._clock() - checked:.0f} s (is the database hanging?)")
        return ready, reason


class ReadinessChecker:
    """Checks the database and its schema every period, from a daemon thread, into ``health``.

    ``connect`` opens a connection as the worker (kept open between checks, reopened after a
    failure); ``package`` is what the schema must match.
    """

    def __init__(self, health: Health, connect: Callable[[], psycopg.Connection[Any]],
                 package: Shipped, period_s: float = READINESS_PERIOD_S) -> None:
        self.health = health
        self.health.check_period_s = period_s
        self._connect = connect
        self._package = package
        self._period_s = period_s
        self._stop = threading.Event()
        self._conn: psycopg.Connection[Any] | None = None
        self._thread = threading.Thread(target=self._run, name="readiness", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if self._conn is not None:
            self._conn.close()

    def check_once(self) -> None:
        try:
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
            drift = schema_drift(self._conn, self._package)
        except psycopg.Error as err:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self.health.set_ready(False, f"the database cannot be reached or refused the "
                                         f"check ({describe(err)})")
            return
        if drift.matches:
            self.health.set_ready(True, f"ok: {drift.message()}")
        else:
            self.health.set_ready(False, f"schema mismatch: {drift.message(limit=2)}")

    def _run(self) -> None:
        while not self._stop.is_set():
            self.check_once()
            self._stop.wait(self._period_s)
