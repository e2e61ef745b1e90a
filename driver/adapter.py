"""The adapter: the ports through which the product reaches the service's data
(docs/contract/adapter.md; declared in the database by recording_finalize_internal.adapter_ports()).

Which adapter the database holds, what the product uses of its ports (``contract.check`` checks
them), and what ``recording_finalize.check_adapter`` finds beneath them.
"""

from __future__ import annotations

import enum
import hashlib
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

#: Earlier texts of REFERENCE_FILE (by sha256) and the sha256 of their statements (the text
#: without its comment lines, ``statements_sha256``). An adapter installed from an earlier text
#: with the shipped file's statements is the same objects, comments aside: migrate leaves it in
#: place, and rollback to the release that shipped that text keeps it.
EARLIER_REFERENCE_TEXTS: dict[str, str] = {
    # 0.4.1's: its comments cited documents the repository does not ship.
    "b748a98428b2ad0e7f12527425de746d5ca1db9704f284322474e29c4aea7946":
        "5a99e21531e7824e6e5370cda1879c413088a43fde23b48616d4e7eb51210c72",
}


def statements_sha256(text: str) -> str:
    """The sha256 of an adapter file without its comment lines and blank lines."""
    kept = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(
        "--")]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()


def same_reference(one: str | None, other: str | None, shipped: str) -> bool:
    """Whether the reference adapters installed from the texts with sha256 ``one`` and ``other``
    are the same statements (``shipped``: this package's text of the file)."""
    if one == other:
        return True
    ours = hashlib.sha256(shipped.encode()).hexdigest()

    def statements(sha: str | None) -> str | None:
        return statements_sha256(shipped) if sha == ours else EARLIER_REFERENCE_TEXTS.get(
            sha or "")

    return statements(one) is not None and statements(one) == statements(other)


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
