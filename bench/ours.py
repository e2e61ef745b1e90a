"""Our contender: the driver's own ``run_cycle`` (what ``recording-finalize run-once`` runs), in a
process of its own, as the least-privilege worker role, with timers around its calls.

``python -m bench.ours relay`` only drains the outbox (the relay-throughput figure).

Protocol with the orchestrator: the process imports and builds everything the CLI builds
(settings from the environment, pool, storage client, relay), prints ``ready``, waits for a line
on stdin, runs one cycle (claim → check → apply until nothing is due, then the relay drain),
and prints one JSON object: the cycle summary, where the main thread's wall time went, the
calls it made, and its peak RSS. Its JSON log lines go to stderr like the real worker's.

The timers wrap module attributes the cycle looks up at call time (``queries.*``,
``pipeline.apply_outcomes``, ``Storage.check``, ``Relay.drain`` and the futures ``wait`` of
``recording_finalize.cycle``): nothing of the driver is changed, only observed.
"""

from __future__ import annotations

import gc
import json
import os
import queue
import sys
import threading
import time
import types
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any


class Timers:
    def __init__(self, traced: frozenset[str] = frozenset()) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self.first: dict[str, float] = {}  # time.monotonic() of each name's first call
        #: Every call of the ``traced`` names: [monotonic start, rows (first sized argument
        #: after the connection, else 0), seconds] (BENCH_TRACE=apply_outcomes,claim_due).
        self.traced = traced
        self.trace: defaultdict[str, list[list[float]]] = defaultdict(list)
        self._lock = threading.Lock()

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.monotonic()
            self.first.setdefault(name, start)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                with self._lock:
                    self.seconds[name] += dt
                    self.calls[name] += 1
                    if name in self.traced:
                        sized = args[1] if len(args) > 1 and hasattr(args[1], "__len__") else ()
                        self.trace[name].append([start, len(sized), round(dt, 6)])

        return timed


def _levers_off(names: str) -> None:
    """Switches driver levers off to measure what each buys (``BENCH_LEVERS_OFF=pipeline``):
    ``pipeline`` — one round trip per apply_outcome. Which client sends the per-row HEAD is
    ``BENCH_S3_HEAD`` (obstore, the driver's; signed or boto3, see bench/signed_head.py)."""
    import psycopg
    from psycopg.rows import class_row
    from recording_finalize import pipeline, queries

    off = {n.strip() for n in names.split(",") if n.strip()}
    unknown = off - {"pipeline"}
    if unknown:
        raise SystemExit(f"unknown lever(s): {', '.join(sorted(unknown))}")
    if "pipeline" in off:
        def one_by_one(conn: Any, items: Any, timeout_s: Any = None,
                       facts: Any = queries.NO_FACTS) -> Any:
            out: list[Any] = []
            for row, verdict in items:
                params = queries.apply_params(row, verdict, facts)
                try:
                    with psycopg.RawCursor(conn,
                                           row_factory=class_row(queries.AppliedResult)) as cur:
                        out.append(cur.execute(queries.APPLY_OUTCOME, params).fetchone())
                except psycopg.Error as err:
                    out.append(err)
            return out

        pipeline.apply_outcomes = one_by_one  # type: ignore[assignment]


def _pace_heads(kind: Any, rate: float) -> None:
    """BENCH_HEAD_RATE: at most ``rate`` storage checks start per second (an experiment: the
    checks spread out, and the applies follow them), whatever the driver's own pacing does."""
    if rate <= 0:
        return
    lock = threading.Lock()
    due = [time.monotonic()]
    check = kind.check

    def paced(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lock:
            now = time.monotonic()
            start = max(now, due[0])
            due[0] = start + 1.0 / rate
        if start > now:
            time.sleep(start - now)
        return check(self, *args, **kwargs)

    kind.check = paced


def _watch_pacers() -> list[Any]:
    """BENCH_TRACE=pace: keeps every Pacer a cycle builds, so its decisions can be printed."""
    from recording_finalize import pacing

    built: list[Any] = []
    for_drain = pacing.Pacer.for_drain.__func__  # type: ignore[attr-defined]

    def kept(cls: Any, *args: Any, **kwargs: Any) -> Any:
        pacer = for_drain(cls, *args, **kwargs)
        built.append(pacer)
        return pacer

    pacing.Pacer.for_drain = classmethod(kept)  # type: ignore[method-assign,assignment]
    observe = pacing.Pacer.observe

    def observed(self: Any, at: float, others: int) -> None:
        self.__dict__.setdefault("bench_samples", []).append([at, others])
        observe(self, at, others)

    pacing.Pacer.observe = observed  # type: ignore[method-assign]
    return built


def main() -> int:
    from recording_finalize import cycle, logs, pipeline, queries, relay, tracing
    from recording_finalize.config import load_settings
    from recording_finalize.cycle import Context, run_cycle
    from recording_finalize.db import open_pool
    from recording_finalize.metrics import Metrics
    from recording_finalize.relay import Relay, delivery_timeout_for

    from bench.signed_head import storage_for
    from bench.sysstat import peak_rss_kb

    _levers_off(os.environ.get("BENCH_LEVERS_OFF", ""))
    settings = load_settings(os.environ)
    logs.add_secrets(settings.secrets())
    tracing.configure(os.environ)
    timers = Timers(frozenset(n.strip() for n in os.environ.get("BENCH_TRACE", "").split(",")
                              if n.strip()))

    # Main-thread phases (they add up, with "other", to the cycle's wall time).
    for name in ("claim_due", "stats"):
        setattr(queries, name, timers.wrap(name, getattr(queries, name)))
    pipeline.apply_outcomes = timers.wrap(  # type: ignore[assignment]
        "apply_outcomes", pipeline.apply_outcomes)
    # The applying thread waits for S3 verdicts in a queue's blocking get.
    timed_get = timers.wrap("s3_wait", queue.SimpleQueue.get)

    class TimedQueue(queue.SimpleQueue):  # type: ignore[type-arg]
        def get(self, block: bool = True, timeout: float | None = None) -> Any:
            return timed_get(self, block, timeout)

    cycle.queue = types.SimpleNamespace(  # type: ignore[attr-defined]
        SimpleQueue=TimedQueue, Empty=queue.Empty)
    relay.Relay.drain = timers.wrap("relay", relay.Relay.drain)  # type: ignore[method-assign]
    # Inside the relay, and in the check threads (not main-thread time).
    for name in ("relay_claim", "relay_mark_published"):
        setattr(queries, name, timers.wrap(name, getattr(queries, name)))
    store = storage_for(os.environ.get("BENCH_S3_HEAD", "obstore"), settings)
    kind = type(store)
    _pace_heads(kind, float(os.environ.get("BENCH_HEAD_RATE", "0") or 0))
    kind.check = timers.wrap("s3_check", kind.check)  # type: ignore[method-assign]

    pacers = _watch_pacers() if "pace" in timers.traced else []
    metrics = Metrics()
    pool = open_pool(settings)
    rel = Relay(settings, pool, metrics, delivery_timeout_s=delivery_timeout_for(settings))
    ctx = Context(settings=settings, pool=pool, storage=store, metrics=metrics,
                  relay=rel)
    relay_only = sys.argv[1:] == ["relay"]
    # As the worker's start-up does: what it built lives as long as the process.
    gc.collect()
    gc.freeze()
    print("ready", flush=True)
    sys.stdin.readline()

    stop = threading.Event()
    t_start = time.monotonic()  # system-wide: comparable with bench/messenger.py's samples
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    if relay_only:
        # What the cycle's relay step does, alone: drain everything that is unpublished.
        result = rel.drain(time.monotonic() + 600, stop)
        summary = None
    else:
        summary = run_cycle(ctx, stop)
    wall = time.perf_counter() - t0
    t_end = time.monotonic()
    cpu = time.process_time() - cpu0
    rel.close()
    pool.close()
    out = {
        "summary": summary.to_dict() if summary else {
            "published": result.published, "batches": result.batches, "failed": result.failed,
            "reason": result.reason},
        "wall_s": wall,
        "t_start": t_start,
        "t_end": t_end,
        # Claim, check and apply end where the relay's drain begins.
        "t_apply_end": timers.first.get("relay", t_end),
        "cpu_s": cpu,
        "seconds": dict(timers.seconds),
        "calls": dict(timers.calls),
        "maxrss_kb": peak_rss_kb(),
        **({"trace": dict(timers.trace)} if timers.traced else {}),
        **({"pace": [[[c.at, c.rate, c.reason, c.slowdown] for c in p.changes]
                     for p in pacers],
            "pace_samples": [p.__dict__.get("bench_samples", []) for p in pacers]}
           if pacers else {}),
    }
    print(json.dumps(out), flush=True)
    return 0 if (summary.ok if summary else result.failed == 0) else 1


if __name__ == "__main__":
    sys.exit(main())
