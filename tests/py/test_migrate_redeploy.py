"""``migrate`` on every deploy, with only the privileges a running install keeps.

The world is the reference schema as its owners run it: a database owned by the service's role,
schema ``messenger`` and its tables created by that role, the grants ``service-sql grants``
prints run by it, and ``migrate`` as the product's owner (no superuser, no CREATEROLE). Then the
install's CREATE is taken back as docs/install.md says, and every later ``migrate`` is a
deploy's: one with nothing to create exits 0; one that lacks a privilege exits 2 naming it and
the statement that grants it, never a raw database error.
"""

from __future__ import annotations

import contextlib
import secrets
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import CLI, REPO, Stack, _admin, _base_env
from recording_finalize import drift

GROUP_ROLES = ("recording_finalize_worker", "recording_finalize_operator",
               "recording_finalize_service")
SCHEMA_SQL = (REPO / "sql" / "service" / "schema.sql").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Login:
    name: str
    password: str


@dataclass
class Site:
    stack: Stack
    name: str
    service: Login  # owns the database, schema messenger and its tables
    owner: Login  # the product's owner: runs migrate

    def url(self, who: Login | None = None) -> str:
        if who is None:
            return self.stack.url_for(self.name)
        return self.stack.url_for(self.name, who.name, who.password)

    def as_service(self, *statements: str) -> None:
        with psycopg.connect(self.url(self.service), autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement.encode())

    def all(self, sql: str, params: Any = None) -> list[Any]:
        with psycopg.connect(self.url(), autocommit=True) as conn:
            return conn.execute(sql, params).fetchall()

    def cli(self, *args: str, who: Login | None = None, expect: int = 0,
            sql_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = _base_env() | {"DATABASE_URL": self.url(who or self.owner)}
        if sql_dir is not None:
            env["RFR_SQL_DIR"] = str(sql_dir)
        proc = subprocess.run([CLI, *args], env=env, capture_output=True, text=True,
                              timeout=180)
        assert proc.returncode == expect, (
            f"{' '.join(args)}: exit {proc.returncode} (expected {expect})\n{proc.stdout}\n"
            f"{proc.stderr[-6000:]}")
        assert "database error" not in proc.stderr, proc.stderr
        return proc

    def grants(self) -> None:
        """The service's owner runs the grants as printed (without DATABASE_URL: the
        reference adapter's)."""
        printed = subprocess.run([CLI, "service-sql", "grants", "--to", self.owner.name],
                                 env=_base_env(), capture_output=True, text=True, timeout=60)
        assert printed.returncode == 0, printed.stderr
        proc = subprocess.run(["psql", "--no-psqlrc", "-X", "-v", "ON_ERROR_STOP=1", "-d",
                               self.url(self.service)], input=printed.stdout,
                              capture_output=True, text=True, timeout=60, env=_base_env())
        assert proc.returncode == 0, proc.stderr


@contextlib.contextmanager
def site(stack: Stack, *, schema: Callable[[str], str] = lambda text: text,
         grants: bool = True) -> Iterator[Site]:
    suffix = uuid.uuid4().hex[:8]
    name = f"rfr_redeploy_{suffix}"
    service = Login(f"rfr_rd_service_{suffix}", secrets.token_hex(12))
    owner = Login(f"rfr_rd_owner_{suffix}", secrets.token_hex(12))
    with _admin(stack) as conn:
        for who in (service, owner):
            conn.execute(f"create role {who.name} login nosuperuser nocreaterole nocreatedb "
                         f"password '{who.password}'")
        for group in GROUP_ROLES:  # cluster-wide, created once by a DBA with CREATEROLE
            conn.execute(f"do $$ begin create role {group} nologin; "
                         "exception when duplicate_object then null; end $$")
        conn.execute(f'create database "{name}" owner {service.name}')
        conn.execute(f'revoke connect, temporary on database "{name}" from public')
    world = Site(stack, name, service, owner)
    try:
        world.as_service("create schema messenger", schema(SCHEMA_SQL))
        if grants:
            world.grants()
        yield world
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            for who in (owner, service):
                with contextlib.suppress(psycopg.Error):
                    conn.execute(f"drop role if exists {who.name}")


def take_create_back(world: Site) -> None:
    """Step 6 of docs/install.md, as printed there."""
    world.as_service(f'revoke create on database "{world.name}" from {world.owner.name}',
                     f"revoke create on schema messenger from {world.owner.name}")


def test_a_redeploy_without_the_install_privileges_creates_nothing_and_exits_0(
        stack: Stack) -> None:
    with site(stack) as world:
        world.cli("migrate")
        take_create_back(world)
        again = world.cli("migrate")
        assert "migrations applied: 0 (up to date)" in again.stdout, again.stdout
        # What must be created is refused up front, naming the privilege and its grant.
        with psycopg.connect(world.url(world.owner), autocommit=True) as conn:
            conn.execute("drop schema recording_finalize_adapter cascade")
        refused = world.cli("migrate", expect=2)
        assert "migrate refused, nothing was written" in refused.stderr, refused.stderr
        assert (f"database: role {world.owner.name} has no CREATE privilege (needed to create "
                "schemas recording_finalize_adapter)") in refused.stderr, refused.stderr
        assert (f"grant create on database {world.name} to {world.owner.name};"
                in refused.stderr), refused.stderr
        world.as_service(f'grant create on database "{world.name}" to {world.owner.name}')
        world.cli("migrate")
        take_create_back(world)
        world.cli("migrate")


#: A privilege a running install keeps, taken away -> what the refusal must say (as its owner
#: would grant it back).
LACKING: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "CONNECT on the database": (
        'revoke connect on database "{db}" from {owner}',
        'grant connect on database "{db}" to {owner}',
        ("CONNECT privilege", "grant connect on database {db} to {owner};")),
    "USAGE on schema messenger": (
        "revoke usage on schema messenger from {owner}",
        "grant usage on schema messenger to {owner}",
        ("schema messenger: role {owner} has no USAGE privilege",
         "grant usage on schema messenger to {owner};")),
    "SELECT on a column the adapter reads": (
        "revoke select (media_type) on messenger.call_recordings from {owner}",
        "grant select (media_type) on messenger.call_recordings to {owner}",
        ("messenger.call_recordings: role {owner} lacks SELECT on media_type",)),
    "INSERT on the realtime outbox": (
        "revoke insert on messenger.realtime_outbox from {owner}",
        "grant insert (kind, session_kind, session_id, reference_id, payload) on "
        "messenger.realtime_outbox to {owner}",
        ("messenger.realtime_outbox: role {owner} lacks INSERT on kind",)),
}


def test_a_redeploy_that_lacks_a_privilege_exits_2_naming_it(stack: Stack) -> None:
    with site(stack) as world:
        world.cli("migrate")
        take_create_back(world)
        for case, (revoke, grant, expected) in LACKING.items():
            names = {"db": world.name, "owner": world.owner.name}
            world.as_service(revoke.format(**names))
            refused = world.cli("migrate", expect=2)
            for text in expected:
                assert text.format(**names) in refused.stderr, (case, refused.stderr)
            world.as_service(grant.format(**names))
        world.cli("migrate")


def test_a_first_install_without_create_names_the_statement_that_grants_it(
        stack: Stack) -> None:
    with site(stack) as world:
        world.as_service(f'revoke create on database "{world.name}" from {world.owner.name}')
        refused = world.cli("migrate", expect=2)
        assert (f"the database's owner runs, for the install: grant create on database "
                f"{world.name} to {world.owner.name};") in refused.stderr, refused.stderr
        assert f"revoke create on database {world.name}" in refused.stderr, refused.stderr
        world.as_service(f'grant create on database "{world.name}" to {world.owner.name}',
                         f"revoke create on schema messenger from {world.owner.name}")
        refused = world.cli("migrate", expect=2)
        assert ("(needed once, to create messenger.recording_finalize_attempts); the owner of "
                "schema messenger runs, for the install: grant create on schema messenger to "
                f"{world.owner.name};") in refused.stderr, refused.stderr
        assert world.all("select to_regnamespace('recording_finalize')") == [(None,)]


def test_a_service_outbox_of_another_shape_under_the_reference_name_installs(
        stack: Stack) -> None:
    """The service's own outbox is named messenger.integration_outbox but has only the columns
    the adapter reads: no upgrade step reads it under the reference table's columns."""
    def other_outbox(text: str) -> str:
        for line in ("    message_key text not null,\n", "    event_type text not null,\n",
                     "    payload jsonb not null,\n", "    headers jsonb not null default '{}',\n"):
            assert line in text
            text = text.replace(line, "")
        return text.replace("    published_at timestamptz null,\n    -- Enqueueing",
                            "    published_at timestamptz null,\n    body text,\n    -- Enqueueing")

    with site(stack, schema=other_outbox) as world:
        done = world.cli("migrate")
        assert "adapter (recording_finalize_adapter): installed" in done.stdout, done.stdout


def test_an_install_that_applied_an_amended_migration_is_not_refused(stack: Stack) -> None:
    """A database that applied the earlier text of an amended migration matches the file as it
    is now (drift), and migrate records the new checksum in its place."""
    package = drift.shipped(REPO / "sql")
    with site(stack) as world:
        world.cli("migrate")
        for name, earlier in drift.AMENDED_MIGRATIONS.items():
            world.all("update recording_finalize_migrations.file_checksums set sha256 = %s "
                      "where kind = 'migration' and file_name = %s returning 1",
                      (next(iter(earlier)), name))
        with psycopg.connect(world.url(world.owner), autocommit=True) as conn:
            assert drift.schema_drift(conn, package).matches, drift.schema_drift(
                conn, package).message()
        world.cli("migrate")
        recorded = dict(world.all("select file_name, sha256 from "
                                  "recording_finalize_migrations.file_checksums "
                                  "where kind = 'migration'"))
        assert recorded == package.migrations


def test_migrate_says_what_the_check_did_not_prove(stack: Stack) -> None:
    with site(stack) as world:
        done = world.cli("migrate")
        assert "not proved: " in done.stdout and "not rehearsed" in done.stdout, done.stdout
        assert "the worker rehearses these writes at its first start" in done.stdout


def test_an_upgrade_from_a_release_that_relayed_the_services_rows_says_so(
        stack: Stack, tmp_path: Path) -> None:
    """0.2.x relayed every unpublished row of the topic in messenger.integration_outbox; the
    upgrade says that this stops and how many of the service's events wait for its relay, and
    copies none of them into the product's outbox (a rollback would publish them twice)."""
    from test_schema_drift import load_release, released_sql

    release = load_release()
    entries = release.changelog_entries((REPO / "CHANGELOG.md").read_text())
    [entry] = [e for e in entries if e.version == "0.2.1"]
    old_sql = released_sql(entry.fingerprint, tmp_path)
    assert [p.stem for p in (old_sql / "migrations").glob("*.sql")] == ["0001_baseline"]
    with site(stack) as world:
        world.cli("migrate", sql_dir=old_sql)
        topic = world.all("select topic from recording_finalize.settings")[0][0]
        session, recording = uuid.uuid4(), uuid.uuid4()
        world.as_service(
            f"insert into messenger.call_sessions (id, started_at, ended_at) values "
            f"('{session}', now() - interval '2 hours', now() - interval '1 hour')",
            f"insert into messenger.call_recordings (id, session_kind, session_id, media_type, "
            f"trigger, status, file_id, size_bytes, duration_seconds, format, started_at, "
            f"ended_at, available_at) values ('{recording}', 'Direct', '{session}', 'Audio', "
            f"'Auto', 'Available', 'f', 1, 1, 'Ogg', now() - interval '2 hours', now() - "
            f"interval '1 hour', now() - interval '1 hour')",
            f"insert into messenger.integration_outbox (topic, message_key, event_type, "
            f"dedupe_key, payload, headers) values ('{topic}', '{session}', "
            f"'call-recording-available', '{recording}', '{{}}', "
            f"'{{\"event-id\": \"{uuid.uuid4()}\"}}')")
        done = world.cli("migrate")
        assert "upgrade: this database was migrated by recording-finalize 0.2.x" in done.stdout
        assert ("upgrade: 1 of the service's events are unpublished now "
                "(recording_finalize_adapter.service_events") in done.stdout, done.stdout
        assert "Run the service's own outbox relay" in done.stdout
        assert world.all("select count(*) from recording_finalize.outbox") == [(0,)]
        # Said once: the next deploy's migrate upgrades nothing from 0.2.x.
        assert "upgrade:" not in world.cli("migrate").stdout


@pytest.mark.parametrize("command", ["migrate"])
def test_migrate_help_names_the_product_owners_login(command: str) -> None:
    proc = subprocess.run([CLI, command, "--help"], env=_base_env(), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "the worker's login" not in text, text
    assert "the product's owner" in text.split("DATABASE_URL", 1)[1][:200], text
