"""The contract with the messenger service: every table, column, type, unique key and privilege
the product's functions rely on in the service's schema, stated once.

``check`` compares a database with it (read-only catalog queries, through OIDs: casting a name to
``regclass`` needs the very USAGE that may be missing).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from . import adapter
from .drift import package_sql, query

SCHEMA = "messenger"
#: The product's own table in the service's schema (beside the recordings it follows).
PRODUCT_TABLE = "recording_finalize_attempts"
#: The schemas the product owns (created by migrate, dropped by uninstall).
PRODUCT_SCHEMAS = ("recording_finalize", "recording_finalize_internal",
                   "recording_finalize_migrations", "recording_finalize_adapter")
GROUP_ROLES = {
    "recording_finalize_worker": "the sidecar's login is granted it: EXECUTE on the worker API",
    "recording_finalize_operator": "operators' logins: EXECUTE on the runbook functions",
    "recording_finalize_service": "the messenger service's login: EXECUTE on the lifecycle and "
                                  "ingest functions and storage incidents of source recorders",
}

UUID = ("uuid",)
TIMESTAMPTZ = ("timestamp with time zone",)
TEXT = ("text", "character varying")
BIGINT = ("bigint",)
INTEGER = ("integer", "bigint")
JSONB = ("jsonb",)


@dataclass(frozen=True)
class Column:
    name: str
    types: tuple[str, ...]
    #: For character varying: the longest value the product writes (None: it only reads).
    min_length: int | None = None


_SESSION_COLUMNS = (
    Column("id", UUID), Column("chat_id", UUID), Column("deal_id", UUID),
    Column("tenant_id", UUID), Column("started_at", TIMESTAMPTZ),
    Column("ended_at", TIMESTAMPTZ),
)

#: Each service table's columns the product reads or writes, with the types it can use.
TABLES: dict[str, tuple[Column, ...]] = {
    "call_sessions": _SESSION_COLUMNS,
    "conference_sessions": _SESSION_COLUMNS,
    "call_recordings": (
        Column("id", UUID), Column("session_kind", TEXT, 10), Column("session_id", UUID),
        Column("media_type", TEXT, 5), Column("trigger", TEXT, 6),
        Column("status", TEXT, 9), Column("file_id", TEXT, 1024),
        Column("size_bytes", BIGINT), Column("duration_seconds", INTEGER),
        Column("format", TEXT, 4), Column("failure_reason", TEXT, 7),
        Column("started_at", TIMESTAMPTZ), Column("ended_at", TIMESTAMPTZ),
        Column("available_at", TIMESTAMPTZ), Column("failed_at", TIMESTAMPTZ),
        Column("version", INTEGER), Column("created_at", TIMESTAMPTZ),
        Column("updated_at", TIMESTAMPTZ),
    ),
    "integration_outbox": (
        Column("topic", TEXT), Column("dedupe_key", TEXT),
        Column("created_at", TIMESTAMPTZ), Column("published_at", TIMESTAMPTZ),
    ),
    "realtime_outbox": (
        Column("id", INTEGER), Column("kind", TEXT, 18), Column("session_kind", TEXT, 10),
        Column("session_id", UUID), Column("reference_id", UUID), Column("payload", JSONB),
        Column("created_at", TIMESTAMPTZ), Column("dispatched_at", TIMESTAMPTZ),
    ),
}

GRANTS_FILE = "service/grants.sql"
LIFECYCLE_GRANTS_FILE = "service/grants_lifecycle.sql"
_GRANT = re.compile(r"^grant (select|insert|update) \(([^)]*)\)\s+on messenger\.(\w+) ", re.M)


@functools.cache
def privileges() -> dict[str, dict[str, tuple[str, ...]]]:
    """Table → privilege → columns, read from the grant script ``service-sql grants`` prints:
    what the DBA grants and what ``check`` asks for are one text."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for privilege, columns, table in _GRANT.findall(package_sql(GRANTS_FILE)):
        found.setdefault(table, {})[privilege] = tuple(c.strip() for c in columns.split(","))
    return found


#: The unique key the product relies on, under the name the contract fixes, and why.
UNIQUE_KEY = ("call_recordings", "ix_recording_active", ("session_kind", "session_id"),
              "at most one non-terminal recording per session; discovery reads the active "
              "recordings through it (a unique index, partial on the non-terminal statuses)")


@dataclass
class Problems:
    """What a database lacks for the product; empty when the contract holds."""

    items: list[str] = field(default_factory=list)
    #: Group roles that are missing and that migrate will create (the role has CREATEROLE).
    roles_to_create: list[str] = field(default_factory=list)
    #: Service tables missing that --create-service-tables will create.
    tables_to_create: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.items)

    def message(self) -> str:
        return "\n".join(f"  - {item}" for item in self.items)


def owners(conn: psycopg.Connection[Any]) -> dict[str, str]:
    """The owner of each of the product's schemas and of its table that exists, by name."""
    return {str(name): str(owner) for name, owner in conn.execute(query("owners"), {
        "schemas": list(PRODUCT_SCHEMAS), "schema": SCHEMA, "table": PRODUCT_TABLE})}


def product_owner(conn: psycopg.Connection[Any]) -> str | None:
    """The role that owns schema recording_finalize (the product's owner), if installed."""
    return owners(conn).get("recording_finalize")


#: Of each table (or view): column → its type and, for character varying, its length.
_Columns = dict[str, dict[str, tuple[str, int | None]]]


def _tables(conn: psycopg.Connection[Any], names: Sequence[str]
            ) -> tuple[dict[str, int], _Columns]:
    """Of each table of ``names`` that exists: its oid, and its columns."""
    oids: dict[str, int] = {}
    columns: _Columns = {}
    for table, oid, column, type_name, length in conn.execute(query("table_columns"),
                                                              (SCHEMA, list(names))):
        oids[str(table)] = int(oid)
        found = columns.setdefault(str(table), {})
        if column is not None:
            found[str(column)] = (str(type_name), None if length is None else int(length))
    return oids, columns


def check(conn: psycopg.Connection[Any], role: str, *, installing: bool = False,
          create_service_tables: bool = False) -> Problems:
    """Every way the database falls short of the contract for ``role`` (the product's owner):
    the reference tables, or with a DBA's adapter its ports. ``installing`` (migrate): also the
    privileges to create what the product owns; ``create_service_tables``: a missing service
    table is to be created, not a problem. Read-only."""
    problems = Problems()
    role_row = conn.execute(query("role_privileges"), (SCHEMA, role)).fetchone()
    if role_row is None:
        problems.items.append(f"role {role} does not exist")
        return problems
    can_create_roles, can_connect, can_create_db, has_schema, usage, create_in_schema = role_row
    dbas_adapter = adapter.state(conn) is adapter.State.DBAS
    names = [] if dbas_adapter else list(TABLES)
    oids, columns = _tables(conn, names)
    database = _database(conn)
    if installing:
        _installing(problems, conn, role, bool(can_create_roles), bool(can_create_db),
                    bool(has_schema and not create_in_schema))
    if not can_connect:
        problems.items.append(f"database: role {role} has no CONNECT privilege; the database's "
                              f"owner runs: grant connect on database {database} to "
                              f"{_ident(role)};")
    if not has_schema:
        if not (create_service_tables and can_create_db):
            problems.items.append(f"schema {SCHEMA} does not exist"
                                  + ("" if create_service_tables else
                                     " (a new database: migrate --create-service-tables)"))
        problems.tables_to_create = names if create_service_tables else []
        return problems
    if not usage:
        problems.items.append(f"schema {SCHEMA}: role {role} has no USAGE privilege; the owner "
                              f"of schema {SCHEMA} runs: grant usage on schema {SCHEMA} to "
                              f"{_ident(role)};")
    missing = [name for name in names if name not in columns]
    if not create_service_tables:
        problems.items += [f"{SCHEMA}.{name}: the table does not exist" for name in missing]
    elif missing and not create_in_schema:
        problems.items.append(f"schema {SCHEMA}: role {role} has no CREATE privilege (needed "
                              f"to create {', '.join(missing)}); {_grant_create(role, SCHEMA)}")
    problems.tables_to_create = missing if create_service_tables else []
    if dbas_adapter:
        _ports(problems, conn)
    present = [name for name in names if name in columns]
    for name in present:
        problems.items += _column_problems(f"{SCHEMA}.{name}", TABLES[name], columns[name])
    if UNIQUE_KEY[0] in present:
        _unique_key(problems, conn)
    _privileges(problems, conn, role, {name: oids[name] for name in present}, columns)
    _default_sequences(problems, conn, role, present)
    return problems


def _installing(problems: Problems, conn: psycopg.Connection[Any], role: str,
                can_create_roles: bool, can_create_db: bool, cannot_create_in_schema: bool
                ) -> None:
    """What creating the product's own objects needs: the schemas free or the role's own, the
    group roles there or creatable, the product table free or the role's own."""
    owned = owners(conn)
    table = f"{SCHEMA}.{PRODUCT_TABLE}"
    problems.items += [f"{table} exists and belongs to {owner}, not {role}" if name == table
                       else f"schema {name} exists and belongs to {owner}, not {role}: migrate "
                       "as its owner" for name, owner in owned.items() if owner != role]
    if any(s not in owned for s in PRODUCT_SCHEMAS) and not can_create_db:
        absent = ", ".join(s for s in PRODUCT_SCHEMAS if s not in owned)
        problems.items.append(f"database: role {role} has no CREATE privilege (needed to create "
                              f"schemas {absent}); {_grant_create(role, None, _database(conn))}")
    if table not in owned and cannot_create_in_schema:
        problems.items.append(f"schema {SCHEMA}: role {role} has no CREATE privilege (needed "
                              f"once, to create {table}); {_grant_create(role, SCHEMA)}")
    present = {str(r[0]) for r in conn.execute(query("group_roles"), (list(GROUP_ROLES),))}
    roles = [name for name in GROUP_ROLES if name not in present]
    if roles and can_create_roles:
        problems.roles_to_create = roles
    elif roles:
        statements = "".join(f"\n      create role {name} nologin;" for name in roles)
        problems.items.append(f"group role(s) {', '.join(roles)} missing, and {role} has no "
                              "CREATEROLE to create them; a role with CREATEROLE runs, once per "
                              f"cluster:{statements}")


def _ident(name: str) -> str:
    """A name as an SQL identifier (quoted only when it must be)."""
    if name.isidentifier() and name == name.lower() and name.isascii():
        return name
    return '"' + name.replace('"', '""') + '"'


def _database(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute(query("current_role_and_database")).fetchone()
    return _ident(str(row[1])) if row else "<this database>"


def _grant_create(role: str, schema: str | None, database: str = "") -> str:
    """The statement that grants CREATE for the install, and the one that takes it back."""
    target = f"schema {schema}" if schema else f"database {database}"
    owner = f"the owner of schema {schema}" if schema else "the database's owner"
    return (f"{owner} runs, for the install: grant create on {target} to {_ident(role)}; "
            f"(once migrate has run: revoke create on {target} from {_ident(role)};)")


def _column_problems(where: str, wanted: Sequence[Column],
                     found: dict[str, tuple[str, int | None]], *, view: bool = False) -> list[str]:
    """Each column of ``wanted`` that ``found`` lacks or types so the product cannot use it; a
    view's problems say what the product needs and where to cast."""
    problems: list[str] = []
    for column in wanted:
        where_column = f"{where}.{column.name}"
        if column.name not in found:
            problems.append(f"{where_column}: the column does not exist" + (
                f" (the product needs {column.name} {column.types[0]})" if view else ""))
            continue
        type_name, length = found[column.name]
        if type_name.split("(")[0] not in column.types:
            problems.append(f"{where_column}: type {type_name}, the product needs "
                            + " or ".join(column.types)
                            + (" (cast it in the view)" if view else ""))
        elif column.min_length and length is not None and length < column.min_length:
            problems.append(f"{where_column}: type {type_name} is too short, the product "
                            f"writes values of up to {column.min_length} characters")
    return problems


def _ports(problems: Problems, conn: psycopg.Connection[Any]) -> None:
    """A DBA's adapter: each port missing, or lacking a column, argument or result type used."""
    schema = adapter.SCHEMA
    views: _Columns = {}
    for view, column, type_name in conn.execute(query("view_columns"), (schema,)):
        views.setdefault(str(view), {})[str(column)] = (str(type_name), None)
    functions: dict[str, dict[tuple[str, ...], tuple[str, bool]]] = {}
    for name, args, result, returns_set in conn.execute(query("function_signatures"), (schema,)):
        functions.setdefault(str(name), {})[tuple(args)] = (str(result), bool(returns_set))
    for view, wanted in adapter.VIEWS.items():
        if view not in views:
            problems.items.append(f"{schema}.{view}: the view does not exist (service-sql adapter "
                                  "prints the reference one)")
            continue
        problems.items += _column_problems(f"{schema}.{view}", [
            Column(name, (type_name,)) for name, type_name in wanted], views[view], view=True)
    for name, (args, result) in adapter.FUNCTIONS.items():
        where, found = f"{schema}.{name}({', '.join(args)})", functions.get(name, {})
        if args not in found:
            problems.items.append(f"{where}: the function does not exist with these arguments"
                                  + (f" (found: {'; '.join(', '.join(a) for a in found)})"
                                     if found else ""))
        elif found[args] != (result, False):
            problems.items.append(f"{where}: returns {'setof ' if found[args][1] else ''}"
                                  f"{found[args][0]}, the product needs {result}")


def _unique_key(problems: Problems, conn: psycopg.Connection[Any]) -> None:
    table, index, columns, why = UNIQUE_KEY
    row = conn.execute(query("unique_index"), (SCHEMA, table, index)).fetchone()
    where = f"{SCHEMA}.{table} ({', '.join(columns)})"
    if row is None:
        problems.items.append(f"{where}: no unique index {index} ({why})")
    elif sorted(row[0]) != sorted(columns):
        problems.items.append(f"{where}: {index} is on ({', '.join(row[0])}) ({why})")


def _privileges(problems: Problems, conn: psycopg.Connection[Any], role: str,
                oids: dict[str, int], existing: _Columns) -> None:
    """One query for every column privilege of every table present (a missing column is
    reported by _column_problems and not asked about: has_column_privilege would raise)."""
    asked = [(oid, column, privilege.upper()) for name, oid in oids.items()
             for privilege, columns in privileges().get(name, {}).items()
             for column in columns if column in existing[name]]
    names = {oid: name for name, oid in oids.items()}
    lacking: dict[tuple[str, str], list[str]] = {}
    for oid, column, privilege in conn.execute(query("lacking_column_privileges"), (
            [o for o, _, _ in asked], [c for _, c, _ in asked], [p for _, _, p in asked], role)):
        lacking.setdefault((names[int(oid)], str(privilege)), []).append(str(column))
    for (name, privilege), columns in lacking.items():
        problems.items.append(f"{SCHEMA}.{name}: role {role} lacks "
                              f"{privilege} on {', '.join(columns)}")


def _default_sequences(problems: Problems, conn: psycopg.Connection[Any], role: str,
                       present: Sequence[str]) -> None:
    """A column the product's INSERT leaves to its default evaluates it as the product's owner:
    a serial key's nextval() needs USAGE on its sequence (an identity column needs none)."""
    inserted = {name: privileges().get(name, {}).get("insert", ()) for name in present}
    inserting = [name for name, columns in inserted.items() if columns]
    for table, column, sequence, usable in conn.execute(
            query("default_sequences"), (role, SCHEMA, inserting)):
        if str(column) not in inserted[str(table)] and not usable:
            problems.items.append(
                f"{SCHEMA}.{table}.{column}: role {role} lacks USAGE on sequence {sequence} "
                "(the column's default, which the product's INSERT leaves to the table)")
