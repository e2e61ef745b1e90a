"""The SQL migrate sends for its own bookkeeping (schema ``recording_finalize_migrations``): its
lock, its schema, the checksums it keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

Connection = psycopg.Connection[Any]

SCHEMA = "recording_finalize_migrations"

CURRENT_ROLE = "select current_user::text"

# Held by migrate for its whole run (a session lock on its own connection; never waits).
TRY_MIGRATE_LOCK = "select pg_catalog.pg_try_advisory_lock(%s)"
MIGRATE_UNLOCK = "select pg_catalog.pg_advisory_unlock(%s)"

CREATE_MIGRATIONS_SCHEMA = "create schema if not exists recording_finalize_migrations"

COMMENT_MIGRATIONS_SCHEMA = """
comment on schema recording_finalize_migrations is
'Bookkeeping of recording-finalize migrate: yoyo-migrations'' tables and the checksums of the '
'applied files. Owner only; the worker reads it through recording_finalize.schema_state().'
"""

HAS_YOYO_TABLE = """
select pg_catalog.to_regclass('recording_finalize_migrations._yoyo_migration') is not null
"""

YOYO_APPLIED_IDS = "select migration_id from recording_finalize_migrations._yoyo_migration"

# A file is applied in its own transaction under these (set local: per transaction).
MIGRATE_TIMEOUTS = """
select pg_catalog.set_config('lock_timeout', %s, true),
    pg_catalog.set_config('statement_timeout', %s, true)
"""

HAS_FINGERPRINT = """
select pg_catalog.to_regprocedure('recording_finalize_internal.function_fingerprint(text)')
    is not null
"""

FUNCTION_FINGERPRINTS = """
select f, recording_finalize_internal.function_fingerprint(f)
from pg_catalog.unnest(%s::text[]) as f
"""

RECORD_MIGRATION = """
insert into recording_finalize_migrations.file_checksums (kind, file_name, sha256,
    package_version)
values ('migration', %s, %s, %s)
on conflict (kind, file_name) do nothing
"""

RECORD_FUNCTION = """
insert into recording_finalize_migrations.file_checksums (kind, file_name, sha256,
    definition_md5, package_version, recorded_at)
values ('function', %(file)s, %(sha256)s,
    recording_finalize_internal.function_fingerprint(%(file)s), %(version)s, now())
on conflict (kind, file_name) do update set
    sha256 = excluded.sha256, definition_md5 = excluded.definition_md5,
    package_version = excluded.package_version, recorded_at = excluded.recorded_at
where (file_checksums.sha256, file_checksums.definition_md5)
    is distinct from (excluded.sha256, excluded.definition_md5)
"""

FORGET_FUNCTIONS = """
delete from recording_finalize_migrations.file_checksums
where kind = 'function' and not file_name = any(%s::text[])
"""

RECORD_MIGRATE_STATE = """
insert into recording_finalize_migrations.migrate_state (singleton, schema_version,
    package_version, migrated_at)
values (true, %s, %s, now())
on conflict (singleton) do update set
    schema_version = excluded.schema_version, package_version = excluded.package_version,
    migrated_at = excluded.migrated_at
"""


RECORD_ADAPTER = """
update recording_finalize_migrations.migrate_state
set adapter_sha256 = %(sha256)s::text,
    adapter_md5 = case when %(sha256)s::text is not null
        then recording_finalize_internal.adapter_fingerprint() end
"""

RECORDED_ADAPTER_SHA = "select adapter_sha256 from recording_finalize_migrations.migrate_state"


def record_adapter(conn: Connection, sha256: str | None) -> None:
    """The reference adapter's file and fingerprint as migrate leaves it (NULL: a DBA's)."""
    conn.execute(RECORD_ADAPTER, {"sha256": sha256})


def recorded_adapter_sha(conn: Connection) -> str | None:
    row = conn.execute(RECORDED_ADAPTER_SHA).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def current_role(conn: Connection) -> str:
    row = conn.execute(CURRENT_ROLE).fetchone()
    return str(row[0]) if row else ""


def try_migrate_lock(conn: Connection, key: int) -> bool:
    row = conn.execute(TRY_MIGRATE_LOCK, (key,)).fetchone()
    return bool(row and row[0])


def migrate_unlock(conn: Connection, key: int) -> None:
    conn.execute(MIGRATE_UNLOCK, (key,))


def create_migrations_schema(conn: Connection) -> None:
    with conn.transaction():
        conn.execute(CREATE_MIGRATIONS_SCHEMA)
        conn.execute(COMMENT_MIGRATIONS_SCHEMA)


def yoyo_applied_ids(conn: Connection) -> list[str]:
    row = conn.execute(HAS_YOYO_TABLE).fetchone()
    if not (row and row[0]):
        return []
    return [str(r[0]) for r in conn.execute(YOYO_APPLIED_IDS)]


def set_migrate_timeouts(conn: Connection, lock_timeout_ms: int, statement_timeout_ms: int
                         ) -> None:
    """Inside a transaction: its lock and statement timeouts."""
    conn.execute(MIGRATE_TIMEOUTS, (f"{lock_timeout_ms}ms", f"{statement_timeout_ms}ms"))


def apply_sql_file(conn: Connection, text: str) -> None:
    """A whole file of statements. Without parameters psycopg uses the simple protocol, which
    takes several statements at once."""
    conn.execute(text.encode())


def function_fingerprints(conn: Connection, files: Sequence[str]) -> dict[str, str | None]:
    """The live fingerprint of each function file; empty before the helper exists."""
    row = conn.execute(HAS_FINGERPRINT).fetchone()
    if not (row and row[0]):
        return {}
    return {str(f): (str(md5) if md5 is not None else None)
            for f, md5 in conn.execute(FUNCTION_FINGERPRINTS, (list(files),))}


def record_migration(conn: Connection, migration_id: str, sha256: str, version: str) -> None:
    conn.execute(RECORD_MIGRATION, (migration_id, sha256, version))


def record_function(conn: Connection, file: str, sha256: str, version: str) -> None:
    conn.execute(RECORD_FUNCTION, {"file": file, "sha256": sha256, "version": version})


def forget_functions(conn: Connection, shipped: Sequence[str]) -> int:
    return conn.execute(FORGET_FUNCTIONS, (list(shipped),)).rowcount


def record_migrate_state(conn: Connection, schema_version: str, version: str) -> None:
    conn.execute(RECORD_MIGRATE_STATE, (schema_version, version))
