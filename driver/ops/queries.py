"""The operator commands' SQL (as a login granted ``recording_finalize_operator``); what the worker
itself sends is in the core's ``queries.py``. Each command calls one function of the public
schema by name; its rows come back as they are, one dict per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from ..model import Verdict
from ..queries import Connection, call_rows

Row = dict[str, Any]


def call(conn: Connection, function: str, **params: Any) -> list[Row]:
    """``select * from recording_finalize.<function>(p_<name> => value, ...)``: its rows."""
    return call_rows(conn, dict_row, function, **params)


def preview_outcomes(conn: Connection, verdicts: Sequence[tuple[UUID, Verdict]],
                     bucket_confirmed: bool | None) -> list[Row]:
    """What the next cycle would do with each recording, given the verdict the caller just saw
    and whether its HeadBucket answered (None: not asked): the real path's own SQL decides."""
    items = [{"recording_id": str(rid), "outcome": v.outcome, "file_id": v.file_id,
              "size_bytes": v.size_bytes, "duration_seconds": v.duration_seconds,
              "format": v.format, "error": v.error, "bucket_confirmed": bucket_confirmed}
             for rid, v in verdicts]
    return call(conn, "preview_outcomes", verdicts=Jsonb(items)) if items else []
