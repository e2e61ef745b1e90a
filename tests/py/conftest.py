"""Fixtures for the driver's tests, against real services: PostgreSQL 15, SeaweedFS S3, Tansu.

- ``stack``: the local stack of ``tools/stack.py``. With ``RFR_STACK_DIR`` set (``make test``)
  the running stack there is used and left running; otherwise one is started in a temp dir for
  this session and stopped at the end. Under pytest-xdist each worker starts one of its own
  (in ``RFR_STACK_DIR-gwN`` if set).
- ``template_db``: a database owned by a non-superuser schema owner (LOGIN CREATEROLE, as in
  production) and migrated once, as that owner, through the real ``recording-finalize migrate
  --create-service-tables`` (a new database: the reference service tables first);
  plus a LOGIN role granted ``recording_finalize_worker`` (the least-privilege worker) and one
  granted ``recording_finalize_operator`` (the runbook: status, requeue).
- per test: ``db`` (a fresh database cloned from the template), ``bucket`` (an S3 bucket),
  ``topic`` (a Kafka topic), and ``worker`` — runs the real console script as the worker role
  against all three (the server's topic, ``recording_finalize.settings``, is set to the test's
  topic). Seeding goes through the service-facing lifecycle functions
  (``recording_finalize.recording_started`` …) as the stack's superuser.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import boto3
import psycopg
import pytest
from botocore.handlers import validate_ascii_metadata
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from recording_finalize.buildinfo import git_commit  # noqa: E402

from tools import stack as stack_tool  # noqa: E402

CLI = str(Path(sys.executable).parent / "recording-finalize")
# Logins are cluster-wide and each session sets their passwords: sessions sharing one stack
# (RFR_STACK_DIR) would reset each other's, so each session has logins of its own.
SESSION_TAG = uuid.uuid4().hex[:8]
WORKER_ROLE = f"rfr_worker_login_{SESSION_TAG}"
OPERATOR_ROLE = f"rfr_operator_login_{SESSION_TAG}"
# The product's owner too: tests migrate as it (Db.schema_owner_url), so its password must stay.
SCHEMA_OWNER_ROLE = f"rfr_schema_owner_{SESSION_TAG}"
TOPIC_DEFAULT = "pin.messenger.call-recording-available.v1"


# ------------------------------------------------------------------------------------------
# the stack


@dataclass(frozen=True)
class Stack:
    dir: Path
    env: dict[str, str]

    @property
    def owner_url(self) -> str:
        return self.env["DATABASE_URL"]

    def url_for(self, dbname: str, user: str | None = None, password: str | None = None) -> str:
        parts = urlsplit(self.owner_url)
        netloc = parts.netloc
        if user is not None:
            host = netloc.rsplit("@", 1)[1]
            netloc = f"{quote(user, safe='')}:{quote(password or '', safe='')}@{host}"
        return urlunsplit((parts.scheme, netloc, f"/{dbname}", parts.query, ""))

    def s3(self) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.env["S3_ENDPOINT_URL"],
            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
            region_name=self.env["AWS_DEFAULT_REGION"],
        )

    def stop_service(self, name: str) -> None:
        stack_tool.stop_service(self.dir, name, verbose=False)

    def start_service(self, name: str) -> None:
        stack_tool.start_service(self.dir, name, verbose=False)


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    given = os.environ.get("RFR_STACK_DIR")
    # gw0, gw1, ... under pytest-xdist (pytest -n). Its workers never share a stack: tests stop
    # servers (a Tansu restart forgets every topic), and adaptive pacing slows a drain while any
    # other login of the server is at work, in whatever database.
    xdist_worker = os.environ.get("PYTEST_XDIST_WORKER")
    if given and not xdist_worker:
        # Started once for the whole run by the Makefile; `up` returns it as it is if it runs.
        # A shared stack may be missing a service for a moment, stopped by another session's
        # test (a broker or storage outage): `up` would tear the whole stack down and start a
        # new one on other ports under that session's feet, so give it time to come back.
        stack_dir = stack_tool.resolve_dir(given)
        deadline = time.monotonic() + 90
        while (stack_tool.load_state(stack_dir) is not None
               and not all(stack_tool.status(stack_dir).values())
               and time.monotonic() < deadline):
            time.sleep(0.5)
        state = stack_tool.up(stack_dir, verbose=False)
        yield Stack(Path(state["dir"]), dict(state["env"]))
        return
    # A stack of this session's own, stopped at its end. A worker's is kept beside the given
    # stack, where scripts/test.sh and make stack-down find it should the session be killed.
    own = (Path(f"{stack_tool.resolve_dir(given)}-{xdist_worker}") if given
           else Path(tempfile.mkdtemp(prefix="rfr-pytest-stack-")))
    try:
        state = stack_tool.up(own, verbose=False)
        yield Stack(Path(state["dir"]), dict(state["env"]))
    finally:
        stack_tool.down(own, verbose=False)


def _admin(stack: Stack, dbname: str = "postgres") -> psycopg.Connection[Any]:
    return psycopg.connect(stack.url_for(dbname), autocommit=True, connect_timeout=10)


@dataclass(frozen=True)
class Template:
    name: str
    worker_user: str
    worker_password: str
    operator_user: str = OPERATOR_ROLE
    operator_password: str = ""
    owner_user: str = SCHEMA_OWNER_ROLE
    owner_password: str = ""

    def db(self, stack: Stack, name: str) -> Db:
        """Database ``name`` reached as this template's logins."""
        return Db(stack, name, stack.url_for(name, self.worker_user, self.worker_password),
                  stack.url_for(name, self.operator_user, self.operator_password),
                  stack.url_for(name, self.owner_user, self.owner_password))


def ensure_login(conn: psycopg.Connection[Any], role: str, password: str,
                 options: str = "") -> None:
    """Creates the LOGIN role (cluster-wide) or resets its password and options."""
    exists = conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone()
    verb = "alter" if exists else "create"
    conn.execute(f"{verb} role {role} login {options} password '{password}'")


@pytest.fixture(scope="session")
def template_db(stack: Stack) -> Iterator[Template]:
    name = f"rfr_tpl_{uuid.uuid4().hex[:10]}"
    owner_password = secrets.token_hex(16)
    with _admin(stack) as conn:
        # The schema owner as production has it: not a superuser; CREATEROLE for the roles the
        # migrations create (recording_finalize_worker, recording_finalize_operator).
        ensure_login(conn, SCHEMA_OWNER_ROLE, owner_password, "createrole nosuperuser")
        conn.execute(f'create database "{name}" owner {SCHEMA_OWNER_ROLE}')
    try:
        # The real code path: the console script, as the (non-superuser) owner.
        env = _base_env() | {
            "DATABASE_URL": stack.url_for(name, SCHEMA_OWNER_ROLE, owner_password)}
        # A new database: the service's tables from the reference schema first (the visitor
        # tests, test_visitor.py, install into tables another role created).
        proc = subprocess.run([CLI, "migrate", "--create-service-tables"], env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        password = secrets.token_hex(16)
        operator_password = secrets.token_hex(16)
        with _admin(stack, name) as conn:
            ensure_login(conn, WORKER_ROLE, password)
            conn.execute(f"grant recording_finalize_worker to {WORKER_ROLE}")
            ensure_login(conn, OPERATOR_ROLE, operator_password)
            conn.execute(f"grant recording_finalize_operator to {OPERATOR_ROLE}")
        yield Template(name, WORKER_ROLE, password, OPERATOR_ROLE, operator_password,
                       SCHEMA_OWNER_ROLE, owner_password)
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            for role in (WORKER_ROLE, OPERATOR_ROLE, SCHEMA_OWNER_ROLE):
                with contextlib.suppress(psycopg.Error):  # a test's database may still exist
                    conn.execute(f"drop role if exists {role}")


# ------------------------------------------------------------------------------------------
# per-test database, bucket, topic


@dataclass
class Db:
    stack: Stack
    name: str
    worker_url: str
    operator_url: str = ""
    #: The product's owner (the role that ran migrate: it owns the product's schemas); the
    #: stack's superuser (``owner_url``) plays the service and the DBA.
    schema_owner_url: str = ""

    @property
    def owner_url(self) -> str:
        return self.stack.url_for(self.name)

    def connect(self) -> psycopg.Connection[Any]:
        """A fresh autocommit owner connection (fresh: a test may restart the server)."""
        return psycopg.connect(self.owner_url, autocommit=True, connect_timeout=10)

    def one(self, sql: str, params: Any = None) -> Any:
        with self.connect() as conn:
            row = conn.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, params: Any = None) -> list[Any]:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()

    def set_server_topic(self, topic: str) -> None:
        """The owner's side of the topic (recording_finalize.settings): the worker must agree."""
        with self.connect() as conn:
            conn.execute("update recording_finalize.settings set topic = %s, updated_at = now()",
                         (topic,))


@pytest.fixture
def db(stack: Stack, template_db: Template) -> Iterator[Db]:
    name = f"rfr_t_{uuid.uuid4().hex[:12]}"
    with _admin(stack) as conn:
        conn.execute(f'create database "{name}" template "{template_db.name}" '
                     f"owner {template_db.owner_user}")
    try:
        yield template_db.db(stack, name)
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


@pytest.fixture
def bucket(stack: Stack) -> Iterator[str]:
    name = f"rfr-t-{uuid.uuid4().hex[:12]}"
    s3 = stack.s3()
    s3.create_bucket(Bucket=name)
    try:
        yield name
    finally:
        with contextlib.suppress(Exception):
            for obj in s3.list_objects_v2(Bucket=name).get("Contents", []):
                s3.delete_object(Bucket=name, Key=obj["Key"])
            s3.delete_bucket(Bucket=name)


@pytest.fixture
def topic(stack: Stack) -> Iterator[str]:
    name = f"rfr-t-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"]})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(timeout=15)
    yield name
    with contextlib.suppress(Exception):
        admin.delete_topics([name])[name].result(timeout=5)


# ------------------------------------------------------------------------------------------
# seeding (as the owner, through the lifecycle functions)


@dataclass(frozen=True)
class Seeded:
    recording_id: uuid.UUID
    session_id: uuid.UUID
    session_kind: str
    chat_id: uuid.UUID | None = None
    deal_id: uuid.UUID | None = None
    tenant_id: uuid.UUID | None = None


def seed_stuck(
    db: Db,
    *,
    kind: str = "Direct",
    media_type: str = "Audio",
    ended_ago: str = "1 hour",
    sla: str = "30 minutes",
    with_ids: bool = True,
    recording_id: uuid.UUID | None = None,
) -> Seeded:
    """A recording whose session ended ``ended_ago`` and whose callback never came: Uploading,
    finalize row Pending, due at ended_at + ``sla``."""
    rid, sid = recording_id or uuid.uuid4(), uuid.uuid4()
    chat, deal, tenant = (uuid.uuid4(), uuid.uuid4(), uuid.uuid4()) if with_ids else (None,) * 3
    table = "messenger.call_sessions" if kind == "Direct" else "messenger.conference_sessions"
    with db.connect() as conn:
        conn.execute(
            f"insert into {table} (id, chat_id, deal_id, tenant_id, started_at) "
            "values (%s, %s, %s, %s, now() - interval '3 hours')",
            (sid, chat, deal, tenant),
        )
        conn.execute("select recording_finalize.recording_started(%s, %s, %s, %s, 'Auto')",
                     (rid, kind, sid, media_type))
        # The session's own table is the messenger's; back-dating its end is what a real
        # stuck recording looks like an hour later.
        conn.execute(f"update {table} set ended_at = now() - %s::interval where id = %s",
                     (ended_ago, sid))
        conn.execute("select recording_finalize.session_ended(%s, %s, %s::interval)",
                     (kind, sid, sla))
    return Seeded(rid, sid, kind, chat, deal, tenant)


def seed_available_unpublished(db: Db) -> Seeded:
    """A recording the service committed Available but whose event never got enqueued
    (the crash between "→ Available" and publish): finalize row still Pending and due."""
    seeded = seed_stuck(db)
    with db.connect() as conn:
        conn.execute(
            "update messenger.call_recordings set status = 'Available', "
            "file_id = 'files/' || id::text, size_bytes = 10, duration_seconds = 3, "
            "format = 'Ogg', available_at = now(), version = version + 1 where id = %s",
            (seeded.recording_id,),
        )
    return seeded


def finalize_row(db: Db, recording_id: uuid.UUID) -> dict[str, Any]:
    with db.connect() as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        row = cur.execute(
            "select status, attempts, next_attempt_at, last_error, claim_token, "
            "next_attempt_at > now() as in_future "
            "from messenger.recording_finalize_attempts where recording_id = %s",
            (recording_id,),
        ).fetchone()
    assert row is not None
    return row


def recording(db: Db, recording_id: uuid.UUID) -> dict[str, Any]:
    with db.connect() as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        row = cur.execute("select * from messenger.call_recordings where id = %s",
                          (recording_id,)).fetchone()
    assert row is not None
    return row


def put_binary(
    stack: Stack,
    bucket: str,
    recording_id: uuid.UUID,
    *,
    size: int = 2048,
    metadata: Mapping[str, str] | None = None,
    content_type: str = "audio/webm",
    key: str | None = None,
) -> str:
    """Uploads a recording's binary where the recorder would, with its metadata."""
    key = key or f"recordings/{recording_id}"
    meta = {"duration-seconds": "42"} if metadata is None else dict(metadata)
    stack.s3().put_object(Bucket=bucket, Key=key, Body=b"\0" * size,
                          ContentType=content_type, Metadata=meta)
    return key


def put_poison_binary(stack: Stack, bucket: str, recording_id: uuid.UUID) -> None:
    """An object whose HEAD always fails while the storage itself answers: a metadata value
    that is not UTF-8 (the HEAD client refuses the answer: transient, every time). botocore
    refuses to send one, so its check is switched off for this client."""
    s3 = stack.s3()
    s3.meta.events.unregister("before-parameter-build.s3.PutObject", validate_ascii_metadata)
    s3.put_object(Bucket=bucket, Key=f"recordings/{recording_id}", Body=b"\0" * 16,
                  ContentType="audio/webm",
                  Metadata={"duration-seconds": b"5\xe9\xff".decode("latin-1")})


# ------------------------------------------------------------------------------------------
# Kafka


@dataclass(frozen=True)
class Message:
    key: str
    value: dict[str, Any]
    raw: bytes
    headers: dict[str, str]


def consume(stack: Stack, topic: str, *, expect: int, idle_s: float = 1.0,
            timeout_s: float = 20.0) -> list[Message]:
    """Reads the topic from the start until ``expect`` messages came and then ``idle_s`` of
    silence (so a duplicate would be seen), or ``timeout_s``."""
    consumer = Consumer({
        "bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        "group.id": f"rfr-test-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    })
    # assign, not subscribe: no consumer-group join (which takes seconds).
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out: list[Message] = []
    deadline = time.monotonic() + timeout_s
    quiet_since = None
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                if len(out) >= expect:
                    quiet_since = quiet_since or time.monotonic()
                    if time.monotonic() - quiet_since >= idle_s:
                        break
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise AssertionError(f"consume: {msg.error()}")
            quiet_since = None
            raw = msg.value()
            out.append(Message(
                key=msg.key().decode(),
                value=json.loads(raw),
                raw=raw,
                headers={k: v.decode() for k, v in (msg.headers() or [])},
            ))
    finally:
        consumer.close()
    return out


# ------------------------------------------------------------------------------------------
# the worker under test: the real console script, as the least-privilege role


def _base_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
    }


@dataclass
class Worker:
    stack: Stack
    db: Db
    bucket: str
    topic: str
    env: dict[str, str] = field(default_factory=dict)

    def environ(self, **overrides: str | None) -> dict[str, str]:
        env = _base_env() | {
            "DATABASE_URL": self.db.worker_url,
            "S3_ENDPOINT_URL": self.stack.env["S3_ENDPOINT_URL"],
            "AWS_ACCESS_KEY_ID": self.stack.env["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": self.stack.env["AWS_SECRET_ACCESS_KEY"],
            "AWS_DEFAULT_REGION": self.stack.env["AWS_DEFAULT_REGION"],
            "KAFKA_BOOTSTRAP_SERVERS": self.stack.env["KAFKA_BOOTSTRAP_SERVERS"],
            "RFR_S3_BUCKET": self.bucket,
            "RFR_TOPIC": self.topic,
            "RFR_METRICS_PORT": "0",
        } | self.env
        for name, value in overrides.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def cli(self, *args: str, timeout: float = 60, **env: str | None,
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CLI, *args], env=self.environ(**env), capture_output=True,
                              text=True, timeout=timeout)

    def run_once(self, *args: str, expect_rc: int = 0, **env: str | None) -> dict[str, Any]:
        proc = self.cli("run-once", *args, **env)
        assert proc.returncode == expect_rc, (proc.returncode, proc.stdout, proc.stderr)
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 1, proc.stdout  # ONE JSON object on stdout
        summary: dict[str, Any] = json.loads(lines[0])
        summary["_stderr"] = proc.stderr
        return summary

    def spawn(self, *args: str, prefix: Sequence[str] = (), **env: str | None
              ) -> subprocess.Popen[str]:
        """The CLI as a process; ``prefix`` goes before it (tests/lock_bypass.py)."""
        return subprocess.Popen([*prefix, CLI, *args], env=self.environ(**env), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def worker(stack: Stack, db: Db, bucket: str, topic: str) -> Worker:
    # The topic lives on the server: the test's database gets the test's topic.
    db.set_server_topic(topic)
    return Worker(stack, db, bucket, topic)


def log_events(stderr: str) -> list[dict[str, Any]]:
    """The JSON log lines of a run (every stderr line must be one)."""
    events = []
    for line in stderr.splitlines():
        if line.strip():
            events.append(json.loads(line))
    return events


# ------------------------------------------------------------------------------------------
# network helpers: a dead port, a slow proxy


# Port 1 (tcpmux) is privileged and unused: a connection there is refused at once. A port
# merely closed by the test could be handed out again as an ephemeral port meanwhile.
DEAD_PORT = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pipe_bytes(src: socket.socket, dst: socket.socket,
               delay_s: Callable[[], float] | None = None) -> None:
    """Copies ``src`` to ``dst`` until either side closes, then shuts both down: one direction
    of a test's TCP proxy. ``delay_s`` is asked before each chunk (a test may change it while
    the connection is open) and the chunk held that long."""
    try:
        while data := src.recv(65536):
            if delay_s is not None and (hold := delay_s()):
                time.sleep(hold)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class SlowProxy:
    """A TCP proxy to ``target`` that holds every client→server chunk for ``delay_s``.

    Makes S3 slow but working, so a cycle lasts long enough to be interrupted or overlapped.
    """

    def __init__(self, target_port: int, delay_s: float) -> None:
        self.target_port = target_port
        self.delay_s = delay_s
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = int(self._server.getsockname()[1])
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False),
                             daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, slow: bool) -> None:
        pipe_bytes(src, dst, (lambda: self.delay_s) if slow else None)

    def close(self) -> None:
        self._closed.set()
        self._server.close()


@pytest.fixture
def slow_s3(stack: Stack) -> Iterator[SlowProxy]:
    port = urlsplit(stack.env["S3_ENDPOINT_URL"]).port
    assert port is not None
    proxy = SlowProxy(port, delay_s=0.4)
    yield proxy
    proxy.close()


# ------------------------------------------------------------------------------------------
# the operator toolkit: the same CLI as a login granted recording_finalize_operator

@pytest.fixture
def operator(worker: Worker) -> Worker:
    """The console script as an operator (the template's login granted
    recording_finalize_operator): same database, bucket and topic as ``worker``."""
    return Worker(worker.stack, worker.db, worker.bucket, worker.topic,
                  env={"DATABASE_URL": worker.db.operator_url})


def db_fingerprint(db: Db) -> dict[str, str]:
    """Per messenger table: an md5 of every row's content and xmin (a rewrite changes xmin)."""
    with db.connect() as conn:
        tables = [r[0] for r in conn.execute(
            "select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace "
            "where n.nspname = 'messenger' and c.relkind = 'r' order by 1").fetchall()]
        out = {}
        for table in tables:
            row = conn.execute(
                f"select md5(coalesce(string_agg(t.xmin::text || ':' || t::text, ',' "
                f"order by t::text), '')) from messenger.{table} as t").fetchone()
            out[table] = row[0] if row else ""
    return out


def planted_body(definition: str, note: str) -> str:
    """``definition`` (from pg_get_functiondef) with a comment line added at the top of the
    body: the same signature, another definition, as a hand "hotfix" would leave it."""
    changed = definition.replace("$function$\n", f"$function$\n    -- {note}\n", 1)
    assert changed != definition, "no $function$ body delimiter in the definition"
    return changed


@dataclass(frozen=True)
class InstalledPackage:
    """The wheel of this checkout installed into a virtualenv of its own, and a working
    directory outside the checkout to run it from."""

    venv: Path
    cwd: Path
    wheel: Path

    @property
    def cli(self) -> str:
        return str(self.venv / "bin" / "recording-finalize")


def run_checked(args: list[str], cwd: Path, timeout: float = 300,
                env: dict[str, str] | None = None) -> str:
    """Runs ``args`` with the base environment (and ``env``); its stdout, or a failed assertion
    with both streams' tails."""
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=_base_env() | {"PIP_DISABLE_PIP_VERSION_CHECK": "1",
                                             "HOME": os.environ.get("HOME", "/root")}
                          | (env or {}))
    assert proc.returncode == 0, (args, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


@pytest.fixture(scope="session")
def installed_package(tmp_path_factory: pytest.TempPathFactory) -> InstalledPackage:
    """Built once a session (about 25 s) for test_installed_wheel and test_visitor: the wheel is
    built from a copy of the checkout's files (tracked or not ignored), so the build leaves
    nothing in the clone and sees nothing that is not part of the source; the dependencies come
    from requirements.lock (hashes required), the package itself with ``--no-index``."""
    work = tmp_path_factory.mktemp("installed-wheel")
    listing = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
    src = work / "src"
    for rel in filter(None, listing.decode().split("\0")):
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    # The copy has no .git: the checkout's commit is handed to the build, as a pipeline that
    # builds from an export would (setup.py bakes it into the wheel).
    run_checked([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                 str(work / "dist"), str(src)], cwd=work,
                env={"RFR_BUILD_COMMIT": git_commit(REPO) or "unknown"})
    [wheel] = (work / "dist").glob("recording_finalize_retry-*.whl")
    venv = work / "venv"
    run_checked([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)],
                cwd=work)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    run_checked([*pip, "--require-hashes", "-r", str(src / "requirements.lock")], cwd=work)
    run_checked([*pip, "--no-index", str(wheel)], cwd=work)
    cwd = work / "elsewhere"
    cwd.mkdir()
    return InstalledPackage(venv, cwd, wheel)
