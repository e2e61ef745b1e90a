"""What a least-privileged worker can see of the database's contention, sampled over time.

``python -m bench.signals`` (as the worker's login, ``DATABASE_URL``): prints ``ready``, waits
for ``go`` on stdin, then every ``BENCH_SIGNALS_PERIOD_S`` (default 0.05 s) takes one sample of
each candidate signal of adaptive pacing until a line ``stop`` comes on stdin, and prints one JSON
object with the samples. The drain bench runs it beside the worker with ``--drain-signals``, so
the candidates can be compared with what the simulated service suffered in the same seconds:

- ``probe_ms``: the round trip of ``select 1`` on a connection of its own (client-side clock);
- ``others``: client sessions of other logins with a snapshot (``backend_xmin``) or a
  transaction id (``backend_xid``) right now — the two columns of ``pg_stat_activity`` a role
  without pg_read_all_stats still sees of other logins' sessions (``state``, ``wait_event`` and
  ``query`` are NULL for them);
- ``xact``, ``active_ms``, ``tup_ins``: the cluster's ``pg_stat_database`` counters (every
  database, every login, ours included), as flushed so far by the backends.

Each sample is ``[t, probe_ms, others, xact, active_ms, tup_ins]`` with ``t`` on the system-wide
monotonic clock (comparable with the worker's and the service's samples).

``python -m bench.signals --report out/bench/results.json`` prints, per drain run, what each
signal showed before and during the drain beside what the service suffered.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

SAMPLE_SQL = """
select
    (select count(*) from pg_stat_activity
        where pid <> pg_backend_pid() and datid is not null and usename <> session_user
            and (backend_xmin is not null or backend_xid is not null))::int,
    (select sum(xact_commit + xact_rollback) from pg_stat_database)::bigint,
    (select sum(active_time) from pg_stat_database)::float8,
    (select sum(tup_inserted) from pg_stat_database)::bigint
"""


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, max(0, round(q / 100 * len(values)) - 1))]


def report(results: dict[str, Any]) -> str:
    """``python -m bench.signals --report results.json``: per drain run of a bench with
    ``--drain-signals``, what each candidate signal showed idle (before the worker started)
    and during the drain, beside what the service suffered (ingest p50/p99)."""
    lines = ["| scenario, worker | phase | probe p50 / p90 ms | other logins at work (share of "
             "samples: bench sampler / worker's) | pg_stat_database xact/s, changes/s | "
             "apply ms/row | ingest p50 / p99 ms |", "|---|---|---:|---:|---:|---:|---:|"]
    for run in results["runs"]:
        d = run["detail"]
        if "signals" not in d:
            continue
        out = d["output"]
        start, end = out.get("t_start", 0.0), out.get("t_apply_end", 0.0)
        sig = d["signals"]["samples"]
        ours = (out.get("pace_samples") or [[]])[0]
        svc = d.get("service_samples", [])
        where = "service" if d.get("service_load") else "idle db"
        for phase, lo, hi in (("idle", -1e18, start), ("drain", start + 1.0, end)):
            ss = [x for x in sig if lo <= x[0] < hi]
            if len(ss) < 5:
                continue
            span = max(ss[-1][0] - ss[0][0], 1e-9)
            flushes = sum(1 for a, b in itertools.pairwise(ss) if b[3] != a[3]) / span
            mine = [x for x in ours if lo <= x[0] < hi]
            share = (f"{sum(1 for x in ss if x[2]) / len(ss):.3f} / "
                     + (f"{sum(1 for x in mine if x[1]) / len(mine):.3f}" if mine else "-"))
            applies = [a for a in out.get("trace", {}).get("apply_outcomes", [])
                       if lo <= a[0] < hi and a[1]]
            per_row = (f"{sum(a[2] for a in applies) / sum(a[1] for a in applies) * 1000:.2f}"
                       if applies else "-")
            ingest = [ms for t, ms in svc if lo <= t < hi]
            lines.append(
                f"| {where}, {run['contender']} #{run['rep']} | {phase} | "
                f"{_pct([x[1] for x in ss], 50):.2f} / {_pct([x[1] for x in ss], 90):.2f} | "
                f"{share} | {(ss[-1][3] - ss[0][3]) / span:,.0f}, {flushes:.1f} | {per_row} | "
                + (f"{_pct(ingest, 50):.2f} / {_pct(ingest, 99):.2f} |" if ingest else "- |"))
    return "\n".join(lines)


def main() -> int:
    if sys.argv[1:2] == ["--report"]:
        print(report(json.loads(Path(sys.argv[2]).read_text())))
        return 0
    period = float(os.environ.get("BENCH_SIGNALS_PERIOD_S", "0.05"))
    stop = threading.Event()
    conn = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
    conn.execute("select 1")
    print("ready", flush=True)
    sys.stdin.readline()

    def wait_for_stop() -> None:
        sys.stdin.readline()
        stop.set()

    threading.Thread(target=wait_for_stop, daemon=True).start()
    samples: list[list[float]] = []
    cpu0 = time.process_time()
    t0 = time.monotonic()
    i = 0
    while not stop.is_set():
        due = t0 + i * period
        now = time.monotonic()
        if due > now:
            stop.wait(due - now)
        i += 1
        start = time.monotonic()
        conn.execute("select 1")
        probe = (time.monotonic() - start) * 1000
        row = conn.execute(SAMPLE_SQL).fetchone()
        assert row is not None
        samples.append([start, round(probe, 3), row[0], row[1], row[2], row[3]])
    conn.close()
    print(json.dumps({"samples": samples, "cpu_s": time.process_time() - cpu0,
                      "period_s": period}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
