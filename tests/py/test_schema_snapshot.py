"""sql/schema.sql, the reviewer's one-file view of the product's schema, is what a fresh migrate of
this tree produces (tools/schema_snapshot.py --check against the test stack's PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import Stack

REPO = Path(__file__).resolve().parents[2]


def test_sql_schema_sql_matches_a_fresh_migrate(stack: Stack) -> None:
    env = dict(os.environ, DATABASE_URL=stack.owner_url,
               RFR_STACK_PG_BIN=stack.env.get("RFR_STACK_PG_BIN", ""))
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "schema_snapshot.py"), "--check"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"sql/schema.sql differs from a fresh migrate (run `make schema`):\n"
        f"{proc.stdout[-4000:]}{proc.stderr[-2000:]}")
    assert "matches a fresh migrate" in proc.stdout
