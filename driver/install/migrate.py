"""``recording-finalize migrate``: check the contract, then create or update what the product owns.

The product is a visitor in the service's database: first every check, writing nothing (any
problem: ``MigrateRefused`` with the whole list), then only what the product owns: group roles,
the missing service tables with ``--create-service-tables``, the migrations, the changed function
files, the bookkeeping the drift check reads. Every file runs with ``lock_timeout`` 1 s and a
bounded retry, so a service writer queued behind migrate waits about a second at most.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from .. import adapter, contract, drift, logs
from ..cliutil import EXIT_OK, EXIT_USAGE, Command, fail
from ..config import Settings
from ..db import conninfo
from . import queries as bookkeeping

MIGRATION_TABLE = "_yoyo_migration"
# Long enough for another migrate (a few seconds of DDL) to finish first.
MIGRATE_LOCK_WAIT_S = 60.0
MIGRATE_LOCK_KEY = 5928001741300502
# A lock request waits at most this long in the queue (and every writer queued behind it).
LOCK_TIMEOUT_MS = 1000
STATEMENT_TIMEOUT_MS = 60_000
# Tries of one file whose lock is not granted, and the pauses between them (out of the queue).
# Worst case for one file: 5 waits of 1 s, 4 pauses: about 9 s, no writer waiting over 1 s.
LOCK_TRIES = 5
BACKOFF_S = (0.25, 0.5, 1.0, 2.0)
_RETRYABLE = (pg_errors.LockNotAvailable, pg_errors.DeadlockDetected)
#: The internal helpers are applied before the API: a SQL-language API function is checked
#: against what it calls when it is created.
INTERNAL_PREFIX = "recording_finalize_internal."
ROLE_COMMENTS = contract.GROUP_ROLES


@dataclass(frozen=True)
class MigrateResult:
    applied: list[str]
    functions: list[str]
    unchanged: list[str] = field(default_factory=list)
    created_roles: list[str] = field(default_factory=list)
    created_tables: list[str] = field(default_factory=list)
    lock_retries: int = 0
    schema_version: str = ""
    version: str = ""
    #: What became of the adapter: installed, upgraded, unchanged, or kept (a DBA's).
    adapter: str = ""
    #: Warnings of check_adapter (e.g. a discovery scan without an index).
    warnings: list[str] = field(default_factory=list)


class MissingSqlError(RuntimeError):
    """The SQL tree is not where the settings say."""


class MigrateRefused(RuntimeError):
    """Nothing was written: the contract does not hold, the database is newer, or an applied
    migration file changed. ``create_roles`` holds the statements a DBA with CREATEROLE runs."""

    def __init__(self, message: str, create_roles: list[str] | None = None) -> None:
        super().__init__(message)
        self.create_roles = create_roles or []


class AdapterFails(RuntimeError):
    """Everything was applied, but the worker would fail at run time beneath the adapter
    (check_adapter's errors, each with its fix). The worker refuses to start until it is fixed."""


class MigrateLockBusy(RuntimeError):
    """A file's lock was not granted in ``LOCK_TRIES`` tries, or another migrate holds
    migrate's lock."""


def function_order(files: list[str]) -> list[str]:
    """The order function files are applied in: internal helpers first, each group by name."""
    return sorted(files, key=lambda f: (not f.startswith(INTERNAL_PREFIX), f))


def migrate(settings: Settings, *, create_service_tables: bool = False,
            say: Callable[[str], None] = lambda _: None) -> MigrateResult:
    """Checks, then applies what is missing or changed; returns what it did."""
    sql_dir = settings.sql_dir
    if not (sql_dir / "migrations").is_dir() or not (sql_dir / "functions").is_dir():
        raise MissingSqlError(f"no migrations/ and functions/ under {sql_dir} (set RFR_SQL_DIR)")
    package = drift.shipped(sql_dir)
    with psycopg.connect(conninfo(settings), autocommit=True) as conn:
        _lock(conn)
        try:
            role = bookkeeping.current_role(conn)
            adapter_state = adapter.state(conn)
            problems = contract.check(conn, role, installing=True, as_owner=True,
                                      create_service_tables=create_service_tables)
            state = _state(conn)
            refusal = _refusal(package, state)
            if problems or refusal:
                items = problems.message() + (f"\n  - {refusal}" if refusal else "")
                raise MigrateRefused(items.lstrip("\n"), problems.create_roles)
            # From here on migrate writes; every check above passed.
            created_roles = _create_roles(conn, problems.roles_to_create)
            created_tables = _create_service_tables(conn, package, problems.tables_to_create)
            bookkeeping.create_migrations_schema(conn)
            retries = [0]
            applied = _apply_migrations(settings, package, say, retries)
            for migration_id in bookkeeping.yoyo_applied_ids(conn):
                if migration_id in package.migrations:
                    bookkeeping.record_migration(conn, migration_id,
                                                 package.migrations[migration_id], package.version)
            # A SQL tree of a release before the adapter (RFR_SQL_DIR) has none to install.
            shipped_adapter = (package.sql_dir / adapter.REFERENCE_FILE).is_file()
            adapter_sha = (drift.sha256_file(package.sql_dir / adapter.REFERENCE_FILE)
                           if shipped_adapter else None)
            adapter_done = (_apply_adapter(conn, package, adapter_state, adapter_sha, say,
                                           retries) if adapter_sha else "none (not shipped)")
            functions, unchanged = _apply_functions(conn, package, say, retries)
            _record(conn, package, adapter_state, adapter_sha)
            findings = adapter.beneath(conn, rehearse=True) if shipped_adapter else []
        finally:
            bookkeeping.migrate_unlock(conn, MIGRATE_LOCK_KEY)
    if errors := adapter.errors(findings):
        raise AdapterFails("\n".join(f"  - {line}" for line in errors))
    return MigrateResult(applied, functions, unchanged, created_roles, created_tables,
                         retries[0], package.schema_version, package.version, adapter_done,
                         [f.line() for f in findings if f.severity == "warning"])


def _record(conn: psycopg.Connection[Any], package: drift.Shipped, adapter_state: adapter.State,
            adapter_sha: str | None) -> None:
    """The bookkeeping the drift check reads, in one transaction."""
    with conn.transaction():
        for file, sha in package.functions.items():
            bookkeeping.record_function(conn, file, sha, package.version)
        bookkeeping.forget_functions(conn, list(package.functions))
        bookkeeping.record_migrate_state(conn, package.schema_version, package.version)
        if adapter_sha is not None:
            bookkeeping.record_adapter(
                conn, None if adapter_state is adapter.State.DBAS else adapter_sha)


def _apply_file(conn: psycopg.Connection[Any], text: str, schema: str | None = None) -> None:
    """One file in its own transaction, under migrate's timeouts (a broken file leaves the ones
    before it applied); ``schema`` is created first if missing."""
    with conn.transaction():
        bookkeeping.set_migrate_timeouts(conn, LOCK_TIMEOUT_MS, STATEMENT_TIMEOUT_MS)
        if schema is not None:
            conn.execute(sql.SQL("create schema if not exists {}").format(sql.Identifier(schema)))
        bookkeeping.apply_sql_file(conn, text)


def _lock(conn: psycopg.Connection[Any]) -> None:
    deadline = time.monotonic() + MIGRATE_LOCK_WAIT_S
    while not bookkeeping.try_migrate_lock(conn, MIGRATE_LOCK_KEY):
        if time.monotonic() > deadline:
            raise MigrateLockBusy(f"another migrate has held the migrate lock for "
                                  f"{MIGRATE_LOCK_WAIT_S:.0f} s; try again")
        time.sleep(0.5)


def _state(conn: psycopg.Connection[Any]) -> drift.DbState:
    """What an earlier migrate recorded (nothing for a database never migrated)."""
    try:
        return drift.read_state(conn)
    except drift.NoBookkeeping:
        return drift.DbState({})


def _refusal(package: drift.Shipped, state: drift.DbState) -> str | None:
    comparison = drift.compare(package, state)
    if comparison.migrate_refuses:
        return comparison.message()
    for migration_id, recorded in sorted(state.migrations.items()):
        shipped = package.migrations.get(migration_id)
        if recorded is not None and shipped is not None and recorded != shipped:
            return (f"migration file {package.migration_path(migration_id)} has changed since it "
                    f"was applied (sha256 then {recorded[:12]}…, now {shipped[:12]}…): applied "
                    "migrations are immutable. Restore the file as it was and put the change in "
                    "a new migration")
    return None


def _create_roles(conn: psycopg.Connection[Any], roles: list[str]) -> list[str]:
    """The group roles that are missing (cluster-wide; this role has CREATEROLE)."""
    for name in roles:
        with conn.transaction():
            conn.execute(sql.SQL("create role {} nologin").format(sql.Identifier(name)))
            conn.execute(sql.SQL("comment on role {} is {}").format(
                sql.Identifier(name),
                sql.Literal(f"recording-finalize-retry: {ROLE_COMMENTS[name]}")))
    return roles


_BLOCK = re.compile(r"^-- table: (messenger\.[a-z_]+)\s*$", re.MULTILINE)


def service_table_blocks(text: str) -> dict[str, str]:
    """sql/service/schema.sql split into its "-- table: messenger.X" blocks, by table name."""
    marks = list(_BLOCK.finditer(text))
    return {m.group(1).split(".", 1)[1]: text[m.start():(marks[i + 1].start()
                                                         if i + 1 < len(marks) else len(text))]
            for i, m in enumerate(marks)}


def _create_service_tables(conn: psycopg.Connection[Any], package: drift.Shipped,
                           missing: list[str]) -> list[str]:
    """For a new database only: the reference DDL of each service table that is missing, in
    one transaction (an existing table is never touched)."""
    if not missing:
        return []
    blocks = service_table_blocks(
        (package.sql_dir / "service" / "schema.sql").read_text(encoding="utf-8"))
    with conn.transaction():
        bookkeeping.set_migrate_timeouts(conn, LOCK_TIMEOUT_MS, STATEMENT_TIMEOUT_MS)
        conn.execute(sql.SQL("create schema if not exists {}").format(
            sql.Identifier(contract.SCHEMA)))
        for name in missing:
            bookkeeping.apply_sql_file(conn, blocks[name])
    return missing


def _backend(settings: Settings) -> Any:
    """A yoyo backend over psycopg 3, every libpq parameter of ``DATABASE_URL`` passed through
    ``args`` (yoyo's URL parser would lose unix sockets, several hosts, sslmode); yoyo's tables
    in migrate's schema; our lock_timeout for a migration that sets none."""
    params = conninfo_to_dict(conninfo(settings))
    params["options"] = f"{params.get('options', '')} -c lock_timeout={LOCK_TIMEOUT_MS}".strip()
    database = params.pop("dbname", None)
    args = conninfo_to_dict(make_conninfo("", **params)) | {"schema": bookkeeping.SCHEMA}
    from yoyo.backends.core.postgresql import PostgresqlPsycopgBackend
    from yoyo.connections import DatabaseURI

    uri = DatabaseURI(scheme="postgresql+psycopg", username=None, password=None, hostname=None,
                      port=None, database=database, args=args)
    backend = PostgresqlPsycopgBackend(uri, MIGRATION_TABLE)
    backend.init_database()
    return backend


def _retrying(what: str, action: Callable[[], None], say: Callable[[str], None],
              retries: list[int]) -> None:
    """Runs ``action`` (one transaction) until its locks are granted, LOCK_TRIES at most."""
    for attempt in range(1, LOCK_TRIES + 1):
        try:
            action()
            return
        except _RETRYABLE as err:
            if attempt == LOCK_TRIES:
                raise MigrateLockBusy(
                    f"{what}: a lock was not granted within {LOCK_TIMEOUT_MS} ms in "
                    f"{LOCK_TRIES} tries ({type(err).__name__} {err.sqlstate}): an open "
                    "transaction holds a table it needs. Nothing of this file was applied; "
                    "find the blocker in pg_stat_activity and run migrate again") from err
            pause = BACKOFF_S[min(attempt, len(BACKOFF_S)) - 1]
            retries[0] += 1
            say(f"{what}: lock not granted within {LOCK_TIMEOUT_MS} ms (try {attempt} of "
                f"{LOCK_TRIES}); retrying in {pause} s")
            time.sleep(pause)


def _apply_migrations(settings: Settings, package: drift.Shipped,
                      say: Callable[[str], None], retries: list[int]) -> list[str]:
    from yoyo import read_migrations

    migrations = read_migrations(str(package.sql_dir / "migrations"))
    backend = _backend(settings)
    applied: list[str] = []
    try:
        with backend.lock(timeout=MIGRATE_LOCK_WAIT_S):
            for migration in migrations:
                if backend.is_applied(migration):
                    continue

                def one(m: Any = migration) -> None:
                    backend.apply_one(m)

                _retrying(f"migration {migration.id}", one, say, retries)
                applied.append(migration.id)
    finally:
        backend.connection.close()
    return applied


def _apply_adapter(conn: psycopg.Connection[Any], package: drift.Shipped,
                   state: adapter.State, sha: str, say: Callable[[str], None],
                   retries: list[int]) -> str:
    """The reference adapter where there is none, or where it is still what an earlier migrate
    installed and the file changed; a DBA's adapter is never touched (its ports were checked
    before anything was written)."""
    if state is adapter.State.DBAS:
        return "kept (a DBA's)"
    if state is adapter.State.REFERENCE and bookkeeping.recorded_adapter_sha(conn) == sha:
        return "unchanged"
    text = (package.sql_dir / adapter.REFERENCE_FILE).read_text(encoding="utf-8")
    _retrying(f"the adapter {adapter.REFERENCE_FILE}",
              partial(_apply_file, conn, text, adapter.SCHEMA), say, retries)
    return "installed" if state is adapter.State.ABSENT else "upgraded"


def _apply_functions(conn: psycopg.Connection[Any], package: drift.Shipped,
                     say: Callable[[str], None], retries: list[int]
                     ) -> tuple[list[str], list[str]]:
    state = _state(conn)
    live = bookkeeping.function_fingerprints(conn, list(package.functions))
    applied: list[str] = []
    unchanged: list[str] = []
    for file in function_order(list(package.functions)):
        record = state.functions.get(file)
        if (record is not None and record.sha256 == package.functions[file]
                and live.get(file) is not None and live.get(file) == record.recorded_md5):
            unchanged.append(file)
            continue
        text = package.function_path(file).read_text(encoding="utf-8")
        _retrying(f"function file {file}", partial(_apply_file, conn, text), say, retries)
        applied.append(file)
    return applied, unchanged


def migrate_command(args: argparse.Namespace, settings: Settings) -> int:
    from yoyo.exceptions import LockTimeout

    def say(message: str) -> None:
        logs.log("migrate waiting", level="warning", message=message)

    try:
        result = migrate(settings, create_service_tables=args.create_service_tables, say=say)
    except MissingSqlError as err:
        return fail(str(err), EXIT_USAGE)
    except MigrateRefused as err:
        return fail(f"migrate refused, nothing was written:\n{err}", EXIT_USAGE, redact=False)
    except AdapterFails as err:
        return fail("migrate applied the product's objects, but the worker would fail beneath "
                    f"the adapter (it refuses to start until these are fixed):\n{err}",
                    EXIT_USAGE, redact=False)
    except MigrateLockBusy as err:
        return fail(f"migrate stopped: {err}")
    except LockTimeout:
        return fail("another migrate holds the migration lock (yoyo_lock); try again")
    logs.log("migrated", applied=result.applied, functions=len(result.functions),
             unchanged=len(result.unchanged), createdRoles=result.created_roles,
             createdTables=result.created_tables, lockRetries=result.lock_retries,
             schemaVersion=result.schema_version)
    _print_result(result)
    return EXIT_OK


def _print_result(result: MigrateResult) -> None:
    if result.created_roles:
        print(f"group roles created: {', '.join(result.created_roles)}")
    if result.created_tables:
        print(f"service tables created (reference schema): {', '.join(result.created_tables)}")
    print(f"migrations applied: {len(result.applied)}"
          + (f" ({', '.join(result.applied)})" if result.applied else " (up to date)"))
    print(f"function files applied: {len(result.functions)}"
          + (f", unchanged: {len(result.unchanged)}" if result.unchanged else ""))
    print(f"adapter ({adapter.SCHEMA}): {result.adapter}")
    for warning in result.warnings:
        print(f"warning: {warning}")
    print(f"schema version: {result.schema_version} (recording-finalize {result.version})")


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--create-service-tables", action="store_true",
                     help="a new database (demo, tests, a greenfield messenger): first create "
                     "the service tables of the reference schema that are missing; a table that "
                     "exists is never altered")


COMMAND = Command(
    name="migrate",
    summary="check the contract with the service's tables, then create or update what the "
            "product owns",
    description=(
        "First checks, writing nothing: every service table, column and type the product reads\n"
        "or writes, the unique keys it relies on (integration_outbox (topic, dedupe_key),\n"
        "ix_recording_active), the privileges of the connecting role (its owner), the group\n"
        "roles and what an earlier migrate left; refuses with the full list of what is\n"
        "missing. Then creates or updates only what the product owns: the missing group roles\n"
        "(with CREATEROLE), the versioned migrations of sql/migrations (yoyo-migrations, in\n"
        "schema recording_finalize_migrations), and every sql/functions/*.sql whose file or\n"
        "definition changed (internal helpers first, then the API, each file in its own\n"
        "transaction). Never changes a table, comment, grant or trigger of the service. Every\n"
        "file runs with lock_timeout 1 s and statement_timeout 60 s and is retried 5 times with\n"
        "backoff when a lock is not granted. Idempotent: run it on every deploy, before the\n"
        "sidecars, as the product's owner role (see service-sql grants)."
    ),
    exits=(
        "exit 1: a migration or function file failed, or its locks were not granted in 5 tries\n"
        "        (the files before it stay applied; the message names the file).\n"
        "exit 2: refused, nothing written: the contract does not hold (each problem named\n"
        "        schema.table.column, or the privilege; the CREATE ROLE statements a DBA with\n"
        "        CREATEROLE runs), an applied migration's file has changed, or the database is\n"
        "        newer than this package."
    ),
    handler=migrate_command,
    variables=("DATABASE_URL", "RFR_SQL_DIR"),
    flags=("RFR_SQL_DIR",),
    add_arguments=_add_arguments,
    for_operators=False,
)
