"""What one finalized row costs the database, the SQL as it is beside the SQL as it was.

The "before" SQL stays reachable for a same-run comparison without a second checkout: a second
database of the bench's cluster is migrated like the first (``recording-finalize migrate``,
every migration and function of this tree), then the files of ``bench/sql_before/`` are applied
to it in name order, as the owner. Those files put back what the database-cost work of 0.2.0
changed: the previous bodies of the functions it rewrote and the schema objects its
migrations replaced. They are bench-only: nothing of the driver or of ``sql/`` reads them.
With no file there (since the 0.2.0 baseline: the SQL before it is of the old API and no
longer applies), the figure measures the SQL now alone.

The e2e figure is then run on both databases, interleaved (each goes first in turn), and the
cluster's CPU (every backend, the exited ones included) over N gives the CPU per finalized row;
pg_stat_statements adds the server-side execution time of each statement the worker sent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

BEFORE_DIR = Path(__file__).resolve().parent / "sql_before"
BEFORE_DB = "rfr_bench_sql_before"


def before_files() -> list[Path]:
    return sorted(BEFORE_DIR.glob("*.sql"))


def apply_before(conn: psycopg.Connection[Any]) -> list[str]:
    """Applies ``bench/sql_before/*.sql`` (each file one script, autocommit); returns the names."""
    names = []
    for path in before_files():
        conn.execute(path.read_text())  # type: ignore[call-overload]  # a trusted script of ours
        names.append(path.name)
    return names
