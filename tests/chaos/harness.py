"""The chaos suite's workbench: a world per scenario, workers as real processes, the figures.

A ``World`` is one scenario's private database (cloned from a migrated template, with an audit
trigger on ``messenger.call_recordings``), S3 bucket and Kafka topic on the shared local stack.
It seeds recordings in bulk as the messenger service does: its own rows as the tables' owner,
the product's lifecycle functions (``recording_finalize.recording_started`` …) as a login
granted only ``recording_finalize_service``,
each with the terminal state it must reach — ``found`` (binary uploaded: ``Available``),
``missing`` (no binary: ``Failed``), ``republish`` (committed ``Available`` whose event was
never enqueued) — runs ``recording-finalize`` as the least-privilege worker role, and at the
end computes the figures from the database and from what a consumer reads on the topic:

- ``lost``: recordings ``Available`` whose event is not on the topic;
- ``double``: recordings with more than one terminal transition, a transition out of a
  terminal state, or a version jump other than +1 (from the audit trigger's log);
- ``stuck``: recordings not terminal once the recovery budget ran out (designated poison rows
  excepted: their quarantine is the expected outcome);
- ``torn``: half-applied rows — a terminal recording without its finalize row closed, its
  realtime row or (Available) its outbox row; or a non-terminal one with outbox rows;
- ``wrong``: a terminal state other than the one the seed calls for (a binary present but
  ``Failed``, or none and ``Available``);
- ``duplicates``: messages on the topic beyond one per recording.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import boto3
import psycopg
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from recording_finalize.config import DEFAULT_LOCK_KEY

REPO = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "recording-finalize")
OUT = REPO / "out" / "chaos"
WORKER_ROLE = "rfr_chaos_worker"
SERVICE_ROLE = "rfr_chaos_service"
LOCK_KEY = DEFAULT_LOCK_KEY
TERMINAL = ("Available", "Failed")

#: The worker's settings in every scenario (compressed durations; a scenario overrides some).
#: Lock TTL 15 s with 2 s of claiming leaves the relay batches of ~5 s delivery timeout; a batch
#: that a crash leaves unmarked is leased for about 40 s before it is sent again.
BASE_ENV = {
    "RFR_FINALIZE_SLA_TIMEOUT": "1s",
    "RFR_POLLING_INTERVAL": "200ms",
    "RFR_BATCH_SIZE": "25",
    "RFR_MAX_ATTEMPTS": "50",
    "RFR_BACKOFF_BASE": "200ms",
    "RFR_BACKOFF_FACTOR": "2",
    "RFR_BACKOFF_CAP": "2s",
    "RFR_BACKOFF_JITTER": "0.2",
    "RFR_LOCK_TTL": "15s",
    "RFR_MAX_RUN_DURATION": "2s",
    "RFR_S3_TIMEOUT": "1500ms",
    "RFR_S3_CONCURRENCY": "8",
    "RFR_METRICS_PORT": "0",
}

AUDIT_SQL = """
create schema chaos;
create table chaos.transitions (
    id bigserial primary key,
    recording_id uuid not null,
    old_status text not null,
    new_status text not null,
    old_version integer not null,
    new_version integer not null,
    at timestamptz not null default clock_timestamp()
);
create function chaos.audit() returns trigger language plpgsql set search_path = '' as $$
begin
    if coalesce(current_setting('chaos.seeding', true), '') <> 'on'
        and (new.status is distinct from old.status or new.version is distinct from old.version)
    then
        insert into chaos.transitions (recording_id, old_status, new_status, old_version,
                                       new_version)
        values (new.id, old.status, new.status, old.version, new.version);
    end if;
    return new;
end
$$;
create trigger chaos_audit after update on messenger.call_recordings
for each row execute function chaos.audit();
"""


def base_env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1"}


# ------------------------------------------------------------------------------------------
# the stack


@dataclass(frozen=True)
class Stack:
    dir: Path
    env: dict[str, str]

    def url_for(self, dbname: str, user: str | None = None, password: str | None = None,
                port: int | None = None) -> str:
        parts = urlsplit(self.env["DATABASE_URL"])
        creds, host = parts.netloc.rsplit("@", 1)
        if user is not None:
            creds = f"{quote(user, safe='')}:{quote(password or '', safe='')}"
        if port is not None:
            host = f"127.0.0.1:{port}"
        return urlunsplit((parts.scheme, f"{creds}@{host}", f"/{dbname}", parts.query, ""))

    @property
    def pg_port(self) -> int:
        return int(urlsplit(self.env["DATABASE_URL"]).port or 5432)

    @property
    def s3_port(self) -> int:
        return int(urlsplit(self.env["S3_ENDPOINT_URL"]).port or 80)

    def s3(self) -> Any:
        return boto3.client(
            "s3", endpoint_url=self.env["S3_ENDPOINT_URL"],
            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
            region_name=self.env["AWS_DEFAULT_REGION"],
        )

    def admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url_for("postgres"), autocommit=True, connect_timeout=10)

    def stop_service(self, name: str) -> None:
        from tools import stack as stack_tool

        stack_tool.stop_service(self.dir, name, verbose=False)

    def start_service(self, name: str) -> None:
        from tools import stack as stack_tool

        stack_tool.start_service(self.dir, name, verbose=False)


@dataclass(frozen=True)
class Template:
    name: str
    password: str


def make_template(stack: Stack) -> Template:
    name = f"rfr_chaos_tpl_{uuid.uuid4().hex[:8]}"
    with stack.admin() as conn:
        conn.execute(f'create database "{name}"')
    # A new database: the service's reference tables first, then the product.
    proc = subprocess.run([CLI, "migrate", "--create-service-tables"],
                          env=base_env() | {"DATABASE_URL": stack.url_for(name)},
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"migrate failed: {proc.stderr}")
    password = uuid.uuid4().hex
    with psycopg.connect(stack.url_for(name), autocommit=True) as conn:
        for role, group in ((WORKER_ROLE, "recording_finalize_worker"),
                            (SERVICE_ROLE, "recording_finalize_service")):
            exists = conn.execute("select 1 from pg_roles where rolname = %s",
                                  (role,)).fetchone()
            verb = "alter" if exists else "create"
            conn.execute(f"{verb} role {role} login password '{password}'")
            conn.execute(f"grant {group} to {role}")
        conn.execute(AUDIT_SQL)
    return Template(name, password)


def drop_database(stack: Stack, name: str) -> None:
    with contextlib.suppress(psycopg.Error), stack.admin() as conn:
        conn.execute(f'drop database if exists "{name}" with (force)')


# ------------------------------------------------------------------------------------------
# worker processes


class WorkerProc:
    """One ``recording-finalize`` process (the console script), stderr to a log file."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path,
                 wrapper: list[str] | None = None) -> None:
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        self._err = open(log, "ab")  # noqa: SIM115 - closed in wait()
        self.proc = subprocess.Popen([*(wrapper or []), CLI, *argv], env=env,
                                     stdout=subprocess.PIPE, stderr=self._err)
        self.pid = self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)

    def kill9(self) -> None:
        self.signal(signal.SIGKILL)
        self.wait(10)

    def wait(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is not None:
                self._err.close()
        return code

    def stdout(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.read().decode()

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.log)


def read_events(log: Path) -> list[dict[str, Any]]:
    out = []
    if not log.exists():
        return out
    for line in log.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict) and "event" in event:
                out.append(event)
    return out


class ForkServer:
    """Client of ``forkserver.py``: worker lives that start in ~0.2 s instead of ~1 s."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("forkserver.py"))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
            env=base_env() | {"PYTHONPATH": str(REPO)},
        )

    def spawn(self, argv: list[str], env: dict[str, str], log: Path) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        log.parent.mkdir(parents=True, exist_ok=True)
        self.proc.stdin.write(json.dumps({"argv": argv, "env": env, "log": str(log)}) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def kill9_pid(pid: int, timeout: float = 10.0) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)


# ------------------------------------------------------------------------------------------
# the figures


@dataclass
class Figures:
    scenario: str
    faults: str
    seeded: int = 0
    terminal: int = 0
    quarantined: int = 0
    lost: int = 0
    double: int = 0
    stuck: int = 0
    torn: int = 0
    wrong: int = 0
    duplicates: int = 0
    recover_s: float | None = None
    #: Work left when each fault landed (recordings not yet terminal plus unpublished events),
    #: counted by World.fault_on: a fault that meets no work proves nothing.
    in_flight: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.double or self.stuck or self.torn or self.wrong)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


# ------------------------------------------------------------------------------------------
# a scenario's world


class World:
    def __init__(self, stack: Stack, template: Template, name: str) -> None:
        self.stack = stack
        self.name = name
        self.out = OUT / name
        self.out.mkdir(parents=True, exist_ok=True)
        for old in self.out.glob("*.log"):
            old.unlink()
        suffix = uuid.uuid4().hex[:8]
        self.dbname = f"rfr_chaos_{name}_{suffix}"
        self.bucket = f"rfr-chaos-{name.replace('_', '-')}-{suffix}"
        self.topic = f"rfr-chaos-{name}-{suffix}"
        with stack.admin() as conn:
            conn.execute(f'create database "{self.dbname}" template "{template.name}"')
        self.owner_url = stack.url_for(self.dbname)
        self.worker_url = stack.url_for(self.dbname, WORKER_ROLE, template.password)
        self.service_url = stack.url_for(self.dbname, SERVICE_ROLE, template.password)
        # The topic lives on the server (recording_finalize.settings): the scenario's becomes it.
        with psycopg.connect(self.owner_url, autocommit=True) as conn:
            conn.execute("update recording_finalize.settings set topic = %s", (self.topic,))
        self.worker_password = template.password
        stack.s3().create_bucket(Bucket=self.bucket)
        admin = AdminClient({"bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"]})
        admin.create_topics([NewTopic(self.topic, 1, 1)])[self.topic].result(timeout=15)
        #: The terminal status each seeded recording must reach; a frozenset where either is
        #: within the promise (a binary that landed after the upload grace).
        self.expected: dict[uuid.UUID, str | frozenset[str]] = {}
        self.poison: set[uuid.UUID] = set()
        self.in_flight: list[int] = []
        self.workers: list[WorkerProc] = []
        self._s3 = stack.s3()

    # --- connections -----------------------------------------------------------------------

    def connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.owner_url, autocommit=True, connect_timeout=5)

    def service_connect(self) -> psycopg.Connection[Any]:
        """The messenger service's login: EXECUTE on the lifecycle and ingest functions only."""
        return psycopg.connect(self.service_url, autocommit=True, connect_timeout=5)

    def one(self, sql: str, params: Any = None) -> Any:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchone()

    def all(self, sql: str, params: Any = None) -> list[Any]:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()

    # --- seeding ---------------------------------------------------------------------------

    def seed(self, n: int, *, found: float = 0.6, missing: float = 0.25,
             rng: random.Random | None = None, ended_ago: str = "1 hour",
             sla: str = "1 second", kinds: Iterable[str] | None = None) -> list[uuid.UUID]:
        """Seeds ``n`` stuck recordings (the rest of the mix is ``republish``)."""
        rng = rng or random.Random()
        plan = list(kinds) if kinds is not None else [
            "found" if (x := rng.random()) < found else "missing" if x < found + missing
            else "republish" for _ in range(n)]
        rows = [(uuid.uuid4(), uuid.uuid4(), rng.choice(["Direct", "Direct", "Conference"]),
                 rng.choice(["Audio", "Video"]), kind) for kind in plan]
        found_ids = [r[0] for r in rows if r[4] == "found"]
        self.put_binaries(found_ids, rng)
        with self.connect() as conn, conn.transaction():
            for kind, table in (("Direct", "messenger.call_sessions"),
                                ("Conference", "messenger.conference_sessions")):
                sids = [r[1] for r in rows if r[2] == kind]
                conn.execute(
                    f"insert into {table} (id, chat_id, deal_id, tenant_id, started_at) "
                    "select s, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), "
                    "now() - interval '3 hours' from unnest(%s::uuid[]) as s", (sids,))
            # The lifecycle calls as the service's login would make them (SET ROLE within the
            # seeding transaction: EXECUTE is checked against recording_finalize_service).
            conn.execute(f"set local role {SERVICE_ROLE}")
            conn.execute(
                "select recording_finalize.recording_started(r, k, s, m, 'Auto') "
                "from unnest(%s::uuid[], %s::text[], %s::uuid[], %s::text[]) as t(r, k, s, m)",
                ([r[0] for r in rows], [r[2] for r in rows], [r[1] for r in rows],
                 [r[3] for r in rows]))
            conn.execute("reset role")
            for kind, table in (("Direct", "messenger.call_sessions"),
                                ("Conference", "messenger.conference_sessions")):
                conn.execute(f"update {table} set ended_at = now() - %s::interval "
                             "where id = any(%s)",
                             (ended_ago, [r[1] for r in rows if r[2] == kind]))
            conn.execute(f"set local role {SERVICE_ROLE}")
            conn.execute(
                "select recording_finalize.session_ended(k, s, %s::interval) "
                "from unnest(%s::text[], %s::uuid[]) as t(k, s)",
                (sla, [r[2] for r in rows], [r[1] for r in rows]))
            conn.execute("reset role")
            republish = [r[0] for r in rows if r[4] == "republish"]
            if republish:
                # The crash between "-> Available" and the event: the service's own commit.
                conn.execute("set local chaos.seeding = 'on'")
                conn.execute(
                    "update messenger.call_recordings set status = 'Available', "
                    "file_id = 'files/' || id::text, size_bytes = 10, duration_seconds = 3, "
                    "format = 'Ogg', available_at = now(), version = version + 1 "
                    "where id = any(%s)", (republish,))
        for rid, _, _, _, kind in rows:
            self.expected[rid] = "Failed" if kind == "missing" else "Available"
        return [r[0] for r in rows]

    def put_binaries(self, ids: list[uuid.UUID], rng: random.Random) -> None:
        def put(rid: uuid.UUID) -> None:
            self._s3.put_object(
                Bucket=self.bucket, Key=f"recordings/{rid}", Body=b"\0" * rng.randint(64, 4096),
                ContentType=rng.choice(["audio/webm", "video/mp4", "audio/ogg"]),
                Metadata={"duration-seconds": str(rng.randint(1, 3600))})

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(put, ids))

    def ingest(self, rid: uuid.UUID, conn: psycopg.Connection[Any] | None = None) -> str:
        """The happy path's ingest callback for ``rid``, as the messenger service's login
        (``conn``: one of ``service_connect``)."""
        sql = ("select recording_finalize.recording_ingest_completed("
               "%s, %s, 2048, 42, 'Webm', %s)")
        params = (rid, f"recordings/{rid}", self.topic)
        if conn is not None:
            return str(conn.execute(sql, params).fetchone()[0])
        with self.service_connect() as c:
            return str(c.execute(sql, params).fetchone()[0])

    # --- workers ---------------------------------------------------------------------------

    def env(self, *, db_port: int | None = None, s3_url: str | None = None,
            **overrides: str) -> dict[str, str]:
        url = self.worker_url if db_port is None else self.stack.url_for(
            self.dbname, WORKER_ROLE, self.worker_password, port=db_port)
        env = base_env() | {
            "DATABASE_URL": url,
            "S3_ENDPOINT_URL": s3_url or self.stack.env["S3_ENDPOINT_URL"],
            "AWS_ACCESS_KEY_ID": self.stack.env["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": self.stack.env["AWS_SECRET_ACCESS_KEY"],
            "AWS_DEFAULT_REGION": self.stack.env["AWS_DEFAULT_REGION"],
            "KAFKA_BOOTSTRAP_SERVERS": self.stack.env["KAFKA_BOOTSTRAP_SERVERS"],
            "RFR_S3_BUCKET": self.bucket,
            "RFR_TOPIC": self.topic,
        } | BASE_ENV
        env.update(overrides)
        return env

    def spawn(self, command: str = "run", *, label: str = "worker",
              wrapper: list[str] | None = None, env: dict[str, str] | None = None,
              **overrides: str) -> WorkerProc:
        log = self.out / f"{label}-{len(self.workers):03d}.log"
        proc = WorkerProc([command], env or self.env(**overrides), log, wrapper)
        self.workers.append(proc)
        return proc

    def stop_workers(self) -> None:
        for proc in self.workers:
            if proc.alive():
                proc.signal(signal.SIGCONT)
                proc.signal(signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(10)

    def all_logs(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for log in sorted(self.out.glob("*.log")):
            events += read_events(log)
        return events

    # --- progress --------------------------------------------------------------------------

    def progress(self) -> tuple[int, int, int]:
        """(recordings not yet terminal, Available without an event row, unpublished rows),
        designated poison rows left out."""
        row = self.one(
            "select "
            "(select count(*) from messenger.call_recordings r "
            " where r.status not in ('Available', 'Failed') and r.id <> all(%s)), "
            "(select count(*) from messenger.call_recordings r where r.status = 'Available' "
            " and not exists (select from recording_finalize.outbox o "
            "  where o.recording_id = r.id)), "
            "(select count(*) from recording_finalize.outbox o where o.published_at is null)",
            (list(self.poison),))
        return int(row[0]), int(row[1]), int(row[2])

    def wait_until(self, predicate: Callable[[], bool], timeout: float,
                   poll: float = 0.2) -> float | None:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            try:
                if predicate():
                    return time.monotonic() - t0
            except psycopg.OperationalError:
                pass  # the database is being restarted by the scenario
            time.sleep(poll)
        return None

    def wait_recovered(self, timeout: float) -> float | None:
        """Seconds until every recording is terminal and every event published, or None."""
        return self.wait_until(lambda: self.progress() == (0, 0, 0), timeout)

    def fault_on(self) -> int:
        """Counts the work left as a fault lands (recordings not yet terminal, designated
        poison rows left out, plus unpublished events) for the figure's "in flight" column;
        returns it."""
        left, _, unpublished = self.progress()
        count = left + unpublished
        self.in_flight.append(count)
        return count

    def finalized(self) -> int:
        """Recordings moved to a terminal state since seeding (by a worker or a callback)."""
        return int(self.one("select count(distinct recording_id) from chaos.transitions "
                            "where new_status in ('Available', 'Failed')")[0])

    # --- the topic -------------------------------------------------------------------------

    def read_topic(self, expect: int, timeout: float = 30.0,
                   idle_s: float = 1.5) -> list[dict[str, Any]]:
        """Every message of the topic, read from the start until at least ``expect`` came and
        then ``idle_s`` of silence (so duplicates are seen), or ``timeout``. (Tansu's reported
        high watermark is not reliable, so it is not used.)"""
        consumer = Consumer({
            "bootstrap.servers": self.stack.env["KAFKA_BOOTSTRAP_SERVERS"],
            "group.id": f"rfr-chaos-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        })
        messages: list[dict[str, Any]] = []
        try:
            consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
            deadline = time.monotonic() + timeout
            last = time.monotonic()
            while time.monotonic() < deadline:
                msg = consumer.poll(0.1)
                if msg is None or msg.error():
                    if len(messages) >= expect and time.monotonic() - last >= idle_s:
                        break
                    continue
                last = time.monotonic()
                messages.append(json.loads(msg.value()))
        finally:
            consumer.close()
        return messages

    # --- the figures -----------------------------------------------------------------------

    def figures(self, faults: str, recover_s: float | None) -> Figures:
        fig = Figures(self.name, faults, recover_s=recover_s, in_flight=list(self.in_flight))
        with self.connect() as conn:
            recs = {r[0]: (r[1], r[2]) for r in conn.execute(
                "select id, status, version from messenger.call_recordings")}
            outbox = {r[0]: r[1] for r in conn.execute(
                "select recording_id, published_at from recording_finalize.outbox")}
            realtime: dict[uuid.UUID, list[str]] = {}
            for ref, kind in conn.execute(
                    "select reference_id, kind from messenger.realtime_outbox order by id"):
                realtime.setdefault(ref, []).append(kind)
            finalize = {r[0]: r[1] for r in conn.execute(
                "select recording_id, status from messenger.recording_finalize_attempts")}
            transitions: dict[uuid.UUID, list[tuple[str, str, int, int]]] = {}
            for rid, old, new, v_old, v_new in conn.execute(
                    "select recording_id, old_status, new_status, old_version, new_version "
                    "from chaos.transitions order by id"):
                transitions.setdefault(rid, []).append((old, new, v_old, v_new))
        published = sum(1 for p in outbox.values() if p is not None)
        messages = self.read_topic(expect=published)
        on_topic = Counter(m.get("recordingId") for m in messages)
        fig.torn = self._torn(recs, outbox, realtime, finalize)

        fig.seeded = len(self.expected)
        fig.quarantined = sum(1 for s in finalize.values() if s == "Quarantined")
        fig.duplicates = sum(on_topic.values()) - len(on_topic)
        for rid, want in self.expected.items():
            status, _ = recs[rid]
            terminal = status in TERMINAL
            fig.terminal += terminal
            if terminal and status not in (want if isinstance(want, frozenset) else {want}):
                fig.wrong += 1
            if not terminal and rid not in self.poison:
                fig.stuck += 1
            if status == "Available" and str(rid) not in on_topic:
                fig.lost += 1
            moves = [t for t in transitions.get(rid, [])
                     if t[0] in TERMINAL or t[1] in TERMINAL]
            if len(moves) > 1 or any(old in TERMINAL or v_new - v_old != 1
                                     for old, _, v_old, v_new in moves):
                fig.double += 1
        (self.out / "figures.json").write_text(json.dumps(fig.to_dict(), indent=2) + "\n")
        return fig

    def _torn(self, recs: dict[uuid.UUID, tuple[str, int]], outbox: dict[uuid.UUID, Any],
              realtime: dict[uuid.UUID, list[str]], finalize: dict[uuid.UUID, str]) -> int:
        torn = 0
        for rid in self.expected:
            status, kinds = recs[rid][0], realtime.get(rid, [])
            if status == "Available":
                bad = (rid not in outbox or kinds != ["RecordingAvailable"]
                       or finalize.get(rid) != "Done")
            elif status == "Failed":
                bad = rid in outbox or kinds != ["RecordingFailed"] or finalize.get(rid) != "Done"
            else:
                bad = rid in outbox or bool(kinds) or finalize.get(rid) == "Done"
            torn += bad
        return torn

    def torn_now(self) -> int:
        """Half-applied rows right now (e.g. just after a worker stopped)."""
        with self.connect() as conn:
            recs = {r[0]: (r[1], r[2]) for r in conn.execute(
                "select id, status, version from messenger.call_recordings")}
            outbox = {r[0]: r[1] for r in conn.execute(
                "select recording_id, published_at from recording_finalize.outbox")}
            realtime: dict[uuid.UUID, list[str]] = {}
            for ref, kind in conn.execute(
                    "select reference_id, kind from messenger.realtime_outbox order by id"):
                realtime.setdefault(ref, []).append(kind)
            finalize = {r[0]: r[1] for r in conn.execute(
                "select recording_id, status from messenger.recording_finalize_attempts")}
        return self._torn(recs, outbox, realtime, finalize)

    def close(self) -> None:
        self.stop_workers()
        drop_database(self.stack, self.dbname)
        with contextlib.suppress(Exception):
            s3 = self.stack.s3()
            for obj in s3.list_objects_v2(Bucket=self.bucket).get("Contents", []):
                s3.delete_object(Bucket=self.bucket, Key=obj["Key"])
            s3.delete_bucket(Bucket=self.bucket)


def advisory_locks_held(world: World) -> int:
    return int(world.one("select count(*) from pg_locks where locktype = 'advisory' "
                         "and database = (select oid from pg_database where datname = %s)",
                         (world.dbname,))[0])


class Feeder:
    """Seeds new stuck recordings in the background while a scenario runs (a live workload)."""

    def __init__(self, world: World, per_tick: int, tick_s: float, seed: int) -> None:
        self.world = world
        self.per_tick = per_tick
        self.tick_s = tick_s
        self.rng = random.Random(seed)
        self._stop = threading.Event()
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.tick_s):
            try:
                self.world.seed(self.per_tick, rng=self.rng)
            except (psycopg.Error, OSError) as err:
                self.errors.append(type(err).__name__)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
