"""``recording-finalize migrate``: check the contract, then create or update what the product owns.

The product is a visitor in the service's database: first every check, writing nothing (any
problem: a refusal with the whole list), then only what the product owns.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from .. import adapter, cliutil, contract, db, drift, logs
from ..config import Settings
from ..db import conninfo
from ..drift import query
from .service_sql import sql_ident

MIGRATIONS_SCHEMA = "recording_finalize_migrations"
#: Whose login DATABASE_URL is for migrate (and uninstall, service-sql).
OWNER_LOGIN = ("the database, as the product's owner (the role that owns the product's schemas "
               "and that the service's owner granted service-sql grants to); its password is "
               "never printed")
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
#: The internal helpers are applied before the API: a SQL-language API function is checked
#: against what it calls when it is created.
INTERNAL_PREFIX = "recording_finalize_internal."


@dataclass
class MigrateResult:
    schema_version: str
    version: str
    applied: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    created_roles: list[str] = field(default_factory=list)
    created_tables: list[str] = field(default_factory=list)
    lock_retries: int = 0
    adapter: str = "none (not shipped)"
    #: Warnings of check_adapter (e.g. a discovery scan without an index).
    warnings: list[str] = field(default_factory=list)
    #: What check_adapter did not prove (e.g. no active recording to rehearse on).
    notices: list[str] = field(default_factory=list)
    #: What changed for the service with this upgrade (from a release that relayed its rows).
    upgrade_notes: list[str] = field(default_factory=list)


class MigrateStopped(RuntimeError):
    """The message says what was written (nothing, when refused) and what to do; ``code`` is the
    exit code, ``redact`` False for a message made of catalog names only."""

    def __init__(self, message: str, code: int = cliutil.EXIT_FAILURE, redact: bool = True
                 ) -> None:
        super().__init__(message)
        self.code, self.redact = code, redact


def migrate(settings: Settings, *, create_service_tables: bool = False) -> MigrateResult:
    sql_dir = settings.sql_dir
    package = drift.shipped(sql_dir)
    result = MigrateResult(package.schema_version, package.version)
    # A SQL tree of a release before the adapter (RFR_SQL_DIR) has none to install.
    adapter_file = sql_dir / adapter.REFERENCE_FILE
    adapter_text = adapter_file.read_text(encoding="utf-8") if adapter_file.is_file() else None
    adapter_sha = drift.sha256_file(adapter_file) if adapter_text is not None else None
    with _connect(settings) as conn:
        _lock(conn)
        try:
            adapter_state = adapter.state(conn)
            problems = _check(conn, package, create_service_tables)
            before = drift.read_state(conn)
            # From here on migrate writes; every check above passed. Each object is looked for
            # first and created only when missing: a redeploy after the install's CREATE was
            # taken back creates nothing and needs no CREATE.
            result.created_roles = problems.roles_to_create
            _create_roles(conn, result.created_roles)
            result.created_tables = problems.tables_to_create
            _create_service_tables(conn, package, result.created_tables)
            if not _schema_exists(conn, MIGRATIONS_SCHEMA):
                conn.execute(query("create_migrations_schema"))
            _apply_migrations(settings, package, result)
            conn.execute(query("record_migrations"), (
                package.version, list(package.migrations), list(package.migrations.values())))
            for name, earlier in drift.AMENDED_MIGRATIONS.items():
                if name in package.migrations:
                    conn.execute(query("record_amended_migration"), (
                        package.migrations[name], package.version, name, list(earlier)))
            # After the migrations: one may have dropped a function.
            state = drift.read_state(conn) or drift.DbState({})
            if adapter_text is not None:
                result.adapter = _apply_adapter(
                    conn, adapter_text, adapter_state,
                    adapter.same_reference(state.adapter_sha256, adapter_sha, adapter_text),
                    result)
            _apply_functions(conn, package, state, result)
            _record(conn, package, adapter_state, adapter_sha)
            findings = adapter.beneath(conn, rehearse=True) if adapter_sha else {}
            if _relayed_the_services_rows(before, result.applied):
                result.upgrade_notes = _relay_change(conn)
        except pg_errors.InsufficientPrivilege as err:
            raise _privilege_stopped(conn, err) from err
        finally:
            if not conn.closed and not conn.broken:
                conn.execute(query("migrate_unlock"), (MIGRATE_LOCK_KEY,))
    if errors := findings.get("error"):
        raise MigrateStopped("migrate applied the product's objects, but the worker would fail "
                             "beneath the adapter (it refuses to start until these are fixed):\n"
                             + "\n".join(f"  - {line}" for line in errors),
                             cliutil.EXIT_USAGE, False)
    result.warnings = findings.get("warning", [])
    result.notices = findings.get("notice", [])
    return result


def _connect(settings: Settings) -> psycopg.Connection[Any]:
    """migrate's connection; a login the server refuses (no CONNECT, a wrong password) is a
    refusal that names the fix, not a database error."""
    try:
        return psycopg.connect(conninfo(settings), autocommit=True)
    except psycopg.OperationalError as err:
        meaning = db.refusal(err)
        if meaning is None:
            raise
        params = conninfo_to_dict(conninfo(settings))
        role, database = params.get("user") or "<the role>", params.get("dbname") or "<db>"
        fix = ""
        if "permission denied for database" in str(err):
            fix = (f"; the database's owner runs: grant connect on database "
                   f"{sql_ident(str(database))} to {sql_ident(str(role))};")
        raise MigrateStopped(f"migrate refused, nothing was written: the database refused the "
                             f"connection: {meaning}{fix} (the server said: "
                             f"{db.server_message(err)})", cliutil.EXIT_USAGE) from err


def _schema_exists(conn: psycopg.Connection[Any], name: str) -> bool:
    row = conn.execute(query("schema_exists"), (name,)).fetchone()
    return bool(row and row[0])


def _privilege_stopped(conn: psycopg.Connection[Any], err: pg_errors.InsufficientPrivilege
                       ) -> MigrateStopped:
    """A privilege the checks before writing did not foresee (they name every one they know):
    a refusal with the server's words, not a raw database error."""
    role = "the product's owner"
    with contextlib.suppress(psycopg.Error):
        row = conn.execute(query("current_role_and_database")).fetchone()
        role = str(row[0]) if row else role
    return MigrateStopped(
        f"migrate stopped: role {role} lacks a privilege: {db.server_message(err)}"
        + (f" ({err.diag.context.splitlines()[0]})" if err.diag.context else "")
        + ". The files applied before this one stay applied (each in its own transaction); "
        "grant the privilege named (the install's grants: `recording-finalize service-sql "
        "grants --to ROLE`) and run migrate again", cliutil.EXIT_USAGE)


#: The applied history of the releases whose relay published every unpublished row of the topic
#: in the service's shared outbox, the service's own included (0.2.x).
SERVICE_RELAYING_HISTORY = frozenset({"0001_baseline"})


def _relayed_the_services_rows(before: drift.DbState | None, applied: list[str]) -> bool:
    return before is not None and set(before.migrations) == SERVICE_RELAYING_HISTORY \
        and bool(applied)


def _relay_change(conn: psycopg.Connection[Any]) -> list[str]:
    """What an upgrade from 0.2.x changes for the service, with the number of its events that
    wait for a relay (through the adapter; said so when the port cannot be read)."""
    try:
        with conn.transaction():
            row = conn.execute(query("service_events_unpublished")).fetchone()
        count = f"{int(row[0]) if row else 0} of the service's events are unpublished now"
    except psycopg.Error as err:
        count = (f"the number of the service's unpublished events could not be read through "
                 f"{adapter.SCHEMA}.service_events ({db.server_message(err)})")
    return [
        "this database was migrated by recording-finalize 0.2.x, whose relay published every "
        "unpublished row of the topic in the service's shared outbox, the service's own "
        "included. From 0.3.0 the product relays only its own outbox "
        "(recording_finalize.outbox) and never publishes, marks or deletes a row of the "
        "service's",
        f"{count} ({adapter.SCHEMA}.service_events, published_at is null): they are the "
        "service's relay's to publish. Run the service's own outbox relay (for the topic of "
        "recording_finalize.settings) before this release's sidecars replace the old ones, or "
        "these events, and every later one of the service's, stay unpublished",
    ]


def _check(conn: psycopg.Connection[Any], package: drift.Shipped, create_service_tables: bool
           ) -> contract.Problems:
    """The contract and what an earlier migrate left: MigrateStopped with every problem."""
    role_row = conn.execute(query("current_role_and_database")).fetchone()
    problems = contract.check(conn, role_row[0] if role_row else "", installing=True,
                              create_service_tables=create_service_tables)
    state = drift.read_state(conn) or drift.DbState({})
    # An applied migration whose file has changed since (a missing one is compare's).
    changed = [(name, then, package.migrations[name])
               for name, then in sorted(state.migrations.items())
               if then is not None
               and not drift.same_migration(name, then, package.migrations.get(name, then))]
    if (comparison := drift.compare(package, state)).migrate_refuses:
        problems.items.append(comparison.message())
    elif changed:
        name, then, now = changed[0]
        problems.items.append(
            f"migration file {package.sql_dir / 'migrations' / name}.sql has changed since it was "
            f"applied (sha256 then {then[:12]}…, now {now[:12]}…): applied migrations are "
            "immutable. Restore the file as it was and put the change in a new migration")
    if problems:
        raise MigrateStopped("migrate refused, nothing was written:\n" + problems.message(),
                             cliutil.EXIT_USAGE, False)
    return problems


def _record(conn: psycopg.Connection[Any], package: drift.Shipped, adapter_state: adapter.State,
            adapter_sha: str | None) -> None:
    """The bookkeeping the drift check reads."""
    with conn.transaction():
        for file, sha in package.functions.items():
            conn.execute(query("record_function"),
                         {"file": file, "sha256": sha, "version": package.version})
        conn.execute(query("forget_functions"), (list(package.functions),))
        conn.execute(query("record_migrate_state"), (package.schema_version, package.version))
        if adapter_sha is not None:
            conn.execute(query("record_adapter"), {
                "sha256": None if adapter_state is adapter.State.DBAS else adapter_sha})


def _apply_file(conn: psycopg.Connection[Any], text: str, schema: str | None = None) -> None:
    """One file in its own transaction, under migrate's timeouts (a broken file leaves the ones
    before it applied); ``schema`` is created first if missing."""
    with conn.transaction():
        conn.execute(query("migrate_timeouts"),
                     (f"{LOCK_TIMEOUT_MS}ms", f"{STATEMENT_TIMEOUT_MS}ms"))
        if schema is not None and not _schema_exists(conn, schema):
            conn.execute(sql.SQL("create schema {}").format(sql.Identifier(schema)))
        # Without parameters psycopg uses the simple protocol, which takes many statements.
        conn.execute(text.encode())


def _lock(conn: psycopg.Connection[Any]) -> None:
    deadline = time.monotonic() + MIGRATE_LOCK_WAIT_S
    while conn.execute(query("try_migrate_lock"), (MIGRATE_LOCK_KEY,)).fetchone() != (True,):
        if time.monotonic() > deadline:
            raise MigrateStopped(f"migrate stopped: another migrate has held the migrate lock "
                                 f"for {MIGRATE_LOCK_WAIT_S:.0f} s; try again")
        time.sleep(0.5)


def _create_roles(conn: psycopg.Connection[Any], roles: list[str]) -> None:
    for name in roles:
        with conn.transaction():
            conn.execute(sql.SQL("create role {} nologin").format(sql.Identifier(name)))
            conn.execute(sql.SQL("comment on role {} is {}").format(
                sql.Identifier(name),
                sql.Literal(f"recording-finalize-retry: {contract.GROUP_ROLES[name]}")))


def _create_service_tables(conn: psycopg.Connection[Any], package: drift.Shipped,
                           missing: list[str]) -> None:
    """For a new database only: the "-- table: messenger.X" block of sql/service/schema.sql of
    each service table that is missing (an existing table is never touched)."""
    if missing:
        text = (package.sql_dir / "service" / "schema.sql").read_text(encoding="utf-8")
        blocks = {m[1]: m[0] for m in re.finditer(
            r"^-- table: messenger\.([a-z_]+)\s*$.*?(?=^-- table: |\Z)", text, re.M | re.S)}
        _apply_file(conn, "".join(blocks[name] for name in missing), contract.SCHEMA)


def _retrying(what: str, action: Callable[[], None], result: MigrateResult) -> None:
    """Runs ``action`` (one transaction) until its locks are granted, LOCK_TRIES at most."""
    for attempt in range(1, LOCK_TRIES + 1):
        try:
            action()
            return
        except (pg_errors.LockNotAvailable, pg_errors.DeadlockDetected) as err:
            if attempt == LOCK_TRIES:
                raise MigrateStopped(
                    f"migrate stopped: {what}: a lock was not granted within {LOCK_TIMEOUT_MS} "
                    f"ms in {LOCK_TRIES} tries ({type(err).__name__} {err.sqlstate}): an open "
                    "transaction holds a table it needs. Nothing of this file was applied; "
                    "find the blocker in pg_stat_activity and run migrate again") from err
            pause = BACKOFF_S[min(attempt, len(BACKOFF_S)) - 1]
            result.lock_retries += 1
            logs.log("migrate waiting", level="warning",
                     message=f"{what}: lock not granted within {LOCK_TIMEOUT_MS} ms (try "
                             f"{attempt} of {LOCK_TRIES}); retrying in {pause} s")
            time.sleep(pause)


def _apply_migrations(settings: Settings, package: drift.Shipped, result: MigrateResult) -> None:
    """Each migration yoyo has not applied, not under yoyo's lock: migrate's advisory lock keeps
    other migrates out already (and a killed migrate's yoyo_lock row would refuse the next).
    yoyo's backend gets every libpq parameter of ``DATABASE_URL`` through ``args`` (its URL
    parser would lose unix sockets, several hosts, sslmode), its tables in migrate's schema, and
    our lock_timeout for a migration that sets none."""
    from yoyo import read_migrations
    from yoyo.backends.core.postgresql import PostgresqlPsycopgBackend
    from yoyo.connections import DatabaseURI

    params = conninfo_to_dict(conninfo(settings))
    params["options"] = f"{params.get('options', '')} -c lock_timeout={LOCK_TIMEOUT_MS}".strip()
    database = params.pop("dbname", None)
    backend = PostgresqlPsycopgBackend(DatabaseURI(
        scheme="postgresql+psycopg", username=None, password=None, hostname=None, port=None,
        database=database, args=params | {"schema": MIGRATIONS_SCHEMA}), MIGRATION_TABLE)
    backend.init_database()
    try:
        for migration in read_migrations(str(package.sql_dir / "migrations")):
            if not backend.is_applied(migration):
                _retrying(f"migration {migration.id}",
                          partial(backend.apply_one, migration), result)
                result.applied.append(migration.id)
    finally:
        backend.connection.close()


def _apply_adapter(conn: psycopg.Connection[Any], text: str, state: adapter.State,
                   recorded: bool, result: MigrateResult) -> str:
    """The reference adapter where there is none, or where it is still what an earlier migrate
    installed (``recorded``: from this file's statements, then it stays); a DBA's adapter is
    never touched (its ports were checked before anything was written)."""
    if state is adapter.State.DBAS:
        return "kept (a DBA's)"
    if state is adapter.State.REFERENCE and recorded:
        return "unchanged"
    _retrying(f"the adapter {adapter.REFERENCE_FILE}",
              partial(_apply_file, conn, text, adapter.SCHEMA), result)
    return "installed" if state is adapter.State.ABSENT else "upgraded"


def _apply_functions(conn: psycopg.Connection[Any], package: drift.Shipped,
                     state: drift.DbState, result: MigrateResult) -> None:
    """Each function file whose file or live definition differs from what migrate recorded;
    internal helpers first, each group by name."""
    for file in sorted(package.functions, key=lambda f: (not f.startswith(INTERNAL_PREFIX), f)):
        if drift.function_difference(file, package.functions[file],
                                     state.functions.get(file)) is None:
            result.unchanged.append(file)
            continue
        text = (package.sql_dir / "functions" / file).read_text(encoding="utf-8")
        _retrying(f"function file {file}", partial(_apply_file, conn, text), result)
        result.functions.append(file)


def migrate_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        result = migrate(settings, create_service_tables=args.create_service_tables)
    except MigrateStopped as err:
        return cliutil.fail(str(err), err.code, err.redact)
    logs.log("migrated", applied=result.applied, functions=len(result.functions),
             unchanged=len(result.unchanged), createdRoles=result.created_roles,
             createdTables=result.created_tables, lockRetries=result.lock_retries,
             schemaVersion=result.schema_version)
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
    for notice in result.notices:
        print(f"not proved: {notice}")
    if any("rehears" in notice for notice in result.notices):
        print("not proved: the worker rehearses these writes at its first start, before it "
              "touches any row, and refuses to start if one fails")
    for note in result.upgrade_notes:
        print(f"upgrade: {note}")
    print(f"schema version: {result.schema_version} (recording-finalize {result.version})")
    return cliutil.EXIT_OK


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--create-service-tables", action="store_true",
                     help="a new database (demo, tests, a greenfield messenger): first create "
                     "the service tables of the reference schema that are missing; a table that "
                     "exists is never altered")


COMMAND = cliutil.Command(
    name="migrate",
    summary="check the contract with the service's tables, then create or update what the "
            "product owns",
    description=(
        "First checks, writing nothing: every service table, column and type the product reads\n"
        "or writes (with a DBA's adapter: its ports), the unique key it relies on\n"
        "(ix_recording_active), the privileges of the connecting role (the product's owner),\n"
        "the group roles and what an earlier migrate left; refuses with the full list of what\n"
        "is missing, each with the statement that grants it. Then creates or updates only what\n"
        "the product owns, each object looked for first and created only when missing (a\n"
        "redeploy after the install's CREATE was taken back needs none): the missing group\n"
        "roles (with CREATEROLE), the versioned migrations of sql/migrations (yoyo-migrations,\n"
        "in schema recording_finalize_migrations), and every sql/functions/*.sql whose file or\n"
        "definition changed (internal helpers first, then the API, each file in its own\n"
        "transaction). Never changes a table, comment, grant or trigger of the service. Every\n"
        "file runs with lock_timeout 1 s and statement_timeout 60 s and is retried 5 times with\n"
        "backoff when a lock is not granted. Last it checks beneath the adapter and prints its\n"
        "warnings and what it did not prove. Idempotent: run it on every deploy, before the\n"
        "sidecars, as the product's owner role (see service-sql grants)."
    ),
    exits=(
        "exit 1: a migration or function file failed, or its locks were not granted in 5 tries\n"
        "        (the files before it stay applied; the message names the file).\n"
        "exit 2: refused, nothing written: the contract does not hold, or the role lacks a\n"
        "        privilege (each problem named schema.table.column, or the privilege and the\n"
        "        statement that grants it; the CREATE ROLE statements a DBA with CREATEROLE\n"
        "        runs), an applied migration's file has changed, or the database is newer than\n"
        "        this package; or the check beneath the adapter failed after migrate applied\n"
        "        (named), or a privilege failed a statement (the files before it stay applied)."
    ),
    handler=migrate_command,
    variables=("DATABASE_URL", "RFR_SQL_DIR"),
    variable_help={"DATABASE_URL": OWNER_LOGIN},
    flags=("RFR_SQL_DIR",),
    add_arguments=_add_arguments,
    for_operators=False,
)
