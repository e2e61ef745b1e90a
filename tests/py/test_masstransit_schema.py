"""The product installed, from its public docs only, into the database of a messenger service it
has never seen: EF Core 8 with its default naming (quoted PascalCase), enums as text, durations
as ``interval``, ``xmin`` as the concurrency token, ``"CallRecordings"`` partitioned by month,
its own realtime outbox, and MassTransit's Entity Framework Core transactional outbox
(tests/fixtures/masstransit/schema.sql), whose delivery service publishes each
``"OutboxMessage"`` row to Kafka and then DELETES it.

The DBA maps the ports literally as docs/install.md asks (fixtures/masstransit/adapter.sql):
``service_events`` = "your own call-recording-available events, by recording id, in any state"
= the ``"OutboxMessage"`` rows of that event. It can only show the pending ones. The service
keeps working meanwhile (fixtures/masstransit/service.py: the happy path, the delivery service,
unrelated xmin-checked saves), and the worker runs through the installed console script.

One scenario (module fixture ``scenario``) runs the install, the rescue, the operator's look, a
redeploy, a second adapter and the uninstall, and keeps what it saw; each test judges one
promise of the product, so a failing one says which:

1. migrate as the product's owner (no superuser) with the docs' install steps;
2. the rescue: 0 second events for the service's recordings, one for each stuck recording with
   a binary, Failed without one, no realtime row of the product for the service's recordings,
   no xmin conflict on a recording the product did not move;
3. ``status`` says that republish discovery is held because ``service_events`` does not show
   recently Available recordings;
4. a ``service_events`` that lists every Available recording is refused by migrate (exit 2);
5. a redeploy after CREATE was taken back migrates;
6. uninstall leaves the service's schema and MassTransit's tables as they were.

Nothing here is skipped: a missing tool fails with what was missing.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import json
import secrets
import shutil
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from conftest import CLI, Stack, _admin, _base_env, consume
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "masstransit"
CONTRACT_SCHEMA = REPO / "docs" / "contract" / "call-recording-available.schema.json"


def _load_service() -> Any:
    spec = importlib.util.spec_from_file_location("masstransit_service",
                                                  FIXTURES / "service.py")
    assert spec is not None and spec.loader is not None, FIXTURES / "service.py"
    module = importlib.util.module_from_spec(spec)
    sys.modules["masstransit_service"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


svc = _load_service()

#: A short SLA, so that the service's own recordings are past it within the test; every other
#: setting (RFR_REPUBLISH_WINDOW included) is the default.
SLA_S = 3.0
WORKER_ENV = {"RFR_FINALIZE_SLA_TIMEOUT": f"{SLA_S:g}s"}
GROUP_ROLES = ("recording_finalize_worker", "recording_finalize_operator",
               "recording_finalize_service")
#: MassTransit's tables; with the service's own, every table of schema messenger but the
#: product's one.
MASSTRANSIT_TABLES = ("InboxState", "OutboxState", "OutboxMessage")
SERVICE_TABLES = ("__EFMigrationsHistory", "CallSessions", "ConferenceSessions",
                  "CallRecordings", "RealtimeOutboxMessages", *MASSTRANSIT_TABLES)
#: The worker's cycles while the service writes: at most this long.
RESCUE_DEADLINE_S = 75.0


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
    worker: Login  # granted recording_finalize_worker (docs/install.md step 6)
    operator: Login  # granted recording_finalize_operator: status
    bucket: str
    topic: str

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

    def cli(self, *args: str, who: Login, timeout: float = 180,
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
        return subprocess.run([CLI, *args], env=env, capture_output=True, text=True,
                              timeout=timeout)

    def dump(self) -> str:
        """The service's schema as pg_dump writes it (ACLs included), without the product's
        one table there."""
        pg_dump = Path(self.stack.env.get("RFR_STACK_PG_BIN", "/usr/lib/postgresql/15/bin"),
                       "pg_dump")
        if not pg_dump.exists():
            pytest.fail(f"{pg_dump} does not exist (RFR_STACK_PG_BIN)")
        proc = subprocess.run(
            [str(pg_dump), "--no-password", "--schema-only", "--schema=messenger",
             "--no-owner", "--exclude-table=messenger.recording_finalize_attempts",
             "--restrict-key=masstransit", "-d", self.url()],
            capture_output=True, text=True, timeout=60, env=_base_env())
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def data(self, tables: tuple[str, ...] = SERVICE_TABLES) -> dict[str, str]:
        """Per table: an md5 of every row and its xmin (any write changes it)."""
        out = {}
        with self.connect() as conn:
            for table in tables:
                row = conn.execute(
                    f"select md5(coalesce(string_agg(t.xmin::text || ':' || t::text, ',' "
                    f"order by t::text), '')) from messenger.\"{table}\" as t").fetchone()
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

    def status_of(self, recs: list[Any]) -> list[str]:
        by_id = dict(self.all('select "Id", "Status" from messenger."CallRecordings" '
                              'where "Id" = any(%s)', ([r.id for r in recs],)))
        return [by_id.get(r.id, "?") for r in recs]


def _diff(before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        "before", "after", n=1))[:6000]


def _said(proc: subprocess.CompletedProcess[str] | None) -> str:
    if proc is None:
        return "(not run: an earlier step failed)"
    return (f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
            f"--- stderr\n{proc.stderr[-6000:]}")


@contextlib.contextmanager
def build_world(stack: Stack) -> Iterator[World]:
    """docs/install.md step 1 and 6 (roles, logins) and the service's database, owned by its
    role; a bucket and a topic of this module's own."""
    suffix = uuid.uuid4().hex[:8]
    name = f"rfr_mt_{suffix}"

    def login(role: str) -> Login:
        return Login(f"{role}_{suffix}", secrets.token_hex(12))

    service, owner = login("mt_service"), login("rfr_mt_owner")
    worker, operator = login("rfr_mt_wk"), login("rfr_mt_op")
    bucket, topic = f"rfr-mt-{suffix}", f"rfr-mt-{suffix}"
    with _admin(stack) as conn:
        for who in (service, owner, worker, operator):
            conn.execute(f"create role {who.name} login nosuperuser nocreaterole nocreatedb "
                         f"password '{who.password}'")
        for group in GROUP_ROLES:
            conn.execute(f"do $$ begin create role {group} nologin; "
                         "exception when duplicate_object then null; end $$")
        conn.execute(f"grant recording_finalize_worker to {worker.name}")
        conn.execute(f"grant recording_finalize_operator to {operator.name}")
        conn.execute(f'create database "{name}" owner {service.name}')
    s3 = stack.s3()
    s3.create_bucket(Bucket=bucket)
    admin = AdminClient({"bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"]})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=15)
    try:
        yield World(stack, name, service, owner, worker, operator, bucket, topic)
    finally:
        with contextlib.suppress(Exception):
            admin.delete_topics([topic])[topic].result(timeout=5)
        with contextlib.suppress(Exception):
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                for obj in page.get("Contents", []):
                    s3.delete_object(Bucket=bucket, Key=obj["Key"])
            s3.delete_bucket(Bucket=bucket)
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            for who in (worker, operator, owner, service):
                with contextlib.suppress(psycopg.Error):
                    conn.execute(f"drop role if exists {who.name}")


# ------------------------------------------------------------------------------------------
# the scenario


@dataclass
class Seeded:
    found: list[Any] = field(default_factory=list)  # stuck, binary in S3 -> Available, 1 event
    missing: list[Any] = field(default_factory=list)  # stuck, no binary -> Failed, no event
    delivered: list[Any] = field(default_factory=list)  # Available > SLA ago, event delivered
    held: list[Any] = field(default_factory=list)  # Available > SLA ago, event still pending
    history: list[Any] = field(default_factory=list)  # Available 3 days ago, delivered
    in_progress: list[Any] = field(default_factory=list)  # Recording, the call goes on


@dataclass
class Scenario:
    world: World
    migrate: subprocess.CompletedProcess[str] | None = None
    adapter_created: list[tuple[Any, ...]] = field(default_factory=list)
    adapter_migrated: list[tuple[Any, ...]] = field(default_factory=list)
    dump_installing: str = ""  # the DBA's preparation done, before migrate
    dump_migrated: str = ""  # after migrate
    dump_installed: str = ""  # after the docs' step 5 (CREATE taken back)
    dump_uninstalled: str = ""
    seeded: Seeded = field(default_factory=Seeded)
    service: Any = None
    runs: list[subprocess.CompletedProcess[str]] = field(default_factory=list)
    settled: bool = False
    kafka: Counter[str] = field(default_factory=Counter)
    messages: list[Any] = field(default_factory=list)
    kafka_expected: int = 0
    realtime_by_product: list[tuple[str, uuid.UUID]] = field(default_factory=list)
    xmins: dict[uuid.UUID, str] = field(default_factory=dict)  # after the cycles
    status_text: subprocess.CompletedProcess[str] | None = None
    status_json: subprocess.CompletedProcess[str] | None = None
    redeploy: subprocess.CompletedProcess[str] | None = None
    variant: subprocess.CompletedProcess[str] | None = None
    uninstall: subprocess.CompletedProcess[str] | None = None
    data_before_uninstall: dict[str, str] = field(default_factory=dict)
    data_after_uninstall: dict[str, str] = field(default_factory=dict)

    @property
    def service_recordings(self) -> list[Any]:
        s = self.seeded
        return [*s.delivered, *s.held, *s.history, *(self.service.live if self.service else [])]


def _seed(world: World, service: Any) -> Seeded:
    """The service's rows before the worker's first cycle, through its own login; the recorder
    uploaded the binary of every recording it completed (and of the first stuck ones)."""
    hour, seeded, ledger = timedelta(hours=1), Seeded(), service.ledger
    s3 = world.stack.s3()

    def upload(rec: Any) -> None:
        s3.put_object(Bucket=world.bucket, Key=f"recordings/{rec.id}", Body=b"\0" * 2048,
                      ContentType="audio/webm", Metadata={"duration-seconds": "42"})

    with world.connect(world.service) as conn:
        def stuck(kind: str, status: str, media: str = "Audio") -> Any:
            session = svc.create_session(conn, kind=kind, started_ago=3 * hour)
            rec = svc.start_recording(conn, session, media_type=media, trigger="Auto",
                                      started_ago=3 * hour, ledger=ledger)
            # Recording: the stop callback was lost; Uploading: the ingest callback was.
            svc.end_session(conn, session, ended_ago=hour,
                            stop=rec if status == "Uploading" else None, ledger=ledger)
            return rec

        def available(ago: timedelta, i: int) -> Any:
            kind = "Conference" if i % 3 == 2 else "Direct"
            session = svc.create_session(conn, kind=kind, started_ago=ago + hour)
            rec = svc.start_recording(conn, session, started_ago=ago + hour, ledger=ledger)
            svc.end_session(conn, session, ended_ago=ago, stop=rec, ledger=ledger)
            upload(rec)
            ingested = svc.complete_ingest(conn, rec, file_id=f"recordings/{rec.id}",
                                           size_bytes=4096 + i, duration_seconds=60 + i,
                                           format="Ogg", available_ago=ago, ledger=ledger)
            return rec, ingested.outbox_id

        seeded.found = [stuck("Direct", "Recording"), stuck("Direct", "Uploading"),
                        stuck("Conference", "Uploading", "Video"),
                        stuck("Conference", "Recording")]
        for rec in seeded.found:
            upload(rec)
        seeded.missing = [stuck("Direct", "Recording"), stuck("Conference", "Recording"),
                          stuck("Direct", "Uploading")]
        # Within the default republish window (a day back from an SLA ago), past the SLA.
        for i in range(50):
            rec, _ = available(timedelta(minutes=1) + i * timedelta(minutes=25), i)
            seeded.delivered.append(rec)
        for i in range(10):
            rec, outbox_id = available(timedelta(minutes=2) + i * timedelta(minutes=30), i)
            seeded.held.append(rec)
            service.held.add(outbox_id)  # the delivery service lags behind on these
        for i in range(5):
            rec, _ = available(72 * hour + i * hour, i)
            seeded.history.append(rec)
        for _ in range(8):
            session = svc.create_session(conn, started_ago=timedelta(minutes=10))
            seeded.in_progress.append(svc.start_recording(
                conn, session, started_ago=timedelta(minutes=9), ledger=ledger))
        # MassTransit delivered (and deleted) everything but the lagging ones before the
        # product came.
        service.drain(conn, timeout_s=60, held=service.held)
    service.touchable.extend([*seeded.delivered, *seeded.held, *seeded.history,
                              *seeded.in_progress])
    return seeded


def _grant_create(world: World, verb: str) -> None:
    """docs/install.md step 5 (``revoke``), or its reverse: CREATE on the database and on
    schema messenger, by their owner (the service's role)."""
    to = "to" if verb == "grant" else "from"
    with world.connect(world.service) as conn:
        conn.execute(f'{verb} create on database "{world.name}" {to} {world.owner.name}')
        conn.execute(f"{verb} create on schema messenger {to} {world.owner.name}")


def _install(sc: Scenario) -> None:
    """docs/install.md, in the order a DBA can follow it: the service's migration script (its
    owner), the grants (step 3: the adapter's schema needs CREATE on the database), the DBA's
    adapter as the product's owner (step 2), migrate (step 4), CREATE taken back (step 5)."""
    world = sc.world
    world.psql(FIXTURES / "schema.sql", world.service)
    world.psql(FIXTURES / "grants.sql", world.service, product_owner=world.owner.name)
    world.psql(FIXTURES / "adapter.sql", world.owner)
    sc.adapter_created = world.adapter()
    sc.dump_installing = world.dump()
    sc.migrate = world.cli("migrate", who=world.owner)
    sc.adapter_migrated = world.adapter()
    sc.dump_migrated = world.dump()
    if sc.migrate.returncode != 0:
        return
    _grant_create(world, "revoke")
    sc.dump_installed = world.dump()
    with world.connect(world.owner) as conn:  # RFR_TOPIC must equal the server's topic
        conn.execute("update recording_finalize.settings set topic = %s, updated_at = now()",
                     (world.topic,))


def _rescue(sc: Scenario) -> None:
    """The worker's cycles (run-once, the installed console script, as the worker's login)
    while the service works, until every stuck recording is terminal, the service wrote its
    live recordings and each of them was past the SLA at a cycle; then MassTransit catches up,
    and the topic is read."""
    world = sc.world
    service = svc.Service(world.url(world.service), world.topic,
                          world.stack.env["KAFKA_BOOTSTRAP_SERVERS"], upload=lambda _: None)
    sc.service = service
    sc.seeded = seeded = _seed(world, service)
    s3 = world.stack.s3()
    service.upload = lambda rec: s3.put_object(
        Bucket=world.bucket, Key=f"recordings/{rec.id}", Body=b"\0" * 1024,
        ContentType="audio/webm", Metadata={"duration-seconds": "120"})
    deadline = time.monotonic() + RESCUE_DEADLINE_S
    with service:
        while time.monotonic() < deadline:
            sc.runs.append(world.cli("run-once", who=world.worker))
            terminal = world.status_of([*seeded.found, *seeded.missing]) == (
                ["Available"] * len(seeded.found) + ["Failed"] * len(seeded.missing))
            if service.errors or (terminal and len(service.live) >= service.live_target):
                break
        # One more cycle once the service's last recording is past the SLA.
        while time.monotonic() < service.last_available + SLA_S + 0.5:
            time.sleep(0.1)
        sc.runs.append(world.cli("run-once", who=world.worker))
        sc.settled = world.status_of([*seeded.found, *seeded.missing]) == (
            ["Available"] * len(seeded.found) + ["Failed"] * len(seeded.missing))
        sc.status_text = world.cli("status", who=world.operator)
        sc.status_json = world.cli("status", "--json", who=world.operator)
    sc.xmins = dict(world.all('select "Id", xmin::text from messenger."CallRecordings"'))
    # The lagging delivery catches up: every event of the service is on the topic once.
    service.held.clear()
    with world.connect(world.service) as conn:
        service.drain(conn, timeout_s=60)
    sc.kafka_expected = len(sc.service_recordings) + len(seeded.found)
    messages = consume(world.stack, world.topic, expect=sc.kafka_expected, idle_s=2.0,
                       timeout_s=45)
    sc.messages = messages
    sc.kafka = Counter(m.value["recordingId"] for m in messages)
    sc.realtime_by_product = world.all(
        'select "Kind", "ReferenceId" from messenger."RealtimeOutboxMessages" '
        "where \"Source\" <> %s", (svc.SOURCE,))


@pytest.fixture(scope="module")
def scenario(stack: Stack) -> Iterator[Scenario]:
    with build_world(stack) as world:
        sc = Scenario(world)
        _install(sc)
        if sc.migrate is not None and sc.migrate.returncode == 0:
            _rescue(sc)
            # 5. A redeploy: the release's migrate, CREATE taken back since the install.
            sc.redeploy = world.cli("migrate", who=world.owner)
            # 4. A second DBA's service_events: every Available recording. CREATE is given
            # back for it (as for a release that asks for it), so that only the adapter is
            # judged, then taken back again.
            _grant_create(world, "grant")
            world.psql(FIXTURES / "service_events_every_available.sql", world.owner)
            sc.variant = world.cli("migrate", who=world.owner)
            world.psql(FIXTURES / "adapter.sql", world.owner)
            _grant_create(world, "revoke")
            # 6. uninstall.
            sc.data_before_uninstall = world.data()
            sc.uninstall = world.cli("uninstall", "--yes", who=world.owner)
            sc.data_after_uninstall = world.data()
            sc.dump_uninstalled = world.dump()
        yield sc


# ------------------------------------------------------------------------------------------
# the promises


def test_1_migrate_installs_through_the_dbas_adapter_as_the_products_owner(
        scenario: Scenario) -> None:
    sc = scenario
    assert sc.migrate is not None and sc.migrate.returncode == 0, _said(sc.migrate)
    assert "kept" in sc.migrate.stdout, sc.migrate.stdout
    # Its service_events can show pending events only, and republish discovery is on: said.
    assert ("warning: recording_finalize_adapter.service_events: its published_at is always "
            "NULL") in sc.migrate.stdout, sc.migrate.stdout
    assert sc.adapter_migrated == sc.adapter_created, "migrate changed the DBA's adapter"
    assert sc.dump_migrated == sc.dump_installing, _diff(sc.dump_installing, sc.dump_migrated)
    assert sc.world.all("select rolsuper, rolcreaterole from pg_roles where rolname = %s",
                        (sc.world.owner.name,)) == [(False, False)]


def _rescued(sc: Scenario) -> tuple[Seeded, Any]:
    """The rescue ran: the service saw no error, every cycle exited 0, the service wrote its
    recordings."""
    assert sc.service is not None, "not run: migrate failed (test 1)"
    assert sc.service.errors == [], sc.service.errors[:5]
    failed_runs = [p for p in sc.runs if p.returncode != 0]
    assert failed_runs == [], _said(failed_runs[0])
    assert len(sc.service.live) == sc.service.live_target, len(sc.service.live)
    assert len(sc.service_recordings) >= 100, len(sc.service_recordings)
    return sc.seeded, sc.service


def test_2a_no_second_event_for_a_recording_the_service_delivered_or_still_holds(
        scenario: Scenario) -> None:
    """Kafka, per recording: the service's own event once (delivered and deleted before or
    during the cycles, or still pending in its outbox during them and delivered after), never
    a second one from the product."""
    sc = scenario
    seeded, service = _rescued(sc)
    counts = {str(r.id): sc.kafka[str(r.id)] for r in sc.service_recordings}
    wrong = {rid: n for rid, n in counts.items() if n != 1}
    groups = {"delivered before the worker came": seeded.delivered,
              "delivered while it ran": service.live,
              "pending during the cycles": seeded.held,
              "outside the republish window": seeded.history}
    assert wrong == {}, (
        f"{len(wrong)} of the service's {len(counts)} recordings have not exactly one event "
        "on the topic: " + ", ".join(
            f"{sum(1 for r in recs if str(r.id) in wrong)}/{len(recs)} {name}"
            for name, recs in groups.items())
        + f"; e.g. {list(wrong.items())[:3]}")
    assert sum(sc.kafka.values()) == sc.kafka_expected, (sum(sc.kafka.values()),
                                                        sc.kafka_expected)


def test_2b_each_stuck_recording_ends_terminal_with_one_event_or_none(
        scenario: Scenario) -> None:
    sc = scenario
    seeded, _ = _rescued(sc)
    assert sc.settled, (
        f"stuck recordings not terminal after {len(sc.runs)} cycles: "
        f"{sc.world.status_of([*seeded.found, *seeded.missing])}")
    assert {str(r.id): sc.kafka[str(r.id)] for r in seeded.found} == {
        str(r.id): 1 for r in seeded.found}
    assert {str(r.id): sc.kafka[str(r.id)] for r in seeded.missing} == {
        str(r.id): 0 for r in seeded.missing}
    # Every message on the topic, the service's and the product's: the contract's.
    validator = Draft202012Validator(json.loads(CONTRACT_SCHEMA.read_text(encoding="utf-8")),
                                     format_checker=Draft202012Validator.FORMAT_CHECKER)
    for message in sc.messages:
        assert [e.message for e in validator.iter_errors(message.value)] == [], message.value
        assert message.key == message.value["sessionId"], message
        assert message.headers.get("event-type") == "call-recording-available", message


def test_2c_no_realtime_row_of_the_product_for_the_services_recordings(
        scenario: Scenario) -> None:
    """The product pushes its own transitions only (its rows: "Source" is not the
    service's)."""
    sc = scenario
    seeded, _ = _rescued(sc)
    service_ids = {r.id for r in sc.service_recordings}
    theirs = [row for row in sc.realtime_by_product if row[1] in service_ids]
    assert theirs == [], (f"the product wrote {len(theirs)} realtime rows for the service's "
                          f"recordings, e.g. {theirs[:3]}")
    assert sorted(sc.realtime_by_product) == sorted(
        [("RecordingAvailable", r.id) for r in seeded.found]
        + [("RecordingFailed", r.id) for r in seeded.missing]), sc.realtime_by_product


def test_2d_no_xmin_conflict_on_a_recording_the_product_did_not_move(
        scenario: Scenario) -> None:
    """The service's unrelated saves (read, think, UPDATE ... where xmin = the one read) of a
    recording the product did not move never found it changed, and the service was the last
    to write each of them (its xmin is the one the service's last write returned)."""
    sc = scenario
    seeded, service = _rescued(sc)
    moved = {r.id for r in (*seeded.found, *seeded.missing)}
    assert service.saves >= 20, service.saves
    conflicts = {rid: n for rid, n in service.conflicts.items() if n and rid not in moved}
    assert conflicts == {}, conflicts
    assert set(sc.xmins) == set(service.ledger)
    written = {rid for rid, xmin in sc.xmins.items()
               if rid not in moved and service.ledger[rid] != xmin}
    assert written == set(), f"{len(written)} recordings written by another than the service"
    # The check sees a write by the product: the ones it moved (which the service no longer
    # saves) are not at the service's xmin.
    assert {rid for rid in moved if service.ledger[rid] == sc.xmins[rid]} == set()


def _republish_hold(document: dict[str, Any]) -> Any:
    for key in ("republish_hold", "republishHold"):
        if key in document:
            return document[key]
    return None


def test_3_status_says_republish_discovery_is_held_by_service_events(
        scenario: Scenario) -> None:
    sc = scenario
    assert sc.status_text is not None and sc.status_json is not None, (
        "not run: migrate failed (test 1)")
    assert "service_events" in sc.status_text.stdout, _said(sc.status_text)
    document = json.loads(sc.status_json.stdout)
    hold = _republish_hold(document)
    assert hold is not None, f"status --json has no republish_hold: {sorted(document)}"
    held = hold.get("held") if isinstance(hold, dict) else hold
    assert held is True, hold
    # And the worker's start said why, before its first cycle.
    assert sc.runs and any('"event":"adapter warning"' in p.stderr
                           and "published_at is always NULL" in p.stderr
                           for p in sc.runs[:1]), _said(sc.runs[0])


def test_4_migrate_refuses_a_service_events_of_every_available_recording(
        scenario: Scenario) -> None:
    sc = scenario
    assert sc.variant is not None, "not run: migrate failed (test 1)"
    assert sc.variant.returncode == 2, _said(sc.variant)
    assert "service_events" in sc.variant.stdout + sc.variant.stderr, _said(sc.variant)


def test_5_a_redeploy_migrates_once_create_was_taken_back(scenario: Scenario) -> None:
    sc = scenario
    assert sc.redeploy is not None, "not run: migrate failed (test 1)"
    assert sc.redeploy.returncode == 0, _said(sc.redeploy)
    assert sc.world.all("select has_database_privilege(%s, %s, 'CREATE'), "
                        "has_schema_privilege(%s, 'messenger', 'CREATE')",
                        (sc.world.owner.name, sc.world.name, sc.world.owner.name)
                        ) == [(False, False)]


def test_6_uninstall_leaves_the_service_and_masstransit_as_they_were(
        scenario: Scenario) -> None:
    sc = scenario
    assert sc.uninstall is not None, "not run: migrate failed (test 1)"
    assert sc.uninstall.returncode == 0, _said(sc.uninstall)
    assert "holds a DBA's adapter" in sc.uninstall.stdout, sc.uninstall.stdout
    assert sc.dump_uninstalled == sc.dump_installed, _diff(sc.dump_installed,
                                                           sc.dump_uninstalled)
    assert sc.data_after_uninstall == sc.data_before_uninstall
    assert sc.world.all("select c.oid::regclass::text from pg_class as c "
                        "where c.relnamespace = 'messenger'::regnamespace "
                        "and c.relowner = %s::regrole", (sc.world.owner.name,)) == []
    # MassTransit's outbox: its delivery service emptied it, nobody else wrote it.
    assert sc.world.all('select count(*) from messenger."OutboxMessage"') == [(0,)]
    assert sc.world.all(
        "select t, p from unnest(%s::text[]) as t, "
        "unnest(array['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) as p "
        "where has_table_privilege(%s, 'messenger.' || quote_ident(t), p)",
        (list(MASSTRANSIT_TABLES), sc.world.owner.name)) == []
