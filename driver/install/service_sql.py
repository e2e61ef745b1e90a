"""``recording-finalize service-sql schema|adapter|grants --to ROLE|recommended``: SQL for the DBA
of the service's objects to review and run. Without ``DATABASE_URL`` it connects to nothing and
prints the reference schema's; with it, ``grants`` and ``recommended`` fit what that database
holds (a DBA's adapter: the GRANTs it needs, ``derive``; a partitioned recordings table: the
partitioned form of an index)."""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from typing import Any

import psycopg

from .. import adapter, cliutil, contract, db
from ..config import Settings
from ..drift import package_sql, query
from . import derive

PARTS = ("schema", "adapter", "grants", "recommended")
FILES = {"schema": "service/schema.sql", "adapter": adapter.REFERENCE_FILE,
         "recommended": "service/recommended.sql"}

_PLACEHOLDER = re.compile(r"\{\{ (\w+) \}\}")
# Besides the placeholders, what names the role in a line of its own length: the opening
# paragraph and each column grant, wrapped again once the role is in.
_PIECES = re.compile(_PLACEHOLDER.pattern + r"|\A.*?(?=\n\n)|^grant (?:select|insert|update) "
                     r"\(.*?;$", re.M | re.S)


def grants(role: str, lifecycle: bool) -> str:
    """The grant script (with ``lifecycle``, the lifecycle one too) filled in for ``role``."""
    literal = "'" + role.replace("'", "''") + "'"
    values = {"role": sql_ident(role), "role_literal": literal, "role_in_literal": literal[1:-1]}
    template = package_sql(contract.GRANTS_FILE).replace("{{ lifecycle }}", (
        "\n" + package_sql(contract.LIFECYCLE_GRANTS_FILE) if lifecycle else ""))

    def fill(match: re.Match[str]) -> str:
        if match[1]:
            return values[match[1]]
        words = " ".join(match[0].replace("\n--", " ").split())
        if words.startswith("--"):
            return "\n".join(textwrap.wrap(
                _PLACEHOLDER.sub(fill, words[3:]), width=97, initial_indent="-- ",
                subsequent_indent="-- "))
        words = words.replace("( ", "(").replace(" )", ")")
        return "\n".join(textwrap.wrap(_PLACEHOLDER.sub(fill, words), width=100,
                                       subsequent_indent="    ", break_on_hyphens=False))

    return _PIECES.sub(fill, template)


def sql_ident(name: str) -> str:
    """A role name as an SQL identifier (quoted only when it must be)."""
    if name.isidentifier() and name == name.lower() and name.isascii():
        return name
    return '"' + name.replace('"', '""') + '"'


def adapter_grants(conn: psycopg.Connection[Any], role: str, lifecycle: bool) -> str:
    """The grants for ``role`` that fit the adapter installed where ``conn`` is: the reference
    script for the reference adapter (or none yet), else derived from the DBA's adapter."""
    state = adapter.state(conn)
    reference = grants(role, lifecycle)
    # The database's and the schema's grants: up to the blank line after the schema's.
    start = reference.index("-- First the database")
    head = reference[start:reference.index("\n\n", reference.index(" on schema ", start)) + 2]
    tail = reference[reference.index("-- CREATE is needed only while installing."):]
    database = str((conn.execute(query("current_role_and_database")).fetchone() or ("", ""))[1])
    if state is adapter.State.ABSENT and conn.execute(query("reference_tables_missing"), (
            list(contract.TABLES), contract.SCHEMA)).fetchone() != (0,):
        # Not the reference schema, and no adapter yet: what the DBA's adapter is created with.
        return "\n".join([*derive.wrap([
            f"-- The first GRANTs for the product's owner role {sql_ident(role)} in database "
            f"{sql_ident(database)}: its schema messenger is not the reference one and no "
            f"adapter is installed yet. These let {sql_ident(role)} in, so that the DBA's "
            "adapter can be created as it (`service-sql adapter`, edited for this schema). "
            "Then run `service-sql grants` again, with DATABASE_URL: it prints what that "
            "adapter reads and writes."]), "", head.rstrip(), "", ""]) + tail.replace(
                "<this database>", sql_ident(database))
    if state is not adapter.State.DBAS:
        return reference
    needs = derive.derive(conn, role)
    lines = [
        *derive.wrap([
            f"-- GRANTs for the product's owner role {sql_ident(role)}, derived from the "
            f"adapter installed in database {sql_ident(database)} (schema {adapter.SCHEMA}, a "
            "DBA's): what its views read, what its functions and the triggers they fire "
            "write, column by column. Run as the owner of the service's schema and tables: "
            "each statement touches only the service's own objects."]),
        "", head.rstrip(), "", *derive.grant_lines(needs, sql_ident(role))]
    if lifecycle:
        lines += derive.wrap(["-- --lifecycle: the optional lifecycle functions write the "
                              "reference schema's tables, not this adapter's: nothing to grant "
                              "for them here.", ""])
    return ("\n".join(lines).rstrip() + "\n\n"
            + tail.replace("<this database>", sql_ident(database)))


def recommended(conn: psycopg.Connection[Any] | None, text: str) -> str:
    """``recommended.sql``, each ``create index concurrently`` on a partitioned table in its
    partitioned form (CONCURRENTLY fails on a partitioned table); with a DBA's adapter whose
    recordings view reads a partitioned table of another name, a note says so."""
    if conn is None:
        return text
    statement = re.compile(r"^create index concurrently if not exists (\w+)\non (\S+) "
                           r"(\([^)]*\))\n(where [^;]*);$", re.M)

    def partitioned(match: re.Match[str]) -> str:
        name, table, columns, where = match.groups()
        row = conn.execute(query("recordings_tables"), _parts(table)).fetchone()
        if row is None or not row[1]:
            return match[0]
        schema, parent = table.rsplit(".", 1) if "." in table else ("public", table)
        suffix = name[len(parent) + 1:] if name.startswith(parent.strip('"') + "_") else name
        lines = [
            f"-- {table} is partitioned: CREATE INDEX CONCURRENTLY fails on a partitioned "
            "table. The index",
            "-- is created on the parent only (ON ONLY: it reads no partition and stays "
            "invalid until every",
            "-- partition's index is attached), each partition's concurrently, then attached "
            "(a partition",
            "-- created later gets its index from the parent).",
            f"create index if not exists {name}\non only {table} {columns}\n{where};"]
        for partition in row[2]:
            base = partition.rsplit(".", 1)[-1].strip('"')
            index = derive.quote(f"{base}_{suffix}"[:63])
            part_schema = partition.rsplit(".", 1)[0]
            lines += [f"create index concurrently if not exists {index}\non {partition} "
                      f"{columns}\n{where};",
                      f"alter index {schema}.{name}\nattach partition {part_schema}.{index};"]
        return "\n".join(lines)

    text = statement.sub(partitioned, text)
    if adapter.state(conn) is adapter.State.DBAS:
        for table, is_partitioned, _ in _recordings_tables(conn):
            if is_partitioned and table not in text:
                text += (f"\n-- The adapter's recordings view reads {table}, which is "
                         "partitioned: an index above\n-- takes the partitioned form on it "
                         "(create index ... on only the parent; each partition's\n-- "
                         "create index concurrently; alter index ... attach partition), with "
                         "its own columns.\n")
    return text


def _parts(qualified: str) -> tuple[str, str]:
    """``schema.table`` (either part maybe quoted) as its two names."""
    names = [n[1:-1].replace('""', '"') if n.startswith('"') else n
             for n in re.findall(r'"(?:[^"]|"")+"|[^."]+', qualified)]
    return (names[0], names[1]) if len(names) == 2 else ("public", names[0])


def _recordings_tables(conn: psycopg.Connection[Any]) -> list[tuple[str, bool, list[str]]]:
    found: list[tuple[str, bool, list[str]]] = []
    for view, table, _schema, _column in conn.execute(query("adapter_view_reads"),
                                                       (adapter.SCHEMA,)):
        if str(view) == "recordings" and all(str(table) != f[0] for f in found):
            row = conn.execute(query("recordings_tables"), _parts(str(table))).fetchone()
            if row is not None:
                found.append((str(row[0]), bool(row[1]), list(row[2])))
    return found


def service_sql_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.part not in PARTS:
        return cliutil.fail(f"the part must be one of {', '.join(PARTS)}; got {args.part!r}",
                            cliutil.EXIT_USAGE)
    if args.part == "grants" and not (args.to or "").strip():
        return cliutil.fail("service-sql grants needs --to ROLE: the role that will own the "
                            "product (the one that runs recording-finalize migrate)",
                            cliutil.EXIT_USAGE)
    if args.part in ("schema", "adapter"):
        sys.stdout.write((settings.sql_dir / FILES[args.part]).read_text(encoding="utf-8"))
    elif not settings.database_url:
        sys.stdout.write(grants(args.to.strip(), args.lifecycle) if args.part == "grants" else
                         (settings.sql_dir / FILES[args.part]).read_text(encoding="utf-8"))
    else:
        try:
            conn = cliutil.connect(settings)
        except psycopg.OperationalError as err:
            return cliutil.fail(
                f"service-sql {args.part}: the database of DATABASE_URL refused the connection "
                f"({db.server_message(err)}): it reads that database's catalog, so connect as "
                "a login that may (the service's owner), or leave DATABASE_URL unset for the "
                "reference schema's", cliutil.EXIT_USAGE)
        with conn:
            try:
                text = (adapter_grants(conn, args.to.strip(), args.lifecycle)
                        if args.part == "grants" else recommended(conn, (
                            settings.sql_dir / FILES[args.part]).read_text(encoding="utf-8")))
            except psycopg.errors.InsufficientPrivilege as err:
                return cliutil.fail(
                    f"service-sql {args.part}: the login of DATABASE_URL may not read what the "
                    f"adapter reaches ({db.server_message(err)}): run it as the service's owner",
                    cliutil.EXIT_USAGE)
            sys.stdout.write(text)
    return cliutil.EXIT_OK


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("part", metavar="PART", help="schema, adapter, grants or recommended")
    cmd.add_argument("--lifecycle", action="store_true",
                     help="grants: also what the optional lifecycle functions (recording_started, "
                     "recording_stopped, session_ended) write on the reference schema")
    cmd.add_argument("--to", metavar="ROLE", default=None,
                     help="grants: the role that owns the product (the one that runs migrate)")


COMMAND = cliutil.Command(
    name="service-sql",
    summary="print SQL for the messenger service's DBA: schema, adapter, grants --to ROLE, "
            "recommended",
    description=(
        "Prints (without DATABASE_URL, connecting nowhere: the reference schema's; with it,\n"
        "grants and recommended fit the database it reaches):\n"
        "  schema       the reference DDL of the service tables the product works on (what\n"
        "               migrate --create-service-tables creates in a new database)\n"
        "  adapter      the reference adapter: the views and functions of schema\n"
        "               recording_finalize_adapter through which the product reads and writes\n"
        "               the service's data; a DBA whose schema differs edits it and creates it\n"
        "               as the product's owner before migrate, which then keeps it\n"
        "  grants       the GRANTs that let --to ROLE (the product's owner, the role that runs\n"
        "               migrate) install and run, column by column, to be run as the owner of\n"
        "               the service's schema and tables; the database-level CONNECT/CREATE come\n"
        "               last, granted when run by the database's owner, else named, with the\n"
        "               statement that takes CREATE back once migrate has run; --lifecycle\n"
        "               adds what the optional lifecycle functions write. With DATABASE_URL\n"
        "               and a DBA's adapter installed there: derived from that adapter (what\n"
        "               its views read, what its functions and the triggers they fire write,\n"
        "               a policy where row-level security would hide the rows)\n"
        "  recommended  optional objects on the service's tables (an index on unpublished\n"
        "               events, a terminal-status guard, cheaper CHECKs), each with what it\n"
        "               buys and what it costs the service; migrate never applies them.\n"
        "               With DATABASE_URL and a partitioned recordings table: an index in\n"
        "               its partitioned form (ON ONLY, each partition CONCURRENTLY, ATTACH)"
    ),
    exits="exit 2: an unknown part, or grants without --to.",
    handler=service_sql_command,
    variables=("DATABASE_URL", "RFR_SQL_DIR"),
    variable_help={"DATABASE_URL": "optional: the database whose installed adapter grants and "
                   "recommended fit (any login that can read its catalog); its password is "
                   "never printed"},
    required=(),
    add_arguments=_add_arguments,
    for_operators=False,
)
