"""The product as an operator installs it: a wheel built from this checkout, installed (not
editable) into a fresh virtualenv in a temporary directory, run from outside the clone against the
test stack, in the two ways a database meets it (docs/contract/tables.md): an empty database
(``migrate --create-service-tables``: the reference service tables first) and a database whose
service tables another role created first (the SQL the installed package prints with ``service-sql
schema`` and ``service-sql grants``, run by that role as printed; then plain ``migrate`` by the
product's owner). Each: migrate twice, run-once over seeded stuck recordings, status.

The virtualenv gets the application's pinned dependencies from requirements.lock (hash-checked,
served from pip's cache the checkout's install filled), then the wheel with ``--no-index``: a
dependency the wheel declares but the lock lacks fails the install. No site-packages of the
checkout is visible to it; the test asserts the import resolves into the new virtualenv.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from conftest import (
    REPO,
    Db,
    InstalledPackage,
    Worker,
    _admin,
    put_binary,
    run_checked,
    seed_available_unpublished,
    seed_stuck,
)
from kube import load_release
from recording_finalize.buildinfo import git_commit

Installed = InstalledPackage


@pytest.fixture(scope="session")
def installed(installed_package: InstalledPackage) -> InstalledPackage:
    return installed_package


def test_the_wheel_carries_the_sql_and_installs_one_package(installed: Installed) -> None:
    out = run_checked([str(installed.venv / "bin" / "python"), "-c",
                "import importlib.util, recording_finalize, recording_finalize.sql as s; "
                "print(recording_finalize.__file__); print(s.__path__[0]); "
                "print(importlib.util.find_spec('driver'))"], cwd=installed.cwd)
    package_file, sql_dir, driver = out.splitlines()
    site = installed.venv / "lib"
    assert Path(package_file).is_relative_to(site), package_file  # not the checkout's
    assert Path(sql_dir).is_relative_to(site)
    assert not Path(package_file).is_relative_to(REPO)
    assert driver == "None"  # no top-level package called driver
    # Every SQL file migrate applies or prints: the migrations, the function files and the
    # service's reference DDL and recommendations, byte for byte.
    for part in ("migrations", "functions", "service"):
        shipped = {p.name: p.read_bytes() for p in (Path(sql_dir) / part).glob("*.sql")}
        ours = {p.name: p.read_bytes() for p in (REPO / "sql" / part).glob("*.sql")}
        assert shipped.keys() == ours.keys() and shipped == ours, part
    assert {"schema.sql", "recommended.sql"} <= set(os.listdir(Path(sql_dir) / "service"))


def _in_database(url: str, dbname: str) -> str:
    """``url`` (a login of the test session) pointed at ``dbname``."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{dbname}"))


@dataclass(frozen=True)
class Target:
    db: Db
    owner: str  # the product's owner (runs migrate)
    service: str  # the service's role ("" when migrate creates the service tables)
    service_url: str


@contextlib.contextmanager
def _new_database(worker: Worker, *, service_first: bool) -> Iterator[Target]:
    """An empty database owned by the product's owner, or (``service_first``) one owned by a
    service role that creates the service's tables itself; both roles are this test's own. The
    Db's worker and operator URLs are the session's logins (granted the group roles, which are
    cluster-wide)."""
    stack = worker.stack
    tag = uuid.uuid4().hex[:8]
    name, owner, owner_pw = f"rfr_whl_{tag}", f"rfr_whl_owner_{tag}", secrets.token_hex(12)
    service, service_pw = f"rfr_whl_service_{tag}", secrets.token_hex(12)
    with _admin(stack) as conn:
        # The product's owner as production has it: no superuser. CREATEROLE for the empty
        # database (its migrate may have to create the group roles); none for the visitor (the
        # group roles exist in this cluster, and a DBA would have created them for it).
        conn.execute(f"create role {owner} login {'' if service_first else 'createrole'} "
                     f"password '{owner_pw}'")
        if service_first:
            conn.execute(f"create role {service} login password '{service_pw}'")
        conn.execute(f'create database "{name}" owner {service if service_first else owner}')
    try:
        db = Db(stack, name, _in_database(worker.db.worker_url, name),
                _in_database(worker.db.operator_url, name), stack.url_for(name, owner, owner_pw))
        yield Target(db, owner, service if service_first else "",
                     stack.url_for(name, service, service_pw) if service_first else "")
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            for role in (owner, service):
                conn.execute(f"drop role if exists {role}")


def _cli(installed: Installed, worker: Worker, *args: str, url: str, expect: int = 0
         ) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([installed.cli, *args], cwd=installed.cwd, capture_output=True,
                          text=True, timeout=180, env=worker.environ(DATABASE_URL=url))
    assert proc.returncode == expect, (args, proc.stdout, proc.stderr)
    return proc


def _psql(url: str, sql: str) -> None:
    """``sql`` as pasted into psql by the role of ``url``."""
    proc = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url], input=sql,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def _migrate_twice(installed: Installed, worker: Worker, db: Db, *flags: str) -> None:
    first = _cli(installed, worker, "migrate", *flags, url=db.schema_owner_url).stdout
    migrations = len(list((REPO / "sql" / "migrations").glob("*.sql")))
    assert f"migrations applied: {migrations}" in first
    second = _cli(installed, worker, "migrate", *flags, url=db.schema_owner_url).stdout
    assert "migrations applied: 0 (up to date)" in second
    assert "function files applied: 0, unchanged:" in second


def _one_cycle_and_status(installed: Installed, worker: Worker, db: Db) -> None:
    """Three stuck recordings through the installed worker, then the operator's status."""
    db.set_server_topic(worker.topic)  # the topic lives on the server
    found = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, found.recording_id)
    missing = seed_stuck(db)
    republish = seed_available_unpublished(db)
    summary = json.loads(_cli(installed, worker, "run-once", url=db.worker_url).stdout)
    assert (summary["claimed"], summary["reconciled"], summary["failed"],
            summary["republished"], summary["published"]) == (3, 1, 1, 1, 2), summary
    assert summary["error"] is None

    status = json.loads(_cli(installed, worker, "status", "--json", url=db.operator_url).stdout)
    last = max(p.stem for p in (REPO / "sql" / "migrations").glob("*.sql"))
    assert status["backlog"] == 0 and status["publishBacklog"] == 0
    assert status["schema"]["matches"] is True and status["schema"]["database"] == last
    statuses = dict(db.all("select id, status from messenger.call_recordings where id = any(%s)",
                           ([found.recording_id, missing.recording_id,
                             republish.recording_id],)))
    assert statuses == {found.recording_id: "Available", missing.recording_id: "Failed",
                        republish.recording_id: "Available"}


def test_the_installed_package_installs_into_an_empty_database(
    installed: Installed, worker: Worker
) -> None:
    version = _cli(installed, worker, "--version", url=worker.db.owner_url).stdout
    last = max(p.stem for p in (REPO / "sql" / "migrations").glob("*.sql"))
    assert version.startswith("recording-finalize ") and f"schema {last}" in version
    # The build: the commit baked in at build time (no .git here), the SQL's fingerprint as
    # CHANGELOG.md records it (scripts/release.py's rule).
    assert f"\ncommit: {git_commit(REPO)}\n" in version, version
    assert f"\nsql fingerprint: {load_release().sql_fingerprint()}" in version, version
    # What the wheel ships hashes as the checkout does: the one rule of driver/buildinfo.py.
    assert f"\npackage fingerprint: {load_release().package_fingerprint()}\n" in version, version
    with _new_database(worker, service_first=False) as target:
        db = target.db
        # Plain migrate refuses an empty database (no service tables), writing nothing.
        refused = _cli(installed, worker, "migrate", url=db.schema_owner_url, expect=2)
        assert "--create-service-tables" in refused.stderr
        assert db.one("select count(*) from pg_namespace where nspname like 'recording_fin%' "
                      "or nspname = 'messenger'") == (0,)
        _migrate_twice(installed, worker, db, "--create-service-tables")
        _one_cycle_and_status(installed, worker, db)


def test_the_installed_package_installs_into_service_tables_another_role_created(
    installed: Installed, worker: Worker
) -> None:
    with _new_database(worker, service_first=True) as target:
        db, owner, service_url = target.db, target.owner, target.service_url
        # The service's DBA: its schema and tables from what the installed package prints,
        # then the GRANTs it prints for the product's owner, each run as printed. This service
        # calls the optional lifecycle functions (the seeding below: recording_started,
        # session_ended), so its DBA asks for their privileges too (--lifecycle).
        schema = _cli(installed, worker, "service-sql", "schema", url=service_url).stdout
        _psql(service_url, "create schema messenger;\n" + schema)
        grants = _cli(installed, worker, "service-sql", "grants", "--to", owner, "--lifecycle",
                      url=service_url).stdout
        _psql(service_url, grants)
        tables = ("call_sessions", "conference_sessions", "call_recordings",
                  "integration_outbox", "realtime_outbox")
        snapshot = ("select c.relname, pg_get_userbyid(c.relowner), c.relfilenode, "
                    "c.relacl::text, c.reloptions::text, (select count(*) from pg_trigger t "
                    "where t.tgrelid = c.oid), (select string_agg(pg_get_constraintdef(k.oid), "
                    "';' order by k.conname) from pg_constraint k where k.conrelid = c.oid) "
                    "from pg_class c where c.relnamespace = 'messenger'::regnamespace "
                    "and c.relname = any(%s) order by 1")
        before = db.all(snapshot, (list(tables),))
        assert len(before) == len(tables) and {row[1] for row in before} == {target.service}

        # The product's owner: plain migrate (the tables exist; nothing of theirs changes).
        _migrate_twice(installed, worker, db)
        assert db.all(snapshot, (list(tables),)) == before
        assert db.all("select c.relname from pg_class c where c.relnamespace = "
                      "'messenger'::regnamespace and c.relkind = 'r' and "
                      "pg_get_userbyid(c.relowner) = %s", (owner,)) == [
            ("recording_finalize_attempts",)]
        _one_cycle_and_status(installed, worker, db)
