"""The database's CPU per finalized row: the SQL of this tree beside the SQL of earlier
releases, in one run.

The e2e figures measure the whole worker. This one measures the SQL alone, as the worker calls
it, so that SQL trees compare on the same footing although their APIs differ (0.1.x took the
policy as separate arguments, 0.2.x as one JSON every call, 0.3.0 stores it once with
``set_policy``): one connection claims a batch with ``claim_due`` and reports ``found`` for
every claimed row with ``apply_outcome``, one call and one transaction per row, until nothing is
due; that backend's CPU (``/proc/<pid>/schedstat``, the scheduler's nanoseconds) over N is the
figure. Every database holds the same N stopped
recordings of ended sessions, each with its finalize row due.

The variants (``--variants``, default ``now,0.2.1,0.2.1+ix``):

- **now**: a database migrated by this tree's ``recording-finalize migrate
  --create-service-tables``: every read of the service's data through the adapter's views,
  every write through its port functions (``make_available``, ``enqueue_realtime``), the event
  in the product's own outbox (``recording_finalize.outbox``).
- **0.3.0** (on request): the SQL of release 0.3.0 (``RELEASE_0_3_0``, from the git history
  as below), before ``outcome_decision`` took the storage's facts; the same calls as *now*
  (the facts left at their defaults).
- **pre-policy** (on request): the tree before the policy was stored once
  (``BEFORE_STORED_POLICY``, within 0.3.0's development: the adapter and the product's own
  outbox in place, the policy JSON an argument of every call), installed as 0.2.1 is: the
  figure the SQL of this round is to be lower than.
- **0.2.1**: the SQL of commit ``RELEASE_0_2_1`` (the last release before the adapter, taken
  from this clone's git history with ``git archive``), installed by this tree's migrate with
  ``RFR_SQL_DIR`` pointing at it (its own reference service schema included): the service's
  tables named directly, the event in ``messenger.integration_outbox``.
- **0.2.1+ix**: the same, plus the one index this tree's reference service schema added
  (``call_recordings_available_at_idx``, which republish discovery reads and every transition
  to Available now maintains): the service schema of *now* under the SQL of 0.2.1, so that
  now / 0.2.1+ix is the SQL's share and 0.2.1+ix / 0.2.1 the index's.
- **0.1.x** (on request): the last commit of the 0.1.x history (``BEFORE_COMMIT``), its
  migrations applied in name order and then its function files, each file in one transaction,
  as the owner. ``before`` is its earlier name.

Without the git history (a shallow or exported tree) the figure says so and measures "now" only.

The variants take turns batch by batch (each claims and applies ``BATCH`` rows, then the next
one does), so that a change of the machine's speed during a run, which on a shared 2-core machine
moves a figure by ±10 % between two runs made one after the other, falls on all alike; each
repetition starts with another variant. The medians and the ratios now / each are printed.
``python -m bench.sqlcost [--n 4000] [--repeat 3] [--variants now,0.2.1,0.2.1+ix]`` against
the stack of ``RFR_STACK_DIR`` (default ``.stack/dev``); ``make bench`` runs it as the
``sqlcost`` figure.
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
from dataclasses import dataclass
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
#: Release 0.2.1, the last before the adapter (docs/contract/adapter.md) and the product's own
#: outbox.
RELEASE_0_2_1 = "9540ecc411ccdd71f80a9f437a72f13eeca7bd6a"
#: Release 0.3.0 (tag v0.3.0), the last before outcome_decision judged the storage's facts.
RELEASE_0_3_0 = "7a1f08adbfea556f9771d37ee358449c3bca1d46"
#: The tree before the policy was stored once (0.3.0's development, the adapter in place, the
#: policy JSON still an argument of every call): what "lower than before" is measured against.
BEFORE_STORED_POLICY = "66082cb6abc1594752c41a68c0339e226c9fd49a"
#: The index this tree's reference service schema added (sql/service/schema.sql).
AVAILABLE_AT_INDEX = ("create index call_recordings_available_at_idx on messenger.call_recordings"
                      " (available_at, id) where status::text = 'Available'")


@dataclass(frozen=True)
class Variant:
    """One SQL tree to measure, in a database of its own."""

    label: str
    #: None: this tree.
    commit: str | None
    #: "migrate": this tree's migrate (RFR_SQL_DIR = the commit's sql/); "files": 0.1.x's files.
    install: str
    #: The API its claim_due and apply_outcome take: "0.3" (the policy stored once, with
    #: set_policy), "0.2" (a policy JSON every call) or "0.1" (separate arguments).
    api: str
    extra: tuple[str, ...] = ()

    @property
    def dbname(self) -> str:
        return "rfr_bench_sqlcost_" + "".join(c if c.isalnum() else "_" for c in self.label)


VARIANTS = {
    "now": Variant("now", None, "migrate", "0.3"),
    "0.3.0": Variant("0.3.0", RELEASE_0_3_0, "migrate", "0.3"),
    "pre-policy": Variant("pre-policy", BEFORE_STORED_POLICY, "migrate", "0.2"),
    "0.2.1": Variant("0.2.1", RELEASE_0_2_1, "migrate", "0.2"),
    "0.2.1+ix": Variant("0.2.1+ix", RELEASE_0_2_1, "migrate", "0.2", (AVAILABLE_AT_INDEX,)),
    "0.1.x": Variant("0.1.x", BEFORE_COMMIT, "files", "0.1"),
}
ALIASES = {"before": "0.1.x"}
DEFAULT_VARIANTS = "now,0.2.1,0.2.1+ix"


def variants(spec: str) -> list[Variant]:
    """The variants of a comma list (``now`` always first); a directory holding a ``sql/``
    tree (a scratch copy with a change to measure) is a variant named after it, installed as
    this tree's migrate installs its own (``RFR_SQL_DIR``), called as *now* is."""
    names = [ALIASES.get(v.strip(), v.strip()) for v in spec.split(",") if v.strip()]
    for name in names:
        if name not in VARIANTS and (Path(name) / "sql" / "functions").is_dir():
            VARIANTS[name] = Variant(Path(name).name, f"dir:{name}", "migrate", "0.3")
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"sqlcost: unknown variant(s) {', '.join(unknown)} "
                         f"(one of {', '.join(VARIANTS)})")
    return [VARIANTS["now"]] + [VARIANTS[v] for v in dict.fromkeys(names) if v != "now"]

POLICY_NOW = json.dumps({"max_attempts": 8, "sla_timeout_seconds": 600,
                         "backoff_base_seconds": 30, "backoff_cap_seconds": 3600,
                         "backoff_jitter": 0.2})
# The same policy, stored once where the policy is stored (0.3.0 on).
SET_POLICY = {
    "0.3": ("select recording_finalize.set_policy(p_max_attempts => 8, p_sla_timeout => "
            "'600 s', p_backoff_base => '30 s', p_backoff_cap => '3600 s', "
            "p_backoff_jitter => 0.2)"),
}
CALLS = {
    "0.1": (
        f"select recording_id, claim_token from recording_finalize.claim_due("
        f"{BATCH}, 8, '10 minutes', '30 seconds', 2.0, '1 hour', 0.2, null)",
        "select result from recording_finalize.apply_outcome(%s, %s, 'found', %s, 1234, 60, "
        "'Webm', null, 8, null, '30 minutes')"),
    "0.2": (
        f"select recording_id, claim_token from recording_finalize.claim_due({BATCH}, "
        f"'{POLICY_NOW}')",
        "select result from recording_finalize.apply_outcome(%s, %s, 'found', %s, 1234, 60, "
        f"'Webm', null, '{POLICY_NOW}')"),
    "0.3": (
        f"select recording_id, claim_token from recording_finalize.claim_due({BATCH})",
        "select result from recording_finalize.apply_outcome(%s, %s, 'found', %s, 1234, 60, "
        "'Webm', null)"),
}

#: Emptied before every run where they exist (0.2.1 has no recording_finalize.outbox).
TABLES = ("messenger.call_sessions", "messenger.call_recordings", "messenger.integration_outbox",
          "messenger.realtime_outbox", "messenger.recording_finalize_attempts",
          "recording_finalize.outbox", "recording_finalize.relay_leases")
SEED = (
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


def _tree(commit: str, into: Path) -> Path | None:
    """The SQL tree of ``commit``, extracted under ``into``; None without git history."""
    proc = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit, "sql"],
                          capture_output=True, timeout=60)
    if proc.returncode != 0:
        return None
    into.mkdir(parents=True, exist_ok=True)
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


def prepare(admin_url: str, wanted: list[Variant], tmp: Path,
            say: Any = print) -> dict[str, tuple[Variant, str]]:
    """The databases of the variants whose SQL is at hand (label -> (variant, URL))."""
    dbs: dict[str, tuple[Variant, str]] = {}
    for variant in wanted:
        sql_dir = None
        if variant.commit is not None and variant.commit.startswith("dir:"):
            sql_dir = Path(variant.commit.removeprefix("dir:")) / "sql"
        elif variant.commit is not None:
            sql_dir = _tree(variant.commit, tmp / variant.commit[:12])
            if sql_dir is None:
                say(f"sqlcost: no git history with {variant.commit[:10]}: {variant.label} left "
                    "out")
                continue
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{variant.dbname}" with (force)')
            conn.execute(f'create database "{variant.dbname}"')
        url = urlunsplit(urlsplit(admin_url)._replace(path="/" + variant.dbname))
        if variant.install == "migrate":
            world.migrate_new_database(url, f"sqlcost {variant.label}", sql_dir)
        else:
            assert sql_dir is not None
            left_out = _apply_tree(url, sql_dir)
            say(f"sqlcost: {variant.label}'s SQL applied, but for "
                f"{', '.join(left_out) or 'nothing'}")
        setup = (*variant.extra, *filter(None, [SET_POLICY.get(variant.api)]))
        if setup:
            with psycopg.connect(url, autocommit=True) as conn:
                for statement in setup:
                    conn.execute(statement)  # type: ignore[arg-type]  # constants of ours
        dbs[variant.label] = (variant, url)
    return dbs


def _seed(url: str, n: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        present = [t for t in TABLES
                   if conn.execute("select to_regclass(%s)", (t,)).fetchone() != (None,)]
        conn.execute(f"truncate {', '.join(present)}")  # type: ignore[arg-type]
        for statement in SEED:
            conn.execute(statement, {"n": n})  # type: ignore[arg-type]
        conn.execute("checkpoint")


def run_interleaved(dbs: dict[str, tuple[Variant, str]], n: int) -> dict[str, dict[str, float]]:
    """Seeds N due rows in every database, then the variants claim and apply a batch each in
    turn (in the order of ``dbs``) until none has anything due; each backend's CPU per row."""
    for _, url in dbs.values():
        _seed(url, n)
    conns = {label: psycopg.connect(url, autocommit=True, prepare_threshold=0)
             for label, (_, url) in dbs.items()}
    try:
        pids = {}
        for label, conn in conns.items():
            row = conn.execute("select pg_backend_pid()").fetchone()
            assert row is not None
            pids[label] = row[0]
        cpu_ns = dict.fromkeys(dbs, 0)
        wall = dict.fromkeys(dbs, 0.0)
        done = dict.fromkeys(dbs, 0)
        pending = list(dbs)
        while pending:
            for label in list(pending):
                claim, apply = CALLS[dbs[label][0].api]
                conn = conns[label]
                start_ns, start = sysstat.thread_cpu_ns(pids[label]), time.perf_counter()
                rows = conn.execute(claim).fetchall()  # type: ignore[arg-type]
                for recording_id, token in rows:
                    result = conn.execute(apply,  # type: ignore[arg-type]
                                          (recording_id, token, f"rec/{recording_id}")
                                          ).fetchone()
                    if result is None or result[0] != "reconciled":
                        raise SystemExit(f"sqlcost: {label}: apply_outcome said {result}")
                end_ns = sysstat.thread_cpu_ns(pids[label])
                if start_ns is None or end_ns is None:
                    raise SystemExit(f"sqlcost: {label}: its backend is gone")
                cpu_ns[label] += end_ns - start_ns
                wall[label] += time.perf_counter() - start
                done[label] += len(rows)
                if not rows:
                    pending.remove(label)
    finally:
        for conn in conns.values():
            conn.close()
    for label, count in done.items():
        if count != n:
            raise SystemExit(f"sqlcost: {label}: {count} of {n} rows finalized")
    for label, (_, url) in dbs.items():
        _check_events(label, url, n)
    return {v: {"cpu_ms_per_row": cpu_ns[v] / 1e6 / n, "wall_s": wall[v]} for v in dbs}


def _check_events(label: str, url: str, n: int) -> None:
    """Every finalized row has its one event: in the product's own outbox where there is one
    (and none in the service's), else (0.2.1, 0.1.x) in the service's."""
    with psycopg.connect(url, autocommit=True) as conn:
        own = conn.execute("select to_regclass('recording_finalize.outbox')").fetchone()
        service = conn.execute("select count(*) from messenger.integration_outbox").fetchone()
        counts = (conn.execute("select count(*) from recording_finalize.outbox").fetchone()[0]
                  if own and own[0] else None, service[0] if service else None)
    want = (n, 0) if counts[0] is not None else (None, n)
    if counts != want:
        raise SystemExit(f"sqlcost: {label}: events (product's outbox, service's outbox) "
                         f"{counts}, not {want}")


def measure(admin_url: str, n: int, repeat: int, spec: str = DEFAULT_VARIANTS,
            say: Any = print) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rfr-sqlcost-") as tmp:
        dbs = prepare(admin_url, variants(spec), Path(tmp), say)
    out: dict[str, Any] = {"n": n, "repeat": repeat, "batch": BATCH,
                           "commits": {label: v.commit for label, (v, _) in dbs.items()},
                           "extra": {label: list(v.extra) for label, (v, _) in dbs.items()},
                           "runs": {label: [] for label in dbs}}
    try:
        order = list(dbs)
        for rep in range(repeat):
            k = rep % len(order)
            turn = order[k:] + order[:k]  # each variant goes first in turn
            results = run_interleaved({v: dbs[v] for v in turn}, n)
            for label in order:
                out["runs"][label].append(results[label])
            say(f"sqlcost: rep {rep + 1} (first: {turn[0]}): " + ", ".join(
                f"{label} {results[label]['cpu_ms_per_row']:.3f}" for label in order)
                + " ms of PostgreSQL CPU per row")
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            for _, url in dbs.values():
                conn.execute(f'drop database if exists "{urlsplit(url).path[1:]}" with (force)')
    out["median_ms"] = {label: statistics.median(r["cpu_ms_per_row"] for r in runs)
                        for label, runs in out["runs"].items()}
    out["ratio_now"] = {label: out["median_ms"]["now"] / ms
                        for label, ms in out["median_ms"].items() if label != "now"}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sqlcost", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4000, help="rows per run (default 4000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3)")
    ap.add_argument("--variants", default=DEFAULT_VARIANTS,
                    help=f"comma list of {', '.join(VARIANTS)} (default {DEFAULT_VARIANTS})")
    ap.add_argument("--stack-dir", default=os.environ.get("RFR_STACK_DIR", ".stack/dev"))
    args = ap.parse_args(argv)
    env = dict(line.removeprefix("export ").strip().split("=", 1)
               for line in (Path(args.stack_dir) / "env").read_text().splitlines()
               if line.startswith("export "))
    env = {k: v.strip("'") for k, v in env.items()}
    os.environ.setdefault("RFR_STACK_PG_BIN", env.get("RFR_STACK_PG_BIN", ""))
    admin = (f"postgresql://{env['PGUSER']}:{env['PGPASSWORD']}@{env['PGHOST']}:"
             f"{env['PGPORT']}/postgres")
    result = measure(admin, args.n, args.repeat, args.variants,
                     say=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=2))
    medians = result["median_ms"]
    print("PostgreSQL CPU per finalized row (median of "
          f"{args.repeat}): " + ", ".join(f"{k} {v:.3f} ms" for k, v in medians.items())
          + "".join(f"; now/{k} {r:.2f}" for k, r in result["ratio_now"].items()),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
