"""The product in a messenger database it has never seen (docs/contract/adapter.md): the
service is an EF Core 8 + Npgsql application (tests/fixtures/efcore/schema.sql: its own
``__EFMigrationsHistory``, integer enums, an interval duration, TPH sessions, soft deletes,
forced row-level security, an updated_at and a status-history trigger, its own
``outbox_messages`` and relay), not the product's reference schema.

The world is built as its DBAs would: a database owned by the service's role, the service's
migration script run by that role, the service owner's grants (fixtures/efcore/grants.sql), the
DBA's adapter (fixtures/efcore/adapter.sql) created as the product's owner, then
``recording-finalize migrate`` as the product's owner (no superuser, no CREATEROLE), which must
keep that adapter. The service then writes through its own login (fixtures/efcore/writer.py),
also while the worker runs. The stack's superuser only observes (it bypasses row-level
security), dumps and creates roles and the database.

Nothing here is skipped: a missing tool or a refusal of the product fails with what was missing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import secrets
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import CLI, Stack, _admin, _base_env, consume, put_binary
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "efcore"
CONTRACT_SCHEMA = REPO / "docs" / "contract" / "call-recording-available.schema.json"


def _load_writer() -> Any:
    spec = importlib.util.spec_from_file_location("efcore_writer", FIXTURES / "writer.py")
    assert spec is not None and spec.loader is not None, FIXTURES / "writer.py"
    module = importlib.util.module_from_spec(spec)
    sys.modules["efcore_writer"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ef = _load_writer()

#: The product's view of the clock in this test: stuck = session ended an hour ago; the
#: republish window is (now - SLA - 1 day, now - SLA].
WORKER_ENV = {
    "RFR_FINALIZE_SLA_TIMEOUT": "30m",
    "RFR_REPUBLISH_WINDOW": "1d",
    "RFR_BACKOFF_BASE": "200ms",
    "RFR_BACKOFF_CAP": "1s",
    "RFR_BACKOFF_JITTER": "0",
}
GROUP_ROLES = ("recording_finalize_worker", "recording_finalize_operator",
               "recording_finalize_service")
#: The service's tables (the product's one table in schema messenger is left out).
SERVICE_TABLES = ("__EFMigrationsHistory", "sessions", "recordings", "recording_status_history",
                  "realtime_notifications", "outbox_messages")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not on PATH: this test needs the PostgreSQL client tools "
                    "(make bootstrap installs them)")
    return found


@dataclass(frozen=True)
class Login:
    name: str
    password: str


@dataclass
class World:
    stack: Stack
    name: str
    service: Login  # owns the database, schema messenger and every service table
    owner: Login  # the product's owner: runs migrate; no superuser, no CREATEROLE
    worker: Login  # a login granted recording_finalize_worker
    bucket: str
    topic: str
    summaries: list[dict[str, Any]] = field(default_factory=list)

    def url(self, who: Login | None = None) -> str:
        if who is None:
            return self.stack.url_for(self.name)  # the stack's superuser: the observer
        return self.stack.url_for(self.name, who.name, who.password)

    def connect(self, who: Login | None = None) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url(who), autocommit=True, connect_timeout=10)

    def all(self, sql: str, params: Any = None) -> list[Any]:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()

    def psql(self, file: Path, who: Login, **variables: str) -> None:
        args = [_tool("psql"), "--no-psqlrc", "-X", "-q", "-v", "ON_ERROR_STOP=1"]
        for name, value in variables.items():
            args += ["-v", f"{name}={value}"]
        proc = subprocess.run([*args, "-d", self.url(who), "-f", str(file)],
                              capture_output=True, text=True, timeout=60, env=_base_env())
        assert proc.returncode == 0 and "ERROR" not in proc.stderr, (
            f"{file.name} as {who.name}: exit {proc.returncode}\n{proc.stderr}")

    def cli(self, *args: str, who: Login, expect: int = 0, timeout: float = 180,
            ) -> subprocess.CompletedProcess[str]:
        env = _base_env() | {
            "DATABASE_URL": self.url(who),
            "S3_ENDPOINT_URL": self.stack.env["S3_ENDPOINT_URL"],
            "AWS_ACCESS_KEY_ID": self.stack.env["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": self.stack.env["AWS_SECRET_ACCESS_KEY"],
            "AWS_DEFAULT_REGION": self.stack.env["AWS_DEFAULT_REGION"],
            "KAFKA_BOOTSTRAP_SERVERS": self.stack.env["KAFKA_BOOTSTRAP_SERVERS"],
            "RFR_S3_BUCKET": self.bucket,
            "RFR_TOPIC": self.topic,
            "RFR_METRICS_PORT": "0",
        } | WORKER_ENV
        proc = subprocess.run([CLI, *args], env=env, capture_output=True, text=True,
                              timeout=timeout)
        assert proc.returncode == expect, (
            f"recording-finalize {' '.join(args)} as {who.name}: exit {proc.returncode} "
            f"(expected {expect})\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
        return proc

    def run_once(self) -> dict[str, Any]:
        proc = self.cli("run-once", who=self.worker)
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 1, proc.stdout
        summary: dict[str, Any] = json.loads(lines[0])
        assert summary.get("error") is None, (summary, proc.stderr[-6000:])
        self.summaries.append(summary)
        return summary

    def dump(self) -> str:
        """The service's schema as pg_dump writes it (its ACLs and policies included), without
        the product's one table there."""
        pg_bin = Path(self.stack.env.get("RFR_STACK_PG_BIN", "/usr/lib/postgresql/15/bin"))
        pg_dump = pg_bin / "pg_dump"
        if not pg_dump.exists():
            pytest.fail(f"{pg_dump} does not exist (RFR_STACK_PG_BIN)")
        proc = subprocess.run(
            [str(pg_dump), "--no-password", "--schema-only", "--schema=messenger",
             "--no-owner", "--exclude-table=messenger.recording_finalize_attempts",
             "--restrict-key=efcore", "-d", self.url()],
            capture_output=True, text=True, timeout=60, env=_base_env())
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def data(self) -> dict[str, str]:
        """Per service table: an md5 of every row and its xmin (any write changes it)."""
        out = {}
        with self.connect() as conn:
            for table in SERVICE_TABLES:
                row = conn.execute(
                    f'select md5(coalesce(string_agg(t.xmin::text || \':\' || t::text, \',\' '
                    f'order by t::text), \'\')) from messenger."{table}" as t').fetchone()
                out[table] = row[0] if row else ""
        return out

    def adapter(self) -> list[tuple[Any, ...]]:
        """The adapter's objects as the catalog holds them: (name, owner, definition)."""
        return self.all(
            """
            select c.relname, pg_get_userbyid(c.relowner), pg_get_viewdef(c.oid)
            from pg_class as c
            where c.relnamespace = 'recording_finalize_adapter'::regnamespace
            union all
            select p.oid::regprocedure::text, pg_get_userbyid(p.proowner),
                pg_get_functiondef(p.oid)
            from pg_proc as p
            where p.pronamespace = 'recording_finalize_adapter'::regnamespace
            order by 1
            """)

    def recording(self, rid: uuid.UUID) -> dict[str, Any]:
        with self.connect() as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
            row = cur.execute("select *, extract(epoch from duration)::integer as seconds "
                              "from messenger.recordings where id = %s", (rid,)).fetchone()
        assert row is not None, rid
        return row


def _diff(before: str, after: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        "before", "after", n=1))[:6000]


@contextlib.contextmanager
def build_world(stack: Stack, bucket: str, topic: str) -> Iterator[World]:
    suffix = uuid.uuid4().hex[:8]
    name = f"rfr_efcore_{suffix}"

    def login(role: str) -> Login:
        return Login(f"{role}_{suffix}", secrets.token_hex(12))

    service, owner, worker = login("efcore_service"), login("rfr_ef_owner"), login("rfr_ef_wk")
    with _admin(stack) as conn:
        for who in (service, owner, worker):
            conn.execute(f"create role {who.name} login nosuperuser nocreaterole nocreatedb "
                         f"password '{who.password}'")
        # The product's group roles are cluster-wide: a DBA creates them once (sql/README.md).
        for group in GROUP_ROLES:
            conn.execute(f"do $$ begin create role {group} nologin; "
                         "exception when duplicate_object then null; end $$")
        conn.execute(f"grant recording_finalize_worker to {worker.name}")
        conn.execute(f'create database "{name}" owner {service.name}')
    world = World(stack, name, service, owner, worker, bucket, topic)
    try:
        yield world
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            for who in (worker, owner, service):
                with contextlib.suppress(psycopg.Error):
                    conn.execute(f"drop role if exists {who.name}")


# ------------------------------------------------------------------------------------------
# the service at work while the worker runs


class ServiceTraffic:
    """The EF service's application in a thread, through its own login: new calls on the happy
    path (session, recording, other events, stop, ingest with its event), soft deletes of its
    older recordings, and its own outbox relay. It keeps the ledger of every outbox row as it
    last wrote it. Every error is kept: the service must never see one."""

    def __init__(self, world: World, ledger: dict[uuid.UUID, Any]) -> None:
        self.world = world
        self.ledger = ledger
        self.errors: list[str] = []
        self.iterations = 0
        self.happy: list[Any] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ServiceTraffic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        assert not self._thread.is_alive(), "the service's traffic thread did not stop"

    def _run(self) -> None:
        try:
            with self.world.connect(self.world.service) as conn:
                while not self._stop.is_set():
                    self._step(conn)
                    time.sleep(0.02)
        except (psycopg.Error, ef.ConcurrencyError, LookupError, ValueError) as err:
            self.errors.append(f"{type(err).__name__} {getattr(err, 'sqlstate', '')}: {err}")
        finally:
            if not self._stop.is_set() and not self.errors:
                self.errors.append("the service's traffic thread ended on its own")

    def _step(self, conn: psycopg.Connection[Any]) -> None:
        i = self.iterations
        kind = "Conference" if i % 4 == 3 else "Direct"
        session = ef.create_session(conn, kind=kind, started_ago=timedelta(minutes=5))
        rec = ef.start_recording(conn, session, media_type="Video" if i % 2 else "Audio",
                                 started_ago=timedelta(minutes=5))
        other = ef.enqueue_other_event(conn, session)
        self.ledger[other.id] = other
        ef.end_session(conn, session, stop=rec)
        event = ef.complete_ingest(conn, rec, file_id=f"recordings/{rec.id}", size_bytes=100 + i,
                                   duration_seconds=300, format="Mp4")
        self.ledger[event.id] = event
        self.happy.append(rec)
        if len(self.happy) > 3 and i % 3 == 0:
            ef.soft_delete_recording(conn, self.happy[-4])
        for row in ef.relay_once(conn, batch_size=10):
            self.ledger[row.id] = row
        self.iterations += 1


# ------------------------------------------------------------------------------------------
# the test


@dataclass(frozen=True)
class Seeded:
    found: list[Any]  # stuck, binary in S3 -> Available, one event each
    missing: list[Any]  # stuck, no binary -> Failed/Timeout, no event
    unpublished: list[Any]  # Available within the window, no service event -> one event each
    published: Any  # Available with the service's own event -> no product event
    deleted: Any  # stuck but soft-deleted -> untouched, no event
    history: list[Any]  # Available three days ago with their events -> nothing


def _seed(world: World, ledger: dict[uuid.UUID, Any]) -> Seeded:
    hour = timedelta(hours=1)
    with world.connect(world.service) as conn:
        def stuck(kind: str, status: str, media: str = "Audio") -> Any:
            session = ef.create_session(conn, kind=kind, started_ago=3 * hour)
            rec = ef.start_recording(conn, session, media_type=media, trigger="Auto",
                                     started_ago=3 * hour)
            # Recording: the stop callback was lost; Uploading: the ingest callback was.
            ef.end_session(conn, session, ended_ago=hour,
                           stop=rec if status == "Uploading" else None)
            return rec

        def available(ago: timedelta, *, emit: bool, fmt: str, seconds: int) -> Any:
            session = ef.create_session(conn, started_ago=ago + hour)
            rec = ef.start_recording(conn, session, media_type="Video",
                                     started_ago=ago + hour)
            ef.end_session(conn, session, ended_ago=ago, stop=rec)
            row = ef.complete_ingest(conn, rec, file_id=f"files/{rec.id}.{fmt.lower()}",
                                     size_bytes=5000 + seconds, duration_seconds=seconds,
                                     format=fmt, available_ago=ago, media_type="Video",
                                     emit_event=emit)
            if row is not None:
                ledger[row.id] = row
            return rec

        found = [stuck("Direct", "Recording"), stuck("Direct", "Uploading"),
                 stuck("Conference", "Uploading", "Video")]
        missing = [stuck("Direct", "Recording"), stuck("Conference", "Recording"),
                   stuck("Direct", "Uploading")]
        unpublished = [available(2 * hour, emit=False, fmt="Ogg", seconds=61),
                       available(5 * hour, emit=False, fmt="M4a", seconds=3599)]
        published = available(2 * hour, emit=True, fmt="Mp4", seconds=75)
        history = [available(72 * hour, emit=True, fmt="Webm", seconds=30) for _ in range(2)]
        deleted = stuck("Direct", "Uploading")
        ef.soft_delete_recording(conn, deleted)
        # The service's relay published its history (and maybe the fresh one) when it happened.
        for row in ef.relay_once(conn, batch_size=2, as_it_happened=True):
            ledger[row.id] = row
    # The deleted one's binary is there: it must still be left. The Available recordings were
    # uploaded (that is how the service made them Available): the worker's known uploads are
    # among them, and without their binaries a cycle whose first verdict is a 404 would rightly
    # read the storage as not the recorders' (KeyLayoutUnconfirmed), depending on which HEAD
    # answers first.
    for rec in (*found, deleted, *unpublished, published, *history):
        put_binary(world.stack, world.bucket, rec.id)
    return Seeded(found, missing, unpublished, published, deleted, history)


def _settled(world: World, seeded: Seeded) -> bool:
    """Every stuck recording terminal and every expected event published by the product's
    relay (its own outbox, recording_finalize.outbox)."""
    states = [world.recording(r.id)["status"] for r in (*seeded.found, *seeded.missing)]
    expected = [r.id for r in (*seeded.found, *seeded.unpublished)]
    published = world.all("select count(distinct recording_id) from recording_finalize.outbox "
                          "where recording_id = any(%s) and published_at is not null",
                          (expected,))
    return states == [3] * 3 + [4] * 3 and published == [(len(expected),)]


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_the_product_installs_on_an_ef_core_schema_through_the_dbas_adapter_and_rescues(
        stack: Stack, bucket: str, topic: str) -> None:
    validator = Draft202012Validator(json.loads(CONTRACT_SCHEMA.read_text(encoding="utf-8")),
                                     format_checker=Draft202012Validator.FORMAT_CHECKER)
    with build_world(stack, bucket, topic) as world:
        # 1. The service's database: its migration script, its owner's grants; the DBA's
        # adapter as the product's owner; then the product's own migrate, which keeps it.
        world.psql(FIXTURES / "schema.sql", world.service)
        world.psql(FIXTURES / "grants.sql", world.service, product_owner=world.owner.name)
        world.psql(FIXTURES / "adapter.sql", world.owner)
        ef_history = world.all('select * from messenger."__EFMigrationsHistory" order by 1')
        assert len(ef_history) == 4, ef_history
        adapter = world.adapter()
        assert len(adapter) == 6, adapter
        before = world.dump()

        world.cli("migrate", who=world.owner)
        assert world.adapter() == adapter, "migrate changed the DBA's adapter"
        after = world.dump()
        assert after == before, _diff(before, after)
        assert world.all("select pg_get_userbyid(c.relowner) from pg_class as c "
                         "where c.oid = 'messenger.recording_finalize_attempts'::regclass"
                         ) == [(world.owner.name,)]
        # A second migrate (every deploy) keeps both as they are too.
        world.cli("migrate", who=world.owner)
        assert world.adapter() == adapter and world.dump() == before
        with world.connect(world.owner) as conn:
            conn.execute("update recording_finalize.settings set topic = %s, "
                         "updated_at = now()", (topic,))

        # 2. The service's rows, then the worker while the service keeps writing.
        ledger: dict[uuid.UUID, Any] = {}
        seeded = _seed(world, ledger)
        expected = {rec.id for rec in (*seeded.found, *seeded.unpublished)}
        untouched_deleted = world.recording(seeded.deleted.id)
        untouched_published = world.recording(seeded.published.id)
        with ServiceTraffic(world, ledger) as traffic:
            for _ in range(5):
                world.run_once()
                if _settled(world, seeded):
                    break
            time.sleep(0.5)  # the service goes on after the rescue
        world.run_once()  # nothing left: nothing more is done
        with world.connect(world.service) as conn:
            while rows := ef.relay_once(conn, batch_size=50):
                for row in rows:
                    ledger[row.id] = row
        assert traffic.errors == [], traffic.errors[:5]
        assert traffic.iterations >= 5, traffic.iterations
        assert sum(int(s.get("quarantined") or 0) for s in world.summaries) == 0, world.summaries

        # 3. The recordings, as the service's tables hold them.
        for rec in seeded.found:
            row = world.recording(rec.id)
            assert (row["status"], row["file_id"], row["size_bytes"], row["seconds"],
                    row["format"]) == (3, f"recordings/{rec.id}", 2048, 42, 1), row
            assert row["row_version"] > 1 and row["available_at"] is not None, row
        for rec in seeded.missing:
            row = world.recording(rec.id)
            assert (row["status"], row["failure_reason"]) == (4, 1), row
            assert row["failed_at"] is not None, row
        # The status-history trigger wrote the product's transitions, as the product's owner.
        moved = world.all("select recording_id, to_status from messenger.recording_status_history "
                          "where changed_by = %s", (world.owner.name,))
        assert sorted(moved) == sorted([(r.id, 3) for r in seeded.found]
                                       + [(r.id, 4) for r in seeded.missing]), moved
        assert world.recording(seeded.deleted.id) == untouched_deleted
        assert world.recording(seeded.published.id) == untouched_published
        for rec in (*seeded.unpublished, *seeded.history):
            assert world.recording(rec.id)["row_version"] == 3, rec  # created, stopped, ingested
        pushes = world.all("select kind, reference_id, tenant_id, dispatch_attempts "
                           "from messenger.realtime_notifications")
        assert sorted((k, r) for k, r, _, _ in pushes) == sorted(
            [("RecordingAvailable", r.id) for r in (*seeded.found, *seeded.unpublished)]
            + [("RecordingFailed", r.id) for r in seeded.missing]), pushes
        tenants = {r.id: r.session.tenant_id for r in (*seeded.found, *seeded.unpublished,
                                                       *seeded.missing)}
        assert all(t == tenants[r] and a == 0 for _, r, t, a in pushes), pushes

        # 4. The service's outbox is the service's: every row as its own code last wrote it
        # (an UPDATE by anyone else changes xmin), none added, processed_on_utc its relay's.
        rows = {r[0]: r for r in world.all("select id, xmin::text, processed_on_utc, error "
                                           "from messenger.outbox_messages")}
        assert set(rows) == set(ledger), (set(rows) ^ set(ledger))
        for ident, (_, xmin, processed, error) in rows.items():
            mine = ledger[ident]
            assert (xmin, processed, error) == (mine.xmin, mine.processed_on_utc, None), (
                ident, rows[ident], mine)
        assert all(r[2] is not None for r in rows.values())  # its relay drained it
        assert world.all('select * from messenger."__EFMigrationsHistory" order by 1'
                         ) == ef_history

        # 5. Kafka: exactly one event per expected recording, the contract's message.
        messages = consume(stack, topic, expect=len(expected), idle_s=2.0)
        assert sorted(m.value["recordingId"] for m in messages) == sorted(map(str, expected)), (
            [m.value["recordingId"] for m in messages], expected)
        sessions = {r.id: r.session for r in (*seeded.found, *seeded.unpublished)}
        for message in messages:
            errors = [e.message for e in validator.iter_errors(message.value)]
            assert errors == [], (errors, message.value)
            rid = uuid.UUID(message.value["recordingId"])
            session, row = sessions[rid], world.recording(rid)
            assert message.key == str(session.id)
            assert message.headers.get("event-type") == "call-recording-available"
            assert message.headers.get("event-id"), message.headers
            fmt = {1: "Webm", 2: "Mp4", 3: "Ogg", 4: "M4a"}[row["format"]]
            assert {k: message.value[k] for k in (
                "sessionKind", "sessionId", "chatId", "dealId", "tenantId", "mediaType",
                "fileId", "format", "durationSeconds", "sizeBytes", "trigger")} == {
                "sessionKind": session.kind, "sessionId": str(session.id),
                "chatId": str(session.chat_id), "dealId": str(session.deal_id),
                "tenantId": str(session.tenant_id),
                "mediaType": {0: "Audio", 1: "Video"}[row["media_type"]],
                "fileId": row["file_id"], "format": fmt, "durationSeconds": row["seconds"],
                "sizeBytes": row["size_bytes"], "trigger": row["trigger"]}, message.value
            for key, column in (("startedAt", "started_at"), ("endedAt", "ended_at"),
                                ("availableAt", "available_at")):
                assert _ts(message.value[key]) == row[column], (key, message.value, row)

        # 6. uninstall: the service's schema and rows as they were.
        data = world.data()
        world.cli("uninstall", "--yes", who=world.owner)
        # (The adapter's schema is the DBA's content: whether it stays is not judged here.)
        assert world.all("select c.oid::regclass::text from pg_class as c "
                         "where c.relnamespace = 'messenger'::regnamespace "
                         "and c.relowner = %s::regrole", (world.owner.name,)) == []
        gone = world.dump()
        assert gone == before, _diff(before, gone)
        assert world.data() == data
        # The service works as before: its happy path and its relay.
        with world.connect(world.service) as conn:
            session = ef.create_session(conn)
            rec = ef.start_recording(conn, session)
            ef.end_session(conn, session, stop=rec)
            assert ef.complete_ingest(conn, rec, file_id="recordings/after", size_bytes=1,
                                      duration_seconds=1, format="Ogg") is not None
            assert len(ef.relay_once(conn)) == 1
