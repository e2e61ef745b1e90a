"""`make demo`: the safety net at work on the local stack, with faults, and a verdict.

Run by ``scripts/demo.sh`` once the stack is up, migrated, and a least-privilege worker role
exists; it reads the stack's env (owner ``DATABASE_URL``, S3, Kafka) plus
``RFR_DEMO_WORKER_DATABASE_URL`` and ``RFR_STACK_DIR``.

What it does, in compressed time (SLA and polling interval in seconds, not minutes):

1. plans ~1,200 calls and conferences with recordings and a fault mix (``tools/demo_sim.py``);
2. starts a consumer standing in for crm/notifications (``tools/demo_consumer.py``);
3. starts the real ``recording-finalize run`` as a subprocess and shows its progress every
   second from ``/metrics`` and ``recording_finalize.stats()``;
4. lets the calls end, the recorders upload (or not), the callbacks arrive (or not), S3 go down
   and come back, an operator fix and requeue the quarantined rows;
5. waits until everything settled (or a deadline), stops the worker with SIGTERM and judges the
   result (``tools/demo_report.py``): ``out/demo/report.md`` and ``chart.png``.

Exit 0 when every guarantee held, 1 when one was broken, 2 on bad usage. ``--break republish``
disables the republish phase in the demo's database, ``--break incidents`` the storage-incident
rule (every 404 is trusted again, as before storage incidents existed), to show that the verdict
then fails.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tools import demo_report as report
from tools.demo_consumer import RecordingConsumer
from tools.demo_sim import (
    BAD,
    NEVER,
    RECORDER_LANES,
    RETRY_CAP_S,
    RETRY_JITTER,
    TOPIC,
    UPLOAD_DELAY_S,
    Recording,
    Timeline,
    World,
    make_plan,
)

# The worker's settings: the production defaults scaled from minutes down to seconds.
SLA_S = 5.0
INTERVAL_S = 2.0
BACKOFF_BASE_S, BACKOFF_FACTOR, BACKOFF_CAP_S, BACKOFF_JITTER = 1.0, 2.0, 4.0, 0.1
# A HEAD against a dead endpoint fails at once; 2 s covers a slow one. The driver requires
# S3 timeout < lock TTL / 2 and lock TTL > max run duration; the relay's delivery timeout is
# half of what the lock TTL leaves after a full claim phase (driver/relay.py), so a generous
# TTL keeps the relay's Kafka window near its 30 s default (here 24.5 s).
S3_TIMEOUT_S, MAX_RUN_S, LOCK_TTL_S = 2.0, 8.0, 60.0
# What a row may take beyond SLA + interval: the cycle itself, the relay, the consumer's fetch.
ALLOWANCE_S = 3.0

# RFR_UPLOAD_GRACE (upload_grace_s below): production's default is the SLA (30 min), which dwarfs
# any recorder's retry schedule. Here the SLA is 5 s, but the simulated recorders of a few
# hundred calls share this machine's CPUs with the stack and the worker, and after the outage
# they land their held uploads at the machine's pace, not at compressed time: with the SLA as
# grace, a busy machine (BUSY=2) saw 626 uploads land 0.9 … 13.4 s after their Failed verdict.
# There the storage itself is starved (a PUT may time out after 5 s and be tried again): 650 held
# uploads took ~30 s over 16 lanes, ~0.75 s per upload and lane. PUT_BUDGET_S is that, rounded
# up; uploads that still land later are counted apart (outside the promise), not failed.
PUT_BUDGET_S = 1.0
# The scenario waits this much beyond the last thing the timeline plans (the busy machine's
# slowness; a quiet run settles long before and stops there).
SETTLE_SLACK_S = 60.0
STOP_GRACE_S = 10.0
BREAKS = ("republish", "incidents")

# Applied only with --break incidents, in the demo's throwaway database: the storage-incident
# rule never defers a 404 (recording_finalize_internal.outcome_decision's incident lookup finds
# nothing), so a recorder's upload held back by the outage loses the race to the worker's HEAD
# again and the recording ends Failed although its binary arrives. The function's own definition
# is edited (one predicate), so the break follows whatever the rest of it says.
BREAK_INCIDENTS_FUNCTION = "recording_finalize_internal.outcome_decision"
BREAK_INCIDENTS_EDIT = (
    "        where p_outcome = 'missing'\n",
    "        where false -- deliberately broken by `tools/demo.py --break incidents`\n"
    "            and p_outcome = 'missing'\n",
)

# Applied only with --break republish, in the demo's throwaway database: the republish phase
# (enqueue_available called from claim_due) enqueues nothing and answers "already enqueued",
# as a regression would. The happy path and reconcile still enqueue through the real function.
BREAK_REPUBLISH_SQL = """
alter function recording_finalize_internal.enqueue_available(
    recording_finalize_internal.recording, recording_finalize_internal.session, text, boolean
) rename to enqueue_available_unbroken;
create function recording_finalize_internal.enqueue_available(
    p_recording recording_finalize_internal.recording,
    p_session recording_finalize_internal.session,
    p_topic text,
    p_service_event boolean default null
)
returns boolean
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_context text;
begin
    get diagnostics v_context = pg_context;
    if v_context like '%claim_due%' then
        return false;  -- deliberately broken by `tools/demo.py --break republish`
    end if;
    return recording_finalize_internal.enqueue_available_unbroken(p_recording, p_session, p_topic,
        p_service_event);
end
$$;
"""

LIVE_SQL = """
select s.backlog, s.due, s.quarantined, s.publish_backlog,
    (select count(*) from messenger.call_recordings where status = 'Available') as available,
    (select count(*) from messenger.call_recordings where status = 'Failed') as failed,
    (select count(*) from messenger.call_recordings
        where status not in ('Available', 'Failed')) as open,
    (select count(*) from messenger.recording_finalize_attempts
        where status <> 'Done') as not_done,
    (select count(*) from recording_finalize.outbox where topic = %(topic)s) as outbox
from recording_finalize.stats(%(topic)s) as s
"""

_print_lock = threading.Lock()


def say(msg: str) -> None:
    with _print_lock:
        print(msg, flush=True)


def worst_case_claims(window_s: float) -> int:
    """How many times one row can be claimed while S3 is unreachable for ``window_s``: every
    claim as soon as the row is due again (ignoring the polling grid) and the shortest jitter."""
    t, n = 0.0, 0
    while t <= window_s:
        n += 1
        delay = min(BACKOFF_CAP_S, BACKOFF_BASE_S * BACKOFF_FACTOR ** (n - 1))
        t += delay * (1 - BACKOFF_JITTER)
    return n


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    """The real `recording-finalize run`, as a subprocess with its JSON log in a file."""

    def __init__(self, env: Mapping[str, str], log_path: Path) -> None:
        self.env = dict(env)
        self.port = int(env["RFR_METRICS_PORT"])
        self.run = report.WorkerRun(log_path=log_path)
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = log_path.open("wb")

    def start(self) -> None:
        exe = Path(sys.executable).parent / "recording-finalize"
        self.proc = subprocess.Popen(
            [str(exe), "run"], env=self.env, stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=subprocess.STDOUT,
        )
        self.run.pid = self.proc.pid
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the worker exited {self.proc.returncode} at start; "
                                   f"see {self.run.log_path}")
            if self.metrics() is not None:
                return
            time.sleep(0.2)
        raise RuntimeError("the worker's /metrics did not answer within 15 s")

    def wait_started(self, timeout: float = 30.0) -> None:
        """Until the worker logged "worker started": its start-up checks (the schema drift
        check among them) are behind it. /metrics answers before they ran."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e.get("event") == "worker started"
                   for e in report.parse_worker_log(self.run.log_path)):
                return
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"the worker exited {self.proc.returncode} at start; "
                                   f"see {self.run.log_path}")
            time.sleep(0.1)
        raise RuntimeError(f"the worker did not log 'worker started' within {timeout:g} s")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def metrics(self) -> dict[str, float] | None:
        """The unlabelled series of /metrics, plus ``cycles_total`` summed over results."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=1) as r:
                text = r.read().decode()
        except OSError:
            return None
        out: dict[str, float] = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name, _, value = line.rpartition(" ")
            try:
                number = float(value)
            except ValueError:
                continue
            base = name.split("{", 1)[0].removeprefix("messenger_recording_finalize_")
            out[base] = out.get(base, 0.0) + number if "{" in name else number
        return out

    def stop(self) -> None:
        """SIGTERM, then up to STOP_GRACE_S for a clean exit; SIGKILL only past that."""
        if self.proc is None:
            return
        if self.proc.poll() is not None:  # it did not wait for our signal
            self.run.died_early = True
            self.run.exit_code = self.proc.returncode
            self._log.close()
            return
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.run.exit_code = self.proc.wait(STOP_GRACE_S)
            self.run.stop_seconds = time.monotonic() - t0
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            self.run.exit_code = None
        self._log.close()


def upload_grace_s(timeline: Timeline, plan: list[Recording]) -> float:
    """RFR_UPLOAD_GRACE derived from the simulated recorders: after the storage is back, a
    recorder's next try comes within its longest retry delay, and the recorders' lanes then work
    through every upload the outage may have held (the calls with an upload that end from one
    upload delay before the outage to the end of its restart allowance) at PUT_BUDGET_S each."""
    lo = timeline.outage_start_s - UPLOAD_DELAY_S[1] - timeline.restart_allowance_s
    hi = timeline.outage_end_s + timeline.restart_allowance_s
    held = sum(1 for r in plan if r.scenario != NEVER and lo <= r.end_at_s <= hi)
    longest_retry = RETRY_CAP_S * (1 + RETRY_JITTER)
    return max(SLA_S, math.ceil(longest_retry + held * PUT_BUDGET_S / RECORDER_LANES))


def pacing_shared_rate(timeline: Timeline, plan: list[Recording]) -> float:
    """RFR_PACING_SHARED_RATE derived from the simulated world. The demo compresses an SLA of
    minutes into seconds, and with it the backlog an outage leaves: every call that ends from one
    SLA and upload delay before the outage to the end of its restart allowance may come due
    within seconds of S3's return. Drained at production's 50 rows/s (made for an SLA of
    minutes, docs/pacing.md) that burst alone took longer than ALLOWANCE_S, and a row coming due
    behind it missed SLA + interval + allowance on a busy machine. So the burst must drain within
    ALLOWANCE_S, at a pace the world sets, not the machine."""
    lo = timeline.outage_start_s - SLA_S - UPLOAD_DELAY_S[1]
    hi = timeline.outage_end_s + timeline.restart_allowance_s
    burst = sum(1 for r in plan if r.scenario != BAD and lo <= r.end_at_s <= hi)
    return float(math.ceil(burst / ALLOWANCE_S))


def deadline_s(timeline: Timeline, grace_s: float) -> float:
    """When the demo stops waiting (after the scenario's start): the last thing the timeline
    plans (the last call's SLA deadline, the outage's end + grace, the operator's requeue and its
    backoff), then a tick, a whole cycle and the allowance, then SETTLE_SLACK_S."""
    last = max(timeline.spread_s + SLA_S,
               timeline.outage_end_s + timeline.restart_allowance_s + grace_s,
               timeline.operator_at_s + BACKOFF_CAP_S * (1 + BACKOFF_JITTER))
    return last + INTERVAL_S + MAX_RUN_S + ALLOWANCE_S + SETTLE_SLACK_S


def worker_env(worker_url: str, metrics_port: int, max_attempts: int,
               grace_s: float, shared_rate: float) -> dict[str, str]:
    # The worker gets the stack's S3 and Kafka settings, but not the owner's PG* variables.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PG", "RFR_")) and k != "DATABASE_URL"}
    env.update({
        "DATABASE_URL": worker_url,
        "RFR_S3_BUCKET": "call-recordings",
        "RFR_TOPIC": TOPIC,
        "RFR_FINALIZE_SLA_TIMEOUT": f"{SLA_S:g}s",
        "RFR_UPLOAD_GRACE": f"{grace_s:g}s",
        "RFR_PACING_SHARED_RATE": f"{shared_rate:g}",
        "RFR_POLLING_INTERVAL": f"{INTERVAL_S:g}s",
        "RFR_BACKOFF_BASE": f"{BACKOFF_BASE_S:g}s",
        "RFR_BACKOFF_FACTOR": f"{BACKOFF_FACTOR:g}",
        "RFR_BACKOFF_CAP": f"{BACKOFF_CAP_S:g}s",
        "RFR_BACKOFF_JITTER": f"{BACKOFF_JITTER:g}",
        "RFR_MAX_ATTEMPTS": str(max_attempts),
        "RFR_S3_TIMEOUT": f"{S3_TIMEOUT_S:g}s",
        "RFR_MAX_RUN_DURATION": f"{MAX_RUN_S:g}s",
        "RFR_LOCK_TTL": f"{LOCK_TTL_S:g}s",
        "RFR_METRICS_PORT": str(metrics_port),
    })
    return env


class Progress:
    """One line per second: what the worker and the world are doing right now."""

    HEADER = ("   t  s3  ended | backlog  due | reconciled republished failed quarantined | "
              "pub.backlog | Available Failed | consumer")

    def __init__(self) -> None:
        self.lines = 0

    def line(self, s: report.Sample) -> None:
        if self.lines % 20 == 0:
            say(self.HEADER)
        self.lines += 1
        say(f"{s.t:4.0f}  {'up' if s.s3_up else 'DN'} {s.ended:6d} | {s.backlog:7d} {s.due:4d} "
            f"| {s.reconciled:10.0f} {s.republished:11.0f} {s.worker_failed:6.0f} "
            f"{s.quarantined_total:11.0f} | {s.publish_backlog:11d} | {s.available:9d} "
            f"{s.failed:6d} | {s.consumer_seen:8d}")


def apply_break(owner_url: str, what: str) -> None:
    """Breaks a guarantee in the demo's database. Applied once the worker has started: its
    start-up drift check would (rightly) refuse a hand-edited function."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        if what == "republish":
            conn.execute(BREAK_REPUBLISH_SQL)
            return
        row = conn.execute("select pg_catalog.pg_get_functiondef(p.oid) from pg_catalog.pg_proc p"
                           " where p.oid::regproc::text = %s", (BREAK_INCIDENTS_FUNCTION,)
                           ).fetchone()
        if row is None or BREAK_INCIDENTS_EDIT[0] not in row[0]:
            raise RuntimeError(f"--break incidents: {BREAK_INCIDENTS_FUNCTION} no longer has "
                               "the predicate this break edits; update tools/demo.py")
        conn.execute(row[0].replace(*BREAK_INCIDENTS_EDIT))


def snapshot(
    owner_url: str,
) -> tuple[dict[str, dict[str, Any]], int, list[dict[str, Any]]]:
    with psycopg.connect(owner_url, autocommit=True, row_factory=dict_row) as conn:
        rows = conn.execute(report.SNAPSHOT_SQL, {"topic": TOPIC}).fetchall()
        total = conn.execute(
            "select count(*) as n from recording_finalize.outbox where topic = %s", (TOPIC,)
        ).fetchone()
        incidents = conn.execute(report.INCIDENTS_SQL).fetchall()
    return {r["id"]: r for r in rows}, int(total["n"]) if total else 0, incidents


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tools/demo.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--recordings", type=int, default=1200, help="calls to simulate (>= 1000)")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    ap.add_argument("--out", type=Path, default=Path("out/demo"), help="output directory")
    ap.add_argument("--break", dest="broken", choices=BREAKS,
                    default=os.environ.get("RFR_DEMO_BREAK") or None,
                    help="break a guarantee on purpose (also $RFR_DEMO_BREAK): the verdict "
                         "must then fail")
    args = ap.parse_args(argv)
    if args.recordings < 100:
        ap.error("--recordings must be at least 100")
    try:
        owner_url = os.environ["DATABASE_URL"]
        worker_url = os.environ["RFR_DEMO_WORKER_DATABASE_URL"]
        stack_dir = Path(os.environ["RFR_STACK_DIR"])
        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    except KeyError as err:
        print(f"demo: {err.args[0]} is not set: run it through scripts/demo.sh", file=sys.stderr)
        return 2
    started = time.monotonic()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    rng = random.Random(seed)
    args.out.mkdir(parents=True, exist_ok=True)

    timeline = Timeline(sla_s=SLA_S)
    window = timeline.outage_s + timeline.restart_allowance_s
    claims = worst_case_claims(window)
    # One more for the first claim after S3 is back, one more in case it catches S3 warming up.
    max_attempts = claims + 2
    say(f"demo: {args.recordings} recordings, seed {seed}; SLA {SLA_S:g} s, polling "
        f"{INTERVAL_S:g} s, backoff {BACKOFF_BASE_S:g} s x{BACKOFF_FACTOR:g} up to "
        f"{BACKOFF_CAP_S:g} s (jitter {BACKOFF_JITTER:g})")
    say(f"demo: max attempts {max_attempts} = {claims} claims a row can get in a "
        f"{window:g} s outage at the fastest backoff + 2: S3 down must back off (or, once the "
        "worker's storage incident is open, give the attempt back), never quarantine")

    plan = make_plan(args.recordings, timeline, rng)
    grace = upload_grace_s(timeline, plan)
    shared_rate = pacing_shared_rate(timeline, plan)
    deadline = deadline_s(timeline, grace)
    knobs = report.Knobs(SLA_S, INTERVAL_S, BACKOFF_BASE_S, BACKOFF_FACTOR, BACKOFF_CAP_S,
                         BACKOFF_JITTER, max_attempts, S3_TIMEOUT_S, LOCK_TTL_S, MAX_RUN_S,
                         ALLOWANCE_S, grace)
    say(f"demo: upload grace {grace:g} s (the recorders' longest retry delay, then the uploads "
        f"the outage may hold at {PUT_BUDGET_S:g} s each over {RECORDER_LANES} lanes); the "
        f"demo waits at most {deadline:g} s for everything to settle; a drain beside the "
        f"messenger at {shared_rate:g} rows/s (the calls around the outage, drained within "
        f"{ALLOWANCE_S:g} s)")
    world = World(plan, timeline, owner_url, worker_url, dict(os.environ), stack_dir, say, rng)
    consumer = RecordingConsumer(bootstrap, TOPIC)
    worker = Worker(worker_env(worker_url, free_port(), max_attempts, grace, shared_rate),
                    args.out / "worker.log")
    samples: list[report.Sample] = []
    settled, outstanding = False, ""
    try:
        world.setup()
        say(f"demo: {len(plan)} calls in progress, all recording")
        join = consumer.start()
        say(f"demo: consumer joined group {consumer.group_id} in {join:.1f} s")
        worker.start()
        say(f"demo: `recording-finalize run` started (pid {worker.run.pid}, /metrics on "
            f"127.0.0.1:{worker.port}, JSON log in {worker.run.log_path})")
        if args.broken:
            worker.wait_started()
            apply_break(owner_url, args.broken)
            say(f"demo: BROKEN ON PURPOSE: {args.broken} is disabled in the demo database")
        settled, outstanding = watch(world, consumer, worker, owner_url, samples, deadline)
    finally:
        worker.stop()
        time.sleep(0.5)  # let the consumer take what the last relay sent
        consumer.stop()
        world.close()

    rows, outbox_total, incidents = snapshot(owner_url)
    events = report.parse_worker_log(worker.run.log_path)
    ev = report.evaluate(report.Inputs(world, rows, outbox_total, consumer, events,
                                       worker.run, knobs, settled, outstanding, incidents))
    outage = None
    if world.outage.stop_called and world.outage.ready:
        outage = (world.outage.stop_called - world.t0_wall, world.outage.ready - world.t0_wall)
    requeued = [r.requeued_wall for r in plan if r.requeued_wall]
    chart_path = args.out / "chart.png"
    report.chart(samples, chart_path, outage,
                 (min(requeued) - world.t0_wall) if requeued else None,
                 f"recording-finalize demo: {len(plan)} recordings, SLA {SLA_S:g} s, "
                 f"polling {INTERVAL_S:g} s" + (f" — BROKEN: {args.broken}" if args.broken else ""))
    (args.out / "samples.csv").write_text(
        ",".join(asdict(samples[0]).keys()) + "\n"
        + "".join(",".join(str(v) for v in asdict(s).values()) + "\n" for s in samples)
        if samples else "")
    header = [
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, seed {seed}, {len(plan)} recordings "
        f"({sum(r.session_kind == 'Conference' for r in plan)} conferences), calls ending over "
        f"{timeline.spread_s:g} s; total demo time {time.monotonic() - started:.0f} s "
        "(stack start and teardown not included).",
        "",
        f"Worker: the real `recording-finalize run` (pid {worker.run.pid}) as a login role that "
        "is only granted `recording_finalize_worker`; SLA "
        f"{SLA_S:g} s, polling {INTERVAL_S:g} s, backoff {BACKOFF_BASE_S:g} s x"
        f"{BACKOFF_FACTOR:g} ≤ {BACKOFF_CAP_S:g} s ± {BACKOFF_JITTER:.0%}, upload grace "
        f"{grace:g} s, max attempts "
        f"{max_attempts}, S3 timeout {S3_TIMEOUT_S:g} s, max run {MAX_RUN_S:g} s, lock TTL "
        f"{LOCK_TTL_S:g} s. Next to this report: `chart.png`, `worker.log` (the worker's "
        "JSON log), `recordings.csv` (one line per recording), `samples.csv` (the live "
        "samples).",
    ]
    report.recordings_csv(args.out / "recordings.csv", ev, world, rows, consumer)
    text = report.render(ev, world, knobs, header, args.broken)
    (args.out / "report.md").write_text(text)
    say("")
    say(text)
    say(f"demo: report {args.out / 'report.md'}, chart {chart_path}")
    return 0 if ev.passed else 1


def watch(
    world: World,
    consumer: RecordingConsumer,
    worker: Worker,
    owner_url: str,
    samples: list[report.Sample],
    deadline: float,
) -> tuple[bool, str]:
    """Starts the world and samples once a second until everything settled or the deadline.

    Returns (settled, what was still outstanding)."""
    progress = Progress()
    t0 = time.monotonic()
    world.start(t0)
    outstanding = ""
    with psycopg.connect(owner_url, autocommit=True, row_factory=dict_row) as conn:
        tick = t0
        while True:
            tick += 1.0
            time.sleep(max(0.0, tick - time.monotonic()))
            live = conn.execute(LIVE_SQL, {"topic": TOPIC}).fetchone() or {}
            m = worker.metrics() or {}
            sample = report.Sample(
                t=time.monotonic() - t0,
                backlog=int(live.get("backlog", 0)),
                due=int(live.get("due", 0)),
                quarantined_rows=int(live.get("quarantined", 0)),
                publish_backlog=int(live.get("publish_backlog", 0)),
                ended=world.ended,
                available=int(live.get("available", 0)),
                failed=int(live.get("failed", 0)),
                reconciled=m.get("reconciled_total", 0.0),
                republished=m.get("republished_total", 0.0),
                worker_failed=m.get("failed_total", 0.0),
                quarantined_total=m.get("quarantined_total", 0.0),
                consumer_seen=consumer.seen_count(),
                s3_up=world.outage.stop_called is None or world.outage.ready is not None,
            )
            samples.append(sample)
            progress.line(sample)
            if not worker.alive():
                worker.run.died_early = True
                return False, "the worker process died"
            pending = {
                "simulation": 0 if world.done() else 1,
                "non-terminal recordings": int(live.get("open", 0)),
                "finalize rows not Done": int(live.get("not_done", 0)),
                "unpublished events": sample.publish_backlog,
                "events not yet consumed": max(0, int(live.get("outbox", 0))
                                               - sample.consumer_seen),
            }
            outstanding = ", ".join(f"{k} {v}" for k, v in pending.items() if v)
            if not outstanding:
                say(f"demo: settled after {sample.t:.0f} s")
                return True, ""
            if sample.t >= deadline:
                say(f"demo: deadline of {deadline:g} s reached; outstanding: {outstanding}")
                return False, outstanding


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        # The finally blocks have stopped the worker and the consumer; demo.sh stops the stack.
        print("demo: interrupted", file=sys.stderr)
        sys.exit(130)
