"""What a finalized row costs, measured from outside over the installed package's whole
``run-once``, beside the least it can cost and the previous release, in one run.

Contenders (``--contenders``, default ``ours,floor,previous``):

- **ours**: a wheel built from this tree (``pip wheel``), installed with the locked runtime
  dependencies (``requirements.lock``) into a virtualenv of its own under ``out/cycle/`` — not
  the editable install; its own ``recording-finalize migrate --create-service-tables`` on a
  fresh database, then its ``recording-finalize run-once`` as the least-privilege worker role.
- **previous**: the same for the release before (``--previous``, default 0.4.1 = commit
  ``d52d80a``, taken with ``git archive`` into ``out/cycle/``, never committed).
- **floor**: the least a finalized row can cost the database: per row one transaction with
  the recording's UPDATE to Available (with its metadata), the finalize row's UPDATE to Done
  and the event's INSERT into the product's outbox, pipelined over one connection (psycopg
  pipeline mode, prepared statements), by a client that already knows every row (no claim, no
  storage check, no relay, no realtime row): ``python -m bench.cycle_cost --floor-client``.

Every run starts on a fresh database of the same cluster (migrated by the contender's own
package; the floor's by this tree's), holding N recordings stuck in ``Uploading`` whose session
ended an hour ago, each with its finalize row due and its binary in SeaweedFS. Measured from
outside: PostgreSQL's CPU is utime+stime of the postmaster, its live children (backends,
checkpointer, WAL writer, ...) and its exited children (cutime+cstime once reaped), read from
``/proc`` before and after; the contender's CPU is its process's rusage (``wait4``). Each
contender's start-up is measured the same way by a run with nothing due on the same database
(before the rows are seeded) and subtracted. Autovacuum is off during the runs (a run's dead
rows would otherwise be vacuumed inside whichever run comes next); what vacuuming a run's dead
rows costs is measured after it, as its own column (``VACUUM`` of the tables, from outside).
The contenders take turns, each repetition starting with the next one.

A benchmark is not a test, but a contender that does not finalize every row (every recording
Available, every finalize row Done, one event each in the product's outbox; ours and previous:
each event published and in Kafka) fails the bench: exit status 1.

``--attribute`` adds one more run of ours (and of previous) with ``pg_stat_statements.track =
all``, ``track_functions = all``, ``track_planning = on`` and the worker under py-spy (all
threads, when ``py-spy`` is installed): where each part of the row's cost goes, written to
``out/cycle/attribution-*.json`` and printed.

``python -m bench.cycle_cost [--n 4000] [--repeat 3]`` (a stack of its own in
``.stack/cycle`` unless ``--stack-dir`` names a running one); ``make bench
BENCH_ARGS='--only cycle'`` runs it within the bench.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import secrets
import statistics
import subprocess
import sys
import tarfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg

from bench import world
from bench.sysstat import _children_of, loadavg, postgres_cpu, process_cpu

REPO = Path(__file__).resolve().parent.parent
#: Release 0.4.1: the previous release the figure compares with.
PREVIOUS = "d52d80a753512b42e0d5e4ab3cb5473c92a17df3"
WORKER_ROLE = "rfr_cycle_worker"
CONTENDERS = ("ours", "floor", "previous")
#: On request only: a scratch copy of the tree with a change to measure (``--candidate DIR``).
CANDIDATE = "candidate"
#: Seconds for the postmaster to reap a finished client's backends (their CPU moves to its
#: children times) and for the last WAL writes to happen, before and after each measurement.
SETTLE_S = 0.5
#: The tables a run writes (vacuumed after it, to measure what its dead rows cost).
WRITTEN = ("messenger.call_recordings", "messenger.recording_finalize_attempts",
           "messenger.realtime_outbox", "recording_finalize.outbox",
           "recording_finalize.relay_leases")


def say(msg: str) -> None:
    print(f"cycle [{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _url(base: str, dbname: str, user: str | None = None, password: str | None = None) -> str:
    parts = urlsplit(base)
    netloc = parts.netloc
    if user is not None:
        host = netloc.rsplit("@", 1)[1]
        netloc = f"{quote(user, safe='')}:{quote(password or '', safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, f"/{dbname}", parts.query, ""))


# ------------------------------------------------------------------------------------------
# The installed packages


@dataclass
class Package:
    """A contender's wheel installed in a virtualenv of its own."""

    label: str
    source: Path
    commit: str
    venv: Path

    @property
    def cli(self) -> Path:
        return self.venv / "bin" / "recording-finalize"


def _run(cmd: list[str], what: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise SystemExit(f"cycle: {what} failed ({' '.join(cmd[:3])} ...):\n"
                         f"{(proc.stdout + proc.stderr)[-3000:]}")
    return proc


def _export(commit: str, into: Path) -> Path:
    """The tree of ``commit`` (``git archive``) under ``into``; kept between runs."""
    tree = into / f"src-{commit[:10]}"
    if (tree / "pyproject.toml").exists():
        return tree
    proc = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit],
                          capture_output=True, timeout=120)
    if proc.returncode != 0:
        raise SystemExit(f"cycle: no commit {commit[:10]} in this clone's history "
                         f"(git archive: {proc.stderr.decode()[-300:]})")
    tree.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(tree, filter="data")
    return tree


def _head_commit() -> str:
    proc = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    return proc.stdout.strip() or "unknown"


def install(label: str, source: Path, commit: str, out: Path) -> Package:
    """Builds ``source``'s wheel and installs it, with the locked runtime dependencies, into
    ``out/venv-<label>`` (again only when the wheel changed)."""
    wheels = out / f"wheel-{label}"
    venv = out / f"venv-{label}"
    if wheels.exists():
        for old in wheels.glob("*.whl"):
            old.unlink()
    env = dict(os.environ, RFR_BUILD_COMMIT=commit)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps",
          "--disable-pip-version-check", "-q", "-w", str(wheels), str(source)],
         f"the wheel of {label}", env=env, timeout=600)
    # pip wheel builds in the tree: what setuptools leaves there is not the tree's.
    wheel = next(wheels.glob("*.whl"))
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    stamp = venv / ".wheel-sha256"
    if stamp.exists() and stamp.read_text() == digest:
        return Package(label, source, commit, venv)
    lock = REPO / "requirements.lock"
    lock_digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    lock_stamp = venv / ".lock-sha256"
    pip = [str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q"]
    if not lock_stamp.exists() or lock_stamp.read_text() != lock_digest:
        _run([sys.executable, "-m", "venv", "--clear", str(venv)], f"the venv of {label}",
             timeout=300)
        _run([*pip, "--require-hashes", "-r", str(lock)],
             f"the locked dependencies of {label}", timeout=900)
        lock_stamp.write_text(lock_digest)
    _run([*pip, "--no-deps", "--force-reinstall", str(wheel)], f"the wheel of {label}",
         timeout=300)
    stamp.write_text(digest)
    return Package(label, source, commit, venv)


# ------------------------------------------------------------------------------------------
# The floor's client


FLOOR_RECORDING = """
update messenger.call_recordings as r
set status = 'Available', file_id = %s, size_bytes = %s, duration_seconds = %s, format = %s,
    available_at = now(), version = r.version + 1, updated_at = now()
where r.id = %s and r.status = 'Uploading'
"""
FLOOR_FINALIZE = """
update messenger.recording_finalize_attempts as f
set status = 'Done', attempts = f.attempts + 1, last_outcome = 'found', updated_at = now()
where f.recording_id = %s and f.status = 'Pending'
"""
FLOOR_EVENT = """
insert into recording_finalize.outbox (recording_id, topic, message_key, payload, headers)
values (%s, %s, %s, %s, %s)
"""
#: Rows sent before each Sync (the pipeline's memory stays bounded; no round trip per row).
FLOOR_SYNC_EVERY = 200


def floor_client(url: str, n: int, topic: str) -> int:
    """Finalizes the first ``n`` bench items as the floor does (see the module's docstring)."""
    from psycopg.types.json import Jsonb

    items = world.make_items(n)
    with psycopg.connect(url, autocommit=True) as conn, conn.pipeline() as pipe:
        cur = conn.cursor()
        for i, it in enumerate(items, 1):
            payload = {
                "recordingId": str(it.recording_id), "sessionKind": it.session_kind,
                "sessionId": str(it.session_id), "chatId": str(uuid.uuid4()),
                "dealId": None, "tenantId": str(uuid.uuid4()), "mediaType": it.media_type,
                "fileId": it.key, "format": it.format, "durationSeconds": it.duration_s,
                "sizeBytes": 1024, "trigger": it.trigger,
                "startedAt": "2026-01-01T00:00:00Z", "endedAt": "2026-01-01T00:00:00Z",
                "availableAt": "2026-01-01T00:00:00Z",
            }
            headers = {"event-type": "call-recording-available", "event-id": str(uuid.uuid4())}
            cur.execute("begin", prepare=True)
            cur.execute(FLOOR_RECORDING, (it.key, 1024, it.duration_s, it.format,  # type: ignore[arg-type]
                                          it.recording_id), prepare=True)
            cur.execute(FLOOR_FINALIZE, (it.recording_id,), prepare=True)  # type: ignore[arg-type]
            cur.execute(FLOOR_EVENT, (it.recording_id, topic,  # type: ignore[arg-type]
                                      str(it.session_id), Jsonb(payload), Jsonb(headers)),
                        prepare=True)
            cur.execute("commit", prepare=True)
            if i % FLOOR_SYNC_EVERY == 0:
                pipe.sync()
    print(json.dumps({"finalized": n}), flush=True)
    return 0


# ------------------------------------------------------------------------------------------
# One measurement

#: The postmaster's children that serve no client (their title after "postgres: ").
BACKGROUND = ("checkpointer", "background writer", "walwriter", "autovacuum launcher",
              "autovacuum worker", "logical replication launcher", "archiver")


def background_cpu(postmaster: int) -> float:
    """CPU seconds of the cluster's background processes alive now (checkpointer, background
    writer, WAL writer, launchers): the part of the cluster's CPU that no statement shows."""
    total = 0.0
    for pid in _children_of(postmaster):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            continue
        if title.removeprefix("postgres: ").startswith(BACKGROUND):
            total += process_cpu(pid)
    return total



@dataclass
class Measured:
    pg_s: float
    background_s: float
    worker_s: float
    wall_s: float
    load: float
    returncode: int
    stdout: str


def measure(postmaster: int, cmd: list[str], env: dict[str, str], log: Path,
            wrap: list[str] | None = None) -> Measured:
    """Runs ``cmd`` to its end; PostgreSQL's CPU (the whole cluster) and the process's own
    rusage over it. ``wrap`` (a profiler) runs ``cmd`` as its child: the rusage is then the
    profiler's plus its waited-for child's."""
    time.sleep(SETTLE_S)
    load = loadavg()
    pg0, bg0 = postgres_cpu(postmaster), background_cpu(postmaster)
    t0 = time.perf_counter()
    with log.open("w") as err:
        proc = subprocess.Popen([*(wrap or []), *cmd], env=env, text=True, cwd=REPO,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    time.sleep(SETTLE_S)
    pg1, bg1 = postgres_cpu(postmaster), background_cpu(postmaster)
    return Measured(pg1 - pg0, bg1 - bg0, usage.ru_utime + usage.ru_stime, wall, load,
                    proc.returncode, stdout)


@dataclass
class Run:
    contender: str
    rep: int
    n: int
    load_start: float
    load_end: float
    pg_s: float
    worker_s: float
    wall_s: float
    idle_pg_s: float
    idle_worker_s: float
    background_s: float
    vacuum_pg_s: float
    statements_top: int
    statements_all: int
    problems: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    top_statements: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pg_ms(self) -> float:
        return (self.pg_s - self.idle_pg_s) * 1000 / self.n

    @property
    def worker_ms(self) -> float:
        return (self.worker_s - self.idle_worker_s) * 1000 / self.n

    @property
    def background_ms(self) -> float:
        return self.background_s * 1000 / self.n

    @property
    def vacuum_ms(self) -> float:
        return self.vacuum_pg_s * 1000 / self.n

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"pg_ms_per_row": self.pg_ms, "worker_ms_per_row": self.worker_ms,
                               "vacuum_ms_per_row": self.vacuum_ms,
                               "background_ms_per_row": self.background_ms}


class CycleBench:
    def __init__(self, args: argparse.Namespace, state: dict[str, Any]) -> None:
        self.args = args
        env = state["env"]
        self.stack_env = {k: v for k, v in env.items() if not k.startswith("PG")}
        self.owner_url: str = env["DATABASE_URL"]
        self.postmaster = int(state["services"]["postgres"]["pid"])
        self.bootstrap: str = env["KAFKA_BOOTSTRAP_SERVERS"]
        self.password = secrets.token_hex(16)
        self.out = Path(args.out)
        self.items = world.make_items(args.n)
        self.packages: dict[str, Package] = {}
        self.runs: list[Run] = []
        self.facts: dict[str, Any] = {}

    # ---- set-up ----------------------------------------------------------------------------

    def admin(self, dbname: str = "postgres") -> psycopg.Connection[Any]:
        return psycopg.connect(_url(self.owner_url, dbname), autocommit=True)

    def prepare(self, contenders: list[str]) -> None:
        t0 = time.monotonic()
        if "ours" in contenders or "floor" in contenders:
            self.packages["ours"] = install("ours", REPO, _head_commit(), self.out)
        if CANDIDATE in contenders:
            tree = Path(self.args.candidate or "")
            if not (tree / "pyproject.toml").exists():
                raise SystemExit("cycle: --contenders candidate needs --candidate DIR (a tree)")
            self.packages[CANDIDATE] = install(CANDIDATE, tree, "candidate", self.out)
        if "previous" in contenders:
            tree = _export(self.args.previous, self.out)
            self.packages["previous"] = install("previous", tree, self.args.previous, self.out)
        say(f"wheels built and installed ({time.monotonic() - t0:.0f} s): "
            + ", ".join(f"{k} {p.commit[:10]}" for k, p in self.packages.items()))
        with self.admin() as conn:
            exists = conn.execute("select 1 from pg_roles where rolname = %s",
                                  (WORKER_ROLE,)).fetchone()
            verb = "alter" if exists else "create"
            conn.execute(f"{verb} role {WORKER_ROLE} login password '{self.password}'")
            # The runs' own cost only: no vacuum of one run's dead rows inside another's.
            conn.execute("alter system set autovacuum = off")
            self.track("top")
            row = conn.execute("select current_setting('server_version')").fetchone()
            self.facts["postgres"] = row[0] if row else "?"
        self.facts["cores"] = os.cpu_count()
        seconds = world.seed_objects(self.env_for(""), self.items)
        say(f"{len(self.items):,} binaries uploaded to SeaweedFS ({seconds:.1f} s)")

    def track(self, level: str) -> None:
        """pg_stat_statements' and the function statistics' level: ``top`` for the figures,
        ``all`` for the attribution (statements inside functions, every function's time)."""
        with self.admin() as conn:
            conn.execute(f"alter system set pg_stat_statements.track = '{level}'")
            conn.execute("alter system set track_functions = "
                         + ("'all'" if level == "all" else "'none'"))
            conn.execute("alter system set pg_stat_statements.track_planning = "
                         + ("on" if level == "all" else "off"))
            conn.execute("select pg_reload_conf()")
        time.sleep(0.2)

    def restore(self) -> None:
        with self.admin() as conn:
            for name in ("autovacuum", "pg_stat_statements.track", "track_functions",
                         "pg_stat_statements.track_planning"):
                conn.execute(f"alter system reset {name}")
            conn.execute("select pg_reload_conf()")

    def env_for(self, url: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PG", "RFR_", "AWS_", "VIRTUAL_ENV", "PYTHON"))}
        env.update(self.stack_env)
        env.update({"DATABASE_URL": url, "RFR_METRICS_PORT": "0"})
        for kv in self.args.env:
            key, _, value = kv.partition("=")
            env[key] = value
        env.update(extra)
        return env

    def fresh_database(self, contender: str, rep: int) -> str:
        name = f"rfr_cycle_{contender}_{rep}"
        with self.admin() as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            conn.execute(f'create database "{name}"')
        package = self.packages["ours" if contender == "floor" else contender]
        _run([str(package.cli), "migrate", "--create-service-tables"],
             f"migrate ({contender})", env=self.env_for(_url(self.owner_url, name)), timeout=300)
        with self.admin(name) as conn:
            conn.execute("create extension if not exists pg_stat_statements")
            conn.execute(f"grant recording_finalize_worker to {WORKER_ROLE}")
        return name

    def seed(self, dbname: str, topic: str) -> None:
        with self.admin(dbname) as conn:
            world.reset(conn)
            world.seed_stuck(conn, self.items)
            world.analyze(conn)
            conn.execute("update recording_finalize.settings set topic = %s", (topic,))
            conn.execute("checkpoint")
            conn.execute("select pg_stat_statements_reset()")

    # ---- one contender's run ---------------------------------------------------------------

    def command(self, contender: str, dbname: str, topic: str, n: int) -> list[str]:
        if contender == "floor":
            # It writes the service's tables directly: as their owner (the worker may not).
            return [sys.executable, "-m", "bench.cycle_cost", "--floor-client",
                    _url(self.owner_url, dbname), str(n), topic]
        return [str(self.packages[contender].cli), "run-once"]

    def run(self, contender: str, rep: int, attribute: bool = False) -> Run:
        n = len(self.items)
        dbname = self.fresh_database(contender, rep)
        topic = f"rfr-cycle-{contender}-{rep}-{secrets.token_hex(3)}"
        if contender != "floor":
            world.create_topic(self.bootstrap, topic)
        with self.admin(dbname) as conn:
            conn.execute("update recording_finalize.settings set topic = %s", (topic,))
            conn.execute("checkpoint")
        worker_url = _url(self.owner_url, dbname, WORKER_ROLE, self.password)
        env = self.env_for(worker_url, RFR_TOPIC=topic)
        tag = f"{contender}-{rep}" + ("-attr" if attribute else "")
        cmd_idle = self.command(contender, dbname, topic, 0)
        cmd = self.command(contender, dbname, topic, n)
        idle = measure(self.postmaster, cmd_idle, env, self.out / f"{tag}-idle.log")
        self.seed(dbname, topic)
        if attribute:
            self.track("all")
            with self.admin(dbname) as conn:
                conn.execute("select pg_stat_statements_reset(), pg_stat_reset()")
        wrap = self.profiler(tag) if attribute and contender != "floor" else None
        full = measure(self.postmaster, cmd, env, self.out / f"{tag}.log", wrap)
        problems = []
        for m, what in ((idle, "with nothing due"), (full, "")):
            if m.returncode != 0:
                problems.append(f"exit {m.returncode} {what}".strip()
                                + f" (see {self.out}/{tag}*.log)")
        summary: dict[str, Any] = {}
        line = full.stdout.strip().splitlines()[-1] if full.stdout.strip() else ""
        if line.startswith("{"):
            summary = json.loads(line)
        top, every, top_rows = self.statements(dbname)
        attribution: dict[str, Any] = {}
        if attribute:
            attribution = self.attribution(dbname)
            self.track("top")
        with self.admin(dbname) as conn:
            got = world.outcome(conn, topic)
        if contender == "floor":
            got.realtime = n  # the floor writes no realtime row
        problems += got.problems(n, published=contender != "floor")
        if contender != "floor":
            expect = {str(it.recording_id) for it in self.items}
            seen = world.consumed_recording_ids(self.bootstrap, topic, expect)
            if missing := expect - set(seen):
                problems.append(f"{len(missing)} events missing in Kafka")
            world.delete_topic(self.bootstrap, topic)
        vacuum = self.vacuum_cost(dbname)
        run = Run(contender, rep, n, full.load, loadavg(), full.pg_s, full.worker_s,
                  full.wall_s, idle.pg_s, idle.worker_s, full.background_s, vacuum, top,
                  every, problems, summary, top_rows)
        with self.admin() as conn:
            conn.execute(f'drop database if exists "{dbname}" with (force)')
        if attribute:
            mine = [r for r in self.runs if r.contender == contender]
            figure = [statistics.median(r.pg_ms for r in mine),
                      statistics.median(r.worker_ms for r in mine),
                      statistics.median(r.background_ms for r in mine)] if mine else None
            attribution |= {"run": run.to_dict(), "profile": str(self.out / f"{tag}.pyspy"),
                            "head_cpu_us": self.head_cpu(env), "figure_medians": figure}
            (self.out / f"attribution-{contender}.json").write_text(
                json.dumps(attribution, indent=1, default=str))
        else:
            self.runs.append(run)
        flag = "ok" if not problems else "PROBLEMS: " + "; ".join(problems)
        say(f"#{rep} {contender:>8}: PG {run.pg_ms:.3f} ms/row, worker {run.worker_ms:.3f} "
            f"ms/row (start-up PG {idle.pg_s:.2f} s, worker {idle.worker_s:.2f} s), "
            f"background {run.background_ms:.3f}, vacuum {run.vacuum_ms:.3f}, "
            f"{top / n:.2f} statements/row, {full.wall_s:.1f} s, "
            f"load {full.load:.2f} - {flag}")
        self.save()
        return run

    def head_cpu(self, env: dict[str, str]) -> float | None:
        """µs of CPU one HEAD costs the worker's process (obstore's runtime threads included),
        alone in one thread (bench/headcpu.py, this tree's driver): the part of the worker's
        CPU a profiler of Python frames cannot see."""
        proc = subprocess.run([sys.executable, "-m", "bench.headcpu", "obstore",
                               str(len(self.items))], env=env, cwd=REPO, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != 0 or not proc.stdout.strip().startswith("{"):
            say(f"bench.headcpu failed: {proc.stderr[-500:]}")
            return None
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        return float(out["cpu_s"]) * 1e6 / int(out["n"])

    def vacuum_cost(self, dbname: str) -> float:
        """PostgreSQL's CPU for vacuuming what the run left (its dead rows, its new pages)."""
        with self.admin(dbname) as conn:
            time.sleep(SETTLE_S)
            pg0 = postgres_cpu(self.postmaster)
            for table in WRITTEN:
                conn.execute(f"vacuum {table}")  # type: ignore[arg-type]
            time.sleep(SETTLE_S)
            return postgres_cpu(self.postmaster) - pg0

    def statements(self, dbname: str) -> tuple[int, int, list[dict[str, Any]]]:
        """Statements the run sent (top level) and ran (with those inside functions, when
        tracked), and the top-level ones by total time."""
        with self.admin(dbname) as conn:
            rows = conn.execute(
                """
                select s.toplevel, s.calls, s.total_exec_time, s.total_plan_time,
                    regexp_replace(left(s.query, 160), '\\s+', ' ', 'g')
                from pg_stat_statements as s
                join pg_database as d on d.oid = s.dbid
                where d.datname = current_database()
                    and s.query not ilike '%%pg_stat_statements%%'
                    and s.query not ilike '%%pg_stat_reset%%'
                order by s.total_exec_time desc
                """).fetchall()
        top = sum(int(r[1]) for r in rows if r[0])
        every = sum(int(r[1]) for r in rows)
        listed = [{"toplevel": r[0], "calls": int(r[1]), "exec_ms": float(r[2]),
                   "plan_ms": float(r[3]), "query": r[4]} for r in rows[:40]]
        return top, every, listed

    STATEMENT_FIELDS = ("toplevel", "calls", "exec_ms", "plan_ms", "rows", "blks_hit",
                        "wal_records", "wal_bytes", "query")

    def attribution(self, dbname: str) -> dict[str, Any]:
        """Every statement (nested ones too) and every function's time, as tracked."""
        with self.admin(dbname) as conn:
            statements = conn.execute(
                """
                select s.toplevel, s.calls::bigint, s.total_exec_time, s.total_plan_time,
                    s.rows::bigint, s.shared_blks_hit::bigint, s.wal_records::bigint,
                    s.wal_bytes::bigint, regexp_replace(s.query, '\\s+', ' ', 'g')
                from pg_stat_statements as s
                join pg_database as d on d.oid = s.dbid
                where d.datname = current_database()
                order by s.total_exec_time desc
                """).fetchall()
            functions = conn.execute(
                """
                select schemaname || '.' || funcname, calls, total_time, self_time
                from pg_stat_user_functions order by self_time desc
                """).fetchall()
        return {
            "statements": [dict(zip(self.STATEMENT_FIELDS, r, strict=True)) for r in statements],
            "functions": [dict(zip(("function", "calls", "total_ms", "self_ms"), r, strict=True))
                          for r in functions],
        }

    def profiler(self, tag: str) -> list[str] | None:
        spy = Path(sys.executable).parent / "py-spy"
        if not spy.exists():
            say("py-spy is not installed in this venv: the worker is not profiled "
                "(.venv/bin/pip install py-spy)")
            return None
        return [str(spy), "record", "--format", "raw", "--rate", str(self.args.spy_rate),
                "--threads", "--output", str(self.out / f"{tag}.pyspy"), "--"]

    def save(self) -> None:
        (self.out / "results.json").write_text(json.dumps(
            {"facts": self.facts, "runs": [r.to_dict() for r in self.runs]}, indent=1,
            default=str))


# ------------------------------------------------------------------------------------------
# The table


# ------------------------------------------------------------------------------------------
# Attribution: where a row's CPU goes


#: The worker's parts, by the frames of a sampled stack. Outside ``run_cycle`` the main thread
#: starts or stops the worker. Inside it, first what is done on the side wherever it is called
#: (logging, metrics, spans: any frame), then the phase, the first rule with a frame that
#: matches; a stack no rule matches is "other".
HEAD = "HEAD"
START_UP = "start-up and shut-down (imports, checks, clients)"
ON_THE_SIDE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("logging", ("recording_finalize/logs.py", "logging/")),
    ("metrics", ("recording_finalize/metrics.py", "prometheus_client/")),
    ("spans", ("recording_finalize/tracing.py", "opentelemetry/")),
)
PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pacing (contention samples)", ("recording_finalize/pacing.py",)),
    ("relay (claim, produce, mark)", ("recording_finalize/relay.py",)),
    ("apply pipeline (params, libpq, answers)", ("recording_finalize/pipeline.py",)),
    ("claim (claim_due, its rows)", ("claim_due (",)),
    ("discovery", ("discover", "_Reconcile.discover")),
    ("gauges (stats, operator state)", ("_refresh_gauges", "update_from_stats", "stats (")),
    ("storage (bucket checks, known uploads)", ("recording_finalize/storage.py",)),
    ("per-row bookkeeping (verdicts, counts)", ("_record (", "_count_and_log", "_verdicts",
                                                "_settled_at_claim")),
    ("cycle (threads, queues, batches)", ("recording_finalize/cycle.py",)),
)


#: Innermost frames of a thread that waits (py-spy's own idle detection does not see these
#: waits here): a queue, a condition, an event, the database's answer, a socket.
WAITING = ("Condition.wait (", "Event.wait (", "_worker (concurrent", "Queue.get (",
           "_Wire._wait (", "Connection.wait (psycopg", "wait (psycopg", "sleep (",
           "select (", "poll (")


def worker_parts(raw: Path) -> dict[str, int]:
    """Samples per part of a py-spy ``--format raw`` profile (``frame;frame;... count``,
    outermost first); a stack whose innermost frame waits is "waiting" (no CPU)."""
    parts: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        if any(frame.startswith("Storage.check (") for frame in frames):
            # Mostly obstore's call waiting for the answer (its runtime's CPU is in no
            # Python frame): the HEAD is measured alone instead (bench/headcpu.py).
            parts[HEAD] += int(count)
            continue
        if frames[-1].startswith(WAITING) or len(frames) == 1:
            parts["waiting"] += int(count)
            continue
        if (frames[0].split(": ", 1)[-1].startswith("MainThread")
                and not any(frame.startswith("run_cycle (") for frame in frames)) or any(
                frame.startswith(("<module> (", "_find_and_load (")) for frame in frames[2:]):
            # A module imported late, inside the cycle, is start-up all the same.
            parts[START_UP] += int(count)
            continue
        part = next((name for name, marks in ON_THE_SIDE
                     if any(mark in frame for frame in frames for mark in marks)), None)
        part = part or next((name for name, marks in PHASES
                             if any(mark in frame for frame in frames for mark in marks)),
                            "other")
        parts[part] += int(count)
    return dict(parts)


#: The database's parts, by the statement's text (a top-level statement the worker sent).
DB_PARTS: tuple[tuple[str, str], ...] = (
    ("apply_outcome", "apply_outcome"),
    ("claim_due", "claim_due"),
    ("relay: lease and claim", "relay_claim"),
    ("relay: mark published", "relay_mark_published"),
    ("discovery: stuck", "discover_stuck"),
    ("discovery: unpublished", "discover_unpublished"),
    ("gauges (stats)", "recording_finalize.stats"),
    ("known uploads probe", "known_uploads"),
    ("storage layout probe", "storage_layout_unconfirmed"),
    ("runner lock", "lock_runner"),
    ("pause switch (operator_state)", "operator_state"),
    ("worker config", "worker_config"),
    ("contention sample", "pg_stat_activity"),
    ("transaction control", "begin"),
    ("transaction control", "commit"),
)


#: A statement sent at most this many times in a run is the worker's start-up's or once a
#: cycle's, which the figure subtracts (the run with nothing due makes them too).
ONCE = 3


def db_parts(statements: list[dict[str, Any]], n: int) -> list[tuple[str, int, float, float]]:
    """(part, calls, execution µs per row, planning µs per row) of the top-level statements
    sent more than ``ONCE`` times."""
    parts: dict[str, list[float]] = {}
    for st in statements:
        if not st["toplevel"] or st["calls"] <= ONCE:
            continue
        text = st["query"].lower()
        name = next((part for part, mark in DB_PARTS if mark in text), "other: " + text[:60])
        acc = parts.setdefault(name, [0, 0.0, 0.0])
        acc[0] += st["calls"]
        acc[1] += st["exec_ms"]
        acc[2] += st["plan_ms"]
    return sorted(((k, int(v[0]), v[1] * 1000 / n, v[2] * 1000 / n) for k, v in parts.items()),
                  key=lambda r: -r[2])


def attribution_report(path: Path) -> str:
    """The tables of an attribution run. Its times are inflated by the tracking, the profiler
    and the machine's load, so each part is given as its share, and as that share of the CPU
    per row the figure's runs measured (``results.json`` beside it: the medians of ours or
    previous), which is what the "≈ µs/row" columns are."""
    data = json.loads(path.read_text())
    run = data["run"]
    n = run["n"]
    contender = run["contender"]
    pg_ms, worker_ms, background_ms = data.get("figure_medians") or _medians(
        path.parent / "results.json", contender) or (
        run["pg_ms_per_row"], run["worker_ms_per_row"], run["background_ms_per_row"])
    statements_us = (pg_ms - background_ms) * 1000
    parts = db_parts(data["statements"], n)
    total = sum(exec_us + plan_us for _, _, exec_us, plan_us in parts) or 1.0
    # The functions' and nested statements' shares are of the same total.
    lines = [f"{contender}: PG {pg_ms:.3f} ms/row (median of the figure's runs), of which "
             f"background processes {background_ms:.3f}; worker {worker_ms:.3f} ms/row; the "
             f"attribution run's load {run['load_start']:.2f}", "",
             "| database: statement sent | calls/row | share of the statements' time |"
             " ≈ µs/row of PG CPU |", "|---|---:|---:|---:|"]
    for name, calls, exec_us, plan_us in parts:
        share = (exec_us + plan_us) / total
        lines.append(f"| {name} | {calls / n:.3f} | {share:.1%} | {share * statements_us:.0f} |")
    apply_total = next((exec_us for name, _, exec_us, _ in parts if name == "apply_outcome"),
                       0.0)
    lines += ["", "| database: function (self time) | calls/row | share of the statements' time"
              " | ≈ µs/row of PG CPU |", "|---|---:|---:|---:|"]
    for fn in [f for f in data["functions"] if f["calls"] > ONCE][:16]:
        share = fn["self_ms"] * 1000 / n / total
        lines.append(f"| {fn['function']} | {fn['calls'] / n:.3f} | {share:.1%} | "
                     f"{share * statements_us:.0f} |")
    lines += ["", "| database: statement inside a function (time includes what it calls) |"
              " calls/row | share of apply_outcome's time | ≈ µs/row of PG CPU |",
              "|---|---:|---:|---:|"]
    for st in [s for s in data["statements"]
               if not s["toplevel"] and s["calls"] > ONCE][:20]:
        us = st["exec_ms"] * 1000 / n
        lines.append(f"| {st['query'][:100]} | {st['calls'] / n:.3f} | "
                     f"{us / (apply_total or 1):.1%} | {us / total * statements_us:.0f} |")
    profile = Path(data.get("profile", ""))
    if profile.is_file():
        counted = worker_parts(profile)
        waiting = counted.pop("waiting", 0)
        head_samples = counted.pop(HEAD, 0)
        start_samples = counted.pop(START_UP, 0)
        samples = sum(counted.values()) or 1
        net_us = worker_ms * 1000
        head_us = data.get("head_cpu_us") or 0.0
        lines += ["", f"| worker: part ({samples} samples on CPU in the cycle; {waiting} waiting,"
                  f" {head_samples} in the HEAD call and {start_samples} in start-up left out) |"
                  " share | ≈ µs/row of worker CPU (start-up subtracted) |", "|---|---:|---:|",
                  f"| HEAD, measured alone (bench/headcpu.py obstore) | "
                  f"{head_us / net_us:.1%} | {head_us:.0f} |"]
        rest_us = max(0.0, net_us - head_us)
        for name, count in sorted(counted.items(), key=lambda kv: -kv[1]):
            share = count / samples * rest_us / net_us
            lines.append(f"| {name} | {share:.1%} | {rest_us * count / samples:.0f} |")
    once = sorted((s for s in data["statements"] if s["toplevel"] and s["calls"] <= ONCE),
                  key=lambda s: -s["exec_ms"])
    lines += ["", "Sent at most once a cycle (subtracted with the start-up), the costliest: "
              + "; ".join(f"{s['query'][:60]} ({s['exec_ms']:.0f} ms)" for s in once[:5])]
    lines += ["", f"Start-up and shut-down of one run-once with nothing due (subtracted above): "
              f"worker {run['idle_worker_s']:.2f} s, PostgreSQL {run['idle_pg_s']:.2f} s of CPU "
              "(this run)."]
    return "\n".join(lines)


def _medians(results: Path, contender: str) -> tuple[float, float, float] | None:
    """The medians of PG, worker and background CPU per row of ``contender``'s runs."""
    if not results.exists():
        return None
    runs = [r for r in json.loads(results.read_text())["runs"] if r["contender"] == contender]
    if not runs:
        return None
    return (statistics.median(r["pg_ms_per_row"] for r in runs),
            statistics.median(r["worker_ms_per_row"] for r in runs),
            statistics.median(r.get("background_ms_per_row", 0.0) for r in runs))


def _spread(values: list[float], fmt: str = "{:.3f}") -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    return f"{fmt.format(med)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def report(runs: list[Run], facts: dict[str, Any]) -> str:
    by: defaultdict[str, list[Run]] = defaultdict(list)
    for r in runs:
        by[r.contender].append(r)
    lines = [
        f"Per finalized row, N = {runs[0].n if runs else 0:,}, {len(by.get('ours', []))} "
        f"repeats interleaved, PostgreSQL {facts.get('postgres', '?')}, "
        f"{facts.get('cores', '?')} cores, load {min(r.load_start for r in runs):.2f}-"
        f"{max(r.load_start for r in runs):.2f}" if runs else "no runs",
        "",
        "| contender | PG CPU ms/row | of which background processes | worker CPU ms/row |"
        " vacuum after, PG ms/row | statements/row (top level) | wall s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in by:
        rs = by[name]
        lines.append(
            f"| {name} | {_spread([r.pg_ms for r in rs])}"
            f" | {_spread([r.background_ms for r in rs])} | {_spread([r.worker_ms for r in rs])}"
            f" | {_spread([r.vacuum_ms for r in rs])}"
            f" | {_spread([r.statements_top / r.n for r in rs], '{:.2f}')}"
            f" | {_spread([r.wall_s for r in rs], '{:.1f}')} |")
    lines += ["", "Ratios per repetition (the same repetition's runs), median (min-max):", ""]
    lines += ["| ratio | PG CPU | worker CPU |", "|---|---:|---:|"]
    for other in ("floor", "previous", CANDIDATE):
        if "ours" not in by or other not in by:
            continue
        pairs = [(a, b) for a in by["ours"] for b in by[other] if a.rep == b.rep]
        # The floor's client is no worker (a loop over known rows): no worker ratio.
        worker = "-" if other == "floor" else _spread(
            [a.worker_ms / b.worker_ms for a, b in pairs], "{:.2f}")
        lines.append(
            f"| ours / {other} | {_spread([a.pg_ms / b.pg_ms for a, b in pairs], '{:.2f}')}"
            f" | {worker} |")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.cycle_cost",
                                 description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4000, help="stuck recordings per run")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each contender")
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--previous", default=PREVIOUS, help="the previous release's commit")
    ap.add_argument("--candidate", metavar="DIR",
                    help="a scratch copy of the tree with a change to measure: contender "
                         "'candidate' (--contenders ours,candidate)")
    ap.add_argument("--stack-dir", default=str(REPO / ".stack" / "cycle"))
    ap.add_argument("--out", default=str(REPO / "out" / "cycle"))
    ap.add_argument("--env", action="append", default=[], metavar="VAR=VALUE",
                    help="a variable for every run-once (e.g. RFR_BATCH_SIZE=500)")
    ap.add_argument("--attribute", action="store_true",
                    help="then one run of ours and previous with statements and functions "
                         "tracked, the worker under py-spy")
    ap.add_argument("--spy-rate", type=int, default=250, help="py-spy samples per second")
    ap.add_argument("--render", metavar="ATTRIBUTION_JSON",
                    help="only print the attribution tables of an earlier --attribute run")
    return ap


def run_all(args: argparse.Namespace, state: dict[str, Any]) -> tuple[str, list[str]]:
    """Every contender ``args.repeat`` times, interleaved (then the attribution runs); the
    table, and the problems (a contender that did not finalize every row)."""
    contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    if unknown := set(contenders) - {*CONTENDERS, CANDIDATE}:
        raise SystemExit(f"unknown contender(s): {', '.join(sorted(unknown))}")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    bench = CycleBench(args, state)
    extra: list[str] = []
    try:
        bench.prepare(contenders)
        for rep in range(1, args.repeat + 1):
            k = (rep - 1) % len(contenders)
            for contender in contenders[k:] + contenders[:k]:
                bench.run(contender, rep)
        if args.attribute:
            for contender in [c for c in contenders if c != "floor"]:
                bench.run(contender, 0, attribute=True)
                extra.append(attribution_report(
                    Path(args.out) / f"attribution-{contender}.json"))
    finally:
        bench.restore()
    table = "\n\n".join([report(bench.runs, bench.facts), *extra])
    (Path(args.out) / "report.md").write_text(table + "\n")
    problems = [f"{r.contender} #{r.rep}: {p}" for r in bench.runs for p in r.problems]
    return table, problems


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--floor-client"]:
        return floor_client(argv[1], int(argv[2]), argv[3])
    args = parser().parse_args(argv)
    if args.render:
        print(attribution_report(Path(args.render)))
        return 0
    sys.path.insert(0, str(REPO))
    from tools import stack

    stack_dir = Path(args.stack_dir)
    state = stack.load_state(stack_dir)
    own_stack = state is None
    if own_stack:
        say(f"starting a local stack in {stack_dir}")
        state = stack.up(stack_dir)
    try:
        table, problems = run_all(args, state)
    finally:
        if own_stack:
            stack.down(stack_dir)
    print(table)
    if problems:
        print("\nFAILED: a contender did not finalize every row:\n  " + "\n  ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
