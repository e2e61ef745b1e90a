"""sql/schema.sql: the shape of everything the product owns, short enough to read in one sitting.

Migrates a throwaway database (a new one: ``migrate --create-service-tables``) with this tree's
SQL and dumps what the product owns (``pg_dump --schema-only`` of the schemas in
``contract.PRODUCT_SCHEMAS`` and of the product's table in the service's schema; yoyo-migrations'
own tables left out). From that dump it keeps the shape: schemas, types, tables with their
constraints, indexes, triggers and policies, views, and grants, each table's parts right under
it. Function bodies and comments are left out (they are in sql/functions/ and the migrations);
each function is one line: its signature and the roles that may execute it. An object kind the
dump has and this file does not know is kept as the dump writes it, so a later migration's new
kind of object shows up rather than vanishing.

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
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from recording_finalize import contract

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "sql" / "schema.sql"
OWNER = "rfr_snapshot_owner"
WIDTH = 100
HEADER = """\
-- What recording-finalize-retry owns, as a fresh migrate leaves it: GENERATED, do not edit.
-- `make schema` rewrites it (tools/schema_snapshot.py); `make test` fails when it differs from
-- what sql/migrations and sql/functions produce. Tables with their constraints, indexes and
-- grants; functions as signatures (bodies: sql/functions/, comments: COMMENT ON in the SQL).
-- The service's own tables are not here (sql/service/schema.sql is their reference DDL).
"""

# A pg_dump entry starts with this header (--no-owner: "Owner: -").
_ENTRY = re.compile(r"^--\n-- Name: (?P<name>.*?); Type: (?P<type>[A-Z ]+); "
                    r"Schema: (?P<schema>[^;]*); Owner: [^\n]*\n--\n", re.M)
# The table an entry belongs to: the first schema-qualified name after one of these words.
_TABLE_REF = re.compile(r"\b(?:ALTER TABLE(?: ONLY)?|ON(?: TABLE)?)\s+([\w.]+\.\w+)")
# Left out: bodies and comments (see above), and what the dump says around its entries.
_DROPPED = {"FUNCTION", "PROCEDURE", "AGGREGATE", "COMMENT"}


@dataclass(frozen=True)
class Entry:
    name: str
    type: str
    schema: str
    body: str


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


def entries(dump: str) -> list[Entry]:
    """The dump's entries, in its order, each body without the blank lines around it."""
    heads = list(_ENTRY.finditer(dump))
    out = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(dump)
        body = dump[head.end():end]
        # The dump's closing banner and \unrestrict line follow the last entry.
        body = body.split("\n--\n-- PostgreSQL database dump complete", 1)[0]
        lines = [ln for ln in body.strip("\n").splitlines() if not ln.startswith("\\")]
        out.append(Entry(head["name"], head["type"], head["schema"], "\n".join(lines).strip()))
    return out


def render(dumped: Iterable[Entry], functions: list[str]) -> str:
    """schema.sql's text: schemas first, then types, then each table with its parts, then
    whatever else the dump holds, then the functions' lines."""
    kept = [e for e in dumped if e.type not in _DROPPED and not e.name.startswith("FUNCTION ")]
    tables = [e for e in kept if e.type in ("TABLE", "VIEW", "MATERIALIZED VIEW",
                                            "FOREIGN TABLE")]
    names = {f"{t.schema}.{t.name}" for t in tables}
    parts: dict[str, list[Entry]] = {name: [] for name in names}
    schemas: list[Entry] = []
    types: list[Entry] = []
    rest: list[Entry] = []
    for entry in kept:
        if entry in tables:
            continue
        if entry.type == "SCHEMA" or entry.name.startswith("SCHEMA "):
            schemas.append(entry)
            continue
        if entry.type == "TYPE" or entry.name.startswith("TYPE "):
            types.append(entry)
            continue
        refs = [r for r in _TABLE_REF.findall(entry.body) if r in names]
        (parts[refs[0]] if refs else rest).append(entry)
    blocks = [HEADER.rstrip("\n"), *("\n".join(e.body for e in group)
                                     for group in (schemas, types))]
    for table in tables:
        blocks.append("\n".join([table.body, *(p.body for p in
                                               parts[f"{table.schema}.{table.name}"])]))
    blocks += [e.body for e in rest]
    if functions:
        blocks.append("\n".join([
            "-- Functions: signature -> the roles that may execute it (recording_finalize_ left",
            "-- out; PUBLIC only where it says so). Bodies: sql/functions/<schema>.<name>.sql.",
            *functions]))
    return "\n\n".join(b for b in blocks if b) + "\n"


_FUNCTIONS = """
select p.oid::pg_catalog.regproc::text
        || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')',
    coalesce((
        select pg_catalog.string_agg(
            case when a.grantee = 0 then 'PUBLIC' else a.grantee::pg_catalog.regrole::text end,
            ', ' order by 1)
        from pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner)))
            as a
        where a.privilege_type = 'EXECUTE' and a.grantee <> p.proowner
    ), 'owner only')
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname = any(%s)
order by n.nspname, p.proname, 1
"""


def function_lines(conn: psycopg.Connection[tuple[str, str]], schemas: list[str]) -> list[str]:
    """One comment line per function (wrapped at WIDTH): ``schema.name(args) -> roles``."""
    out = []
    for signature, grantees in conn.execute(_FUNCTIONS, (schemas,)):
        grantees = ", ".join(g.removeprefix("recording_finalize_") for g in grantees.split(", "))
        out += textwrap.wrap(f"{signature} -> {grantees}", WIDTH, initial_indent="-- ",
                             subsequent_indent="--     ", break_on_hyphens=False)
    return out


def snapshot(admin_url: str) -> str:
    """Migrates a throwaway database and returns schema.sql's text for it."""
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
        schemas = list(contract.PRODUCT_SCHEMAS)
        with psycopg.connect(url) as conn:
            unknown = [r[0] for r in conn.execute(
                r"select nspname::text from pg_catalog.pg_namespace "
                r"where nspname like 'recording\_finalize%%' and nspname <> all(%s)",
                (schemas,))]
            if unknown:
                raise SystemExit(f"schemas {unknown} exist after migrate but are not in "
                                 "driver/contract.py's PRODUCT_SCHEMAS: add them there")
            functions = function_lines(conn, schemas)
        common = [_pg_dump(), "--schema-only", "--no-owner", "--no-tablespaces", "-d", url]
        by_schema = [arg for s in schemas for arg in ("-n", s)]
        dumps = [subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                 for cmd in ([*common, *by_schema, "-T", "recording_finalize_migrations._yoyo*",
                              "-T", "recording_finalize_migrations.yoyo_lock"],
                             [*common, "-t", f"{contract.SCHEMA}.{contract.PRODUCT_TABLE}"])]
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{dbname}" with (force)')
    text = render([e for d in dumps for e in entries(d)], functions)
    return text.replace(OWNER, "OWNER")


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
