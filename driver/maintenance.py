"""Maintenance beside the cycle, as River keeps its maintenance services apart from its client:
``run``'s hourly pruner (``prune_batches``, which the ``prune`` command runs too)."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import asdict
from typing import Any

import psycopg

from . import queries
from .config import Settings
from .db import connect
from .errors import describe
from .logs import log

#: One prune statement deletes at most this many rows per table.
PRUNE_BATCH_ROWS = 1000
#: ``run`` prunes this often when RFR_RETENTION > 0 ...
PRUNE_INTERVAL_S = 3600.0
#: ... pausing this long between its batches (at most ~1,000 rows per table per pause).
RUN_PRUNE_PAUSE_S = 0.1


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
        counts = asdict(queries.prune(conn, older_than_s, batch_size, False))
        calls += 1
        totals.update(counts)
        if max(counts.values()) < batch_size:
            break
        if pause_s and stop is not None and stop.wait(pause_s):
            break
    return totals, calls


def start_pruner(settings: Settings, stop: threading.Event) -> None:
    """``run``'s retention (RFR_RETENTION): a daemon thread that prunes at start and then every
    PRUNE_INTERVAL_S, on its own connection."""
    if settings.retention <= 0:
        log("retention off", message="RFR_RETENTION=0: run prunes nothing")
        return

    def prune() -> None:
        wait = 0.0
        while not stop.wait(wait):
            wait = PRUNE_INTERVAL_S
            try:
                with connect(settings) as conn:
                    totals, calls = prune_batches(conn, settings.retention, stop=stop,
                                                  pause_s=RUN_PRUNE_PAUSE_S)
                counts: dict[str, Any] = dict(totals)
                log("pruned", olderThanSeconds=settings.retention, statements=calls, **counts)
            except psycopg.Error as err:
                log("prune failed", level="warning", error=describe(err),
                    message="retried in an hour")

    threading.Thread(target=prune, name="rfr-pruner", daemon=True).start()
