"""The product as a visitor in a database the messenger service already owns (sql/README.md,
"Ownership"): the world as it is, not as the product expects it.

Each test builds that world first, without the product: a database owned by the service's own
role (``messenger_app_…``, no superuser), its schema ``messenger`` created by the service's
migration tool (yoyo-migrations, the service's bookkeeping in schema ``public`` where yoyo puts
it by default), with the service's own DDL, not sql/service/schema.sql: extra columns and
tables, extra indexes, ``bigserial`` keys, its own CHECKs, triggers, comments, storage options
and grants to its own login and to a read-only role, and rows. Then the package is installed as
a DBA would: from its wheel, into a fresh virtualenv outside the checkout (built once per
session); the service's owner runs what ``service-sql grants --to <product owner>`` prints
(through psql, as pasted); the product's owner (no superuser, no CREATEROLE) runs ``migrate``.
The worker runs from the same virtualenv as a login granted recording_finalize_worker, against
real S3 (SeaweedFS) and Kafka (Tansu); the service writes through its own login.

What is compared is taken as a superuser sees it: ``pg_dump`` of schemas messenger and public
(without messenger.recording_finalize_attempts, the product's one table there) and a catalog
snapshot of every service object (owner, ACL, reloptions, relfilenode — a rewrite changes it —,
columns, constraints, triggers, indexes, comments, functions).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import (
    InstalledPackage,
    SlowProxy,
    Stack,
    _admin,
    _base_env,
    consume,
    put_binary,
)

SERVICE_TOPIC = "messenger.chat-events.v1"
#: What the service's own tool created, per migration (yoyo .py files; {api}, {reader} are the
#: service's login and its read-only role). Deliberately not the product's reference DDL.
SERVICE_MIGRATIONS: dict[str, str] = {
    "0001_sessions": '''
from yoyo import step

steps = [
    step("create schema messenger"),
    step("""
create table messenger.call_sessions (
    id uuid primary key,
    chat_id uuid,
    deal_id uuid,
    tenant_id uuid,
    started_at timestamptz not null,
    ended_at timestamptz,
    room_name text not null default '',
    region varchar(16) not null default 'eu-central',
    constraint call_sessions_chronology check (ended_at is null or ended_at >= started_at)
)"""),
    step("""
create table messenger.conference_sessions (
    id uuid primary key,
    chat_id uuid,
    deal_id uuid,
    tenant_id uuid,
    host_id uuid,
    started_at timestamptz not null,
    ended_at timestamptz,
    max_participants integer not null default 50 check (max_participants between 2 and 500)
)"""),
    step("""
create table messenger.call_participants (
    session_id uuid not null references messenger.call_sessions (id) on delete cascade,
    user_id uuid not null,
    joined_at timestamptz not null default now(),
    primary key (session_id, user_id)
)"""),
]
''',
    "0002_recordings": '''
from yoyo import step

__depends__ = {"0001_sessions"}

steps = [
    step("""
create table messenger.call_recordings (
    id uuid primary key,
    session_kind text not null check (session_kind in ('Direct', 'Conference')),
    session_id uuid not null,
    media_type varchar(10) not null,
    trigger varchar(10) not null default 'Manual',
    status varchar(20) not null default 'Pending',
    file_id varchar(2048),
    size_bytes bigint,
    duration_seconds integer,
    format varchar(8),
    failure_reason varchar(32),
    started_at timestamptz,
    ended_at timestamptz,
    available_at timestamptz,
    failed_at timestamptz,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    storage_region text not null default 'eu-central',
    transcript_status varchar(16),
    retention_until timestamptz,
    constraint call_recordings_status_check
        check (status in ('Pending', 'Recording', 'Uploading', 'Available', 'Failed')),
    constraint call_recordings_file_id_len check (char_length(file_id) between 1 and 2048)
)"""),
    step("""
create unique index ix_recording_active on messenger.call_recordings (session_kind, session_id)
where status in ('Pending', 'Recording', 'Uploading')"""),
    step("""
create index call_recordings_status_updated on messenger.call_recordings (status, updated_at)"""),
    step("""
create table messenger.recording_shares (
    recording_id uuid not null references messenger.call_recordings (id) on delete cascade,
    shared_with uuid not null,
    primary key (recording_id, shared_with)
)"""),
]
''',
    "0003_outboxes": '''
from yoyo import step

__depends__ = {"0002_recordings"}

steps = [
    step("""
create table messenger.integration_outbox (
    id bigserial primary key,
    topic varchar(249) not null,
    message_key text not null,
    event_type varchar(64) not null,
    dedupe_key text not null,
    payload jsonb not null,
    headers jsonb not null default '{}',
    created_at timestamptz not null default now(),
    published_at timestamptz,
    attempts integer not null default 0,
    trace_id text,
    constraint integration_outbox_dedupe unique (topic, dedupe_key)
) with (fillfactor = 90, autovacuum_vacuum_scale_factor = 0.05)"""),
    step("""
create index integration_outbox_pending on messenger.integration_outbox (created_at)
where published_at is null"""),
    step("""
create table messenger.realtime_outbox (
    id bigserial primary key,
    kind varchar(32) not null,
    session_kind varchar(12) not null,
    session_id uuid not null,
    reference_id uuid,
    payload jsonb not null default '{}',
    created_at timestamptz not null default now(),
    dispatched_at timestamptz,
    tenant_id uuid
)"""),
]
''',
    "0004_triggers_grants": '''
from yoyo import step

__depends__ = {"0003_outboxes"}

steps = [
    step("""
create function messenger.touch_updated_at() returns trigger language plpgsql as $$
begin
    new.updated_at := now();
    return new;
end
$$"""),
    step("""
create trigger call_recordings_touch before update on messenger.call_recordings
for each row execute function messenger.touch_updated_at()"""),
    step("""
create function messenger.notify_outbox() returns trigger language plpgsql as $$
begin
    perform pg_notify('messenger_outbox', new.id::text);
    return null;
end
$$"""),
    step("""
create trigger integration_outbox_notify after insert on messenger.integration_outbox
for each row execute function messenger.notify_outbox()"""),
    step("""
create view messenger.active_recordings as
select id, session_kind, session_id, status from messenger.call_recordings
where status in ('Pending', 'Recording', 'Uploading')"""),
    step("comment on table messenger.call_recordings is 'messenger-service: recordings'"),
    step("comment on column messenger.call_recordings.file_id is 'storage key, never a URL'"),
    step("alter table messenger.call_recordings alter column status set statistics 500"),
    step("grant usage on schema messenger to {api}, {reader}"),
    step("grant select, insert, update, delete on all tables in schema messenger to {api}"),
    step("grant usage on all sequences in schema messenger to {api}"),
    step("grant select on all tables in schema messenger to {reader}"),
    step("alter default privileges in schema messenger grant select on tables to {reader}"),
]
''',
}
#: A migration the service ships after the product was installed: its tool must still work.
SERVICE_LATER_MIGRATION = '''
from yoyo import step

__depends__ = {"0004_triggers_grants"}

steps = [
    step("alter table messenger.call_recordings add column thumbnail_id text"),
    step("alter table messenger.integration_outbox alter column trace_id type varchar(64)"),
]
'''

WORKER_ENV = {
    # Fast retries, so a busy row is tried again in the next run-once.
    "RFR_BACKOFF_BASE": "200ms",
    "RFR_BACKOFF_CAP": "1s",
    "RFR_BACKOFF_JITTER": "0",
    "RFR_RELAY_BATCH_SIZE": "100",
}


# ------------------------------------------------------------------------------------------
# the cast: roles and the installed package (once per session)


@dataclass(frozen=True)
class Login:
    name: str
    password: str


@dataclass(frozen=True)
class Cast:
    service_owner: Login  # owns the database and schema messenger
    service_api: Login  # the messenger service's runtime login
    service_reader: str  # a read-only role the service granted SELECT
    product_owner: Login  # runs migrate: no superuser, no CREATEROLE
    worker: Login  # granted recording_finalize_worker


@pytest.fixture(scope="session")
def cast(stack: Stack) -> Iterator[Cast]:
    suffix = uuid.uuid4().hex[:8]

    def login(name: str) -> Login:
        return Login(f"{name}_{suffix}", secrets.token_hex(12))

    c = Cast(login("messenger_app"), login("messenger_api"), f"messenger_ro_{suffix}",
             login("rfr_visit_owner"), login("rfr_visit_worker"))
    with _admin(stack) as conn:
        for who in (c.service_owner, c.service_api, c.product_owner, c.worker):
            conn.execute(f"create role {who.name} login nosuperuser nocreaterole "
                         f"nocreatedb password '{who.password}'")
        conn.execute(f"create role {c.service_reader} nologin")
        # Step 1 of the install (sql/README.md): a DBA with CREATEROLE creates the group roles
        # when the product's owner may not; they are cluster-wide and may exist already.
        for group in ("recording_finalize_worker", "recording_finalize_operator",
                      "recording_finalize_service"):
            conn.execute(f"do $$ begin create role {group} nologin; "
                         "exception when duplicate_object then null; end $$")
        conn.execute(f"grant recording_finalize_worker to {c.worker.name}")
    try:
        yield c
    finally:
        with _admin(stack) as conn:
            for name in (c.worker.name, c.product_owner.name, c.service_api.name,
                         c.service_reader, c.service_owner.name):
                with contextlib.suppress(psycopg.Error):
                    conn.execute(f"drop role if exists {name}")


Package = InstalledPackage


@pytest.fixture(scope="session")
def package(installed_package: InstalledPackage) -> InstalledPackage:
    """The wheel of this checkout in a fresh virtualenv (conftest.installed_package)."""
    return installed_package


# ------------------------------------------------------------------------------------------
# the world: the service's database before the product comes


@dataclass
class World:
    stack: Stack
    cast: Cast
    package: Package
    name: str
    migrations: Path
    bucket: str = ""
    topic: str = ""
    sessions: dict[uuid.UUID, uuid.UUID] = field(default_factory=dict)

    def url(self, who: Login | None = None) -> str:
        if who is None:
            return self.stack.url_for(self.name)  # the stack's superuser: the observer
        return self.stack.url_for(self.name, who.name, who.password)

    def connect(self, who: Login | None = None) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url(who), autocommit=True, connect_timeout=10)

    def one(self, sql: str, params: Any = None) -> Any:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchone()

    def all(self, sql: str, params: Any = None) -> list[Any]:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()

    # -- the product, as installed from its wheel

    def cli(self, *args: str, who: Login, expect: int | None = 0, timeout: float = 120,
            **env: str) -> subprocess.CompletedProcess[str]:
        environ = _base_env() | {
            "DATABASE_URL": self.url(who),
            "S3_ENDPOINT_URL": self.stack.env["S3_ENDPOINT_URL"],
            "AWS_ACCESS_KEY_ID": self.stack.env["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": self.stack.env["AWS_SECRET_ACCESS_KEY"],
            "AWS_DEFAULT_REGION": self.stack.env["AWS_DEFAULT_REGION"],
            "KAFKA_BOOTSTRAP_SERVERS": self.stack.env["KAFKA_BOOTSTRAP_SERVERS"],
            "RFR_S3_BUCKET": self.bucket or "unused-bucket",
            "RFR_METRICS_PORT": "0",
        } | ({"RFR_TOPIC": self.topic} if self.topic else {}) | env
        proc = subprocess.run([self.package.cli, *args], cwd=self.package.cwd, env=environ,
                              capture_output=True, text=True, timeout=timeout)
        if expect is not None:
            assert proc.returncode == expect, (
                f"{' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-6000:]}")
        return proc

    def run_once(self, **env: str) -> dict[str, Any]:
        proc = self.cli("run-once", who=self.cast.worker, **(WORKER_ENV | env))
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 1, proc.stdout
        summary: dict[str, Any] = json.loads(lines[0])
        assert summary["error"] is None, (summary, proc.stderr)
        return summary

    def grants(self) -> str:
        """What the service's owner runs: the printed grants, pasted into psql as they are
        (a statement that fails is reported and the rest still runs)."""
        printed = self.cli("service-sql", "grants", "--to", self.cast.product_owner.name,
                           who=self.cast.service_owner).stdout
        proc = subprocess.run(
            ["psql", "--no-psqlrc", "-X", "-v", "ON_ERROR_STOP=0", "-d",
             self.url(self.cast.service_owner)],
            input=printed, capture_output=True, text=True, timeout=60,
            env=_base_env())
        assert proc.returncode == 0, proc.stderr
        return proc.stderr

    def install(self) -> None:
        errors = self.grants()
        assert "ERROR" not in errors, errors
        self.cli("migrate", who=self.cast.product_owner)
        # Step 4: the worker's login may connect (PUBLIC may not, here).
        with self.connect(self.cast.service_owner) as conn:
            conn.execute(f'grant connect on database "{self.name}" to {self.cast.worker.name}')
        if self.topic:
            with self.connect(self.cast.product_owner) as conn:
                conn.execute("update recording_finalize.settings set topic = %s, "
                             "updated_at = now()", (self.topic,))

    # -- the service's own tool

    def yoyo(self, *args: str) -> subprocess.CompletedProcess[str]:
        url = self.url(self.cast.service_owner).replace("postgresql://",
                                                        "postgresql+psycopg://", 1)
        proc = subprocess.run(
            [str(Path(sys.executable).parent / "yoyo"), *args, "--no-config-file",
             "--database", url, str(self.migrations)],
            capture_output=True, text=True, timeout=60, env=_base_env())
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    def service_applied(self) -> list[tuple[str, str]]:
        """The service's migrations as yoyo list shows them: (status, id)."""
        out = []
        for line in self.yoyo("list").stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] in ("A", "U"):
                out.append((parts[0], parts[1]))
        return out

    # -- what a superuser sees

    def dump(self, *, schema_only: bool = False) -> str:
        """pg_dump of schemas messenger and public, without the product's table in messenger."""
        pg_bin = Path(self.stack.env.get("RFR_STACK_PG_BIN", "/usr/lib/postgresql/15/bin"))
        args = [str(pg_bin / "pg_dump"), "--no-password", "--schema=messenger",
                "--schema=public", "--exclude-table=messenger.recording_finalize_attempts",
                # psql's \restrict key is random per dump unless given.
                "--restrict-key=visitor", "-d", self.url()]
        if schema_only:
            args.append("--schema-only")
        proc = subprocess.run(args, capture_output=True, text=True, timeout=60,
                              env=_base_env())
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def catalog(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every service object of schemas messenger and public, as the catalog has it
        (objects owned by the product's owner left out: the product table and its parts)."""
        owner = self.cast.product_owner.name
        queries = {
            "schema": """
                select n.nspname, pg_get_userbyid(n.nspowner), n.nspacl::text,
                    obj_description(n.oid, 'pg_namespace')
                from pg_namespace as n where n.nspname in ('messenger', 'public')""",
            "relations": """
                select c.relname, c.relkind, pg_get_userbyid(c.relowner), c.relacl::text,
                    c.reloptions::text, c.relfilenode, c.relhastriggers, c.relrowsecurity,
                    obj_description(c.oid, 'pg_class')
                from pg_class as c join pg_namespace as n on n.oid = c.relnamespace
                where n.nspname in ('messenger', 'public')
                    and pg_get_userbyid(c.relowner) <> %(owner)s""",
            "columns": """
                select c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
                    a.attnotnull, pg_get_expr(d.adbin, d.adrelid), a.attacl::text,
                    a.attstattarget, col_description(c.oid, a.attnum)
                from pg_attribute as a
                join pg_class as c on c.oid = a.attrelid
                join pg_namespace as n on n.oid = c.relnamespace
                left join pg_attrdef as d on d.adrelid = a.attrelid and d.adnum = a.attnum
                where n.nspname in ('messenger', 'public') and a.attnum > 0
                    and not a.attisdropped and pg_get_userbyid(c.relowner) <> %(owner)s""",
            "constraints": """
                select c.relname, k.conname, pg_get_constraintdef(k.oid), k.convalidated
                from pg_constraint as k join pg_class as c on c.oid = k.conrelid
                join pg_namespace as n on n.oid = c.relnamespace
                where n.nspname in ('messenger', 'public')
                    and pg_get_userbyid(c.relowner) <> %(owner)s""",
            "triggers": """
                select c.relname, t.tgname, pg_get_triggerdef(t.oid), t.tgenabled
                from pg_trigger as t join pg_class as c on c.oid = t.tgrelid
                join pg_namespace as n on n.oid = c.relnamespace
                where n.nspname in ('messenger', 'public')""",
            "indexes": """
                select c.relname, pg_get_indexdef(x.indexrelid), x.indisvalid
                from pg_index as x join pg_class as c on c.oid = x.indrelid
                join pg_namespace as n on n.oid = c.relnamespace
                where n.nspname in ('messenger', 'public')
                    and pg_get_userbyid(c.relowner) <> %(owner)s""",
            "functions": """
                select p.oid::regprocedure::text, pg_get_userbyid(p.proowner), p.proacl::text,
                    md5(pg_get_functiondef(p.oid))
                from pg_proc as p join pg_namespace as n on n.oid = p.pronamespace
                where n.nspname in ('messenger', 'public')""",
            "policies": """
                select polname, polrelid::regclass::text from pg_policy""",
            "default_acl": """
                select pg_get_userbyid(defaclrole), defaclnamespace::regnamespace::text,
                    defaclobjtype, defaclacl::text from pg_default_acl
                where defaclnamespace <> 0""",
        }
        with self.connect() as conn:
            return {name: sorted(conn.execute(q, {"owner": owner}).fetchall(),
                                 key=lambda r: tuple(str(v) for v in r))
                    for name, q in queries.items()}

    # -- the service's plain SQL

    def service_call(self, *, ended_ago: str = "1 hour", status: str = "Recording",
                     kind: str = "Direct", recording_ended: bool = False) -> uuid.UUID:
        """A call as the service writes it, through its own login: the session (ended
        ``ended_ago``) and its recording in ``status``; no finalize row, no product call."""
        rid, sid = uuid.uuid4(), uuid.uuid4()
        table = "call_sessions" if kind == "Direct" else "conference_sessions"
        with self.connect(self.cast.service_api) as conn, conn.transaction():
            conn.execute(
                f"insert into messenger.{table} (id, chat_id, deal_id, tenant_id, started_at, "
                "ended_at) values (%s, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), "
                "now() - interval '6 hours', now() - %s::interval)", (sid, ended_ago))
            if kind == "Direct":
                conn.execute("insert into messenger.call_participants (session_id, user_id) "
                             "values (%s, gen_random_uuid())", (sid,))
            conn.execute(
                "insert into messenger.call_recordings (id, session_kind, session_id, "
                "media_type, trigger, status, started_at, ended_at) values (%s, %s, %s, "
                "'Audio', 'Auto', %s, now() - interval '6 hours', "
                "case when %s then now() - %s::interval end)",
                (rid, kind, sid, status, recording_ended, ended_ago))
        self.sessions[rid] = sid
        return rid

    def recording(self, rid: uuid.UUID) -> dict[str, Any] | None:
        with self.connect() as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
            return cur.execute("select * from messenger.call_recordings where id = %s",
                               (rid,)).fetchone()

    def finalize(self, rid: uuid.UUID) -> dict[str, Any] | None:
        with self.connect() as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
            return cur.execute("select * from messenger.recording_finalize_attempts "
                               "where recording_id = %s", (rid,)).fetchone()

    def events(self, rid: uuid.UUID) -> list[tuple[Any, ...]]:
        return self.all("select topic, dedupe_key, published_at is not null "
                        "from messenger.integration_outbox where dedupe_key = %s",
                        (str(rid),))


def _history(world: World) -> None:
    """The service's past: finished calls with their binaries in the bucket (the worker looks
    for the newest uploaded ones before it trusts a 404), their events (published) and pushes
    (dispatched), as the service's happy path wrote them."""
    with world.connect(world.cast.service_api) as conn, conn.transaction():
        for i in range(5):
            sid, rid = uuid.uuid4(), uuid.uuid4()
            if world.bucket:
                put_binary(world.stack, world.bucket, rid)
            conn.execute("insert into messenger.call_sessions (id, started_at, ended_at, "
                         "room_name) values (%s, now() - interval '3 days', now() - interval "
                         "'3 days' + interval '20 minutes', %s)", (sid, f"room {i}"))
            conn.execute(
                "insert into messenger.call_recordings (id, session_kind, session_id, "
                "media_type, trigger, status, file_id, size_bytes, duration_seconds, format, "
                "started_at, ended_at, available_at, transcript_status) values (%s, 'Direct', "
                "%s, 'Video', 'Manual', 'Available', 'recordings/' || %s, 1000, 60, 'Mp4', "
                "now() - interval '3 days', now() - interval '3 days', now() - interval "
                "'3 days', 'Done')", (rid, sid, str(rid)))
            conn.execute(
                "insert into messenger.integration_outbox (topic, message_key, event_type, "
                "dedupe_key, payload, published_at) values (%s, %s, 'call-recording-available', "
                "%s, jsonb_build_object('recordingId', %s::text), now() - interval '3 days')",
                (world.topic or "pin.messenger.call-recording-available.v1", str(sid),
                 str(rid), str(rid)))
            conn.execute(
                "insert into messenger.integration_outbox (topic, message_key, event_type, "
                "dedupe_key, payload, published_at) values (%s, %s, 'chat-message', %s, "
                "'{}', now() - interval '3 days')", (SERVICE_TOPIC, str(sid), str(uuid.uuid4())))
            conn.execute(
                "insert into messenger.realtime_outbox (kind, session_kind, session_id, "
                "reference_id, dispatched_at) values ('RecordingAvailable', 'Direct', %s, %s, "
                "now() - interval '3 days')", (sid, rid))
        conn.execute("insert into messenger.call_sessions (id, started_at) values (%s, now())",
                     (uuid.uuid4(),))


@contextlib.contextmanager
def build_world(stack: Stack, cast: Cast, package: Package, tmp: Path, *, bucket: str = "",
                topic: str = "", recordings_ddl: dict[str, str] | None = None
                ) -> Iterator[World]:
    """The service's database: created by a superuser for the service's owner, its schema made
    by the service's own tool, its rows written by its own login. ``recordings_ddl`` replaces
    text in the service's migrations (a service whose tables differ from the contract)."""
    name = f"rfr_visit_{uuid.uuid4().hex[:10]}"
    migrations = tmp / name
    migrations.mkdir()
    replaced: set[str] = set()
    for file, text in SERVICE_MIGRATIONS.items():
        for old, new in (recordings_ddl or {}).items():
            if old in text:
                text = text.replace(old, new)
                replaced.add(old)
        (migrations / f"{file}.py").write_text(
            text.replace("{api}", cast.service_api.name).replace("{reader}", cast.service_reader),
            encoding="utf-8")
    assert replaced == set(recordings_ddl or {}), "a variant names text the DDL does not have"
    with _admin(stack) as conn:
        conn.execute(f'create database "{name}" owner {cast.service_owner.name}')
        # PostgreSQL's default: every role may connect. A careful DBA closes it; the grants
        # the product prints give its owner CONNECT back.
        conn.execute(f'revoke connect, temporary on database "{name}" from public')
        conn.execute(f'grant connect on database "{name}" to {cast.service_api.name}')
    world = World(stack, cast, package, name, migrations, bucket, topic)
    try:
        world.yoyo("apply", "--batch")
        _history(world)
        yield world
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


@pytest.fixture
def world(stack: Stack, cast: Cast, package: Package, tmp_path: Path, bucket: str,
          topic: str) -> Iterator[World]:
    with build_world(stack, cast, package, tmp_path, bucket=bucket, topic=topic) as w:
        yield w


def product_leftovers(world: World) -> list[tuple[Any, ...]]:
    """Everything in the database that the product's owner owns or that names the product."""
    return world.all(
        """
        select 'schema', n.nspname from pg_namespace as n
        where n.nspname like 'recording\\_finalize%%'
            or n.nspowner = %(owner)s::regrole
        union all
        select 'relation', c.oid::regclass::text from pg_class as c
        where c.relowner = %(owner)s::regrole or c.relname like '%%recording\\_finalize%%'
            or c.relname like '\\_yoyo%%' and c.relnamespace <> 'public'::regnamespace
        union all
        select 'function', p.oid::regprocedure::text from pg_proc as p
        where p.proowner = %(owner)s::regrole
        union all
        select 'type', t.oid::regtype::text from pg_type as t
        where t.typowner = %(owner)s::regrole
        union all
        select 'default acl', d.defaclobjtype::text from pg_default_acl as d
        where d.defaclrole = %(owner)s::regrole
        """, {"owner": world.cast.product_owner.name})


def product_depends_on_service(world: World) -> list[tuple[Any, ...]]:
    """Dependencies recorded from an object of the product on one of the service's: DROP of a
    service object (the service's own migration) would then fail or cascade into the product.
    A view's dependencies are its rewrite rule's (``rule _RETURN on view …``)."""
    return world.all(
        """
        select pg_describe_object(d.classid, d.objid, d.objsubid),
            pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)
        from pg_depend as d
        join pg_class as rc on d.refclassid = 'pg_class'::regclass and rc.oid = d.refobjid
        join pg_namespace as rn on rn.oid = rc.relnamespace
        where rn.nspname = 'messenger' and rc.relowner <> %(owner)s::regrole
            and d.deptype = 'n'
            and (
                d.classid = 'pg_proc'::regclass and exists (
                    select from pg_proc as p where p.oid = d.objid
                        and p.proowner = %(owner)s::regrole)
                or d.classid = 'pg_class'::regclass and exists (
                    select from pg_class as c where c.oid = d.objid
                        and c.relowner = %(owner)s::regrole)
                or d.classid = 'pg_type'::regclass and exists (
                    select from pg_type as t where t.oid = d.objid
                        and t.typowner = %(owner)s::regrole)
                or d.classid = 'pg_constraint'::regclass and exists (
                    select from pg_constraint as k join pg_class as c on c.oid = k.conrelid
                    where k.oid = d.objid and c.relowner = %(owner)s::regrole)
                or d.classid = 'pg_rewrite'::regclass and exists (
                    select from pg_rewrite as w join pg_class as c on c.oid = w.ev_class
                    where w.oid = d.objid and c.relowner = %(owner)s::regrole)
            )
        order by 1, 2
        """, {"owner": world.cast.product_owner.name})


#: The only objects of the product that may depend on the service's: the adapter's views, the
#: seam whose content is the service DBA's (docs/contract/adapter.md). Nothing else of the
#: product names a service table.
ADAPTER_VIEWS = {f"rule _RETURN on view recording_finalize_adapter.{v}"
                 for v in ("recordings", "sessions", "service_events")}


def assert_only_the_adapter_depends_on_the_service(world: World) -> None:
    dependents = {d[0] for d in product_depends_on_service(world)}
    assert dependents == ADAPTER_VIEWS, dependents


def _diff(before: str, after: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        "before", "after", n=1))[:6000]


# ------------------------------------------------------------------------------------------
# 1. installing changes nothing of the service's


def test_install_into_the_services_database_changes_nothing_of_the_service(
        world: World) -> None:
    cast = world.cast
    untouched_dump = world.dump()
    untouched_catalog = world.catalog()
    applied = world.service_applied()
    assert applied == [("A", m) for m in SERVICE_MIGRATIONS], applied
    yoyo_rows = world.all("select migration_id, migration_hash, applied_at_utc "
                          "from public._yoyo_migration order by 1")
    assert len(yoyo_rows) == len(SERVICE_MIGRATIONS)

    # Step 2: the service's owner runs the printed grants. They change ACLs only.
    errors = world.grants()
    assert "ERROR" not in errors, errors
    granted_dump = world.dump()
    changed = [line for line in _diff(untouched_dump, granted_dump).splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---", "+--", "--- "))
               and line[1:].strip()]
    assert changed and all(cast.product_owner.name in line and line[1:].startswith("GRANT")
                           for line in changed), changed
    before = world.catalog()
    assert {k: v for k, v in before.items() if k not in ("schema", "relations", "columns")} == {
        k: v for k, v in untouched_catalog.items() if k not in ("schema", "relations", "columns")}

    # Step 3: migrate as the product's owner.
    proc = world.cli("migrate", who=cast.product_owner)
    assert "service tables created" not in proc.stdout, proc.stdout
    assert "adapter (recording_finalize_adapter): installed" in proc.stdout, proc.stdout

    after_dump = world.dump()
    assert after_dump == granted_dump, _diff(granted_dump, after_dump)
    after = world.catalog()
    for part, rows in before.items():
        assert after[part] == rows, (part, set(after[part]) ^ set(rows))
    assert world.all("select migration_id, migration_hash, applied_at_utc "
                     "from public._yoyo_migration order by 1") == yoyo_rows
    assert world.service_applied() == applied
    assert_only_the_adapter_depends_on_the_service(world)
    # The product is really there, as its owner's (not a refusal that changed nothing).
    assert world.one("select pg_get_userbyid(c.relowner) from pg_class as c "
                     "where c.oid = 'messenger.recording_finalize_attempts'::regclass"
                     ) == (cast.product_owner.name,)
    assert world.one("select count(*) from pg_namespace where nspname like "
                     "'recording\\_finalize%%' and nspowner = %s::regrole",
                     (cast.product_owner.name,)) == (4,)  # the adapter's schema too

    # A second migrate (every deploy) changes nothing either, and the service's own tool still
    # works: it ships a migration of its own after the product came.
    again = world.cli("migrate", who=cast.product_owner)
    assert "adapter (recording_finalize_adapter): unchanged" in again.stdout, again.stdout
    assert world.dump() == granted_dump
    after = world.catalog()
    for part, rows in before.items():
        assert after[part] == rows, (part, set(after[part]) ^ set(rows))
    (world.migrations / "0005_thumbnails.py").write_text(SERVICE_LATER_MIGRATION,
                                                         encoding="utf-8")
    world.yoyo("apply", "--batch")
    assert world.service_applied() == [*applied, ("A", "0005_thumbnails")]


# ------------------------------------------------------------------------------------------
# 2. rescue, with the service writing all the while


class ServiceTraffic:
    """The messenger service at work through its own login, in a thread: new calls on its happy
    path (Uploading, then Available with its own event), its realtime dispatcher and its
    retention (deletes), and updates of the very recordings and sessions the worker is
    rescuing, in both orders (event first, then the recording — the order that once made the
    service a deadlock's victim — and the reverse). Every error is kept: the service's side
    must never see one."""

    def __init__(self, world: World, targets: list[uuid.UUID]) -> None:
        self.world = world
        self.targets = targets
        self.errors: list[str] = []
        self.commits = 0
        self.dispatched: set[tuple[str, uuid.UUID]] = set()
        self.happy: list[uuid.UUID] = []
        #: The service's own call-recording-available events as it inserted them: recording ->
        #: (outbox id, xmin). A write by anyone else changes the xmin.
        self.own_events: dict[uuid.UUID, tuple[Any, ...]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ServiceTraffic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        assert not self._thread.is_alive()

    def _tx(self, conn: psycopg.Connection[Any], *statements: tuple[str, Any],
            hold_s: float = 0.0) -> list[Any]:
        rows: list[Any] = []
        try:
            with conn.transaction():
                for sql, params in statements:
                    cur = conn.execute(sql, params)
                    if cur.description is not None:
                        rows += cur.fetchall()
                    if hold_s:
                        time.sleep(hold_s)
            self.commits += 1
        except psycopg.Error as err:
            self.errors.append(f"{type(err).__name__} {err.sqlstate}: {err}")
        return rows

    def _run(self) -> None:
        topic = self.world.topic
        i = 0
        pending: list[tuple[uuid.UUID, uuid.UUID]] = []
        with self.world.connect(self.world.cast.service_api) as conn:
            while not self._stop.is_set():
                i += 1
                target = self.targets[i % len(self.targets)]
                session = self.world.sessions[target]
                # Its own event first, then the rescued recording: the order that once deadlocked.
                self._tx(conn, (
                    "insert into messenger.integration_outbox (topic, message_key, event_type, "
                    "dedupe_key, payload) values (%s, %s, 'recording-viewed', %s, '{}')",
                    (SERVICE_TOPIC, str(session), str(uuid.uuid4()))), (
                    "update messenger.call_recordings set transcript_status = %s where id = %s",
                    (f"Queued{i % 3}", target)), hold_s=0.02)
                # The reverse: the recording, then its session and a push of its own.
                self._tx(conn, (
                    "update messenger.call_recordings set retention_until = now() + interval "
                    "'90 days' where id = %s", (target,)), (
                    "update messenger.call_sessions set room_name = %s where id = %s",
                    (f"room {i}", session)), (
                    "insert into messenger.realtime_outbox (kind, session_kind, session_id, "
                    "reference_id) values ('ParticipantLeft', 'Direct', %s, %s)",
                    (session, target)), hold_s=0.02)
                # The happy path of a new call: Uploading now, Available with its event next.
                rid, sid = uuid.uuid4(), uuid.uuid4()
                self._tx(conn, (
                    "insert into messenger.call_sessions (id, started_at, ended_at) values "
                    "(%s, now() - interval '1 minute', now())", (sid,)), (
                    "insert into messenger.call_recordings (id, session_kind, session_id, "
                    "media_type, status, started_at, ended_at) values (%s, 'Direct', %s, "
                    "'Audio', 'Uploading', now() - interval '1 minute', now())", (rid, sid)))
                for done, done_sid in pending:
                    # The recorder uploaded it before the callback, as on the real happy path
                    # (the worker looks for the newest uploaded binaries before it trusts a 404).
                    if self.world.bucket:
                        put_binary(self.world.stack, self.world.bucket, done)
                    inserted = self._tx(conn, (
                        "insert into messenger.integration_outbox (topic, message_key, "
                        "event_type, dedupe_key, payload) values (%s, %s, "
                        "'call-recording-available', %s, jsonb_build_object('recordingId', "
                        "%s::text)) on conflict (topic, dedupe_key) do nothing "
                        "returning id, xmin::text", (topic, str(done_sid), str(done), str(done))), (
                        "update messenger.call_recordings set status = 'Available', file_id = "
                        "'recordings/' || id::text, size_bytes = 10, duration_seconds = 60, "
                        "format = 'Ogg', available_at = now(), version = version + 1 "
                        "where id = %s", (done,)))
                    self.happy.append(done)
                    if inserted:
                        self.own_events[done] = tuple(inserted[0])
                pending = [(rid, sid)]
                # The realtime dispatcher, and the service's retention of its own rows.
                for kind, ref in self._tx(conn, (
                        "update messenger.realtime_outbox set dispatched_at = now() "
                        "where dispatched_at is null returning kind, reference_id", None)):
                    self.dispatched.add((str(kind), ref))
                self._tx(conn, (
                    "delete from messenger.realtime_outbox where dispatched_at is not null", None),
                    ("update messenger.integration_outbox set published_at = now() "
                     "where topic = %s and published_at is null", (SERVICE_TOPIC,)), (
                    "delete from messenger.integration_outbox where topic = %s "
                    "and published_at is not null", (SERVICE_TOPIC,)))
                if len(self.happy) > 3:
                    old = self.happy[-4]
                    self._tx(conn, (
                        "insert into messenger.recording_shares (recording_id, shared_with) "
                        "values (%s, gen_random_uuid())", (old,)), (
                        "delete from messenger.call_recordings where id = %s", (old,)))
                time.sleep(0.05)


def _late_callback(world: World, rid: uuid.UUID, out: dict[str, Any]) -> None:
    """The service's own ingest of ``rid`` arriving while the worker works on it, in the order
    that made the service the deadlock's victim in an earlier release: its event first, into
    its own outbox, then — once the worker's apply holds the recording or has committed — the
    recording. The worker's events go to its own outbox now: it never waits for the service's
    event key, so the service's update queues behind the worker's apply for a moment at most,
    and the race leaves one event of each (consumers de-duplicate by RecordingId)."""
    deadline = time.monotonic() + 60
    with world.connect() as observer:
        while time.monotonic() < deadline:
            row = observer.execute("select claim_token from messenger.recording_finalize_attempts "
                                   "where recording_id = %s", (rid,)).fetchone()
            if row is not None and row[0] is not None:
                break
            time.sleep(0.005)
        else:
            out["error"] = "the worker never claimed the late-callback recording"
            return
        try:
            with world.connect(world.cast.service_api) as conn, conn.transaction():
                out["event"] = conn.execute(
                    "insert into messenger.integration_outbox (topic, message_key, event_type, "
                    "dedupe_key, payload) values (%s, %s, 'call-recording-available', %s, "
                    "jsonb_build_object('recordingId', %s::text)) "
                    "on conflict (topic, dedupe_key) do nothing returning id, xmin::text",
                    (world.topic, str(world.sessions[rid]), str(rid), str(rid))).fetchone()
                # The service's update goes in once the worker's apply holds the recording (a
                # FOR SHARE probe finds it locked) or has committed (it is Available: only the
                # worker moves it so far). The apply holds the lock for milliseconds only, so a
                # probe on a busy machine may miss it: both orders end the same way.
                out["lock_seen"] = False
                while time.monotonic() < deadline:
                    locked, available = observer.execute(
                        "select not exists (select from messenger.call_recordings where id = %s "
                        "for share skip locked), exists (select from messenger.call_recordings "
                        "where id = %s and status = 'Available')", (rid, rid)).fetchone()
                    out["lock_seen"] = out["lock_seen"] or locked
                    if locked or available:
                        break
                    time.sleep(0.002)
                else:
                    out["error"] = "the worker never applied the late-callback recording"
                    return
                started = time.monotonic()
                conn.execute(
                    "update messenger.call_recordings set status = 'Available', file_id = "
                    "'recordings/' || id::text, size_bytes = 2048, duration_seconds = 42, "
                    "format = 'Webm', available_at = now(), version = version + 1 "
                    "where id = %s", (rid,))
                out["waited_s"] = round(time.monotonic() - started, 3)
            out["committed"] = True
        except psycopg.Error as err:
            out["error"] = f"{type(err).__name__} {err.sqlstate}: {err}"


def test_the_worker_rescues_what_the_service_wrote_while_the_service_keeps_writing(
        world: World, stack: Stack) -> None:
    # The service's outbox rows of the product's topic before the product came: its history.
    topic_rows = ("select id, xmin::text, published_at from messenger.integration_outbox "
                  "where topic = %s order by id")
    history_rows = world.all(topic_rows, (world.topic,))
    assert len(history_rows) == 5
    world.install()
    lost = world.service_call(status="Recording")  # the stop callback was lost
    never = world.service_call(status="Uploading", recording_ended=True)  # never uploaded
    late = world.service_call(status="Uploading", recording_ended=True)  # its callback is late
    for rid in (lost, late):
        put_binary(stack, world.bucket, rid)
    assert all(world.finalize(r) is None for r in (lost, never, late))  # the service opened none

    s3_port = int(stack.env["S3_ENDPOINT_URL"].rsplit(":", 1)[1])
    slow = SlowProxy(s3_port, delay_s=0.3)  # the claim stays open long enough to be raced
    summaries: list[dict[str, Any]] = []
    late_out: dict[str, Any] = {}
    racer = threading.Thread(target=_late_callback, args=(world, late, late_out), daemon=True)
    try:
        with ServiceTraffic(world, [lost, never]) as traffic:
            racer.start()
            for _ in range(25):
                summaries.append(world.run_once(S3_ENDPOINT_URL=slow.url))
                statuses = [(world.recording(r) or {}).get("status") for r in (lost, never, late)]
                done = [(world.finalize(r) or {}).get("status") for r in (lost, never, late)]
                if statuses == ["Available", "Failed", "Available"] and done == ["Done"] * 3:
                    break
            racer.join(timeout=30)
            time.sleep(0.5)  # the service goes on writing after the rescue
    finally:
        slow.close()
    summaries.append(world.run_once())  # the drain: the events the service wrote last
    assert traffic.errors == [], traffic.errors[:5]
    assert traffic.commits > 50 and len(traffic.happy) > 3, (traffic.commits, traffic.happy)
    assert late_out.get("committed") is True, late_out
    # Queued behind the worker's apply briefly at most (no lock is held across its S3 check).
    assert late_out["waited_s"] < 1.0, late_out

    assert sum(s["discovered"] for s in summaries) == 3, summaries
    recs = {r: world.recording(r) or {} for r in (lost, never, late)}
    assert recs[lost]["status"] == "Available" and recs[lost]["file_id"], recs[lost]
    assert (recs[never]["status"], recs[never]["failure_reason"]) == ("Failed", "Timeout")
    assert recs[late]["status"] == "Available" and recs[late]["format"] == "Webm"  # the service's
    for rid in (lost, never, late):
        row = world.finalize(rid) or {}
        assert (row.get("status"), row.get("opened_by")) == ("Done", "discovery"), row
    # The service's happy path within its SLA: the product never opened a row for it.
    assert world.one("select count(*) from messenger.recording_finalize_attempts "
                     "where recording_id = any(%s)", (traffic.happy,)) == (0,)
    assert ("RecordingFailed", never) in traffic.dispatched
    assert ("RecordingAvailable", lost) in traffic.dispatched

    # The product's events are in its own outbox, one each, published by its relay: the rescued
    # one and the late one (whose own event the service enqueued while the worker held the
    # recording: one of each, which consumers de-duplicate). None for the Failed one, none for
    # the service's happy path (its own event is there).
    product_events = world.all("select recording_id, count(*), bool_and(published_at is not "
                               "null), min(topic) from recording_finalize.outbox group by 1")
    assert sorted(product_events) == sorted(
        [(lost, 1, True, world.topic), (late, 1, True, world.topic)]), product_events
    # The service's own outbox: exactly its history and the events it inserted itself, each
    # row as the service wrote it (same xmin: nobody updated it; still unpublished: the
    # product's relay never marks the service's rows); the product added and deleted none.
    assert late_out.get("event"), late_out
    own = {*traffic.own_events.values(), tuple(late_out["event"])}
    assert len(own) == len(traffic.happy) + 1, (len(own), len(traffic.happy))
    expected_rows = sorted([*history_rows, *((i, x, None) for i, x in own)],
                           key=lambda r: int(r[0]))
    assert world.all(topic_rows, (world.topic,)) == expected_rows

    # On Kafka: the product's relay published its own events once each, nothing of the service's
    # outbox (the service's relay publishes those: not running here).
    expected = {str(lost), str(late)}
    messages = consume(stack, world.topic, expect=len(expected))
    ids = [m.value["recordingId"] for m in messages]
    assert sorted(ids) == sorted(expected), (ids, expected)
    [lost_msg] = [m for m in messages if m.value["recordingId"] == str(lost)]
    assert lost_msg.key == str(world.sessions[lost])
    assert lost_msg.value["fileId"] == recs[lost]["file_id"]


# ------------------------------------------------------------------------------------------
# 3. the service's own writes: re-ingest of a Failed recording, its deletes


def _service(world: World, sql: str, params: Any = None, *, who: Login | None = None) -> int:
    """One statement of the service, as its login (or its owner): the rows it changed."""
    with world.connect(who or world.cast.service_api) as conn:
        return conn.execute(sql, params).rowcount


def _enqueue_own_event(world: World, rid: uuid.UUID) -> None:
    """The service's happy path enqueues the event itself, under dedupe key = recording id."""
    _service(world, "insert into messenger.integration_outbox (topic, message_key, event_type, "
             "dedupe_key, payload) values (%s, %s, 'call-recording-available', %s, "
             "jsonb_build_object('recordingId', %s::text)) "
             "on conflict (topic, dedupe_key) do nothing",
             (world.topic, str(world.sessions[rid]), str(rid), str(rid)))


def _references(world: World, rid: uuid.UUID) -> tuple[int, int]:
    """The outbox rows about ``rid``: (integration events, realtime pushes)."""
    row = world.one("select (select count(*) from messenger.integration_outbox "
                    "where dedupe_key = %(r)s), (select count(*) from messenger.realtime_outbox "
                    "where reference_id = %(u)s)", {"r": str(rid), "u": rid})
    return int(row[0]), int(row[1])


def test_the_service_re_ingests_and_deletes_its_own_rows_while_the_product_is_there(
        world: World, stack: Stack) -> None:
    world.install()
    failed = world.service_call(status="Uploading", ended_ago="5 hours")
    done = world.service_call(status="Recording", ended_ago="1 hour")
    put_binary(stack, world.bucket, done)
    first = world.run_once()
    assert (first["discovered"], first["reconciled"], first["failed"]) == (2, 1, 1), first
    assert (world.recording(failed) or {})["status"] == "Failed"
    assert (world.finalize(done) or {})["status"] == "Done"
    settled = world.finalize(failed)

    # Re-ingest, as the runbook tells operators: Failed -> Uploading through the service's
    # login, then Available with its own event as the table's owner. Nothing of the product
    # refuses it (no trigger, no CHECK of the product on the service's table).
    assert _service(world, "update messenger.call_recordings set status = 'Uploading', "
                    "failure_reason = null, failed_at = null, version = version + 1 "
                    "where id = %s and status = 'Failed'", (failed,)) == 1
    again = world.run_once()
    assert again["claimed"] == again["discovered"] == 0, again  # the worker leaves it alone
    assert (world.recording(failed) or {})["status"] == "Uploading"
    assert world.finalize(failed) == settled
    assert _service(world, "update messenger.call_recordings set status = 'Available', "
                    "file_id = 'recordings/' || id::text, size_bytes = 4096, "
                    "duration_seconds = 30, format = 'Mp4', available_at = now(), "
                    "version = version + 1 where id = %s", (failed,),
                    who=world.cast.service_owner) == 1
    _enqueue_own_event(world, failed)
    world.run_once()
    assert _references(world, failed) == (1, 1)  # its own event; the product's earlier push
    assert (world.recording(failed) or {})["format"] == "Mp4"  # the service's, not rewritten

    # A happy-path recording of the service's, its own event not yet published by its own
    # relay: the product's relay never leases it (not the product's row).
    happy = world.service_call(status="Uploading", ended_ago="1 minute")
    _service(world, "update messenger.call_recordings set status = 'Available', file_id = "
             "'recordings/' || id::text, size_bytes = 1, duration_seconds = 1, format = 'Ogg', "
             "available_at = now(), version = version + 1 where id = %s", (happy,))
    _enqueue_own_event(world, happy)
    # A rescued recording whose event (the product's, in its own outbox) the relay has leased
    # but not yet marked published: discovery, claim and apply as a cycle makes them.
    leased = world.service_call(status="Uploading", ended_ago="1 hour")
    with world.connect(world.cast.worker) as relay:
        assert relay.execute("select recording_finalize.discover_stuck(10)"
                             ).fetchone() == (1,)
        claims = relay.execute("select recording_id, claim_token, action from "
                               "recording_finalize.claim_due(10)").fetchall()
        assert [(c[0], c[2]) for c in claims] == [(leased, "reconcile")], claims
        assert relay.execute(
            "select result from recording_finalize.apply_outcome(%s, %s, 'found', %s, 2048, 30, "
            "'Ogg')", (leased, claims[0][1], f"recordings/{leased}")).fetchone() == (
            "reconciled",)
        # A stuck recording the worker's discovery has just opened a finalize row for (the
        # first step of a cycle), not yet claimed.
        pending = world.service_call(status="Uploading", ended_ago="1 hour")
        assert relay.execute("select recording_finalize.discover_stuck(10)"
                             ).fetchone() == (1,)
        assert (world.finalize(pending) or {}).get("status") == "Pending"
        lease = relay.execute("select id, lease_token from recording_finalize.relay_claim("
                              "10, interval '1 minute', null, %s)", (world.topic,)).fetchall()
        assert [r[0] for r in lease] == [r[0] for r in world.all(
            "select id from recording_finalize.outbox where recording_id = %s", (leased,))], lease

        # The service deletes its own rows while the product's rows about them exist: the
        # Pending finalize row, the Done ones, the relay's lease of the product's event. No
        # foreign key of the product stands in the way; the service's own cascades run as it
        # defined them.
        for rid in (pending, done, leased, happy):
            sid = world.sessions[rid]
            _service(world, "insert into messenger.recording_shares (recording_id, shared_with) "
                     "values (%s, gen_random_uuid())", (rid,))
            _service(world, "delete from messenger.realtime_outbox where reference_id = %s",
                     (rid,))
            _service(world, "delete from messenger.integration_outbox where dedupe_key = %s",
                     (str(rid),))
            assert _service(world, "delete from messenger.call_recordings where id = %s",
                            (rid,)) == 1
            assert _service(world, "delete from messenger.call_sessions where id = %s",
                            (sid,)) == 1
            assert _references(world, rid) == (0, 0)
        assert world.one("select count(*) from messenger.call_participants "
                         "where session_id = any(%s)",
                         ([world.sessions[r] for r in (pending, done, leased, happy)],)) == (0,)
        # The relay acknowledges the product's event of a recording the service deleted
        # meanwhile: the event is the product's (it was published), so it is marked.
        marked = relay.execute("select recording_finalize.relay_mark_published(%s, %s)",
                               ([lease[0][0]], lease[0][1])).fetchone()
        assert marked == (1,), marked

    # The worker afterwards: the vanished recordings are settled without an error and never
    # written about again; the one whose row was Done stays Done.
    later = [world.run_once() for _ in range(2)]
    assert later[0]["quarantined"] == 1 and later[1]["claimed"] == 0, later

    # A recording claimed by the worker and deleted by the service before the verdict.
    raced = world.service_call(status="Uploading", ended_ago="5 hours")
    with world.connect(world.cast.worker) as worker:
        assert worker.execute("select recording_finalize.discover_stuck(10)"
                              ).fetchone() == (1,)
        claims = worker.execute("select recording_id, claim_token, action from "
                                "recording_finalize.claim_due(10)").fetchall()
        assert [(c[0], c[2]) for c in claims] == [(raced, "reconcile")], claims
        _service(world, "delete from messenger.call_recordings where id = %s", (raced,))
        verdict = worker.execute(
            "select result, finalize_status from recording_finalize.apply_outcome(%s, %s, "
            "'missing')", (raced, claims[0][1])).fetchone()
    assert verdict == ("quarantined", "Quarantined"), verdict

    assert world.run_once()["claimed"] == 0
    for rid in (pending, raced):
        row = world.finalize(rid) or {}
        assert (row.get("status"), row.get("quarantine_reason")) == (
            "Quarantined", "recording_not_found"), row
        assert _references(world, rid) == (0, 0)
        assert world.recording(rid) is None
    assert (world.finalize(done) or {}).get("status") == "Done"
    # The product's outbox: an event each for what it rescued (done, leased), published; the
    # service's outbox holds the one event the service enqueued itself and still has.
    assert sorted(world.all("select recording_id, published_at is not null "
                            "from recording_finalize.outbox")) == sorted(
        [(done, True), (leased, True)])
    assert world.all("select dedupe_key, published_at from messenger.integration_outbox "
                     "where topic = %s and published_at > now() - interval '1 day' "
                     "or published_at is null and topic = %s", (world.topic, world.topic)
                     ) == [(str(failed), None)]


# ------------------------------------------------------------------------------------------
# 4. uninstall: the service as it was


def _database_acl(world: World) -> str:
    row = world.one("select datacl::text from pg_database where datname = current_database()")
    return str(row[0])


def test_uninstall_leaves_the_service_as_it_was_and_refuses_while_others_depend_on_it(
        world: World, stack: Stack) -> None:
    cast = world.cast
    untouched = world.dump(schema_only=True)
    untouched_acl = _database_acl(world)
    assert "ERROR" not in world.grants()
    granted = world.dump(schema_only=True)
    granted_catalog = world.catalog()
    world.install()
    # The product at work first: finalize rows, events, pushes, leases, incidents.
    rescued = world.service_call(status="Recording")
    put_binary(stack, world.bucket, rescued)
    world.service_call(status="Uploading", recording_ended=True)
    summary = world.run_once()
    assert (summary["reconciled"], summary["failed"]) == (1, 1), summary
    world.cli("storage-incident", "open", "--source", "worker", "--reason", "test",
              who=cast.worker)

    # Others' objects that depend on the product's: a view of the service over the product's
    # table, a DBA's report over one of its tables. uninstall refuses and names each.
    with world.connect(cast.product_owner) as conn:
        conn.execute(f"grant select on messenger.recording_finalize_attempts "
                     f"to {cast.service_owner.name}")
    _service(world, "create view messenger.finalize_backlog as select status, count(*) "
             "from messenger.recording_finalize_attempts group by status",
             who=cast.service_owner)
    with world.connect() as conn:
        conn.execute("create schema reporting")
        conn.execute("create view reporting.incidents as select * "
                     "from recording_finalize.storage_incidents")
    before = world.dump()
    dry = world.cli("uninstall", who=cast.product_owner, expect=1)
    refused = world.cli("uninstall", "--yes", who=cast.product_owner, expect=1)
    for proc in (dry, refused):
        assert "view messenger.finalize_backlog" in proc.stdout, proc.stdout
        assert "view reporting.incidents" in proc.stdout, proc.stdout
        assert "nothing was dropped" in proc.stderr, proc.stderr
    assert world.dump() == before
    assert world.one("select count(*) from pg_namespace where nspname like "
                     "'recording\\_finalize%%'") == (4,)  # the adapter's schema too

    # Once they are gone: everything the product owns goes, nothing else.
    _service(world, "drop view messenger.finalize_backlog", who=cast.service_owner)
    with world.connect() as conn:
        conn.execute("drop schema reporting cascade")
    with_data = world.dump()
    plan = world.cli("uninstall", who=cast.product_owner).stdout
    assert "drop schema recording_finalize cascade;" in plan, plan
    assert "drop schema recording_finalize_adapter cascade;" in plan, plan
    assert world.dump() == with_data  # without --yes: nothing changed
    done = world.cli("uninstall", "--yes", who=cast.product_owner)
    assert product_leftovers(world) == [], product_leftovers(world)
    after = world.dump(schema_only=True)
    assert after == granted, _diff(granted, after)
    assert world.dump() == with_data, _diff(with_data, world.dump())  # every row of the service
    catalog = world.catalog()
    for part, rows in granted_catalog.items():
        assert catalog[part] == rows, (part, set(catalog[part]) ^ set(rows))

    # What uninstall printed for the service's owner takes back the grants: the service's
    # schema and its database as they were before the product was granted anything.
    revokes = [line.strip() for line in done.stdout.splitlines()
               if line.strip().startswith("revoke ")]
    assert revokes, done.stdout
    with world.connect(cast.service_owner) as conn:
        for statement in revokes:
            conn.execute(statement)
        # and the DBA's own step 4: the sidecar's login goes.
        conn.execute(f'revoke connect on database "{world.name}" from {cast.worker.name}')
    restored = world.dump(schema_only=True)
    assert restored == untouched, _diff(untouched, restored)
    assert _database_acl(world) == untouched_acl, (_database_acl(world), untouched_acl)

    # The service works as before: its writes, its tool.
    rid = world.service_call(status="Recording")
    assert _service(world, "update messenger.call_recordings set status = 'Failed', "
                    "failure_reason = 'Timeout', failed_at = now() where id = %s", (rid,)) == 1
    _service(world, "insert into messenger.integration_outbox (topic, message_key, event_type, "
             "dedupe_key, payload) values (%s, 'k', 'chat-message', 'd', '{}')",
             (SERVICE_TOPIC,))
    assert _service(world, "delete from messenger.integration_outbox where topic = %s",
                    (SERVICE_TOPIC,)) > 0
    assert _service(world, "delete from messenger.call_recordings where id = %s", (rid,)) == 1
    (world.migrations / "0005_thumbnails.py").write_text(SERVICE_LATER_MIGRATION,
                                                         encoding="utf-8")
    world.yoyo("apply", "--batch")


# ------------------------------------------------------------------------------------------
# 5. a service that breaks the contract: refused, nothing written


REFUSALS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    # what the service's DDL says instead -> what the refusal must name
    "a column missing": ({"    failure_reason varchar(32),\n": ""},
                         ("messenger.call_recordings.failure_reason: the column does not exist",)),
    "an incompatible type": ({"    duration_seconds integer,\n": "    duration_seconds text,\n"},
                             ("messenger.call_recordings.duration_seconds: type text",)),
    "a varchar too short": ({"    file_id varchar(2048),\n": "    file_id varchar(255),\n"},
                            ("messenger.call_recordings.file_id: type character varying(255) "
                             "is too short",)),
    # The realtime push is the one row the product inserts into a service table, leaving its
    # bigserial key to the default (the integration outbox is only read now).
    "a sequence not granted": ({}, ("messenger.realtime_outbox.id: role {owner} lacks USAGE "
                                    "on sequence messenger.realtime_outbox_id_seq",)),
    # A DBA wrote the adapter before the first migrate (sql/README.md, "Installing into an
    # existing messenger database", step 2), with a view column of the wrong type and a port
    # left out: migrate keeps it, and refuses naming both.
    "a DBA's adapter with a wrong type and a port missing": (
        {}, ("recording_finalize_adapter.recordings.duration_seconds: type text, the product "
             "needs integer",
             "recording_finalize_adapter.make_failed(uuid, text, text, timestamp with time "
             "zone): the function does not exist")),
}


def _dbas_adapter(world: World) -> None:
    """The reference adapter as a DBA adapts it, created as the product's owner before the first
    migrate: the topic written in (recording_finalize.settings does not exist yet), the
    duration left uncast from a text expression, make_failed not written."""
    reference = (Path(__file__).resolve().parents[2] / "sql" / "adapter" / "reference.sql"
                 ).read_text(encoding="utf-8")
    text = reference.replace("(select s.topic from recording_finalize.settings as s)",
                             "'pin.messenger.call-recording-available.v1'")
    text = text.replace("    r.duration_seconds,\n",
                        "    r.duration_seconds::text as duration_seconds,\n")
    start = text.index("create or replace function recording_finalize_adapter.make_failed(")
    end = text.index("$$;", start) + len("$$;")
    text = text[:start] + text[end:]
    assert text.count("duration_seconds::text") == 1 and "make_failed(" not in text
    with world.connect(world.cast.product_owner) as conn:
        conn.execute("create schema recording_finalize_adapter")
        conn.execute(text)


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_refused_migrate_names_what_is_missing_and_leaves_nothing_behind(
        stack: Stack, cast: Cast, package: Package, tmp_path: Path, case: str) -> None:
    ddl, expected = REFUSALS[case]
    with build_world(stack, cast, package, tmp_path, recordings_ddl=ddl) as world:
        # The DBA pastes the grants as printed; a statement naming a column the service's
        # table lacks fails, the others run.
        world.grants()
        if case == "a sequence not granted":  # the DBA skipped the sequences' block
            _service(world, f"revoke usage on sequence messenger.realtime_outbox_id_seq "
                     f"from {cast.product_owner.name}", who=cast.service_owner)
        dbas = case.startswith("a DBA's adapter")
        if dbas:
            _dbas_adapter(world)
        # Nothing of the product's before migrate, but the DBA's adapter (when there is one).
        leftovers = product_leftovers(world)
        assert bool(leftovers) == dbas, leftovers
        assert all("recording_finalize_adapter" in str(row[1]) for row in leftovers), leftovers
        dump, catalog, acl = world.dump(), world.catalog(), _database_acl(world)
        # The roles migrate may create (cluster-wide: others' tests add and drop their own).
        group_roles = ("select rolname, rolcanlogin from pg_roles "
                       "where rolname like 'recording\\_finalize%%' order by 1")
        roles = world.all(group_roles)

        proc = world.cli("migrate", who=cast.product_owner, expect=2)
        assert "migrate refused, nothing was written" in proc.stderr, proc.stderr
        for line in expected:
            assert line.format(owner=cast.product_owner.name) in proc.stderr, proc.stderr
        assert product_leftovers(world) == leftovers
        assert world.dump() == dump
        assert world.catalog() == catalog
        assert _database_acl(world) == acl
        assert world.all(group_roles) == roles
        # Nothing half-done for the next try either: a second refusal says the same.
        again = world.cli("migrate", who=cast.product_owner, expect=2)
        assert again.stderr == proc.stderr
