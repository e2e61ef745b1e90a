"""The adapter: the ports through which the product reaches the service's data
(docs/contract/adapter.md; declared in the database by recording_finalize_internal.adapter_ports()).

Which adapter the database holds, what the product uses of its ports (``contract.check`` checks
them), and what ``recording_finalize.check_adapter`` finds beneath them.
"""

from __future__ import annotations

import enum
from typing import Any

import psycopg

from .drift import query

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


def state(conn: psycopg.Connection[Any]) -> State:
    """Which adapter the database holds (before the first migrate, any is a DBA's)."""
    exists, migrated = conn.execute(query("adapter_state")).fetchone() or (False, False)
    if not exists:
        return State.ABSENT
    found = conn.execute(query("adapter_fingerprints")).fetchone() if migrated else None
    recorded, live = found or (None, None)
    return State.REFERENCE if recorded is not None and recorded == live else State.DBAS


def beneath(conn: psycopg.Connection[Any], *, rehearse: bool) -> dict[str, list[str]]:
    """check_adapter's findings, "port: problem (fix: …)" by severity; with ``rehearse`` it
    rehearses the writes in a subtransaction it rolls back."""
    found: dict[str, list[str]] = {}
    for severity, port, problem, fix in conn.execute(query("check_adapter"), (rehearse,)):
        found.setdefault(str(severity), []).append(
            f"{port}: {problem}" + (f" (fix: {fix})" if fix else ""))
    return found
