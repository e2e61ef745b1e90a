"""The database's CPU per finalized row: the SQL of this tree beside the SQL of the last release
before the 0.2.0 baseline, in one run.

The e2e figures measure the whole worker. This one measures the SQL alone, as the worker calls
it, so that the two SQL trees compare on the same footing although their APIs differ (0.1.x took
the policy as separate arguments, 0.2.0 as one JSON): one connection claims a batch with
``claim_due`` and reports ``found`` for every claimed row with ``apply_outcome``, one call and
one transaction per row, until nothing is due; that backend's CPU (``/proc/<pid>/schedstat``,
the scheduler's nanoseconds) over N is the figure. Both databases hold the same N stopped
recordings of ended sessions, each with its finalize row due.

- **now**: a database migrated by this tree's ``recording-finalize migrate
  --create-service-tables``.
- **before**: the SQL of commit ``BEFORE_COMMIT`` (the last commit of the 0.1.x history, taken
  from this clone's git history with ``git archive``), its migrations applied in name order and
  then its function files, each file in one transaction, as the owner. Without the git history
  (a shallow or exported tree) the figure says so and measures "now" only.

The variants take turns batch by batch (each claims and applies ``BATCH`` rows, then the next
one does), so that a change of the machine's speed during a run, which on a shared 2-core machine
moves a figure by ±10 % between two runs made one after the other, falls on both alike; each
repetition starts with the other variant. The medians and the ratio now / before are printed.
``python -m bench.sqlcost [--n 4000] [--repeat 3]`` against the stack of
``RFR_STACK_DIR`` (default ``.stack/dev``); ``make bench`` runs it as the ``sqlcost`` figure.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from bench import sysstat, world

ROOT = Path(__file__).resolve().parent.parent
#: Rows each variant claims and applies before the other one's turn.
BATCH = 50
#: The last commit of the 0.1.x migration history (before 0001_baseline.sql).
BEFORE_COMMIT = "7d1be208ec2a0bda744faeb0a29a36f5471424db"

POLICY_NOW = json.dumps({"max_attempts": 8, "sla_timeout_seconds": 600,
                         "backoff_base_seconds": 30, "backoff_cap_seconds": 3600,
                         "backoff_jitter": 0.2})
CALLS = {
    "before": (
        f"select recording_id, claim_token from recording_finalize.claim_due("
        f"{BATCH}, 8, '10 minutes', '30 seconds', 2.0, '1 hour', 0.2, null)",
        "select result from recording_finalize.apply_outcome(%s, %s, 'found', %s, 1234, 60, "
        "'Webm', null, 8, null, '30 minutes')"),
    "now": (
        f"select recording_id, claim_token from recording_finalize.claim_due({BATCH}, "
        f"'{POLICY_NOW}')",
        "select result from recording_finalize.apply_outcome(%s, %s, 'found', %s, 1234, 60, "
        f"'Webm', null, '{POLICY_NOW}')"),
}

SEED = (
    "truncate messenger.call_sessions, messenger.call_recordings, messenger.integration_outbox, "
    "messenger.realtime_outbox, messenger.recording_finalize_attempts",
    """insert into messenger.call_sessions (id, started_at, ended_at, chat_id, deal_id, tenant_id)
    select md5('s' || g)::uuid, now() - interval '3 hours', now() - interval '2 hours',
        gen_random_uuid(), gen_random_uuid(), gen_random_uuid()
    from generate_series(1, %(n)s) as g""",
    """insert into messenger.call_recordings (
        id, session_kind, session_id, media_type, trigger, status, started_at, ended_at)
    select md5('r' || g)::uuid, 'Direct', md5('s' || g)::uuid, 'Audio', 'Auto', 'Uploading',
        now() - interval '3 hours', now() - interval '2 hours'
    from generate_series(1, %(n)s) as g""",
    """insert into messenger.recording_finalize_attempts (
        recording_id, session_kind, session_id, next_attempt_at)
    select md5('r' || g)::uuid, 'Direct', md5('s' || g)::uuid, now() - interval '1 minute'
    from generate_series(1, %(n)s) as g""",
    "analyze",
)


def _before_tree(into: Path) -> Path | None:
    """The SQL tree of BEFORE_COMMIT, extracted under ``into``; None without git history."""
    proc = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", BEFORE_COMMIT,
                           "sql"], capture_output=True, timeout=60)
    if proc.returncode != 0:
        return None
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / "sql"


def _psql() -> str:
    """psql of the stack's PostgreSQL (RFR_STACK_PG_BIN, as tools/stack.py exports it), else
    the one on PATH."""
    pg_bin = os.environ.get("RFR_STACK_PG_BIN")
    return str(Path(pg_bin) / "psql") if pg_bin else "psql"


def _apply_tree(url: str, sql_dir: Path) -> list[str]:
    """Migrations in name order, then the function files, each with psql as one transaction
    (or statement by statement where the file says ``-- transactional: false``, as yoyo read
    it); a file that needs another one not applied yet is retried after the rest (0.1.x's
    migrate ordered them itself). Files that never apply (those reading yoyo's own tables,
    which yoyo creates, not a migration) are left out and returned: the claim and the apply
    must not be among them."""
    files = sorted((sql_dir / "migrations").glob("*.sql")) + sorted(
        (sql_dir / "functions").glob("*.sql"))
    pending = files
    failed: list[Path] = []
    while pending:
        failed = []
        for path in pending:
            single = [] if path.read_text().startswith("-- transactional: false") else ["-1"]
            proc = subprocess.run([_psql(), "-X", "-q", "-v", "ON_ERROR_STOP=1", *single,
                                   "-d", url, "-f", str(path)],
                                  capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                failed.append(path)
        if len(failed) == len(pending):
            break
        pending = failed
    left_out = [path.name for path in failed]
    needed = {"recording_finalize.claim_due.sql", "recording_finalize.apply_outcome.sql"}
    if needed & set(left_out) or any(p.parent.name == "migrations" for p in failed):
        raise SystemExit(f"sqlcost: the SQL before does not apply: {', '.join(left_out)}")
    return left_out


def prepare(admin_url: str, sql_before: Path | None, say: Any = print) -> dict[str, str]:
    """The databases of the variants (name -> URL)."""
    dbs: dict[str, str] = {}
    for variant in ("now", "before"):
        if variant == "before" and sql_before is None:
            continue
        name = f"rfr_bench_sqlcost_{variant}"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            conn.execute(f'create database "{name}"')
        url = urlunsplit(urlsplit(admin_url)._replace(path="/" + name))
        if variant == "now":
            world.migrate_new_database(url, "sqlcost")
        else:
            assert sql_before is not None
            left_out = _apply_tree(url, sql_before)
            say(f"sqlcost: the SQL before applied, but for {', '.join(left_out) or 'nothing'}")
        dbs[variant] = url
    return dbs


def run_interleaved(dbs: dict[str, str], n: int) -> dict[str, dict[str, float]]:
    """Seeds N due rows in every database, then the variants claim and apply a batch each in
    turn (in the order of ``dbs``) until none has anything due; each backend's CPU per row."""
    for url in dbs.values():
        with psycopg.connect(url, autocommit=True) as conn:
            for statement in SEED:
                conn.execute(statement, {"n": n})
            conn.execute("checkpoint")
    conns = {v: psycopg.connect(url, autocommit=True, prepare_threshold=0)
             for v, url in dbs.items()}
    try:
        pids = {}
        for variant, conn in conns.items():
            row = conn.execute("select pg_backend_pid()").fetchone()
            assert row is not None
            pids[variant] = row[0]
        cpu_ns = dict.fromkeys(dbs, 0)
        wall = dict.fromkeys(dbs, 0.0)
        done = dict.fromkeys(dbs, 0)
        pending = list(dbs)
        while pending:
            for variant in list(pending):
                claim, apply = CALLS[variant]
                conn = conns[variant]
                start_ns, start = sysstat.thread_cpu_ns(pids[variant]), time.perf_counter()
                rows = conn.execute(claim).fetchall()
                for recording_id, token in rows:
                    result = conn.execute(apply, (recording_id, token, f"rec/{recording_id}")
                                          ).fetchone()
                    if result is None or result[0] != "reconciled":
                        raise SystemExit(f"sqlcost: {variant}: apply_outcome said {result}")
                end_ns = sysstat.thread_cpu_ns(pids[variant])
                if start_ns is None or end_ns is None:
                    raise SystemExit(f"sqlcost: {variant}: its backend is gone")
                cpu_ns[variant] += end_ns - start_ns
                wall[variant] += time.perf_counter() - start
                done[variant] += len(rows)
                if not rows:
                    pending.remove(variant)
    finally:
        for conn in conns.values():
            conn.close()
    for variant, count in done.items():
        if count != n:
            raise SystemExit(f"sqlcost: {variant}: {count} of {n} rows finalized")
    return {v: {"cpu_ms_per_row": cpu_ns[v] / 1e6 / n, "wall_s": wall[v]} for v in dbs}


def measure(admin_url: str, n: int, repeat: int, say: Any = print) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rfr-sqlcost-") as tmp:
        sql_before = _before_tree(Path(tmp))
        if sql_before is None:
            say(f"sqlcost: no git history with {BEFORE_COMMIT[:10]}: the SQL now only")
        dbs = prepare(admin_url, sql_before, say)
    out: dict[str, Any] = {"n": n, "repeat": repeat, "before_commit": BEFORE_COMMIT,
                           "runs": {variant: [] for variant in dbs}}
    try:
        order = list(dbs)
        for rep in range(repeat):
            turn = order if rep % 2 == 0 else order[::-1]
            results = run_interleaved({v: dbs[v] for v in turn}, n)
            for variant in order:
                out["runs"][variant].append(results[variant])
                say(f"sqlcost: rep {rep + 1} {variant}: "
                    f"{results[variant]['cpu_ms_per_row']:.3f} ms of PostgreSQL CPU per row")
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            for url in dbs.values():
                conn.execute(f'drop database if exists "{urlsplit(url).path[1:]}" with (force)')
    out["median_ms"] = {variant: statistics.median(r["cpu_ms_per_row"] for r in runs)
                        for variant, runs in out["runs"].items()}
    if "before" in out["median_ms"]:
        out["ratio_now_before"] = out["median_ms"]["now"] / out["median_ms"]["before"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sqlcost", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4000, help="rows per run (default 4000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3)")
    ap.add_argument("--stack-dir", default=os.environ.get("RFR_STACK_DIR", ".stack/dev"))
    args = ap.parse_args(argv)
    env = dict(line.removeprefix("export ").strip().split("=", 1)
               for line in (Path(args.stack_dir) / "env").read_text().splitlines()
               if line.startswith("export "))
    env = {k: v.strip("'") for k, v in env.items()}
    os.environ.setdefault("RFR_STACK_PG_BIN", env.get("RFR_STACK_PG_BIN", ""))
    admin = (f"postgresql://{env['PGUSER']}:{env['PGPASSWORD']}@{env['PGHOST']}:"
             f"{env['PGPORT']}/postgres")
    result = measure(admin, args.n, args.repeat, say=lambda m: print(m, file=sys.stderr))
    print(json.dumps(result, indent=2))
    if "ratio_now_before" in result:
        print(f"now {result['median_ms']['now']:.3f} ms, before "
              f"{result['median_ms']['before']:.3f} ms of PostgreSQL CPU per finalized row: "
              f"now/before {result['ratio_now_before']:.2f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
