"""sql/schema.sql: the current shape of everything the product owns, in one file for a reviewer.

Migrates a throwaway database (a new one: ``migrate --create-service-tables``) with this tree's
SQL, dumps the product's objects with ``pg_dump --schema-only`` (schemas recording_finalize,
recording_finalize_internal and the bookkeeping of recording_finalize_migrations; the table
messenger.recording_finalize_attempts; yoyo-migrations' own tables left out) and normalizes the
output (no version banner, no SET lines, the owner's name as OWNER). The service's tables are
not in it: they are the service's.

    python tools/schema_snapshot.py --write     # regenerate sql/schema.sql (make schema)
    python tools/schema_snapshot.py --check     # exit 1 and a diff when it is out of date

Needs DATABASE_URL of a role that may create databases and roles (a local stack's superuser:
``source .stack/dev/env``) and pg_dump (RFR_STACK_PG_BIN or PostgreSQL 15's bin directory).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "sql" / "schema.sql"
OWNER = "rfr_snapshot_owner"
HEADER = """\
-- The current shape of everything recording-finalize-retry owns: GENERATED, do not edit.
-- `make schema` rewrites it from a fresh migrate (tools/schema_snapshot.py); `make test`
-- fails when it differs from what sql/migrations and sql/functions produce. The service's own
-- tables are not here (sql/service/schema.sql is their reference DDL).
"""


def _url(base: str, dbname: str, user: str | None = None, password: str | None = None) -> str:
    parts = urlsplit(base)
    netloc = parts.netloc
    if user is not None:
        netloc = f"{quote(user, safe='')}:{quote(password or '', safe='')}@" \
                 + netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, f"/{dbname}", parts.query, ""))


def _pg_dump() -> str:
    return str(Path(os.environ.get("RFR_STACK_PG_BIN") or "/usr/lib/postgresql/15/bin")
               / "pg_dump")


def normalize(dump: str, owner: str) -> str:
    """The parts of a dump that describe the shape, in a stable text."""
    lines = []
    for line in dump.splitlines():
        if line.startswith(("SET ", "SELECT pg_catalog.set_config(", "\\restrict",
                            "\\unrestrict")):
            continue
        if re.match(r"^-- Dumped (from|by) ", line):
            continue
        lines.append(line.replace(owner, "OWNER"))
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text + "\n"


def snapshot(admin_url: str) -> str:
    """Migrates a throwaway database and returns the normalized dump of the product's objects."""
    dbname = f"rfr_snapshot_{secrets.token_hex(4)}"
    password = secrets.token_hex(12)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_roles where rolname = %s", (OWNER,)).fetchone()
        verb = "alter" if exists else "create"
        conn.execute(f"{verb} role {OWNER} login createrole password '{password}'")
        conn.execute(f'create database "{dbname}" owner {OWNER}')
    try:
        env = dict(os.environ, DATABASE_URL=_url(admin_url, dbname, OWNER, password),
                   RFR_SQL_DIR=str(REPO / "sql"))
        cli = Path(sys.executable).parent / "recording-finalize"
        proc = subprocess.run([str(cli), "migrate", "--create-service-tables"], env=env,
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"migrate failed:\n{proc.stderr[-3000:]}")
        url = _url(admin_url, dbname)
        common = [_pg_dump(), "--schema-only", "--no-owner", "--no-tablespaces", "-d", url]
        schemas = subprocess.run(
            [*common, "-n", "recording_finalize", "-n", "recording_finalize_internal",
             "-n", "recording_finalize_migrations",
             "-T", "recording_finalize_migrations._yoyo*",
             "-T", "recording_finalize_migrations.yoyo_lock"],
            capture_output=True, text=True, check=True).stdout
        table = subprocess.run([*common, "-t", "messenger.recording_finalize_attempts"],
                               capture_output=True, text=True, check=True).stdout
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{dbname}" with (force)')
    return HEADER + "\n" + normalize(schemas, OWNER) + "\n" + normalize(table, OWNER)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite sql/schema.sql")
    mode.add_argument("--check", action="store_true", help="exit 1 when it is out of date")
    args = parser.parse_args(argv)
    admin_url = os.environ.get("DATABASE_URL")
    if not admin_url:
        parser.error("DATABASE_URL (a local stack's superuser) is unset: source .stack/dev/env")
    current = snapshot(admin_url)
    if args.write:
        SNAPSHOT.write_text(current, encoding="utf-8")
        print(f"wrote {SNAPSHOT.relative_to(REPO)} ({len(current.splitlines())} lines)")
        return 0
    committed = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    if committed == current:
        print(f"{SNAPSHOT.relative_to(REPO)} matches a fresh migrate")
        return 0
    sys.stdout.writelines(difflib.unified_diff(
        committed.splitlines(keepends=True), current.splitlines(keepends=True),
        "sql/schema.sql (committed)", "fresh migrate"))
    print("\nsql/schema.sql is out of date: run `make schema` and commit it", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
