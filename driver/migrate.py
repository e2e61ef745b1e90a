"""``recording-finalize migrate``: the versioned migrations, then every function file.

``sql/migrations`` are applied and tracked by yoyo-migrations (table ``_yoyo_migration``);
``sql/functions/*.sql`` are re-applied in name order, each file in its own transaction, on every
run (``CREATE OR REPLACE``). Both steps are idempotent, and both run under yoyo's lock so two
concurrent ``migrate`` runs do not interleave.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from yoyo import read_migrations
from yoyo.backends.core.postgresql import PostgresqlPsycopgBackend
from yoyo.connections import DatabaseURI

from .config import Settings
from .db import conninfo

MIGRATION_TABLE = "_yoyo_migration"
# Long enough for another migrate (a few seconds of DDL) to finish first.
LOCK_TIMEOUT_S = 60


@dataclass(frozen=True)
class MigrateResult:
    applied: list[str]
    functions: list[str]


class MissingSqlError(RuntimeError):
    """The SQL tree is not where the settings say."""


def _backend(settings: Settings) -> Any:
    """A yoyo backend over psycopg 3 built from the libpq parameters of ``DATABASE_URL``.

    Passing every parameter through ``args`` (not yoyo's URL parser) keeps libpq's own
    meaning of the URL: unix-socket hosts, several hosts, sslmode and the rest.
    """
    params = conninfo_to_dict(conninfo(settings))
    database = params.pop("dbname", None)
    uri = DatabaseURI(
        scheme="postgresql+psycopg", username=None, password=None, hostname=None, port=None,
        database=database, args=params,
    )
    backend = PostgresqlPsycopgBackend(uri, MIGRATION_TABLE)
    backend.init_database()
    return backend


def function_files(sql_dir: Path) -> list[Path]:
    return sorted((sql_dir / "functions").glob("*.sql"), key=lambda p: p.name)


def migrate(settings: Settings) -> MigrateResult:
    """Applies what is missing and re-applies the functions; returns what it did."""
    sql_dir = settings.sql_dir
    if not (sql_dir / "migrations").is_dir() or not (sql_dir / "functions").is_dir():
        raise MissingSqlError(f"no migrations/ and functions/ under {sql_dir} (set RFR_SQL_DIR)")
    migrations = read_migrations(str(sql_dir / "migrations"))
    backend = _backend(settings)
    try:
        with backend.lock(timeout=LOCK_TIMEOUT_S):
            pending = backend.to_apply(migrations)
            applied = [m.id for m in pending]
            backend.apply_migrations(pending)
            functions = _apply_functions(settings, function_files(sql_dir))
    finally:
        backend.connection.close()
    return MigrateResult(applied=applied, functions=functions)


def _apply_functions(settings: Settings, files: list[Path]) -> list[str]:
    done: list[str] = []
    with psycopg.connect(conninfo(settings)) as conn:
        for path in files:
            # One transaction per file: a broken file leaves the ones before it applied.
            with conn.transaction():
                # Without parameters psycopg uses the simple protocol, which takes a whole
                # file of statements at once.
                conn.execute(path.read_text(encoding="utf-8").encode())
            done.append(path.name)
    return done
