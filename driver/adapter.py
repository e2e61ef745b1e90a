"""The adapter: the six ports through which the product reaches the service's data (SPEC §9).

Which adapter the database holds (``state``: none, migrate's reference one, or a DBA's), whether
its ports have the columns and arguments the product uses (``port_problems``), and what
``recording_finalize.check_adapter`` finds beneath them (``beneath``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import psycopg

SCHEMA = "recording_finalize_adapter"
REFERENCE_FILE = "adapter/reference.sql"

_TZ = "timestamp with time zone"

#: Each view's columns and each function's arguments and result, as the product uses them.
VIEWS: dict[str, tuple[tuple[str, str], ...]] = {
    "recordings": (("id", "uuid"), ("session_kind", "text"), ("session_id", "uuid"),
                   ("status", "text"), ("file_id", "text"), ("size_bytes", "bigint"),
                   ("duration_seconds", "integer"), ("format", "text"),
                   ("failure_reason", "text"), ("media_type", "text"), ("trigger", "text"),
                   ("started_at", _TZ), ("ended_at", _TZ), ("available_at", _TZ)),
    "sessions": (("kind", "text"), ("id", "uuid"), ("chat_id", "uuid"), ("deal_id", "uuid"),
                 ("tenant_id", "uuid"), ("started_at", _TZ), ("ended_at", _TZ)),
    "service_events": (("recording_id", "uuid"), ("enqueued_at", _TZ), ("published_at", _TZ)),
}
FUNCTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "make_available": (("uuid", "text", "text", "bigint", "integer", "text", _TZ), "boolean"),
    "make_failed": (("uuid", "text", "text", _TZ), "boolean"),
    "enqueue_realtime": (("text", "text", "uuid", "uuid", "jsonb"), "void"),
}


class State(enum.Enum):
    ABSENT = "absent"          # no adapter schema: migrate installs the reference one
    REFERENCE = "reference"    # what migrate installed, unchanged since: migrate may upgrade it
    DBAS = "dba's"             # created or edited by a DBA: migrate keeps it and checks it


_STATE = """
select pg_catalog.to_regnamespace(%(schema)s) is not null,
    (select s.adapter_md5::text from recording_finalize_migrations.migrate_state as s),
    recording_finalize_internal.adapter_fingerprint()
"""
_STATE_BEFORE_INSTALL = "select pg_catalog.to_regnamespace(%(schema)s) is not null, null, null"
_HAS_BOOKKEEPING = """
select pg_catalog.to_regprocedure('recording_finalize_internal.adapter_fingerprint()') is not null
    and exists (select from pg_catalog.pg_attribute
        where attrelid = pg_catalog.to_regclass('recording_finalize_migrations.migrate_state')
            and attname = 'adapter_md5')
"""
_STATE_FROM_SCHEMA_STATE = """
select sha256, recorded_md5, live_md5 from recording_finalize.schema_state()
where kind = 'adapter'
"""


def state(conn: psycopg.Connection[Any], *, as_owner: bool = True) -> State:
    """Which adapter the database holds. ``as_owner``: read migrate's bookkeeping directly (the
    owner); otherwise through ``schema_state()`` (the worker, the operator)."""
    exists_row = conn.execute(_STATE_BEFORE_INSTALL, {"schema": SCHEMA}).fetchone()
    if not (exists_row and exists_row[0]):
        return State.ABSENT
    if as_owner:
        ready = conn.execute(_HAS_BOOKKEEPING).fetchone()
        if not (ready and ready[0]):
            return State.DBAS
        row = conn.execute(_STATE, {"schema": SCHEMA}).fetchone()
        recorded, live = (row[1], row[2]) if row else (None, None)
    else:
        row = conn.execute(_STATE_FROM_SCHEMA_STATE).fetchone()
        recorded, live = (row[1], row[2]) if row else (None, None)
    return State.REFERENCE if recorded is not None and recorded == live else State.DBAS


_VIEW_COLUMNS = """
select c.relname, a.attname, pg_catalog.format_type(a.atttypid, null)
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
join pg_catalog.pg_attribute as a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
where n.nspname = %s and c.relkind in ('v', 'm', 'r', 'p')
"""
_FUNCTION_SIGNATURES = """
select p.proname, array(select pg_catalog.format_type(t, null)
                        from pg_catalog.unnest(p.proargtypes) as t),
    pg_catalog.format_type(p.prorettype, null), p.proretset
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname = %s and p.prokind = 'f'
"""


def port_problems(conn: psycopg.Connection[Any]) -> list[str]:
    """Each port that is missing, or lacks a column, argument or result type the product uses.
    Read-only (the catalog)."""
    problems: list[str] = []
    columns: dict[str, dict[str, str]] = {}
    for view, column, type_name in conn.execute(_VIEW_COLUMNS, (SCHEMA,)):
        columns.setdefault(str(view), {})[str(column)] = str(type_name)
    for view, wanted in VIEWS.items():
        where = f"{SCHEMA}.{view}"
        have = columns.get(view)
        if have is None:
            problems.append(f"{where}: the view does not exist (service-sql adapter prints the "
                            "reference one)")
            continue
        for column, type_name in wanted:
            if column not in have:
                problems.append(f"{where}.{column}: the column does not exist (the product needs "
                                f"{column} {type_name})")
            elif have[column] != type_name:
                problems.append(f"{where}.{column}: type {have[column]}, the product needs "
                                f"{type_name} (cast it in the view)")
    signatures: dict[str, list[tuple[tuple[str, ...], str, bool]]] = {}
    for name, args, result, returns_set in conn.execute(_FUNCTION_SIGNATURES, (SCHEMA,)):
        signatures.setdefault(str(name), []).append((tuple(args), str(result), bool(returns_set)))
    for name, (args, result) in FUNCTIONS.items():
        where = f"{SCHEMA}.{name}({', '.join(args)})"
        found = signatures.get(name, [])
        if not any(a == args for a, _, _ in found):
            problems.append(f"{where}: the function does not exist with these arguments"
                            + (f" (found: {'; '.join(', '.join(a) for a, _, _ in found)})"
                               if found else ""))
            continue
        _, have_result, returns_set = next(f for f in found if f[0] == args)
        if have_result != result or returns_set:
            problems.append(f"{where}: returns {'setof ' if returns_set else ''}{have_result}, "
                            f"the product needs {result}")
    return problems


@dataclass(frozen=True)
class Finding:
    severity: str   # error, warning or notice
    port: str
    problem: str
    fix: str | None

    def line(self) -> str:
        return f"{self.port}: {self.problem}" + (f" (fix: {self.fix})" if self.fix else "")


_CHECK = "select severity, port, problem, fix from recording_finalize.check_adapter(%s)"


def beneath(conn: psycopg.Connection[Any], *, rehearse: bool) -> list[Finding]:
    """What ``recording_finalize.check_adapter`` finds beneath the ports (one call; with
    ``rehearse`` it rehearses the writes in a subtransaction it rolls back)."""
    return [Finding(str(s), str(p), str(m), None if f is None else str(f))
            for s, p, m, f in conn.execute(_CHECK, (rehearse,))]


def errors(findings: list[Finding]) -> list[str]:
    return [f.line() for f in findings if f.severity == "error"]
