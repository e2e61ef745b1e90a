"""Re-applying sql/functions (every ``migrate``) takes no lock on the messenger tables.

Why: the terminal-guard file used to re-create its trigger, which takes a
SHARE ROW EXCLUSIVE lock on call_recordings; one open writer transaction made ``migrate`` wait,
and every service write queued behind it. The trigger is created once, by migration 0005.
"""

from __future__ import annotations

import psycopg
import pytest
from conftest import REPO, Db

FUNCTION_FILES = sorted((REPO / "sql" / "functions").glob("*.sql"), key=lambda p: p.name)


def test_function_files_lock_no_messenger_table(db: Db) -> None:
    """All files in one transaction: afterwards this backend holds no lock on a messenger table
    stronger than ACCESS SHARE (which validating a body that names a table takes, and which
    conflicts with ACCESS EXCLUSIVE only: no writer waits for it)."""
    assert len(FUNCTION_FILES) >= 19
    with psycopg.connect(db.owner_url) as conn:
        for path in FUNCTION_FILES:
            conn.execute(path.read_text(encoding="utf-8").encode())
        held = conn.execute(
            """
            select c.relname, l.mode
            from pg_catalog.pg_locks as l
            join pg_catalog.pg_class as c on c.oid = l.relation
            join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
            where l.pid = pg_catalog.pg_backend_pid() and n.nspname = 'messenger'
                and l.mode <> 'AccessShareLock'
            order by 1, 2
            """
        ).fetchall()
        conn.rollback()
    assert held == [], f"re-applying the function files locked messenger tables: {held}"


def test_function_files_apply_beside_an_open_writer(db: Db) -> None:
    """An open writer transaction on call_recordings does not make any file wait."""
    with db.connect() as writer, psycopg.connect(db.owner_url, autocommit=True) as migrating:
        writer.execute("begin")
        writer.execute("lock table messenger.call_recordings in row exclusive mode")
        migrating.execute("set lock_timeout = '1s'")
        try:
            for path in FUNCTION_FILES:
                with migrating.transaction():
                    migrating.execute(path.read_text(encoding="utf-8").encode())
        except psycopg.errors.LockNotAvailable as err:
            pytest.fail(f"{path.name} waited for the open writer: {err}")
        finally:
            writer.execute("rollback")
