"""``recording-finalize service-sql schema|adapter|grants --to ROLE|recommended``: SQL for the DBA
of the service's objects to review and run. Without ``DATABASE_URL`` it connects to nothing and
prints the reference schema's; with it, ``grants`` and ``recommended`` fit what that database
holds (a DBA's adapter: the GRANTs it needs, and the recommended objects written on the table and
expressions of its recordings view, both read by ``derive``; a partitioned recordings table: the
partitioned form of an index)."""

from __future__ import annotations

import argparse
import itertools
import re
import sys
import textwrap
from dataclasses import dataclass
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


@dataclass(frozen=True)
class InstallPrivileges:
    """What the privileges only an install needs (CREATE on the database and on schema
    messenger) turn on in one database, read from its catalog; ``NOWHERE`` without one."""

    #: The database's name (quoted when it must be), or a placeholder without one.
    database: str = "<this database>"
    #: migrate has created every schema the product owns and its table in schema messenger:
    #: nothing is left that needs CREATE.
    installed: bool = False
    #: Schema messenger does not exist (a service whose tables are elsewhere): its creation
    #: comes first, by the database's owner (named here).
    create_schema_as: str | None = None
    #: Whether the role holds CREATE on the database, and on schema messenger, now.
    holds_create: tuple[bool, bool] = (False, False)


NOWHERE = InstallPrivileges()


def grants(role: str, lifecycle: bool, place: InstallPrivileges = NOWHERE) -> str:
    """The grant script (with ``lifecycle``, the lifecycle one too) filled in for ``role``, for
    the database ``place`` tells of (``NOWHERE``: the reference schema, before the install)."""
    literal = "'" + role.replace("'", "''") + "'"
    values = {"role": sql_ident(role), "role_literal": literal, "role_in_literal": literal[1:-1],
              "database_privileges": "connect" if place.installed else "connect, create",
              "schema_privileges": "usage" if place.installed else "usage, create",
              "create_schema": _create_schema(place),
              "create_afterwards": "\n".join(_create_afterwards(sql_ident(role), place))}
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


def _create_schema(place: InstallPrivileges) -> str:
    """The creation of schema messenger where it does not exist (the grants on it follow)."""
    if place.create_schema_as is None:
        return ""
    schema = contract.SCHEMA
    return "\n" + "\n".join([*derive.wrap([
        f"-- Schema {schema} does not exist in database {place.database}. The product's "
        f"contract puts its one table beside the service's data, in schema {schema} "
        f"({schema}.{contract.PRODUCT_TABLE}, docs/contract/tables.md), and migrate creates it "
        "there. The database's owner creates the schema and keeps it: the product's owner "
        "gets USAGE, and CREATE only to install (step 6 of the install takes it back); as the "
        "schema's owner it would hold every privilege on it for good, and uninstall, which "
        "drops only what the product owns, would leave the schema behind. Run as the "
        f"database's owner ({sql_ident(place.create_schema_as)})."]),
        f"create schema if not exists {schema} authorization "
        f"{sql_ident(place.create_schema_as)};"]) + "\n"


def _create_afterwards(role: str, place: InstallPrivileges) -> list[str]:
    """What becomes of CREATE, the install's privilege, in ``place``: taken back once migrate
    has run; where it has, asked for again only by a release that says so."""
    schema = contract.SCHEMA
    grant = [f"-- grant create on database {place.database} to {role};",
             f"-- grant create on schema {schema} to {role};"]
    revoke = [f"-- revoke create on database {place.database} from {role};",
              f"-- revoke create on schema {schema} from {role};"]
    if not place.installed:
        return [*derive.wrap(["-- CREATE is needed only while installing. Once migrate has "
                              "run, take it back (a later release that adds a schema asks for "
                              "it again):"]), *revoke]
    held = [line for line, holds in zip(revoke, place.holds_create, strict=True) if holds]
    return derive.wrap([
        f"-- CREATE on the database and on schema {schema} is needed only to install, and the "
        f"product is installed in database {place.database} (migrate has created its schemas "
        f"and {schema}.{contract.PRODUCT_TABLE}): the GRANTs above leave it out, so that "
        "running them never gives back what step 6 of the install took back"
        + (f". {role} still holds it: step 6 takes it back:" if held else "."),
        *held,
        "-- A release that must create something says so in its CHANGELOG; only then, before "
        "its migrate, the database's owner and the owner of schema "
        f"{schema} run (and take it back once that migrate has run):", *grant])


def install_privileges(conn: psycopg.Connection[Any], role: str) -> InstallPrivileges:
    """``InstallPrivileges`` of the database ``conn`` reaches, from its catalog alone."""
    owned = contract.owners(conn)
    installed = all(name in owned for name in (
        *contract.PRODUCT_SCHEMAS, f"{contract.SCHEMA}.{contract.PRODUCT_TABLE}"))
    row = conn.execute(query("install_privileges"), {"schema": contract.SCHEMA,
                                                      "role": role}).fetchone()
    database_owner, schema_exists, create_db, create_schema = row or ("", True, False, False)
    return InstallPrivileges(sql_ident(_database(conn)), installed,
                             None if schema_exists else str(database_owner),
                             (bool(create_db), bool(create_schema)))


def sql_ident(name: str) -> str:
    """A role name as an SQL identifier (quoted only when it must be)."""
    if name.isidentifier() and name == name.lower() and name.isascii():
        return name
    return '"' + name.replace('"', '""') + '"'


class AdapterUnknown(Exception):
    """This login cannot tell which adapter the database holds (the message says why)."""


def _adapter_state(conn: psycopg.Connection[Any]) -> adapter.State:
    """``adapter.state``, or, for a login that may not read migrate's record of the adapter (the
    service's owner), what the catalog alone proves: without the reference tables the adapter
    cannot be migrate's reference one, so it is a DBA's."""
    owned = contract.owners(conn)
    if "recording_finalize" not in owned or conn.execute(
            query("schema_state_callable")).fetchone() == (True,):
        return adapter.state(conn)
    if adapter.SCHEMA not in owned:
        return adapter.State.ABSENT
    if conn.execute(query("reference_tables_missing"), (
            list(contract.TABLES), contract.SCHEMA)).fetchone() != (0,):
        return adapter.State.DBAS
    login = conn.info.user
    raise AdapterUnknown(
        f"login {sql_ident(login)} may not call recording_finalize.schema_state(), migrate's "
        "record of the adapter it installed: the product is installed in this database and "
        f"the reference tables of schema {contract.SCHEMA} are there, so only that record "
        "tells the reference adapter (the reference GRANTs) from a DBA's (GRANTs derived from "
        "it). Run service-sql grants with DATABASE_URL of the product's owner or of a login "
        "granted recording_finalize_operator, then run what it prints as the service's "
        "owner; or without DATABASE_URL for the reference schema's GRANTs")


def adapter_grants(conn: psycopg.Connection[Any], role: str, lifecycle: bool) -> str:
    """The grants for ``role`` that fit the adapter installed where ``conn`` is: the reference
    script for the reference adapter (or none yet), else derived from the DBA's adapter. Once
    the product is installed there, without the install's CREATE."""
    state = _adapter_state(conn)
    place = install_privileges(conn, role)
    reference = grants(role, lifecycle, place)
    # The database's and the schema's grants: up to the blank line after the schema's.
    start = reference.index("-- First the database")
    schema_grant = reference.index(f"\ngrant {'usage' if place.installed else 'usage, create'} "
                                   f"on schema {contract.SCHEMA} ", start)
    head = reference[start:reference.index("\n\n", schema_grant) + 2]
    tail = "\n".join(_create_afterwards(sql_ident(role), place)) + "\n"
    database = place.database
    if state is adapter.State.ABSENT and conn.execute(query("reference_tables_missing"), (
            list(contract.TABLES), contract.SCHEMA)).fetchone() != (0,):
        # Not the reference schema, and no adapter yet: what the DBA's adapter is created with.
        schema = (f"it has no schema {contract.SCHEMA}" if place.create_schema_as is not None
                  else f"its schema {contract.SCHEMA} is not the reference one")
        return "\n".join([*derive.wrap([
            f"-- The first GRANTs for the product's owner role {sql_ident(role)} in database "
            f"{database}: {schema} and no adapter is installed yet. These let "
            f"{sql_ident(role)} in, so that the DBA's adapter can be created as it "
            "(`service-sql adapter`, edited for this schema). Then run `service-sql grants` "
            "again, with DATABASE_URL: it prints what that adapter reads and writes."]), "",
            head.rstrip(), "", ""]) + tail
    if state is not adapter.State.DBAS:
        return reference
    needs = derive.derive(conn, role)
    head = _schema_grant_by_its_owner(conn, head, role, place, needs)
    lines = [
        *derive.wrap([
            f"-- GRANTs for the product's owner role {sql_ident(role)}, derived from the "
            f"adapter installed in database {database} (schema {adapter.SCHEMA}, a "
            "DBA's): what its views read, what its functions and the triggers they fire "
            "write, column by column. Run as the owner of the service's schema and tables: "
            "each statement touches only the service's own objects."]),
        "", head.rstrip(), "", *derive.grant_lines(needs, sql_ident(role))]
    if lifecycle:
        lines += derive.wrap(["-- --lifecycle: the optional lifecycle functions write the "
                              "reference schema's tables, not this adapter's: nothing to grant "
                              "for them here.", ""])
    return "\n".join(lines).rstrip() + "\n\n" + tail


def schema_and_table_owners(conn: psycopg.Connection[Any], needs: derive.Needs
                            ) -> tuple[str | None, set[str]]:
    """The owner of schema messenger (None where it does not exist) and the owners of the
    service's tables ``needs`` reaches."""
    row = conn.execute(query("schema_owner_and_table_owners"), {
        "schema": contract.SCHEMA, "tables": list(needs.tables)}).fetchone()
    schema_owner, table_owners = row or (None, [])
    return schema_owner, set(table_owners)


def _schema_grant_by_its_owner(conn: psycopg.Connection[Any], head: str, role: str,
                               place: InstallPrivileges, needs: derive.Needs) -> str:
    """``head`` with its grant on schema messenger done by that schema's owner only, where the
    service's tables belong to another role (a service whose tables are elsewhere: the
    database's owner created schema messenger, as the first GRANTs print). The file is run as
    the owner of the tables; a plain GRANT on a schema it does not own would stop it there
    (ON_ERROR_STOP), before any of the tables' GRANTs. Anyone else is told who must, as for
    the database's."""
    schema_owner, table_owners = schema_and_table_owners(conn, needs)
    if schema_owner is None or table_owners <= {schema_owner}:
        return head
    privileges = "usage" if place.installed else "usage, create"
    plain = f"\ngrant {privileges} on schema {contract.SCHEMA} to {sql_ident(role)};\n"
    if plain not in head:
        return head
    def literal(name: str) -> str:
        return "'" + name.replace("'", "''") + "'"

    guarded = "\n".join([
        "", *derive.wrap([
            f"-- Schema {contract.SCHEMA} belongs to {sql_ident(schema_owner)}, the service's "
            f"tables to {', '.join(sorted(sql_ident(o) for o in table_owners))}: only the "
            "schema's owner can grant on it; anyone else is told who must."]),
        "do $$",
        "begin",
        "    if pg_catalog.pg_has_role(current_user, (select n.nspowner from "
        "pg_catalog.pg_namespace",
        f"        as n where n.nspname = '{contract.SCHEMA}'), 'USAGE') then",
        f"        execute pg_catalog.format('grant {privileges} on schema {contract.SCHEMA} to "
        "%I',",
        f"            {literal(role)});",
        "    else",
        f"        raise notice 'the owner of schema {contract.SCHEMA} (%) must run: grant "
        f"{privileges} on schema '",
        f"            '{contract.SCHEMA} to %', {literal(schema_owner)}, {literal(role)};",
        "    end if;",
        "end",
        "$$;", ""])
    return head.replace(plain, guarded, 1)


def recommended(conn: psycopg.Connection[Any] | None, text: str) -> str:
    """``recommended.sql`` fitted to the database ``conn`` reaches (as is without one). The
    adapter's recordings view names the table and the expressions each item is written on; a
    view that maps the reference table as the reference adapter does keeps the file's text. A
    partitioned table gets each index in its partitioned form (CONCURRENTLY fails on one)."""
    if conn is None:
        return text
    view = derive.recordings_view(conn)
    if isinstance(view, derive.RecordingsView) and not _is_reference(view):
        return _derived(conn, text, view)
    if view is None and conn.execute(query("reference_tables_missing"), (
            ["call_recordings"], contract.SCHEMA)).fetchone() != (0,):
        return "\n".join(derive.wrap([
            f"-- NOT DERIVED: database {sql_ident(_database(conn))} holds no adapter yet and "
            f"no table {contract.SCHEMA}.call_recordings: these objects are written on the "
            "table the adapter's recordings view reads. Create the adapter first "
            "(`service-sql adapter`, edited for this schema), then run `service-sql "
            "recommended` again with DATABASE_URL."])) + "\n"
    if isinstance(view, str):
        return "\n".join(derive.wrap([
            f"-- NOT DERIVED: {view}: none of these objects can be written on its table. "
            "`service-sql recommended` without DATABASE_URL prints them as the reference "
            "schema's, each with what it buys and costs: adapt them by hand."])) + "\n"
    return _REFERENCE_INDEX.sub(lambda match: _reference_index(conn, match), text)


#: An index of the reference text, as recommended.sql writes it.
_REFERENCE_INDEX = re.compile(r"^create index concurrently if not exists (\w+)\non (\S+) "
                              r"(\([^)]*\))\n(where [^;]*);$", re.M)


def _is_reference(view: derive.RecordingsView) -> bool:
    """Whether the view maps what recommended.sql's statements are written on as the reference
    adapter does: the reference table, its own columns."""
    return (view.table == f"{contract.SCHEMA}.call_recordings"
            and view.on("id") == "id" and view.on("available_at") == "available_at"
            and view.on("status") in ("status", "(status)::text"))


def _reference_index(conn: psycopg.Connection[Any], match: re.Match[str]) -> str:
    name, table, columns, where = match.groups()
    row = conn.execute(query("recordings_tables"), _parts(table)).fetchone()
    if row is None or not row[1]:
        return match[0]
    parent = table.rsplit(".", 1)[-1]
    suffix = name[len(parent) + 1:] if name.startswith(parent.strip('"') + "_") else name
    return _partitioned_index(name, suffix, table, columns, where, list(row[2]))


def _partitioned_index(name: str, suffix: str, table: str, columns: str, where: str,
                       partitions: list[str]) -> str:
    """An index of ``table``, partitioned, in the form that creates it without blocking
    writers: the parent's ON ONLY, each partition's concurrently, attached."""
    schema = table.rsplit(".", 1)[0]
    lines = [*derive.wrap([
        f"-- {table} is partitioned: CREATE INDEX CONCURRENTLY fails on a partitioned table. "
        "The index is created on the parent only (ON ONLY: it reads no partition and stays "
        "invalid until every partition's index is attached), each partition's concurrently, "
        "then attached (a partition created later gets its index from the parent)."]),
        f"create index if not exists {name}\non only {table} {columns}\n{where};"]
    for partition in partitions:
        base = partition.rsplit(".", 1)[-1].strip('"')
        index = derive.quote(f"{base}_{suffix}"[:63])
        part_schema = partition.rsplit(".", 1)[0]
        lines += [f"create index concurrently if not exists {index}\non {partition} "
                  f"{columns}\n{where};",
                  f"alter index {schema}.{name}\nattach partition {part_schema}.{index};"]
    return "\n".join(lines)


def _database(conn: psycopg.Connection[Any]) -> str:
    return str((conn.execute(query("current_role_and_database")).fetchone() or ("", ""))[1])


#: The line between two items of recommended.sql.
_ITEM_RULE = re.compile(r"^-- -{20,}\n", re.M)


def _derived(conn: psycopg.Connection[Any], text: str, view: derive.RecordingsView) -> str:
    """recommended.sql written on the table and expressions of a DBA's recordings view: each
    item's comments (the reference table's name replaced by this one's, a sentence about
    another reference table left out) and its statements derived, or a NOT DERIVED note."""
    header, *items = _ITEM_RULE.split(text)
    found_rule = _ITEM_RULE.search(text)
    rule = found_rule[0].rstrip("\n") if found_rule else "--"
    ported = ", ".join(f"{port} is {view.on(port) or 'not derived'}"
                       for port in ("id", "available_at", "status"))
    out = [header.rstrip("\n"), "--", *derive.wrap([
        f"-- Derived from the adapter installed in database {sql_ident(_database(conn))} "
        f"(schema {adapter.SCHEMA}, a DBA's): its recordings view reads {view.table}, where "
        f"{ported}. Anything that could not be derived says so in a comment of its own, with "
        "what to write by hand."]), ""]
    derivers = {"1": _derived_index, "2": _derived_guard, "3": _derived_checks}
    for item in items:
        lines = item.rstrip("\n").split("\n")
        comments = list(itertools.takewhile(lambda line: line.startswith("--"), lines))
        number = re.match(r"-- (\d+)\.", comments[0]) if comments else None
        deriver = derivers.get(number[1]) if number else None
        out += [rule, *_reworded(comments, view)]
        out += (deriver(conn, view) if deriver is not None else [
            "-- NOT DERIVED: this item is written for the reference schema only: adapt it "
            f"to {view.table} by hand (`service-sql recommended` without DATABASE_URL "
            "prints it)."])
        out.append("")
    return "\n".join(derive.wrap(line for chunk in out for line in chunk.split("\n"))
                     ).rstrip("\n") + "\n"


def _reworded(comments: list[str], view: derive.RecordingsView) -> list[str]:
    """An item's comments for this database: the reference recordings table's name replaced by
    the view's table, a sentence naming another reference table left out."""
    others = [name for name in contract.TABLES if name != "call_recordings"]
    text = "\n".join(line[3:] if line.startswith("-- ") else "" for line in comments)
    lines: list[str] = []
    for block in text.split("\n\n"):
        # A paragraph also ends where a "Label:" line begins (Buys:, Costs:).
        for paragraph in re.split(r"\n(?=[A-Z]\w*: )", block):
            words = re.sub(rf"\b(?:{contract.SCHEMA}\.)?call_recordings\b", view.table,
                           " ".join(paragraph.split()))
            kept = [sentence for sentence in re.split(r"(?<=\.)\s+", words)
                    if not any(re.search(rf"\b{name}\b", sentence) for name in others)]
            lines.append("-- " + " ".join(kept))
        lines.append("--")
    return lines[:-1]


def _operand(expression: str) -> str:
    """An expression as the operand of an operator (parenthesized unless it is a column)."""
    bare = re.fullmatch(r"(?:old\.|new\.)?(.*)", expression, re.S)
    return expression if bare and derive.is_identifier(bare[1]) else f"({expression})"


def _derived_index(conn: psycopg.Connection[Any], view: derive.RecordingsView) -> list[str]:
    """Item 1: the index on available_at, id of the Available recordings."""
    available_at, recording_id, status = (view.on(c) for c in ("available_at", "id", "status"))
    if available_at is None or recording_id is None or status is None:
        return [f"-- NOT DERIVED: the recordings view's available_at, id or status is not "
                f"computed from the row of {view.table} alone. Write the index by hand: create "
                f"index concurrently on {view.table} (the expression the view computes "
                "available_at by, then id's) where the expression of its status = "
                "'Available', written exactly as the view writes it."]
    columns = f"({_operand(available_at)}, {_operand(recording_id)})"
    where = f"where {_operand(status)} = 'Available'"
    name = derive.quote(f"{view.name}_available_at_idx"[:63])
    lines = [] if derive.is_identifier(status) else [
        f"-- The predicate is the view's own status expression on {view.table}: the planner "
        "uses a partial index only where the query's condition (discovery's status = "
        "'Available', through the view) matches its predicate, so a predicate on the column's "
        "stored value would never be used."]
    refused = _index_refused(conn, view.table, columns, where)
    if refused is not None:
        return [f"-- NOT DERIVED: PostgreSQL refuses the index {columns} {where} on "
                f"{view.table}: {refused}. The view computes available_at, id or status with a "
                "function that is not IMMUTABLE; a PostgreSQL enum's ::text is one (only "
                "STABLE: its labels can be renamed): map such a status with a CASE of the "
                "enum's labels (case r.status when 'available' then 'Available' ... end), whose "
                "comparisons are IMMUTABLE, then run `service-sql recommended` again."]
    row = conn.execute(query("recordings_tables"), (view.schema, view.name)).fetchone()
    if row is not None and row[1]:
        return [*lines, _partitioned_index(name, "available_at_idx", view.table, columns, where,
                                           list(row[2]))]
    return [*lines, f"create index concurrently if not exists {name}\non {view.table} "
            f"{columns}\n{where};"]


def _index_refused(conn: psycopg.Connection[Any], table: str, columns: str, where: str
                   ) -> str | None:
    """Why PostgreSQL refuses the index ``columns`` ``where`` on ``table``: a function of its
    expressions or predicate that is not IMMUTABLE (a view's ``status::text`` of an enum), which
    only creating it tells. Tried on an empty temporary copy of the table, in a transaction
    that is rolled back, so the service's table is neither locked nor read; None when it is
    taken, or when this login may not make the copy (the index is then printed untried)."""
    try:
        with conn.transaction(force_rollback=True):
            conn.execute(f"create temporary table rfr_index_probe (like {table}) "
                         "on commit drop".encode())
            try:
                with conn.transaction():
                    conn.execute(f"create index on rfr_index_probe {columns} {where}".encode())
            except psycopg.errors.InvalidObjectDefinition as error:
                return str(error.diag.message_primary or error)
    except psycopg.Error:
        return None
    return None


def _derived_guard(_conn: psycopg.Connection[Any], view: derive.RecordingsView) -> list[str]:
    """Item 2: the trigger that keeps Available and Failed terminal."""
    old, new, old_id = view.on("status", "old."), view.on("status", "new."), view.on("id", "old.")
    reads = view.columns_of("status")
    if old is None or new is None or old_id is None or not reads:
        return [f"-- NOT DERIVED: the recordings view's status or id is not computed from "
                f"the row of {view.table} alone. Write the guard by hand: a BEFORE UPDATE "
                f"trigger on {view.table}, FOR EACH ROW, that raises SQLSTATE RF008 when the "
                "row's status (as the view computes it) was Available or Failed and changes."]
    function = f"{derive.quote(view.schema)}.{derive.quote(view.name + '_terminal_guard')}"
    return [
        f"create or replace function {function}()", "returns trigger", "language plpgsql",
        "set search_path = pg_catalog, pg_temp", "as $$", "begin", "    raise exception using",
        "        errcode = 'RF008',",
        "        message = format('recording %s is %s, a terminal status; it cannot become %s',",
        f"            {old_id},", f"            {old},", f"            {new});", "end", "$$;", "",
        "set lock_timeout = '1s';",
        f"create or replace trigger {derive.quote(view.name + '_terminal_guard')}",
        f"before update of {', '.join(reads)} on {view.table}", "for each row",
        f"when ({_operand(old)} in ('Available', 'Failed')",
        f"    and {_operand(new)} is distinct from {_operand(old)})",
        f"execute function {function}();", "reset lock_timeout;"]


#: An enumeration CHECK in the form that costs more: a varchar column compared with an array
#: cast element by element, as PostgreSQL prints ``col in ('A', 'B')``.
_COSTLY_CHECK = re.compile(r"CHECK \(\(\((?P<column>.+?)\)::text = ANY \(\(ARRAY\[(?P<items>.*)\]\)"
                           r"::text\[\]\)\)\)")
_COSTLY_ITEM = re.compile(r"'([A-Za-z0-9_.-]*)'::character varying")


def _derived_checks(conn: psycopg.Connection[Any], view: derive.RecordingsView) -> list[str]:
    """Item 3: each enumeration CHECK of the recordings table and of the tables the adapter's
    functions write, if it is in the costlier form."""
    written, unresolved = derive.written_tables(conn)
    lines: list[str] = []
    places = [(view.schema, view.name), *[w for w in written if w != (view.schema, view.name)]]
    for place in places:
        for table, name, definition in conn.execute(query("table_checks"), place):
            costly = _COSTLY_CHECK.fullmatch(str(definition))
            items = _COSTLY_ITEM.findall(costly["items"]) if costly else []
            if costly is None or ", ".join(f"'{v}'::character varying" for v in items) \
                    != costly["items"]:
                continue
            constraint = derive.quote(str(name))
            lines += ["set lock_timeout = '1s';", f"alter table {table}",
                      f"drop constraint {constraint},",
                      f"add constraint {constraint} check (",
                      f"    {costly['column']}::text = any('{{{','.join(items)}}}'::text[])",
                      ") not valid;", "reset lock_timeout;",
                      f"alter table {table} validate constraint {constraint};", ""]
    if not lines:
        tables = ", ".join(f"{derive.quote(schema)}.{derive.quote(name)}"
                           for schema, name in places)
        lines = [f"-- Nothing to change: no enumeration CHECK of {tables} is in the costlier "
                 "form (a varchar column compared with a list)."]
    if unresolved:
        lines.append(f"-- NOT DERIVED: the adapter's functions write {', '.join(unresolved)}, "
                     "which could not be found by name: look at their enumeration CHECKs by "
                     "hand.")
    return lines


def _parts(qualified: str) -> tuple[str, str]:
    """``schema.table`` (either part maybe quoted) as its two names."""
    names = [n[1:-1].replace('""', '"') if n.startswith('"') else n
             for n in re.findall(r'"(?:[^"]|"")+"|[^."]+', qualified)]
    return (names[0], names[1]) if len(names) == 2 else ("public", names[0])


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
                return cliutil.fail(f"service-sql {args.part}: {db.server_message(err)}: "
                                    + _PRIVILEGES[args.part], cliutil.EXIT_USAGE)
            except AdapterUnknown as err:
                return cliutil.fail(f"service-sql {args.part}: {err}", cliutil.EXIT_USAGE)
            sys.stdout.write(text)
    return cliutil.EXIT_OK


#: What each part reads of the database of DATABASE_URL, said when the login may not.
_PRIVILEGES = {
    "recommended": "it reads only the catalog (pg_catalog), which every login may read unless "
                   "the DBA revoked it: connect as a login that may",
    "grants": "it reads the catalog, and looks up as this login each relation the adapter's "
              "functions name, which needs USAGE on its schema: connect as a login that has it "
              "(the owner of the service's schemas, or the product's owner once granted it), or "
              "leave DATABASE_URL unset for the reference schema's",
}


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
        "               the service's schema and tables; the database's CONNECT and CREATE come\n"
        "               first, granted when run by the database's owner, else named, and the\n"
        "               statement that takes CREATE back once migrate has run last; --lifecycle\n"
        "               adds what the optional lifecycle functions write. With DATABASE_URL:\n"
        "               once the product is installed there, without CREATE (an install's\n"
        "               privilege); without schema messenger, its creation by the database's\n"
        "               owner first; with a DBA's adapter there, derived from it (what its\n"
        "               views read, what its functions and the triggers they fire write, UPDATE\n"
        "               on the tables of its recordings view's FROM, which the product locks, a\n"
        "               policy where row-level security would hide the rows). The service's\n"
        "               owner may run it, unless the service's tables are the reference ones\n"
        "               and the product is installed: telling migrate's reference adapter from\n"
        "               a DBA's then needs migrate's record, which only the product's owner and\n"
        "               logins granted recording_finalize_operator may read\n"
        "  recommended  optional objects on the service's tables (an index on unpublished\n"
        "               events, a terminal-status guard, cheaper CHECKs), each with what it\n"
        "               buys and what it costs the service; migrate never applies them.\n"
        "               With DATABASE_URL and a DBA's adapter: written on the table its\n"
        "               recordings view reads and the expressions of its columns (what\n"
        "               cannot be derived: a -- NOT DERIVED: comment); a partitioned table:\n"
        "               each index in its partitioned form (ON ONLY, each partition\n"
        "               CONCURRENTLY, ATTACH)"
    ),
    exits="exit 2: an unknown part, or grants without --to.",
    handler=service_sql_command,
    variables=("DATABASE_URL", "RFR_SQL_DIR"),
    variable_help={"DATABASE_URL": "optional: the database whose installed adapter grants and "
                   "recommended fit; recommended reads only its catalog (any login that can "
                   "read pg_catalog, e.g. the service's owner); so does grants, except on the "
                   "reference service tables with the product installed, where it reads "
                   "migrate's record of the adapter, recording_finalize.schema_state() (the "
                   "product's owner, or a login granted recording_finalize_operator); its "
                   "password is never printed"},
    required=(),
    add_arguments=_add_arguments,
    for_operators=False,
)
