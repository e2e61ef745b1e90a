"""The contract with the messenger service: every table, column, type, unique key and privilege
the product's functions rely on in the service's schema, stated once.

``check`` compares a database with it (read-only catalog queries, through OIDs: casting a name to
``regclass`` needs the very USAGE that may be missing); ``grants_sql`` prints the column-by-column
GRANTs that satisfy it (``service-sql grants --to ROLE``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

SCHEMA = "messenger"
#: The product's own table in the service's schema (the design card puts it there).
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


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    #: Columns the functions read (SELECT), insert and update: the GRANTs, column by column.
    select: tuple[str, ...]
    insert: tuple[str, ...] = ()
    update: tuple[str, ...] = ()
    why: str = ""

    @property
    def qualified(self) -> str:
        return f"{SCHEMA}.{self.name}"


_SESSION_COLUMNS = (
    Column("id", UUID), Column("chat_id", UUID), Column("deal_id", UUID),
    Column("tenant_id", UUID), Column("started_at", TIMESTAMPTZ),
    Column("ended_at", TIMESTAMPTZ),
)

TABLES: tuple[Table, ...] = (
    Table(
        "call_sessions", _SESSION_COLUMNS,
        select=tuple(c.name for c in _SESSION_COLUMNS),
        why="a Direct recording's session (the adapter's sessions view): its end starts the SLA",
    ),
    Table(
        "conference_sessions", _SESSION_COLUMNS,
        select=tuple(c.name for c in _SESSION_COLUMNS),
        why="a Conference recording's session, as call_sessions",
    ),
    Table(
        "call_recordings",
        (
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
        select=("id", "session_kind", "session_id", "media_type", "trigger", "status",
                "file_id", "size_bytes", "duration_seconds", "format", "failure_reason",
                "started_at", "ended_at", "available_at", "version"),
        update=("status", "file_id", "size_bytes", "duration_seconds", "format",
                "failure_reason", "started_at", "ended_at", "available_at", "failed_at",
                "version", "updated_at"),
        why="the recording (the adapter's recordings view): make_available and make_failed move "
            "a stuck one to Available or Failed under a status guard",
    ),
    Table(
        "integration_outbox",
        (
            Column("topic", TEXT), Column("dedupe_key", TEXT),
            Column("created_at", TIMESTAMPTZ), Column("published_at", TIMESTAMPTZ),
        ),
        select=("topic", "dedupe_key", "created_at", "published_at"),
        why="only read (the adapter's service_events view): a recording whose event the "
            "service enqueued itself gets none from the product; the product never writes, "
            "marks or deletes a row here (its events are in recording_finalize.outbox)",
    ),
    Table(
        "realtime_outbox",
        (
            Column("id", INTEGER), Column("kind", TEXT, 18), Column("session_kind", TEXT, 10),
            Column("session_id", UUID), Column("reference_id", UUID), Column("payload", JSONB),
            Column("created_at", TIMESTAMPTZ), Column("dispatched_at", TIMESTAMPTZ),
        ),
        select=(),
        insert=("kind", "session_kind", "session_id", "reference_id", "payload"),
        why="the RecordingAvailable / RecordingFailed pushes, written with the transition (the "
            "adapter's enqueue_realtime)",
    ),
)
TABLE_BY_NAME = {t.name: t for t in TABLES}


@dataclass(frozen=True)
class UniqueKey:
    table: str
    columns: tuple[str, ...]
    #: The index must have this name (the design card fixes it), or any name when None.
    index_name: str | None
    why: str


UNIQUE_KEYS: tuple[UniqueKey, ...] = (
    UniqueKey("call_recordings", ("session_kind", "session_id"), "ix_recording_active",
              "at most one non-terminal recording per session; discovery reads the active "
              "recordings through it (a unique index, partial on the non-terminal statuses)"),
)


@dataclass
class Problems:
    """What a database lacks for the product; empty when the contract holds."""

    items: list[str] = field(default_factory=list)
    #: CREATE ROLE statements for the group roles that are missing (and cannot be created).
    create_roles: list[str] = field(default_factory=list)
    #: Group roles that are missing and that migrate will create (the role has CREATEROLE).
    roles_to_create: list[str] = field(default_factory=list)
    #: Service tables missing that --create-service-tables will create.
    tables_to_create: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.items)

    def message(self) -> str:
        lines = [f"  - {item}" for item in self.items]
        if self.create_roles:
            lines.append("  a role with CREATEROLE runs, once per cluster:")
            lines += [f"      {statement}" for statement in self.create_roles]
        return "\n".join(lines)


_COLUMNS = """
select c.relname, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
    case when a.atttypid = 'pg_catalog.varchar'::pg_catalog.regtype and a.atttypmod > 4
        then a.atttypmod - 4 end
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
join pg_catalog.pg_attribute as a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
where n.nspname = %s and c.relkind in ('r', 'p') and c.relname = any(%s)
"""

_TABLES = """
select c.relname, c.oid::bigint, pg_catalog.pg_get_userbyid(c.relowner)
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
where n.nspname = %s and c.relkind in ('r', 'p') and c.relname = any(%s)
"""

_UNIQUE_INDEXES = """
select t.relname, i.relname, x.indpred is not null,
    array(select a.attname::text from pg_catalog.unnest(x.indkey) with ordinality as k (attnum, o)
          join pg_catalog.pg_attribute as a on a.attrelid = t.oid and a.attnum = k.attnum
          order by k.o)
from pg_catalog.pg_index as x
join pg_catalog.pg_class as i on i.oid = x.indexrelid
join pg_catalog.pg_class as t on t.oid = x.indrelid
join pg_catalog.pg_namespace as n on n.oid = t.relnamespace
-- ON CONFLICT cannot use a deferrable key as its arbiter, nor one with an expression column.
where n.nspname = %s and x.indisunique and x.indisvalid and x.indimmediate
    and x.indexprs is null and t.relname = any(%s)
"""

_ROLE = """
select r.rolname, r.rolcreaterole or r.rolsuper,
    pg_catalog.has_database_privilege(r.oid, pg_catalog.current_database(), 'CONNECT'),
    pg_catalog.has_database_privilege(r.oid, pg_catalog.current_database(), 'CREATE'),
    n.oid is not null,
    coalesce(pg_catalog.has_schema_privilege(r.oid, n.oid, 'USAGE'), false),
    coalesce(pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE'), false)
from pg_catalog.pg_roles as r
left join pg_catalog.pg_namespace as n on n.nspname = %s
where r.rolname = %s
"""

_OWNED = """
select n.nspname, pg_catalog.pg_get_userbyid(n.nspowner)
from pg_catalog.pg_namespace as n where n.nspname = any(%s)
"""

_GROUP_ROLES = "select rolname from pg_catalog.pg_roles where rolname = any(%s)"

# The sequences behind column defaults (a serial or bigserial key; an identity column has no
# default and needs no privilege): the table, the column, the sequence, and whether the role
# may call nextval() on it.
_DEFAULT_SEQUENCES = """
select c.relname, a.attname, pg_catalog.quote_ident(sn.nspname) || '.'
        || pg_catalog.quote_ident(s.relname),
    pg_catalog.has_sequence_privilege(%s::name, s.oid, 'USAGE')
from pg_catalog.pg_attrdef as d
join pg_catalog.pg_class as c on c.oid = d.adrelid
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
join pg_catalog.pg_attribute as a on a.attrelid = d.adrelid and a.attnum = d.adnum
join pg_catalog.pg_depend as p on p.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
    and p.objid = d.oid and p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
join pg_catalog.pg_class as s on s.oid = p.refobjid and s.relkind = 'S'
join pg_catalog.pg_namespace as sn on sn.oid = s.relnamespace
where n.nspname = %s and c.relname = any(%s) and not a.attisdropped
"""

_COLUMN_PRIVILEGES = """
select x.t, x.c, x.p, pg_catalog.has_column_privilege(%s::name, x.t::oid, x.c, x.p)
from unnest(%s::bigint[], %s::text[], %s::text[]) as x (t, c, p)
"""


def product_owner(conn: psycopg.Connection[Any]) -> str | None:
    """The role that owns schema recording_finalize (the product's owner), if installed."""
    row = conn.execute(_OWNED, (["recording_finalize"],)).fetchone()
    return None if row is None else str(row[1])


def check(conn: psycopg.Connection[Any], role: str, *, installing: bool = False,
          create_service_tables: bool = False, as_owner: bool = False) -> Problems:
    """Every way the database falls short of the contract for ``role`` (the product's owner):
    the reference tables, or with a DBA's adapter its ports. ``installing`` (migrate): also the
    privileges to create what the product owns; ``create_service_tables``: a missing service
    table is to be created, not a problem. Read-only."""
    from . import adapter

    problems = Problems()
    dbas_adapter = adapter.state(conn, as_owner=as_owner) is adapter.State.DBAS
    names = [] if dbas_adapter else [t.name for t in TABLES]
    role_row = conn.execute(_ROLE, (SCHEMA, role)).fetchone()
    if role_row is None:
        problems.items.append(f"role {role} does not exist")
        return problems
    _, can_create_roles, can_connect, can_create_db, has_schema, usage, create_in_schema = role_row
    owners = {str(r[0]): str(r[1]) for r in conn.execute(_OWNED, (list(PRODUCT_SCHEMAS),))}
    tables = {str(r[0]): (int(r[1]), str(r[2]))
              for r in conn.execute(_TABLES, (SCHEMA, [*names, PRODUCT_TABLE]))}

    if installing:
        _installing(problems, role, bool(can_create_roles), bool(can_create_db), owners,
                    tables, conn)
    if not can_connect:
        problems.items.append(f"database: role {role} has no CONNECT privilege")
    if not has_schema:
        if not (create_service_tables and can_create_db):
            problems.items.append(f"schema {SCHEMA} does not exist"
                                  + ("" if create_service_tables else
                                     " (a new database: migrate --create-service-tables)"))
        problems.tables_to_create = names if create_service_tables else []
        return problems
    if not usage:
        problems.items.append(f"schema {SCHEMA}: role {role} has no USAGE privilege")
    if installing and PRODUCT_TABLE not in tables and not create_in_schema:
        problems.items.append(f"schema {SCHEMA}: role {role} has no CREATE privilege (needed "
                              f"once, to create {SCHEMA}.{PRODUCT_TABLE})")

    _missing_tables(problems, role, [name for name in names if name not in tables],
                    create_service_tables, bool(create_in_schema))
    if dbas_adapter:
        problems.items += adapter.port_problems(conn)
    present = [name for name in names if name in tables]
    existing = _columns(problems, conn, present)
    _unique_keys(problems, conn, present)
    _privileges(problems, conn, role, {name: tables[name][0] for name in present}, existing)
    _default_sequences(problems, conn, role, present)
    return problems


def _missing_tables(problems: Problems, role: str, missing: list[str],
                    create_service_tables: bool, create_in_schema: bool) -> None:
    """Missing service tables: a problem, or (``create_service_tables``) tables to create."""
    if not create_service_tables:
        problems.items += [f"{SCHEMA}.{name}: the table does not exist" for name in missing]
        return
    problems.tables_to_create = missing
    if missing and not create_in_schema:
        problems.items.append(f"schema {SCHEMA}: role {role} has no CREATE privilege (needed "
                              f"to create {', '.join(missing)})")


def _installing(problems: Problems, role: str, can_create_roles: bool, can_create_db: bool,
                owners: dict[str, str], tables: dict[str, tuple[int, str]],
                conn: psycopg.Connection[Any]) -> None:
    """What creating the product's own objects needs: the schemas free or the role's own, the
    group roles there or creatable, the product table free or the role's own."""
    for schema, owner in owners.items():
        if owner != role:
            problems.items.append(f"schema {schema} exists and belongs to {owner}, not {role}: "
                                  "migrate as its owner")
    if len(owners) < len(PRODUCT_SCHEMAS) and not can_create_db:
        absent = ", ".join(s for s in PRODUCT_SCHEMAS if s not in owners)
        problems.items.append(f"database: role {role} has no CREATE privilege (needed to create "
                              f"schemas {absent})")
    if PRODUCT_TABLE in tables and tables[PRODUCT_TABLE][1] != role:
        problems.items.append(f"{SCHEMA}.{PRODUCT_TABLE} exists and belongs to "
                              f"{tables[PRODUCT_TABLE][1]}, not {role}")
    present = {str(r[0]) for r in conn.execute(_GROUP_ROLES, (list(GROUP_ROLES),))}
    roles_absent = [name for name in GROUP_ROLES if name not in present]
    if roles_absent and can_create_roles:
        problems.roles_to_create = roles_absent
    elif roles_absent:
        problems.items.append(f"group role(s) {', '.join(roles_absent)} missing, and {role} has "
                              "no CREATEROLE to create them")
        problems.create_roles = [f"create role {name} nologin;" for name in roles_absent]


def _columns(problems: Problems, conn: psycopg.Connection[Any],
             present: Sequence[str]) -> set[tuple[str, str]]:
    """Checks every contract column of the tables present; returns the (table, column) pairs
    that exist."""
    found: dict[tuple[str, str], tuple[str, int | None]] = {}
    for table, column, type_name, length in conn.execute(_COLUMNS, (SCHEMA, list(present))):
        found[(str(table), str(column))] = (str(type_name), None if length is None else int(length))
    for name in present:
        for column in TABLE_BY_NAME[name].columns:
            where = f"{SCHEMA}.{name}.{column.name}"
            have = found.get((name, column.name))
            if have is None:
                problems.items.append(f"{where}: the column does not exist")
                continue
            type_name, length = have
            base = type_name.split("(")[0]
            if base not in column.types:
                problems.items.append(f"{where}: type {type_name}, the product needs "
                                      + " or ".join(column.types))
            elif column.min_length and length is not None and length < column.min_length:
                problems.items.append(f"{where}: type {type_name} is too short, the product "
                                      f"writes values of up to {column.min_length} characters")
    return set(found)


def _unique_keys(problems: Problems, conn: psycopg.Connection[Any],
                 present: Sequence[str]) -> None:
    indexes = [(str(t), str(i), bool(partial), [str(c) for c in cols])
               for t, i, partial, cols in conn.execute(_UNIQUE_INDEXES, (SCHEMA, list(present)))]
    for key in UNIQUE_KEYS:
        if key.table not in present:
            continue
        where = f"{SCHEMA}.{key.table} ({', '.join(key.columns)})"
        if key.index_name is not None:
            named = [ix for ix in indexes if ix[0] == key.table and ix[1] == key.index_name]
            if not named:
                problems.items.append(f"{where}: no unique index {key.index_name} ({key.why})")
            elif sorted(named[0][3]) != sorted(key.columns):
                problems.items.append(f"{where}: {key.index_name} is on "
                                      f"({', '.join(named[0][3])}) ({key.why})")
            continue
        if not any(ix[0] == key.table and not ix[2] and sorted(ix[3]) == sorted(key.columns)
                   for ix in indexes):
            problems.items.append(f"{where}: no unique key on exactly these columns ({key.why})")


def _privileges(problems: Problems, conn: psycopg.Connection[Any], role: str,
                oids: dict[str, int], existing: set[tuple[str, str]]) -> None:
    """One query for every column privilege of every table present (a missing column is
    reported by _columns and not asked about: has_column_privilege would raise)."""
    asked = [(name, column, privilege)
             for name in oids
             for privilege, columns in (("SELECT", TABLE_BY_NAME[name].select),
                                        ("INSERT", TABLE_BY_NAME[name].insert),
                                        ("UPDATE", TABLE_BY_NAME[name].update))
             for column in columns if (name, column) in existing]
    if not asked:
        return
    rows = conn.execute(_COLUMN_PRIVILEGES, (
        role, [oids[name] for name, _, _ in asked], [c for _, c, _ in asked],
        [p for _, _, p in asked])).fetchall()
    granted = {(int(t), str(c), str(p)): bool(ok) for t, c, p, ok in rows}
    for name in oids:
        for privilege in ("SELECT", "INSERT", "UPDATE"):
            lacking = [column for n, column, p in asked
                       if n == name and p == privilege
                       and not granted.get((oids[name], column, privilege))]
            if lacking:
                problems.items.append(f"{TABLE_BY_NAME[name].qualified}: role {role} lacks "
                                      f"{privilege} on {', '.join(lacking)}")


def _default_sequences(problems: Problems, conn: psycopg.Connection[Any], role: str,
                       present: Sequence[str]) -> None:
    """A column the product's INSERT leaves to its default evaluates it as the product's owner:
    a serial key's nextval() needs USAGE on its sequence (an identity column needs none)."""
    inserting = [name for name in present if TABLE_BY_NAME[name].insert]
    if not inserting:
        return
    for table, column, sequence, usable in conn.execute(
            _DEFAULT_SEQUENCES, (role, SCHEMA, inserting)):
        if str(column) in TABLE_BY_NAME[str(table)].insert or usable:
            continue
        problems.items.append(
            f"{SCHEMA}.{table}.{column}: role {role} lacks USAGE on sequence {sequence} (the "
            "column's default, which the product's INSERT leaves to the table)")


def _sequence_grants(role: str) -> list[str]:
    """A DO block granting USAGE on the sequences behind the defaults of the columns the
    product's INSERTs leave to the table: their names are the service's, so it looks them up."""
    tables = [t for t in TABLES if t.insert]
    lines = ["do $$", "declare", "    v_sequence text;", "begin", "    for v_sequence in",
             "        select distinct s.oid::pg_catalog.regclass::text",
             "        from pg_catalog.pg_attrdef as d",
             "        join pg_catalog.pg_attribute as a",
             "            on a.attrelid = d.adrelid and a.attnum = d.adnum",
             "        join pg_catalog.pg_depend as p",
             "            on p.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass",
             "            and p.objid = d.oid",
             "            and p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass",
             "        join pg_catalog.pg_class as s on s.oid = p.refobjid and s.relkind = 'S'"]
    for i, table in enumerate(tables):
        keyword = "where" if i == 0 else "or"
        lines.append(f"        {keyword} (d.adrelid = pg_catalog.to_regclass("
                     f"{_literal(table.qualified)})")
        columns = ", ".join(_literal(c) for c in table.insert)
        lines += textwrap.wrap(
            f"and a.attname <> all (array[{columns}]::name[]))",
            width=96, initial_indent="            ", subsequent_indent="                ")
    lines += [
        "    loop",
        "        execute pg_catalog.format('grant usage on sequence %s to %I', v_sequence,",
        f"            {_literal(role)});",
        f"        raise notice 'granted usage on sequence % to {role}', v_sequence;",
        "    end loop;",
        "end",
        "$$;",
    ]
    return lines


#: What the optional lifecycle functions (recording_started, recording_stopped, session_ended)
#: write on the reference schema, beyond what the reference adapter needs.
LIFECYCLE_GRANTS = (
    ("insert", ("id", "session_kind", "session_id", "media_type", "trigger", "status",
                "started_at"), "call_recordings"),
    ("select", ("created_at", "updated_at", "failed_at"), "call_recordings"),
    ("update", ("ended_at",), "call_sessions"),
    ("update", ("ended_at",), "conference_sessions"),
)


def grants_sql(role: str, *, lifecycle: bool = False) -> str:
    """The GRANTs the service's owner runs so that ``role`` (the product's owner) can install
    and run: only statements the owner of the service's objects can run on them."""
    ident = sql_ident(role)
    lines = _comment(
        f"GRANTs for the product's owner role {ident}, to be run by the owner of schema {SCHEMA} "
        "and its tables: each statement touches only the service's own objects. The product's "
        f"functions run as {ident} (SECURITY DEFINER): these are the rows they read and write, "
        "column by column; the worker's, operators' and service's logins get none of them.")
    lines += ["", *_comment(
        f"Reach the tables; CREATE only for {SCHEMA}.{PRODUCT_TABLE}, the product's one table "
        "here (revocable once migrate has created it).")]
    lines.append(f"grant usage, create on schema {SCHEMA} to {ident};")
    for table in TABLES:
        lines += ["", *_comment(f"{table.qualified}: {table.why}.")]
        for privilege, columns in (("select", table.select), ("insert", table.insert),
                                   ("update", table.update)):
            if columns:
                lines += textwrap.wrap(
                    f"grant {privilege} ({', '.join(columns)}) on {table.qualified} to {ident};",
                    width=100, subsequent_indent="    ", break_on_hyphens=False)
    if lifecycle:
        lines += _lifecycle_grants(ident)
    lines += ["", *_comment(
        "The sequences behind the defaults of the columns the product's INSERTs leave to the "
        "table (a serial or bigserial key): USAGE, so that their nextval() works. An identity "
        "column needs none, and then this grants nothing.")]
    lines += _sequence_grants(role)
    lines += ["", *_comment(
        "The database: CONNECT, and CREATE for the product's schemas "
        f"({', '.join(PRODUCT_SCHEMAS)}). Only the database's owner (or a superuser) can grant "
        "these; anyone else is told who must.")]
    lines += [
        "do $$",
        "begin",
        "    if pg_catalog.pg_has_role(current_user, (select d.datdba from pg_catalog.pg_database",
        "        as d where d.datname = pg_catalog.current_database()), 'USAGE') then",
        "        execute pg_catalog.format('grant connect, create on database %I to %I',",
        f"            pg_catalog.current_database(), {_literal(role)});",
        "    else",
        "        raise notice 'the owner of database % must run: grant connect, create on '",
        f"            'database % to {role}', pg_catalog.current_database(),",
        "            pg_catalog.current_database();",
        "    end if;",
        "end",
        "$$;",
        "",
        *_comment(
            "CREATE is needed only while installing. Once migrate has run, take it back (a later "
            "release that adds a schema asks for it again):"),
        f"-- revoke create on database <this database> from {ident};",
        f"-- revoke create on schema {SCHEMA} from {ident};",
    ]
    return "\n".join(lines) + "\n"


def _lifecycle_grants(ident: str) -> list[str]:
    lines = ["", *_comment(
        "The optional lifecycle functions: recording_started inserts a recording, "
        "session_ended sets a session's end (UPDATE also lets recording_started hold the "
        "session FOR SHARE).")]
    for privilege, columns, name in LIFECYCLE_GRANTS:
        lines += textwrap.wrap(
            f"grant {privilege} ({', '.join(columns)}) on {SCHEMA}.{name} to {ident};",
            width=100, subsequent_indent="    ", break_on_hyphens=False)
    return lines


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, width=97, initial_indent="-- ", subsequent_indent="-- ")


def sql_ident(name: str) -> str:
    """A role name as an SQL identifier (quoted only when it must be)."""
    if name.isidentifier() and name == name.lower() and name.isascii():
        return name
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
