"""Maintenance beside the cycle: the pause switch it reads once per cycle, the gauges it keeps
fresh while no cycle runs, and ``run``'s hourly ``Pruner`` (the ``prune`` command runs the same
``prune_batches``). Kept apart from the cycle, as River keeps its maintenance services apart
from its client: each piece small, with a ``run_once`` a test can call.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

import psycopg

from . import logs, queries
from .config import Settings
from .db import PoolLike, connect
from .errors import describe
from .logs import LogFn

if TYPE_CHECKING:
    from .metrics import Metrics

#: One prune statement deletes at most this many rows per table.
PRUNE_BATCH_ROWS = 1000
#: ``run`` prunes this often when RFR_RETENTION > 0 ...
PRUNE_INTERVAL_S = 3600.0
#: ... pausing this long between its batches (at most ~1,000 rows per table per pause).
RUN_PRUNE_PAUSE_S = 0.1


class CycleMaintenance(Protocol):
    """What the cycle asks of maintenance."""

    def read_pauses(self, job_run_id: str) -> frozenset[str]: ...

    def refresh_gauges(self) -> None: ...


class Maintenance:
    """The cycle's maintenance over the worker's pool (``CycleMaintenance``)."""

    def __init__(self, settings: Settings, pool: PoolLike, metrics: Metrics,
                 log: LogFn = logs.log) -> None:
        self._settings = settings
        self._pool = pool
        self._metrics = metrics
        self._log = log

    def _publish(self, state: queries.OperatorState) -> None:
        self._metrics.update_operator_state(
            {"reconcile": state.reconcile_paused, "relay": state.relay_paused},
            state.quarantined_by_reason,
        )

    def read_pauses(self, job_run_id: str) -> frozenset[str]:
        """The one extra call of a cycle: reads the pause switch (and the quarantined rows by
        reason for /metrics), logs a paused part; returns the paused parts."""
        with self._pool.connection() as conn:
            state = queries.operator_state(conn)
        self._publish(state)
        paused = frozenset(state.paused_parts())
        if paused:
            self._log("cycle paused", jobRunId=job_run_id, paused=sorted(paused),
                      pauses=state.pauses,
                      message="skipped by the pause switch: recording-finalize resume PART")
        return paused

    def refresh_gauges(self) -> None:
        """Keeps /metrics as fresh as ``status`` while the cycle does not run (disabled, lock
        busy): the gauges from stats(), the pause and quarantine gauges from operator_state()."""
        try:
            with self._pool.connection() as conn:
                self._metrics.update_from_stats(queries.stats(conn, self._settings.topic))
                self._publish(queries.operator_state(conn))
        except psycopg.Error as err:
            self._log("gauges not refreshed", level="warning", error=describe(err))


def prune_batches(conn: queries.Connection, older_than_s: float,
                  batch_size: int = PRUNE_BATCH_ROWS, stop: threading.Event | None = None,
                  pause_s: float = 0.0) -> tuple[Counter[str], int]:
    """Prunes the product's own rows until a batch deletes fewer than ``batch_size`` of every
    kind; each call is its own transaction (autocommit), ``pause_s`` apart (``run`` paces itself
    so that a first prune of a long history leaves the cycle its CPU). Returns the totals and
    the calls. The service's tables are never pruned: their retention is the service's."""
    totals: Counter[str] = Counter()
    calls = 0
    while stop is None or not stop.is_set():
        counts = queries.prune(conn, older_than_s, batch_size, False)
        calls += 1
        totals.update(finalize=counts.finalize, events=counts.events, leases=counts.leases,
                      incidents=counts.incidents)
        if max(counts.finalize, counts.events, counts.leases, counts.incidents) < batch_size:
            break
        if pause_s and stop is not None and stop.wait(pause_s):
            break
    return totals, calls


class Pruner:
    """``run``'s retention (RFR_RETENTION): a daemon thread that prunes at start and then every
    ``interval_s``, on its own connection, logging what it did."""

    def __init__(self, settings: Settings, log: LogFn = logs.log,
                 interval_s: float = PRUNE_INTERVAL_S, pause_s: float = RUN_PRUNE_PAUSE_S
                 ) -> None:
        self._settings = settings
        self._log = log
        self._interval_s = interval_s
        self._pause_s = pause_s

    def run_once(self, stop: threading.Event) -> None:
        """One pass: prunes everything older than RFR_RETENTION; a database error is logged."""
        settings = self._settings
        try:
            with connect(settings) as conn:
                totals, calls = prune_batches(conn, settings.retention, stop=stop,
                                              pause_s=self._pause_s)
            counts: dict[str, Any] = dict(totals)
            self._log("pruned", olderThanSeconds=settings.retention, statements=calls, **counts)
        except psycopg.Error as err:
            self._log("prune failed", level="warning", error=describe(err),
                      message="retried in an hour")

    def start(self, stop: threading.Event) -> threading.Thread | None:
        """Starts the thread (None, and a log line, when retention is off)."""
        if self._settings.retention <= 0:
            self._log("retention off", message="RFR_RETENTION=0: run prunes nothing")
            return None

        def loop() -> None:
            wait = 0.0
            while not stop.wait(wait):
                wait = self._interval_s
                self.run_once(stop)

        thread = threading.Thread(target=loop, name="rfr-pruner", daemon=True)
        thread.start()
        return thread
