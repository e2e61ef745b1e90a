"""``recording-finalize migrate``: the versioned migrations, then the function files that changed.

- ``sql/migrations`` are applied and tracked by yoyo-migrations, whose tables live in schema
  ``recording_finalize_migrations`` (a deployment that has them in ``public`` gets them moved
  there first).
- ``sql/functions/*.sql`` are applied in name order, each file in its own transaction, when the
  file or the definitions it created changed since migrate last applied it; the others are
  skipped, so a migrate with nothing to do takes no lock at all.
- Every file is applied with a short ``lock_timeout`` and a ``statement_timeout``, and retried
  with backoff when the lock is not granted: a lock request queued behind an open transaction
  blocks every later writer of that table, so migrate never stays in the queue for longer
  than ``LOCK_TIMEOUT_MS``, and gives up (exit 1, naming the file) after ``LOCK_TRIES``.
- It refuses (exit 2) before changing anything when an applied migration's file has changed
  since (yoyo tracks ids only: migrate records each file's sha256), and when the database is
  newer than the package (migrations it does not ship, or last migrated by a newer version):
  an older package never rolls a newer schema's functions back.
- It records what it applied (``recording_finalize_migrations.file_checksums``, migration 0006)
  for the schema drift check of ``run`` (``driver/drift.py``).

One migrate at a time: a session advisory lock on migrate's own connection. yoyo is imported
only when migrate runs (``cli.py`` imports this module to build its parser).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from .. import drift, logs
from ..cliutil import EXIT_OK, EXIT_USAGE, Command, fail
from ..config import Settings
from ..db import conninfo
from ..queries import Connection
from . import queries

MIGRATION_TABLE = "_yoyo_migration"
YOYO_TABLES = (MIGRATION_TABLE, "_yoyo_log", "_yoyo_version", "yoyo_lock")
# Long enough for another migrate (a few seconds of DDL) to finish first.
MIGRATE_LOCK_WAIT_S = 60.0
MIGRATE_LOCK_KEY = 5928001741300502
# A lock request waits at most this long in the queue (and every writer queued behind it).
LOCK_TIMEOUT_MS = 1000
STATEMENT_TIMEOUT_MS = 60_000
# Tries of one file whose lock is not granted, and the pauses between them (out of the queue).
LOCK_TRIES = 5
BACKOFF_S = (0.25, 0.5, 1.0, 2.0)
_RETRYABLE = (pg_errors.LockNotAvailable, pg_errors.DeadlockDetected)


@dataclass(frozen=True)
class MigrateResult:
    applied: list[str]
    functions: list[str]
    unchanged: list[str] = field(default_factory=list)
    moved_tables: list[str] = field(default_factory=list)
    lock_retries: int = 0
    schema_version: str = ""
    version: str = ""


class MissingSqlError(RuntimeError):
    """The SQL tree is not where the settings say."""


class MigrateRefused(RuntimeError):
    """Nothing was changed: the database is newer, or an applied migration file changed."""


class MigrateLockBusy(RuntimeError):
    """A file's lock was not granted in ``LOCK_TRIES`` tries (an open transaction holds it),
    or another migrate holds migrate's lock."""


def _backend(settings: Settings) -> Any:
    """A yoyo backend over psycopg 3 built from the libpq parameters of ``DATABASE_URL``.

    Passing every parameter through ``args`` (not yoyo's URL parser) keeps libpq's own
    meaning of the URL: unix-socket hosts, several hosts, sslmode and the rest. ``schema`` puts
    yoyo's tables in migrate's schema; a migration that sets no lock_timeout gets ours.
    """
    from yoyo.backends.core.postgresql import PostgresqlPsycopgBackend
    from yoyo.connections import DatabaseURI

    params = conninfo_to_dict(conninfo(settings))
    params["options"] = f"{params.get('options', '')} -c lock_timeout={LOCK_TIMEOUT_MS}".strip()
    database = params.pop("dbname", None)
    args = conninfo_to_dict(make_conninfo("", **params)) | {"schema": queries.MIGRATIONS_SCHEMA}
    uri = DatabaseURI(
        scheme="postgresql+psycopg", username=None, password=None, hostname=None, port=None,
        database=database, args=args,
    )
    backend = PostgresqlPsycopgBackend(uri, MIGRATION_TABLE)
    backend.init_database()
    return backend


def migrate(settings: Settings, say: Callable[[str], None] = lambda _: None) -> MigrateResult:
    """Applies what is missing or changed; returns what it did. ``say`` hears the retries."""
    sql_dir = settings.sql_dir
    if not (sql_dir / "migrations").is_dir() or not (sql_dir / "functions").is_dir():
        raise MissingSqlError(f"no migrations/ and functions/ under {sql_dir} (set RFR_SQL_DIR)")
    package = drift.shipped(sql_dir)
    with psycopg.connect(conninfo(settings), autocommit=True) as conn:
        _lock(conn)
        try:
            moved = queries.move_yoyo_tables_from_public(conn, YOYO_TABLES)
            _refuse(package, _state(conn))
            retries = [0]
            applied = _apply_migrations(settings, package, say, retries)
            for migration_id in queries.yoyo_applied_ids(conn):
                if migration_id in package.migrations:
                    # First sight of a migration applied before migrate kept checksums: trusted.
                    queries.record_migration(conn, migration_id,
                                             package.migrations[migration_id], package.version)
            functions, unchanged = _apply_functions(conn, package, say, retries)
            with conn.transaction():
                for file, sha in package.functions.items():
                    queries.record_function(conn, file, sha, package.version)
                queries.forget_functions(conn, list(package.functions))
                queries.record_migrate_state(conn, package.schema_version, package.version)
        finally:
            queries.migrate_unlock(conn, MIGRATE_LOCK_KEY)
    return MigrateResult(applied, functions, unchanged, moved, retries[0],
                         package.schema_version, package.version)


def _lock(conn: Connection) -> None:
    deadline = time.monotonic() + MIGRATE_LOCK_WAIT_S
    while not queries.try_migrate_lock(conn, MIGRATE_LOCK_KEY):
        if time.monotonic() > deadline:
            raise MigrateLockBusy(f"another migrate has held the migrate lock for "
                                  f"{MIGRATE_LOCK_WAIT_S:.0f} s; try again")
        time.sleep(0.5)


def _state(conn: Connection) -> drift.DbState:
    """What migrate recorded before (nothing for a database older than migration 0006)."""
    try:
        return drift.read_state(conn)
    except drift.NoBookkeeping:
        have = queries.bookkeeping(conn)
        applied = queries.yoyo_applied_ids(conn) if have.yoyo_table else []
        return drift.DbState(dict.fromkeys(applied))


def _refuse(package: drift.Shipped, state: drift.DbState) -> None:
    schema_drift = drift.compare(package, state)
    if schema_drift.database_is_newer:
        raise MigrateRefused(schema_drift.message())
    for migration_id, recorded in sorted(state.migrations.items()):
        shipped = package.migrations.get(migration_id)
        if recorded is not None and shipped is not None and recorded != shipped:
            raise MigrateRefused(
                f"migration file {package.migration_path(migration_id)} has changed since it "
                f"was applied (sha256 then {recorded[:12]}…, now {shipped[:12]}…): applied "
                "migrations are immutable. Restore the file as it was and put the change in a "
                "new migration")


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


def _apply_functions(conn: Connection, package: drift.Shipped,
                     say: Callable[[str], None], retries: list[int]
                     ) -> tuple[list[str], list[str]]:
    state = _state(conn)
    have = queries.bookkeeping(conn)
    live = (queries.function_fingerprints(conn, list(package.functions))
            if have.fingerprint_function else {})
    applied: list[str] = []
    unchanged: list[str] = []
    for file, sha in package.functions.items():
        record = state.functions.get(file)
        if (record is not None and record.sha256 == sha and live.get(file) is not None
            and live.get(file) == record.recorded_md5):
            unchanged.append(file)
            continue
        text = package.function_path(file).read_text(encoding="utf-8")

        def one(text: str = text) -> None:
            # One transaction per file: a broken file leaves the ones before it applied.
            with conn.transaction():
                queries.set_migrate_timeouts(conn, LOCK_TIMEOUT_MS, STATEMENT_TIMEOUT_MS)
                queries.apply_sql_file(conn, text)

        _retrying(f"function file {file}", one, say, retries)
        applied.append(file)
    return applied, unchanged


def migrate_command(args: argparse.Namespace, settings: Settings) -> int:
    from yoyo.exceptions import LockTimeout

    def say(message: str) -> None:
        logs.log("migrate waiting", level="warning", message=message)

    try:
        result = migrate(settings, say=say)
    except MissingSqlError as err:
        return fail(str(err), EXIT_USAGE)
    except MigrateRefused as err:
        return fail(f"migrate refused, nothing was changed: {err}", EXIT_USAGE)
    except MigrateLockBusy as err:
        return fail(f"migrate stopped: {err}")
    except LockTimeout:
        return fail("another migrate holds the migration lock (yoyo_lock); try again")
    logs.log("migrated", applied=result.applied, functions=len(result.functions),
             unchanged=len(result.unchanged), movedTables=result.moved_tables,
             lockRetries=result.lock_retries, schemaVersion=result.schema_version)
    if result.moved_tables:
        print(f"moved yoyo's tables from public to recording_finalize_migrations: "
              f"{', '.join(result.moved_tables)}")
    print(f"migrations applied: {len(result.applied)}"
          + (f" ({', '.join(result.applied)})" if result.applied else " (up to date)"))
    print(f"function files applied: {len(result.functions)}"
          + (f", unchanged: {len(result.unchanged)}" if result.unchanged else ""))
    print(f"schema version: {result.schema_version} (recording-finalize {result.version})")
    return EXIT_OK


COMMAND = Command(
    name="migrate",
    summary="create or upgrade the database schema and apply the SQL functions that changed",
    description=(
        "Applies the versioned migrations of sql/migrations (tracked by yoyo-migrations in\n"
        "schema recording_finalize_migrations; tables an older version left in public are\n"
        "moved there), then applies every sql/functions/*.sql whose file or definition changed\n"
        "since it was last applied, in name order, each in its own transaction. Every file runs\n"
        "with lock_timeout 1 s and statement_timeout 60 s and is retried 5 times with backoff\n"
        "when a lock is not granted, so writers queued behind migrate wait about a second at\n"
        "most. Records each file's sha256 for the schema drift check of run/run-once/status.\n"
        "Idempotent: run it on every deploy, before the sidecars. Connect as the schema owner."
    ),
    exits=(
        "exit 1: a migration or function file failed, or its locks were not granted in 5 tries\n"
        "        (the files before it stay applied; the message names the file).\n"
        "exit 2: refused, nothing changed: an applied migration's file has changed since it was\n"
        "        applied, or the database is newer than this package (migrations it does not\n"
        "        ship, or last migrated by a newer version)."
    ),
    handler=migrate_command,
    variables=("DATABASE_URL", "RFR_SQL_DIR"),
    flags=("RFR_SQL_DIR",),
    for_operators=False,
)
