"""The database alone: one backend's CPU per finalized row, for SQL variants side by side.

No S3, no Kafka, no driver: one connection claims (``claim_due``, batches of 500) and applies a
``found`` verdict to each row (``apply_outcome``, one statement each), and the backend's own CPU
(``/proc/<pid>/stat``, so the server must run on this machine) is divided by the rows. Each
variant is a fresh database migrated with this tree, then the SQL files given for it applied
as the owner (for example ``bench/sql_before/*.sql``, or an experiment of yours); the runs are
interleaved, each variant first in turn, because this machine's speed drifts between minutes.

    . .stack/dev/env    # any stack: python tools/stack.py up --dir .stack/dev
    python -m bench.apply_ab --n 5000 --reps 6 now experiment=my_change.sql

It empties nothing but the databases it creates (``rfr_ab_<name>``), and drops them at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from bench import sysstat, world

CLI = Path(sys.executable).parent / "recording-finalize"
# One policy for every call, stored once per database as the worker stores it at start.
SET_POLICY = ("select recording_finalize.set_policy(p_max_attempts => 8, p_sla_timeout => "
              "'600 s', p_backoff_base => '30 s', p_backoff_factor => 2.0, p_backoff_cap => "
              "'3600 s', p_backoff_jitter => 0.2, p_upload_grace => '1800 s')")
CLAIM = "select recording_id, claim_token from recording_finalize.claim_due(p_batch_size => 500)"
APPLY = ("select result from recording_finalize.apply_outcome(%s, %s, 'found', %s, 1234, 60, "
         "'Webm', null)")


def url_of(owner_url: str, dbname: str) -> str:
    parts = urlsplit(owner_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{dbname}", parts.query, ""))


def prepare(owner_url: str, dbname: str, files: list[Path]) -> None:
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{dbname}" with (force)')
        conn.execute(f'create database "{dbname}"')
    env = dict(os.environ, DATABASE_URL=url_of(owner_url, dbname))
    proc = subprocess.run([str(CLI), "migrate", "--create-service-tables"], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"migrate of {dbname} failed:\n{proc.stderr[-2000:]}")
    with psycopg.connect(url_of(owner_url, dbname), autocommit=True) as conn:
        for path in files:
            conn.execute(path.read_text())  # type: ignore[call-overload]  # the caller's SQL


def one_run(url: str, n: int, seed: int) -> float:
    """Seeds n stuck recordings, finalizes them all; returns backend CPU ms per row."""
    items = world.make_items(n, seed=seed)
    with psycopg.connect(url, autocommit=True) as conn:
        world.reset(conn)
        world.seed_stuck(conn, items)
        world.analyze(conn)
        conn.execute(SET_POLICY)
        conn.execute("checkpoint")
    with psycopg.connect(url, autocommit=True, prepare_threshold=0) as conn:
        row = conn.execute("select pg_backend_pid()").fetchone()
        assert row is not None
        pid = row[0]
        before = sysstat.process_cpu(pid)
        done = 0
        while rows := conn.execute(CLAIM).fetchall():
            for recording_id, token in rows:
                result = conn.execute(APPLY, (recording_id, token, f"rec/{recording_id}"))
                verdict = result.fetchone()
                if verdict is None or verdict[0] != "reconciled":
                    raise SystemExit(f"{recording_id}: apply_outcome answered {verdict}")
                done += 1
        spent = sysstat.process_cpu(pid) - before
    if done != n:
        raise SystemExit(f"finalized {done} of {n} rows")
    return spent * 1000 / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5000, help="stuck recordings per run")
    parser.add_argument("--reps", type=int, default=6, help="runs of every variant")
    parser.add_argument("variants", nargs="+", metavar="NAME[=FILE,FILE...]",
                        help="a variant: its name, and the SQL files applied after migrate")
    args = parser.parse_args(argv)
    owner_url = os.environ.get("DATABASE_URL")
    if not owner_url:
        parser.error("DATABASE_URL (a superuser or the schema owner of a local stack) is unset")
    variants: dict[str, list[Path]] = {}
    for spec in args.variants:
        name, _, files = spec.partition("=")
        variants[name] = [Path(f) for f in files.split(",") if f]
        for path in variants[name]:
            if not path.is_file():
                parser.error(f"variant {name}: no such file {path}")
    dbnames = {name: f"rfr_ab_{name}" for name in variants}
    for name, files in variants.items():
        prepare(owner_url, dbnames[name], files)
    results: dict[str, list[float]] = {name: [] for name in variants}
    try:
        for rep in range(args.reps):
            order = list(variants) if rep % 2 == 0 else list(reversed(variants))
            for name in order:
                t0 = time.monotonic()
                ms = one_run(url_of(owner_url, dbnames[name]), args.n, seed=rep)
                results[name].append(ms)
                print(f"run {rep + 1} {name:>12}: {ms:.3f} ms of backend CPU per row "
                      f"({time.monotonic() - t0:.1f} s)", flush=True)
    finally:
        with psycopg.connect(owner_url, autocommit=True) as conn:
            for dbname in dbnames.values():
                conn.execute(f'drop database if exists "{dbname}" with (force)')
    first = next(iter(variants))
    base = statistics.median(results[first])
    for name, values in results.items():
        median = statistics.median(values)
        print(f"{name:>12}: median {median:.3f} ms/row (min {min(values):.3f}, "
              f"max {max(values):.3f}), {median / base:.2f}x {first}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
