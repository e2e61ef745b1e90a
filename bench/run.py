"""``make bench``: our worker against its peers, on one machine, in one run, on the same data.

Figures (each repeated, ours and the peers interleaved so that noise hits them all):

1. end to end — N stuck recordings whose binaries are in SeaweedFS: ours (the driver's cycle:
   claim, HEAD, apply, relay to Tansu), Procrastinate and PgQueuer (the same HEAD and the same
   transition + outbox insert as a queued task); rows/s, ours/peer ratios, where our time went,
   CPU per finalized row by component, statements per finalized row (pg_stat_statements);
2. cost growth — claim_due with 0 and 1,000,000 Done rows, relay events/s with 100,000
   unpublished rows, peak RSS of ``recording-finalize run-once`` facing 100,000 due rows;
   ``discover_stuck`` per call beside 1,000 to 100,000 active recordings that are not stuck,
   and ``discover_unpublished`` beside 1,000 and 100,000 Available recordings outside its window
   (bench/discovery.py), with their plans.

Every figure comes with the machine's load average, the CPU share stolen by the hypervisor, and
what the rest of the machine spent meanwhile. A benchmark is not a test: the exit status is 1
only when the work itself went wrong (a recording not finalized, an event missing in Kafka).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg

from bench import costs, cycle_cost, dbcost, discovery, peers, report, sqlcost, world
from bench.sysstat import BackendCpu, Meter, Usage, peak_rss_kb

REPO = Path(__file__).resolve().parent.parent
WORKER_ROLE = "rfr_bench_worker"
# The messenger service of the drain figure (bench/messenger.py): the product's service group
# role, and INSERT on its own session table as the service's role would have.
SERVICE_ROLE = "rfr_bench_service"
CONTENDERS = ("ours", "procrastinate", "pgqueuer")
# Documented best settings of the peers (see bench/peers.py); ours are the driver's defaults
# except the batch sizes a backlog drain would use.
PROCRASTINATE_CONCURRENCY = 30
PGQUEUER_BATCH = 10
PGQUEUER_PROCESSES = 2
OURS_ENV = {"RFR_BATCH_SIZE": "500", "RFR_RELAY_BATCH_SIZE": "5000", "RFR_S3_CONCURRENCY": "8"}
DEFAULT_FIGURES = "e2e,dbcost,sqlcost,cycle,drain,claim,relay,rss,discovery"
CLAIM_DUE_ROWS = 5000
CLAIM_BATCH = 100
# The per-row HEAD's clients the levers figure compares: the driver's and the two it replaced.
HEAD_LABELS = {"obstore": "obstore", "signed": "hand-signed", "boto3": "boto3"}
HEAD_CPU_N = 1000


#: The drain figure's pacing variants (``--drain-variants``): the worker's default, pacing off,
#: and two fixed rates (pacing off, RFR_MAX_APPLY_RATE); with nobody else on the database only
#: the default and off are compared (``--drain-idle-variants``).
DRAIN_VARIANTS = "adaptive,off,250,100"
DRAIN_IDLE_VARIANTS = "adaptive,off"
DRAIN_SCENARIOS = ("service", "idle")


def _backend_pids(conn: psycopg.Connection[Any], role: str) -> list[int]:
    """The pids of the client backends logged in as ``role`` (but the asking one's)."""
    rows = conn.execute("select pid from pg_stat_activity where usename = %s"
                        " and backend_type = 'client backend' and pid <> pg_backend_pid()",
                        (role,)).fetchall()
    return [int(pid) for (pid,) in rows]


@dataclass(frozen=True)
class DrainVariant:
    """One way of running the drain: the worker's environment on top of OURS_ENV."""

    spec: str
    label: str
    env: dict[str, str]
    cap: float = 0.0

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "_" for c in self.spec)[:40]


def drain_variant(spec: str) -> DrainVariant:
    """``adaptive`` (the default: nothing set), ``off`` (RFR_PACING=off), a number (a fixed
    rate: RFR_PACING=off, RFR_MAX_APPLY_RATE=number), or ``VAR=value+VAR=value`` verbatim."""
    spec = spec.strip()
    if spec in ("adaptive", "default"):
        return DrainVariant(spec, "default (adaptive)", {})
    if spec in ("off", "unthrottled"):
        return DrainVariant(spec, "pacing off", {"RFR_PACING": "off"})
    try:
        rate = float(spec)
    except ValueError:
        pairs = [kv.split("=", 1) for kv in spec.split("+")]
        if not spec or any(len(kv) != 2 or not kv[0] for kv in pairs):
            raise SystemExit(f"--drain-variants: cannot read {spec!r}") from None
        env = {k.strip(): v.strip() for k, v in pairs}
        return DrainVariant(spec, spec, env, float(env.get("RFR_MAX_APPLY_RATE", "0") or 0))
    if rate <= 0:
        return DrainVariant(spec, "pacing off", {"RFR_PACING": "off"})
    return DrainVariant(spec, f"fixed {rate:g} rows/s",
                        {"RFR_PACING": "off", "RFR_MAX_APPLY_RATE": f"{rate:g}"}, rate)


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _watch_peak(pid: int, peak: list[int], done: threading.Event) -> None:
    """Keeps ``peak[0]`` at the highest VmHWM of ``pid`` seen until ``done``."""
    while not done.is_set():
        peak[0] = max(peak[0], peak_rss_kb(pid))
        done.wait(0.05)


def say(msg: str) -> None:
    print(f"bench [{time.strftime('%H:%M:%S')}] {msg}", flush=True)


@dataclass
class Run:
    """One measurement."""

    figure: str
    contender: str
    rep: int
    n: int
    wall_s: float
    rate: float
    usage: Usage
    problems: list[str] = field(default_factory=list)
    statements: dict[str, int] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["usage"]["others_s"] = self.usage.others_s
        return out


class Bench:
    def __init__(self, args: argparse.Namespace, state: dict[str, Any]) -> None:
        self.args = args
        self.env: dict[str, str] = dict(state["env"])
        services = state["services"]
        self.services: dict[str, Any] = services
        self.meter = Meter(services["postgres"]["pid"], services["s3"]["pid"],
                           services["kafka"]["pid"])
        self.owner_url = self.env["DATABASE_URL"]
        self.worker_password = secrets.token_hex(16)
        self.worker_url = self._url(self.owner_url, WORKER_ROLE, self.worker_password)
        self.service_url = self._url(self.owner_url, SERVICE_ROLE, self.worker_password)
        self.bootstrap = self.env["KAFKA_BOOTSTRAP_SERVERS"]
        self.items = world.make_items(args.n)
        self.runs: list[Run] = []
        self.facts: dict[str, Any] = {}
        self.python = sys.executable

    @staticmethod
    def _url(url: str, user: str, password: str, dbname: str | None = None) -> str:
        parts = urlsplit(url)
        host = parts.netloc.rsplit("@", 1)[1]
        netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
        path = f"/{dbname}" if dbname else parts.path
        return urlunsplit((parts.scheme, netloc, path, parts.query, ""))

    def _use_topic(self, topic: str, dbname: str | None = None) -> None:
        """The topic lives on the server (recording_finalize.settings): the run's becomes it."""
        with self.owner(dbname) as conn:
            conn.execute("update recording_finalize.settings set topic = %s", (topic,))

    def owner(self, dbname: str | None = None) -> psycopg.Connection[Any]:
        url = self.owner_url
        if dbname:
            parts = urlsplit(url)
            url = urlunsplit((parts.scheme, parts.netloc, f"/{dbname}", parts.query, ""))
        return psycopg.connect(url, autocommit=True)

    def _cli_env(self, url: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "RFR_", "AWS_"))}
        env.update({k: v for k, v in self.env.items() if not k.startswith("PG")})
        env.update({"DATABASE_URL": url, "RFR_METRICS_PORT": "0"})
        env.update(extra)
        return env

    def save(self) -> None:
        """The raw figures so far (a broken run keeps what it measured)."""
        path = Path(self.args.out) / "results.json"
        results = {"facts": self.facts, "runs": [r.to_dict() for r in self.runs]}
        path.write_text(json.dumps(results, indent=1, default=str))

    # ---- set-up ----------------------------------------------------------------------------

    def migrate(self, dbname: str | None = None) -> None:
        url = self.owner_url
        if dbname:
            parts = urlsplit(url)
            url = urlunsplit((parts.scheme, parts.netloc, f"/{dbname}", parts.query, ""))
        cli = str(Path(self.python).parent / "recording-finalize")
        # Every database here is new: the service's reference tables first, then the product.
        proc = subprocess.run([cli, "migrate", "--create-service-tables"], env=self._cli_env(url),
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"recording-finalize migrate failed:\n{proc.stderr[-2000:]}")

    def setup(self) -> None:
        t0 = time.monotonic()
        self.migrate()
        with self.owner() as conn:
            conn.execute("create extension if not exists pg_stat_statements")
            exists = conn.execute("select 1 from pg_roles where rolname = %s",
                                  (WORKER_ROLE,)).fetchone()
            verb = "alter" if exists else "create"
            conn.execute(f"{verb} role {WORKER_ROLE} login password '{self.worker_password}'")
            conn.execute(f"grant recording_finalize_worker to {WORKER_ROLE}")
            exists = conn.execute("select 1 from pg_roles where rolname = %s",
                                  (SERVICE_ROLE,)).fetchone()
            verb = "alter" if exists else "create"
            conn.execute(f"{verb} role {SERVICE_ROLE} login password '{self.worker_password}'")
            conn.execute(f"grant recording_finalize_service to {SERVICE_ROLE}")
            conn.execute(f"grant usage on schema messenger to {SERVICE_ROLE}")
            conn.execute(f"grant insert on messenger.call_sessions to {SERVICE_ROLE}")
            row = conn.execute("select current_setting('server_version')").fetchone()
            self.facts["postgres"] = row[0] if row else "?"
        asyncio.run(peers.procrastinate_setup(self.owner_url))
        asyncio.run(peers.pgqueuer_setup(self.owner_url))
        say(f"database migrated, worker role and peers' schemas ready "
            f"({time.monotonic() - t0:.1f} s)")
        seconds = world.seed_objects(self.env, self.items)
        say(f"{len(self.items):,} binaries uploaded to SeaweedFS ({seconds:.1f} s, "
            f"{len(self.items) / seconds:,.0f}/s)")

    # ---- one measured run ------------------------------------------------------------------

    def _reset(self, contender: str, dbname: str | None = None,
               items: Sequence[world.Item] | None = None) -> None:
        items = self.items if items is None else items
        with self.owner(dbname) as conn:
            world.reset(conn, peers.QUEUE_TABLES)
            world.seed_stuck(conn, items)
        ids = [str(it.recording_id) for it in items]
        if contender == "procrastinate":
            asyncio.run(peers.procrastinate_enqueue(self.owner_url, ids))
        elif contender == "pgqueuer":
            asyncio.run(peers.pgqueuer_enqueue(self.owner_url, ids))
        with self.owner(dbname) as conn:
            world.analyze(conn)
            for table in peers.QUEUE_TABLES:
                if conn.execute("select to_regclass(%s)", (table,)).fetchone() != (None,):
                    conn.execute(f"vacuum analyze {table}")
            conn.execute("select pg_stat_statements_reset()")

    def _spawn(self, cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[str]:
        return subprocess.Popen(cmd, cwd=REPO, env=env, text=True, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=log.open("w"))

    def _measure(self, procs: list[subprocess.Popen[str]],
                 extra_pids: Callable[[], dict[str, list[int]]] | None = None,
                 ) -> tuple[float, list[dict[str, Any]], Usage, list[int]]:
        """Waits until every process is ready, starts them together, waits for their JSON.

        Returns wall seconds, their outputs, the machine's usage, their peak RSS (kB)."""
        assert all(p.stdout and p.stdin for p in procs)
        for p in procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            if line.strip() != "ready":
                p.kill()
                raise SystemExit(f"a contender did not start: {line!r}; see out/bench/*.log")
        before = self.meter.snapshot()
        t0 = time.perf_counter()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outputs, rss = [], []
        for p in procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            p.wait()
            out = json.loads(line) if line.startswith("{") else {"error": line}
            outputs.append(out)
            rss.append(int(out.get("maxrss_kb", 0)))  # its own VmHWM (see sysstat.peak_rss_kb)
        wall = time.perf_counter() - t0
        time.sleep(0.3)  # let the postmaster reap the contender's backends (their CPU moves)
        after = self.meter.snapshot()
        worker_cpu = sum(o.get("cpu_s", 0.0) for o in outputs)
        return wall, outputs, Meter.usage(before, after, wall, {"worker": worker_cpu}), rss

    def _statement_times(self, role: str) -> dict[str, list[float]]:
        """Per top-level statement of ``role``: [calls, total execution ms] (server side)."""
        with self.owner() as conn:
            rows = conn.execute(
                """
                select regexp_replace(left(query, 200), '\\s+', ' ', 'g'), sum(calls)::bigint,
                    sum(total_exec_time)
                from pg_stat_statements s join pg_roles r on r.oid = s.userid
                where r.rolname = %s and query not ilike '%%pg_stat_statements%%'
                group by 1 order by 3 desc
                """,
                (role,),
            ).fetchall()
        return {q: [float(c), float(ms)] for q, c, ms in rows}

    def _statements(self, role: str) -> dict[str, int]:
        with self.owner() as conn:
            rows = conn.execute(
                """
                select regexp_replace(left(query, 200), '\\s+', ' ', 'g'), sum(calls)::bigint
                from pg_stat_statements s join pg_roles r on r.oid = s.userid
                where r.rolname = %s and query not ilike '%%pg_stat_statements%%'
                group by 1 order by 2 desc
                """,
                (role,),
            ).fetchall()
        return {q: int(c) for q, c in rows}

    def run_e2e(self, contender: str, rep: int, figure: str = "e2e",
                levers_off: str = "", head: str = "obstore", dbname: str | None = None,
                label: str | None = None) -> Run:
        n = len(self.items)
        self._reset(contender, dbname)
        topic = costs.new_topic_name("e2e")
        world.create_topic(self.bootstrap, topic)
        self._use_topic(topic, dbname)
        logs = Path(self.args.out)
        if contender == "ours":
            url = self._url(self.worker_url, WORKER_ROLE, self.worker_password, dbname)
            env = self._cli_env(url, RFR_TOPIC=topic, BENCH_LEVERS_OFF=levers_off,
                                BENCH_S3_HEAD=head, **OURS_ENV)
            procs = [self._spawn([self.python, "-m", "bench.ours"], env,
                                 logs / f"{figure}-{contender}-{rep}.log")]
            role = WORKER_ROLE
        else:
            env = self._cli_env(self.owner_url, RFR_TOPIC=topic)
            if contender == "procrastinate":
                cmds = [["procrastinate", "--concurrency", str(PROCRASTINATE_CONCURRENCY)]]
            else:
                cmds = [["pgqueuer", "--batch-size", str(PGQUEUER_BATCH)]] * PGQUEUER_PROCESSES
            procs = [self._spawn([self.python, "-m", "bench.peers", *c], env,
                                 logs / f"{figure}-{contender}-{rep}-{i}.log")
                     for i, c in enumerate(cmds)]
            role = urlsplit(self.owner_url).username or ""
        backend_cpu: list[float] = []
        if figure == "dbcost":
            # One connection for the watcher, kept open: a new one twice a second would cost
            # the server a backend start each time.
            with self.owner() as watch, \
                    BackendCpu(lambda: _backend_pids(watch, role)) as backends:
                wall, outputs, usage, rss = self._measure(procs)
            backend_cpu = backends.seconds()
        else:
            wall, outputs, usage, rss = self._measure(procs)
        statements = self._statements(role)
        times = self._statement_times(role) if figure == "dbcost" else {}
        with self.owner(dbname) as conn:
            result = world.outcome(conn, topic)
        problems = result.problems(n, published=contender == "ours")
        detail: dict[str, Any] = {"outputs": outputs, "rss_kb": rss, "times": times,
                                  "backend_cpu_s": backend_cpu}
        if contender == "ours":
            expect = {str(it.recording_id) for it in self.items}
            got = world.consumed_recording_ids(self.bootstrap, topic, expect)
            missing = expect - set(got)
            detail["kafka"] = {"messages": len(got), "distinct": len(set(got)),
                               "missing": len(missing)}
            if missing:
                problems.append(f"{len(missing)} events missing in Kafka")
        world.delete_topic(self.bootstrap, topic)
        if any(p.returncode for p in procs):
            problems.append(f"{contender} exited with {[p.returncode for p in procs]}")
        label = label or contender + (
            f", {HEAD_LABELS[head]} HEAD" if head != "obstore" else "") + (
            f" -{levers_off}" if levers_off else "")
        run = Run(figure, label, rep, n, wall, n / wall, usage, problems, statements, detail)
        self.runs.append(run)
        self.save()
        flag = "ok" if not problems else "PROBLEMS: " + "; ".join(problems)
        say(f"{figure} #{rep} {run.contender:>22}: {run.rate:7.0f} rows/s ({wall:5.1f} s), "
            f"load {usage.load_start:.1f}, others {usage.others_s:.1f} cpu-s - {flag}")
        return run

    # ---- cost growth -----------------------------------------------------------------------

    def claim_growth(self, reps: int) -> None:
        from recording_finalize.config import load_settings

        t0 = time.monotonic()
        dbs = {0: "rfr_bench_claim_empty", self.args.done_rows: "rfr_bench_claim_history"}
        with self.owner("postgres") as conn:
            for name in dbs.values():
                conn.execute(f'drop database if exists "{name}" with (force)')
                conn.execute(f'create database "{name}"')
        for done, name in dbs.items():
            self.migrate(name)
            if done:
                with self.owner(name) as conn:
                    seconds = costs.seed_history(conn, done)
                say(f"claim: {done:,} finished recordings seeded ({seconds:.1f} s)")
        settings = load_settings({"DATABASE_URL": self.worker_url,
                                  "RFR_BATCH_SIZE": str(CLAIM_BATCH)})
        due = world.make_items(CLAIM_DUE_ROWS, seed=77)
        order = list(dbs.items())
        for rep in range(1, reps + 1):
            for done, name in order if rep % 2 else order[::-1]:
                with self.owner(name) as conn:
                    costs.clear_pending(conn)
                    world.seed_stuck(conn, due)
                    conn.execute("vacuum analyze messenger.recording_finalize_attempts,"
                                 " messenger.call_recordings, messenger.call_sessions,"
                                 " messenger.conference_sessions")
                with self.owner() as conn:
                    conn.execute("select pg_stat_statements_reset()")
                before = self.meter.snapshot()
                t = time.perf_counter()
                times = costs.time_claims(self._url(self.worker_url, WORKER_ROLE,
                                                    self.worker_password, name),
                                          settings, CLAIM_DUE_ROWS // CLAIM_BATCH + 1)
                wall = time.perf_counter() - t
                usage = Meter.usage(before, self.meter.snapshot(), wall)
                with self.owner() as conn:
                    blocks = costs.claim_blocks(conn, name)
                claims = times[:-1] or times  # the last call finds nothing
                mean = statistics.fmean(claims)
                run = Run("claim", f"{done:,} Done rows", rep, len(claims), wall, mean, usage,
                          detail={"claims_ms": claims, "blocks": blocks})
                self.runs.append(run)
                say(f"claim #{rep} with {done:>9,} Done rows: mean {mean:6.2f} ms per claim of "
                    f"{CLAIM_BATCH} (median {statistics.median(claims):.2f}), buffers per claim "
                    f"{blocks.get('hit_per_call', 0):.0f} hit / "
                    f"{blocks.get('read_per_call', 0):.1f} read, load {usage.load_start:.1f}")
        with self.owner("postgres") as conn:
            for name in dbs.values():
                conn.execute(f'drop database if exists "{name}" with (force)')
        say(f"claim growth done ({time.monotonic() - t0:.0f} s)")

    def relay_throughput(self, reps: int) -> None:
        n = self.args.relay_rows
        for rep in range(1, reps + 1):
            topic = costs.new_topic_name("relay")
            world.create_topic(self.bootstrap, topic)
            self._use_topic(topic)
            with self.owner() as conn:
                world.reset(conn)
                costs.seed_outbox(conn, topic, n)
                conn.execute("select pg_stat_statements_reset()")
            env = self._cli_env(self.worker_url, RFR_TOPIC=topic, **OURS_ENV)
            proc = self._spawn([self.python, "-m", "bench.ours", "relay"], env,
                               Path(self.args.out) / f"relay-{rep}.log")
            wall, outputs, usage, rss = self._measure([proc])
            statements = self._statements(WORKER_ROLE)
            out = outputs[0]
            published = int(out.get("summary", {}).get("published", 0))
            drain_s = float(out.get("wall_s", wall))
            problems = []
            if published != n:
                problems.append(f"{published} of {n} outbox rows published")
            with self.owner() as conn:
                ids = conn.execute("select recording_id::text from recording_finalize.outbox"
                                   " where published_at is not null").fetchall()
            expect = {row[0] for row in ids}
            got = world.consumed_recording_ids(self.bootstrap, topic, expect)
            missing = expect - set(got)
            if missing or len(expect) != n:
                problems.append(f"{len(missing)} events missing in Kafka")
            world.delete_topic(self.bootstrap, topic)
            run = Run("relay", "ours", rep, n, drain_s, n / drain_s, usage, problems, statements,
                      {"outputs": outputs, "rss_kb": rss,
                       "kafka": {"messages": len(got), "distinct": len(set(got))}})
            self.runs.append(run)
            say(f"relay #{rep}: {run.rate:,.0f} events/s ({drain_s:.1f} s for {n:,}), "
                f"load {usage.load_start:.1f} - {problems or 'ok'}")

    def rss_backlog(self, reps: int) -> None:
        n = self.args.rss_backlog
        backlog = world.make_items(n, seed=5)  # the first items are self.items: binaries exist
        cli = str(Path(self.python).parent / "recording-finalize")
        for rep in range(1, reps + 1):
            topic = costs.new_topic_name("rss")
            world.create_topic(self.bootstrap, topic)
            self._use_topic(topic)
            with self.owner() as conn:
                world.reset(conn)
                world.seed_stuck(conn, backlog)
                world.analyze(conn)
            env = self._cli_env(self.worker_url, RFR_TOPIC=topic,
                                RFR_MAX_RUN_DURATION=f"{self.args.rss_seconds}s", **OURS_ENV)
            before = self.meter.snapshot()
            t0 = time.perf_counter()
            with (Path(self.args.out) / f"rss-{rep}.log").open("w") as log:
                proc = subprocess.Popen([cli, "run-once"], cwd=REPO, env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=log)
                # The CLI is not ours to instrument: its VmHWM is read while it runs (the last
                # read before it exits misses at most the last 50 ms).
                peak = [0]
                watching = threading.Event()
                watcher = threading.Thread(target=_watch_peak, args=(proc.pid, peak, watching),
                                           daemon=True)
                watcher.start()
                assert proc.stdout is not None
                line = proc.stdout.read()
                _, status, rusage = os.wait4(proc.pid, 0)
                watching.set()
                watcher.join()
                proc.returncode = os.waitstatus_to_exitcode(status)
            wall = time.perf_counter() - t0
            time.sleep(0.3)
            usage = Meter.usage(before, self.meter.snapshot(), wall,
                                {"worker": rusage.ru_utime + rusage.ru_stime})
            peak_mb = peak[0] / 1024
            summary = json.loads(line) if line.startswith("{") else {}
            with self.owner() as conn:
                row = conn.execute(
                    "select count(*) filter (where status = 'Pending'),"
                    " count(*) filter (where status = 'Done'),"
                    " (select count(*) from messenger.call_recordings"
                    "  where status = 'Available')"
                    " from messenger.recording_finalize_attempts").fetchone()
            pending, done, available = row if row else (0, 0, 0)
            problems = []
            if summary.get("error") or proc.returncode != 0:
                problems.append(f"run-once exited {proc.returncode}: {summary.get('error')}")
            if summary.get("published", -1) != available:
                problems.append(f"{summary.get('published')} events published for "
                                f"{available} Available recordings")
            world.delete_topic(self.bootstrap, topic)
            run = Run("rss", "ours", rep, n, wall, peak_mb, usage, problems,
                      detail={"summary": summary, "pending_after": pending, "done": done})
            self.runs.append(run)
            say(f"rss #{rep}: peak {peak_mb:.0f} MB facing {n:,} due rows "
                f"({done:,} finalized in {wall:.0f} s, {pending:,} left) - "
                f"{problems or 'ok'}")

    def discovery(self, reps: int) -> None:
        """discover_stuck's time per call and plan beside active recordings (bench/discovery.py),
        one database per size."""
        sizes = [int(x) for x in self.args.discovery_active.split(",") if x.strip()]
        for rep in range(1, reps + 1):
            for active in sizes if rep % 2 else sizes[::-1]:
                # One size at a time, so that the machine's usage is that size's.
                before = self.meter.snapshot()
                t0 = time.perf_counter()
                result = discovery.measure(self.owner_url, [active], self.args.discovery_stuck,
                                           self.args.discovery_calls,
                                           self.args.discovery_history, say=say)
                wall = time.perf_counter() - t0
                usage = Meter.usage(before, self.meter.snapshot(), wall)
                entry = result["sizes"][0]
                self.runs.append(Run(
                    "discovery", f"{active:,} active", rep, active, wall, entry["median_ms"],
                    usage, discovery.problems(result),
                    detail=entry | {"stuck": result["stuck"], "history": result["history"],
                                    "calls": result["calls"]}))
                self.save()
        # Republish discovery beside Available recordings outside its window (a few inside):
        # every size's calls interleaved within each repetition.
        outside = [int(x) for x in self.args.discovery_outside.split(",") if x.strip()]
        for rep in range(1, reps + 1):
            before = self.meter.snapshot()
            t0 = time.perf_counter()
            result = discovery.measure_republish(
                self.owner_url, outside if rep % 2 else outside[::-1],
                self.args.discovery_inside, self.args.discovery_calls, say=say)
            wall = time.perf_counter() - t0
            usage = Meter.usage(before, self.meter.snapshot(), wall)
            problems = discovery.republish_problems(result)
            for entry in result["sizes"]:
                size = entry["outside"]
                self.runs.append(Run(
                    "republish", f"{size:,} outside", rep, size, wall, entry["median_ms"],
                    usage, problems,
                    detail=entry | {"inside": result["inside"], "calls": result["calls"],
                                    "window_s": result["window_s"]}))
            self.save()

    # ---- the database's cost per row: the SQL now beside the SQL before (bench/dbcost.py) ----

    def dbcost(self, reps: int) -> None:
        if not dbcost.before_files():
            # No SQL before to compare with (bench/sql_before/ holds none since the 0.2.0
            # baseline): the SQL now alone.
            self.facts["sql_before"] = []
            say("dbcost: bench/sql_before/ holds no SQL: the SQL now only")
            for rep in range(1, reps + 1):
                self.run_e2e("ours", rep, figure="dbcost", label="SQL now")
            return
        t0 = time.monotonic()
        with self.owner("postgres") as conn:
            conn.execute(f'drop database if exists "{dbcost.BEFORE_DB}" with (force)')
            conn.execute(f'create database "{dbcost.BEFORE_DB}"')
        self.migrate(dbcost.BEFORE_DB)
        with self.owner(dbcost.BEFORE_DB) as conn:
            conn.execute("create extension if not exists pg_stat_statements")
            applied = dbcost.apply_before(conn)
        self.facts["sql_before"] = applied
        say(f"dbcost: {dbcost.BEFORE_DB} migrated, then {', '.join(applied) or 'nothing'} from "
            f"bench/sql_before/ ({time.monotonic() - t0:.1f} s)")
        variants = [(None, "SQL now"), (dbcost.BEFORE_DB, "SQL before")]
        try:
            for rep in range(1, reps + 1):
                for db, label in variants if rep % 2 else variants[::-1]:
                    self.run_e2e("ours", rep, figure="dbcost", dbname=db, label=label)
        finally:
            with self.owner("postgres") as conn:
                conn.execute(f'drop database if exists "{dbcost.BEFORE_DB}" with (force)')

    def cycle(self, reps: int) -> None:
        """A finalized row's cost over the installed package's whole run-once, measured from
        outside, beside the floor and the previous release (bench/cycle_cost.py)."""
        argv = ["--n", str(min(self.args.n, self.args.cycle_rows)), "--repeat", str(reps),
                "--out", str(Path(self.args.out) / "cycle"), *self.args.cycle_args.split()]
        try:
            table, problems = cycle_cost.run_all(cycle_cost.parser().parse_args(argv),
                                                 {"env": self.env, "services": self.services})
        except SystemExit as err:  # a wheel that does not build: this figure's failure only
            raise RuntimeError(str(err)) from None
        self.facts["cycle"] = table
        say("cycle:\n" + table)
        if problems:
            raise RuntimeError("; ".join(problems))

    def sqlcost(self, reps: int) -> None:
        """The SQL alone, claim and apply by one connection (bench/sqlcost.py): this tree's
        beside earlier releases' (``--sqlcost-variants``), each in a database of its own,
        interleaved."""
        n = min(self.args.n, self.args.sqlcost_rows)
        admin = urlunsplit(urlsplit(self.owner_url)._replace(path="/postgres"))
        os.environ.setdefault("RFR_STACK_PG_BIN", self.env.get("RFR_STACK_PG_BIN", ""))
        before = self.meter.snapshot()
        t0 = time.perf_counter()
        result = sqlcost.measure(admin, n, reps, self.args.sqlcost_variants, say=say)
        wall = time.perf_counter() - t0
        usage = Meter.usage(before, self.meter.snapshot(), wall)
        for variant, runs in result["runs"].items():
            for rep, one in enumerate(runs, 1):
                self.runs.append(Run("sqlcost", variant, rep, n, one["wall_s"],
                                     one["cpu_ms_per_row"], usage,
                                     detail={"commit": result["commits"][variant],
                                             "extra": result["extra"][variant]}))
        self.save()

    # ---- the happy path under a drain (bench/messenger.py) ---------------------------------

    def _drain_items(self) -> list[world.Item]:
        items = world.make_items(self.args.drain_rows, seed=5)  # starts with self.items
        if len(items) > len(self.items):
            seconds = world.seed_objects(self.env, items[len(self.items):])
            say(f"drain: {len(items) - len(self.items):,} more binaries uploaded "
                f"({seconds:.1f} s)")
        return items

    def drain(self, reps: int) -> None:
        """The messenger's callbacks at a fixed rate, idle and while ours drains a backlog, for
        each pacing variant of ``--drain-variants``; and, with ``idle`` in ``--drain-scenarios``,
        the same drain on a database nobody else uses, for each of ``--drain-idle-variants``.
        Every repetition runs every variant of every scenario, in alternating order."""
        items = self._drain_items()
        plan: list[tuple[str, list[DrainVariant]]] = []
        for scenario in _csv(self.args.drain_scenarios):
            if scenario not in DRAIN_SCENARIOS:
                raise SystemExit(f"--drain-scenarios: unknown {scenario!r} "
                                 f"(one of {', '.join(DRAIN_SCENARIOS)})")
            specs = self.args.drain_variants if scenario == "service" else (
                self.args.drain_idle_variants)
            plan.append((scenario, [drain_variant(s) for s in _csv(specs)]))
        for rep in range(1, reps + 1):
            for scenario, variants in plan:
                for variant in variants if rep % 2 else variants[::-1]:
                    self._drain_once(items, variant, rep, scenario == "service")

    def _drain_once(self, items: list[world.Item], variant: DrainVariant, rep: int,
                    service_load: bool) -> None:
        n = len(items)
        self._reset("ours", items=items)
        topic = costs.new_topic_name("drain")
        world.create_topic(self.bootstrap, topic)
        self._use_topic(topic)
        logs = Path(self.args.out)
        tag = f"{'service' if service_load else 'idle'}-{variant.slug}-{rep}"
        env = self._cli_env(self.worker_url, RFR_TOPIC=topic,
                            **(OURS_ENV | {"RFR_MAX_RUN_DURATION": self.args.drain_max_run}
                               | variant.env))
        if self.args.drain_signals:
            env["BENCH_TRACE"] = "apply_outcomes,claim_due,pace"
        worker = self._spawn([self.python, "-m", "bench.ours"], env,
                             logs / f"drain-{tag}.log")
        helpers: dict[str, subprocess.Popen[str]] = {}
        if service_load:
            helpers["service"] = self._spawn(
                [self.python, "-m", "bench.messenger", str(self.args.drain_call_rate)],
                self._cli_env(self.service_url), logs / f"drain-messenger-{tag}.log")
        if self.args.drain_signals:
            helpers["signals"] = self._spawn([self.python, "-m", "bench.signals"],
                                             self._cli_env(self.worker_url),
                                             logs / f"drain-signals-{tag}.log")
        for p in (worker, *helpers.values()):
            assert p.stdout is not None
            line = p.stdout.readline()
            if line.strip() != "ready":
                raise SystemExit(f"a drain process did not start: {line!r}; see out/bench/")
        for p in helpers.values():
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        if helpers:
            time.sleep(self.args.drain_idle_s)
        before = self.meter.snapshot()
        t0 = time.perf_counter()
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
        line = worker.stdout.readline()
        worker.wait()
        wall = time.perf_counter() - t0
        usage = Meter.usage(before, self.meter.snapshot(), wall)
        if helpers:
            time.sleep(1.0)
        answers: dict[str, dict[str, Any]] = {}
        for name, p in helpers.items():
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write("stop\n")
            p.stdin.flush()
            hline = p.stdout.readline()
            p.wait()
            answers[name] = (json.loads(hline) if hline.startswith("{")
                             else {"error": hline, "samples": []})
        out = json.loads(line) if line.startswith("{") else {"error": line}
        svc = answers.get("service", {"samples": []})
        problems: list[str] = []
        codes = {"worker": worker.returncode, **{k: p.returncode for k, p in helpers.items()}}
        if any(codes.values()):
            problems.append(f"exit codes {codes}")
        # The drain is the cycle's claim/check/apply phase: the relay after it publishes the
        # backlog's events and then chases the service's own, 50 a second, until none is left.
        start, end = out.get("t_start", 0.0), out.get("t_apply_end", out.get("t_end", 0.0))
        lat: dict[str, dict[str, list[float]]] = {"idle": {}, "drain": {}}
        for t, name, ms in svc.get("samples", []):
            phase = "idle" if t < start else "drain" if t <= end else None
            if phase:
                lat[phase].setdefault(name, []).append(round(ms, 2))
        with self.owner() as conn:
            # The service's events share the server's topic; those after the relay's last
            # batch wait for the next cycle, so only the backlog's must all be published.
            result = world.outcome(conn, topic)
            row = conn.execute(
                "select count(*) from recording_finalize.outbox"
                " where topic = %s and published_at is not null"
                " and recording_id = any(%s::uuid[])",
                (topic, [it.recording_id for it in items])).fetchone()
        m = int(svc.get("recordings", 0))
        backlog_published = int(row[0]) if row else 0
        # A slow cap may reach RFR_MAX_RUN_DURATION: what the cycle finalized must be whole,
        # the rest stays due for the next cycle.
        summary = out.get("summary", {})
        k = int(summary.get("reconciled", -1))
        if summary.get("error") is not None:
            problems.append(f"the cycle failed: {summary}")
        if result.outbox != k + m or backlog_published != k:
            problems.append(f"{result.outbox} outbox rows for {k} + {m} recordings, "
                            f"{backlog_published} of the backlog's {k} finalized published")
        if result.available != k + m or result.done != k + m or result.realtime != k + m:
            problems.append(f"{result.available} Available, {result.done} Done, "
                            f"{result.realtime} realtime rows for {k} + {m}")
        world.delete_topic(self.bootstrap, topic)
        apply_s = max(end - start, 1e-9)
        detail: dict[str, Any] = {
            "output": out, "latency": lat, "messenger_recordings": m,
            "worst_lag_ms": svc.get("worst_lag_ms"), "variant": variant.spec,
            "env": variant.env, "cap": variant.cap, "service_load": service_load,
            "call_rate": self.args.drain_call_rate if service_load else 0.0,
            "finalized": k, "pacing": summary.get("pacing"),
            "max_run": env.get("RFR_MAX_RUN_DURATION"), "idle_s": self.args.drain_idle_s}
        if "signals" in answers:
            detail["signals"] = answers["signals"]
            detail["service_samples"] = [[t, ms] for t, name, ms in svc.get("samples", [])
                                         if name == "recording_ingest_completed"]
        run = Run("drain" if service_load else "drain-idle", variant.label, rep, n, apply_s,
                  max(k, 0) / apply_s, usage, problems, detail=detail)
        self.runs.append(run)
        self.save()

        def p99(phase: str) -> float:
            vals = sorted(lat[phase].get("recording_ingest_completed", []))
            return vals[int(0.99 * (len(vals) - 1))] if vals else float("nan")

        pacing = summary.get("pacing") or {}
        held = (f"; pacing {pacing.get('mode')}, limited {pacing.get('limited')}"
                f" ({pacing.get('reason')})" if pacing else "")
        if service_load:
            say(f"drain #{rep} {run.contender:>18}: {run.rate:6.0f} rows/s while the messenger "
                f"ran {m} recordings; ingest p99 idle {p99('idle'):.1f} ms, drain "
                f"{p99('drain'):.1f} ms{held}; load {usage.load_start:.1f} - {problems or 'ok'}")
        else:
            say(f"drain #{rep} {run.contender:>18}: {run.rate:6.0f} rows/s, nobody else on the "
                f"database{held}; load {usage.load_start:.1f} - {problems or 'ok'}")

    # ---- the whole bench -------------------------------------------------------------------

    def e2e_rounds(self, reps: int) -> None:
        order = list(CONTENDERS)
        for rep in range(1, reps + 1):
            for contender in order:
                self.run_e2e(contender, rep)
            order = order[1:] + order[:1]  # interleave: each goes first once

    def head_cpu(self, rep: int, order: Sequence[str]) -> None:
        """CPU per HEAD of each S3 client, one thread, the same objects (bench/headcpu.py)."""
        n = min(HEAD_CPU_N, len(self.items))
        for client in order:
            env = self._cli_env(self.worker_url, **OURS_ENV)
            before = self.meter.snapshot()
            t0 = time.perf_counter()
            proc = subprocess.run([self.python, "-m", "bench.headcpu", client, str(n)], cwd=REPO,
                                  env=env, capture_output=True, text=True, timeout=300)
            line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            out = json.loads(line) if line.startswith("{") else {}
            problems = [] if proc.returncode == 0 else [
                f"headcpu {client} exited {proc.returncode}: {proc.stderr[-300:]}"]
            cpu_ms = float(out.get("cpu_s", float("nan"))) / n * 1000
            usage = Meter.usage(before, self.meter.snapshot(), time.perf_counter() - t0,
                                {"client": float(out.get("cpu_s", 0.0))})
            run = Run("head", HEAD_LABELS[client], rep, n, float(out.get("wall_s", 0.0)), cpu_ms,
                      usage, problems, detail=out)
            self.runs.append(run)
            self.save()
            say(f"head #{rep} {HEAD_LABELS[client]:>20}: {cpu_ms:.3f} ms CPU per HEAD, "
                f"{run.wall_s / n * 1000:.3f} ms wall, load {usage.load_start:.1f} - "
                f"{problems or 'ok'}")

    def levers(self, reps: int) -> None:
        # (levers switched off, the client of the per-row HEAD): the driver as it is, without
        # the pipelined apply, and with the HEAD clients obstore replaced.
        variants = [("", "obstore"), ("pipeline", "obstore"), ("", "signed"), ("", "boto3")]
        for rep in range(1, reps + 1):
            clients = list(HEAD_LABELS) if rep % 2 else list(HEAD_LABELS)[::-1]
            self.head_cpu(rep, clients)
            for off, head in variants if rep % 2 else variants[::-1]:
                self.run_e2e("ours", rep, figure="levers", levers_off=off, head=head)


def write_report(results: dict[str, Any], out: Path) -> str:
    """The report of ``results`` as ``out``/report.md and its chart as ``out``/benchmarks.png;
    returns the report's text."""
    text = report.render(results)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(text)
    report.chart(results, out / "benchmarks.png")
    return text


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--stack-dir", default=str(REPO / ".stack" / "bench"))
    ap.add_argument("--out", default=str(REPO / "out" / "bench"),
                    help="where the raw figures (results.json and <label>.json), the report "
                    "(report.md), its chart (benchmarks.png) and the contenders' logs go; "
                    "out/ is not in git: docs/benchmarks.md quotes the current figures")
    ap.add_argument("--n", type=int, default=5000,
                    help="stuck recordings end to end (the issue's figure is 20000: with "
                    "Procrastinate at ~100/s here, 3 runs of it take ~30 min; 5000 keeps make "
                    "bench under 15 min from a fresh clone)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each figure")
    ap.add_argument("--done-rows", type=int, default=1_000_000)
    ap.add_argument("--relay-rows", type=int, default=100_000)
    ap.add_argument("--rss-backlog", type=int, default=100_000)
    ap.add_argument("--rss-seconds", type=int, default=15,
                    help="RFR_MAX_RUN_DURATION of the RSS run")
    ap.add_argument("--drain-rows", type=int, default=20_000,
                    help="the backlog of the happy-path-under-drain figure")
    ap.add_argument("--drain-call-rate", type=float, default=50.0,
                    help="recordings/s the simulated messenger service starts (4 calls each)")
    ap.add_argument("--drain-idle-s", type=float, default=30.0,
                    help="seconds of callbacks with the worker idle before the drain starts "
                    "(30: the idle p99 is the 15th slowest of 1,500 calls, not the 5th of 500)")
    ap.add_argument("--drain-variants", default=None,
                    help="comma list of the drain's pacing variants with the service running: "
                    "adaptive (the default), off, a number (a fixed RFR_MAX_APPLY_RATE with "
                    f"pacing off), or VAR=value+VAR=value (default: {DRAIN_VARIANTS} with "
                    f"--only drain; {DRAIN_IDLE_VARIANTS} within the whole bench)")
    ap.add_argument("--drain-idle-variants", default=DRAIN_IDLE_VARIANTS,
                    help="the same, for the drain with nobody else on the database")
    ap.add_argument("--drain-scenarios", default=",".join(DRAIN_SCENARIOS),
                    help="service (the messenger's callbacks during the drain) and/or idle "
                    "(nobody else on the database)")
    ap.add_argument("--drain-rates", default=None,
                    help="the earlier form of --drain-variants: RFR_MAX_APPLY_RATE values "
                    "(0 = pacing off), with the service only")
    ap.add_argument("--drain-max-run", default="60s",
                    help="RFR_MAX_RUN_DURATION of every drain (one cycle): a slow pace is "
                    "measured over this long, not over the whole backlog (the driver's default "
                    "is 3m)")
    ap.add_argument("--drain-signals", action="store_true",
                    help="sample what a worker can see of the database's contention beside "
                    "every drain (bench/signals.py; kept in results.json)")
    ap.add_argument("--discovery-active", default="1000,10000,100000",
                    help="comma list of active (not stuck) recordings beside discover_stuck")
    ap.add_argument("--discovery-stuck", type=int, default=5)
    ap.add_argument("--discovery-history", type=int, default=100_000,
                    help="finished recordings beside them (Available, finalize rows Done)")
    ap.add_argument("--discovery-calls", type=int, default=20)
    ap.add_argument("--discovery-outside", default="1000,100000",
                    help="comma list of Available recordings outside the republish window "
                    "beside discover_unpublished")
    ap.add_argument("--discovery-inside", type=int, default=5,
                    help="Available recordings without an event inside the window")
    ap.add_argument("--cycle-rows", type=int, default=4000,
                    help="rows of the cycle figure (at most --n; bench/cycle_cost.py)")
    ap.add_argument("--cycle-args", default="",
                    help="more arguments for bench/cycle_cost.py (e.g. '--attribute')")
    ap.add_argument("--sqlcost-rows", type=int, default=4000,
                    help="rows per run of the sqlcost figure (at most --n)")
    ap.add_argument("--sqlcost-variants", default=sqlcost.DEFAULT_VARIANTS,
                    help="the SQL trees of the sqlcost figure beside this one's: "
                    f"{', '.join(sqlcost.VARIANTS)} (see bench/sqlcost.py)")
    ap.add_argument("--only", default=DEFAULT_FIGURES,
                    help="comma list of figures: e2e, dbcost, sqlcost, drain, claim, relay, rss, "
                    "discovery, levers")
    ap.add_argument("--quick", action="store_true",
                    help="small and once: --n 2000 --repeat 1, 100k Done, 10k relay/backlog")
    ap.add_argument("--label", default="",
                    help="the name of the run's raw figures, <out>/<label>.json "
                    "(default: n<N>[-quick][-<figures>])")
    ap.add_argument("--render", metavar="RESULTS_JSON",
                    help="only rebuild the report (and --docs) from a results.json")
    args = ap.parse_args(argv)
    if args.render:
        results = json.loads(Path(args.render).read_text())
        print(write_report(results, Path(args.out)))
        return 0
    if args.quick:
        args.n, args.repeat = min(args.n, 2000), 1
        args.done_rows, args.relay_rows = min(args.done_rows, 100_000), min(args.relay_rows, 10_000)
        args.rss_backlog, args.rss_seconds = min(args.rss_backlog, 10_000), 5
        args.drain_rows = min(args.drain_rows, 5_000)
        args.discovery_active, args.discovery_history = "1000,10000", 10_000
        args.discovery_outside = "1000,10000"
    if args.drain_variants is None:
        only = {f.strip() for f in args.only.split(",")}
        args.drain_variants = DRAIN_VARIANTS if args.only != DEFAULT_FIGURES and (
            "drain" in only) else DRAIN_IDLE_VARIANTS
    if args.drain_rates is not None:
        args.drain_variants = ",".join("off" if float(r) == 0 else r
                                       for r in _csv(args.drain_rates))
        args.drain_scenarios = "service"
    figures = [f.strip() for f in args.only.split(",") if f.strip()]
    Path(args.out).mkdir(parents=True, exist_ok=True)

    sys.path.insert(0, str(REPO))
    from tools import stack

    state = stack.load_state(args.stack_dir)
    if state is None:
        raise SystemExit(f"no stack in {args.stack_dir}: start one with tools/stack.py up")
    bench = Bench(args, state)
    started = time.monotonic()
    say(f"N={args.n:,}, {args.repeat} run(s) per figure, figures: {', '.join(figures)}; "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    bench.setup()
    phases: list[tuple[str, Callable[[int], None]]] = [
        ("e2e", bench.e2e_rounds), ("dbcost", bench.dbcost), ("sqlcost", bench.sqlcost),
        ("cycle", bench.cycle),
        ("drain", bench.drain),
        ("levers", bench.levers), ("claim", bench.claim_growth),
        ("relay", bench.relay_throughput), ("rss", bench.rss_backlog),
        ("discovery", bench.discovery)]
    failures: list[str] = []
    for name, phase in phases:
        if name not in figures:
            continue
        try:
            phase(args.repeat)
        except Exception as err:  # noqa: BLE001 - a broken figure must not lose the others
            failures.append(f"{name}: {type(err).__name__}: {err}")
            say(f"figure {name} broke off: {type(err).__name__}: {err}")
    elapsed = time.monotonic() - started
    given = list(argv) if argv is not None else sys.argv[1:]
    command = " ".join(["python -m bench", *given])
    bench.facts.update({
        "label": args.label or f"n{args.n}" + ("-quick" if args.quick else "") + (
            "" if args.only == DEFAULT_FIGURES else "-" + "-".join(figures)),
        "command": os.environ.get("BENCH_COMMAND", command),
        "n": args.n, "repeat": args.repeat, "elapsed_s": elapsed,
        "done_rows": args.done_rows, "relay_rows": args.relay_rows,
        "rss_backlog": args.rss_backlog, "rss_seconds": args.rss_seconds,
        "cores": os.cpu_count(), "ours_env": OURS_ENV,
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "rss_method": "VmHWM",
    })
    results = {"facts": bench.facts, "runs": [r.to_dict() for r in bench.runs]}
    raw = json.dumps(results, indent=1, default=str)
    for name in ("results.json", f"{bench.facts['label']}.json"):
        (Path(args.out) / name).write_text(raw)
    print(write_report(results, Path(args.out)))
    say(f"wrote {args.out}/: results.json, {bench.facts['label']}.json, report.md, "
        "benchmarks.png (docs/benchmarks.md says how its figures are refreshed)")
    problems = [f"{r.figure} #{r.rep} {r.contender}: {p}" for r in bench.runs for p in r.problems]
    problems += failures
    for p in problems:
        say(f"PROBLEM {p}")
    say(f"done in {elapsed:.0f} s; {'the work went wrong' if problems else 'all work verified'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
