"""Retention figures: prune's rate, and what a prune running beside a drain costs the drain.

The product prunes only its own rows (Done finalize rows of terminal recordings, published
events of its own outbox, expired relay leases, ended storage incidents): the service's outboxes
are the service's to keep or prune, so the service's published events seeded here
(``messenger.integration_outbox``) are history the prune must leave alone.

``python -m bench.retention [--done-rows N] [--outbox-rows N] [--due-rows N]`` against the
stack of ``RFR_STACK_DIR`` (default ``.stack/dev``; ``tools/stack.py up`` starts one), in a
throwaway database of its own, as the owner (the functions are SECURITY DEFINER):

1. history: N finished recordings (Available, Done rows, sessions ended 3 days ago; the same
   rows as the claim-growth figure of ``make bench``) and N published integration events (the
   service's: never pruned by the product), then ``VACUUM ANALYZE``;
2. drain alone: ``--due-rows`` stuck recordings claimed in batches of 100 and applied
   (``missing``, pipelined as the cycle does) — rows/s;
3. the same drain while ``prune --older-than 1d`` deletes the whole history in batches of
   1,000 beside it (both start together; at the default sizes the prune outlasts the drain):
   the drain's rows/s, prune's rows/s, and the longest single claim.

Bounded: fixed sizes, one pass each; prints one JSON object. Not part of ``make bench``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

from . import costs, world

REPO = Path(__file__).resolve().parents[1]


def _env(stack_dir: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in (Path(stack_dir) / "env").read_text().splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            env[key] = value.strip("'")
    return env


def _drain(url: str, settings: Any) -> dict[str, float]:
    """Claims and applies (missing) until nothing is due; returns rows/s and claim times."""
    from recording_finalize import pipeline, queries
    from recording_finalize.model import Verdict

    claims: list[float] = []
    settled = 0
    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            c0 = time.perf_counter()
            rows = queries.claim_due(conn, settings)
            claims.append((time.perf_counter() - c0) * 1000)
            if not rows:
                break
            reconcile = [r for r in rows if r.action == "reconcile"]
            answers = pipeline.apply_outcomes(conn, [(r, Verdict("missing")) for r in reconcile],
                                             settings)
            settled += sum(1 for a in answers if not isinstance(a, psycopg.Error))
    wall = time.perf_counter() - t0
    return {"rows": settled, "seconds": wall, "rows_per_s": settled / wall,
            "claim_mean_ms": statistics.fmean(claims), "claim_max_ms": max(claims)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retention")
    parser.add_argument("--done-rows", type=int, default=1_000_000)
    parser.add_argument("--outbox-rows", type=int, default=200_000)
    parser.add_argument("--due-rows", type=int, default=5_000)
    parser.add_argument("--stack-dir", default=os.environ.get("RFR_STACK_DIR", ".stack/dev"))
    args = parser.parse_args(argv)

    from recording_finalize import maintenance
    from recording_finalize.config import VARIABLE_BY_NAME, load_settings

    env = _env(args.stack_dir)
    owner = env["DATABASE_URL"]
    name = f"rfr_bench_retention_{uuid.uuid4().hex[:8]}"
    admin = owner.rsplit("/", 1)[0] + "/postgres"
    url = owner.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'create database "{name}"')
    try:
        cli = str(Path(sys.executable).parent / "recording-finalize")
        subprocess.run([cli, "migrate", "--create-service-tables"],
                       env={"PATH": os.environ["PATH"], "DATABASE_URL": url},
                       check=True, capture_output=True, timeout=300)
        settings = load_settings({"DATABASE_URL": url, "RFR_BATCH_SIZE": "100"})
        result: dict[str, Any] = {"done_rows": args.done_rows, "outbox_rows": args.outbox_rows,
                                  "due_rows": args.due_rows}
        with psycopg.connect(url, autocommit=True) as conn:
            result["seed_history_s"] = costs.seed_history(conn, args.done_rows)
            t0 = time.monotonic()
            conn.execute(costs.SERVICE_OUTBOX_SQL,
                         {"topic": VARIABLE_BY_NAME["RFR_TOPIC"].default, "n": args.outbox_rows})
            conn.execute("update messenger.integration_outbox set published_at = now() - "
                         "interval '3 days', created_at = now() - interval '3 days'")
            conn.execute("vacuum analyze messenger.integration_outbox")
            result["seed_outbox_s"] = time.monotonic() - t0

            world.seed_stuck(conn, world.make_items(args.due_rows, seed=11))
            conn.execute("vacuum analyze messenger.recording_finalize_attempts")
        result["drain_alone"] = _drain(url, settings)

        with psycopg.connect(url, autocommit=True) as conn:
            world.seed_stuck(conn, world.make_items(args.due_rows, seed=12))
            conn.execute("vacuum analyze messenger.recording_finalize_attempts")
        pruned: dict[str, Any] = {}

        def prune() -> None:
            t = time.perf_counter()
            with psycopg.connect(url, autocommit=True) as conn:
                totals, calls = maintenance.prune_batches(conn, 86400.0)
            seconds = time.perf_counter() - t
            rows = sum(totals.values())
            pruned.update(dict(totals), statements=calls, seconds=seconds,
                          rows_per_s=rows / seconds)

        thread = threading.Thread(target=prune)
        thread.start()
        result["drain_during_prune"] = _drain(url, settings)
        thread.join()
        result["prune"] = pruned
        result["drain_slowdown"] = (result["drain_alone"]["rows_per_s"]
                                    / result["drain_during_prune"]["rows_per_s"])
        with psycopg.connect(url, autocommit=True) as conn:
            left = conn.execute("select count(*) from messenger.recording_finalize_attempts "
                                "where status = 'Done'").fetchone()
            outbox = conn.execute(
                "select count(*) from messenger.integration_outbox").fetchone()
        result["done_rows_left"] = left[0] if left else None
        # The service's events: all still there (the product never deletes a service row).
        result["outbox_rows_left"] = outbox[0] if outbox else None
        print(json.dumps(result, indent=2))
        return 0
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


if __name__ == "__main__":
    sys.exit(main())
