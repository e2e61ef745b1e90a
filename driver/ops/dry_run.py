"""``recording-finalize run-once --dry-run``: what the next cycle would do with the rows due now.

The phases are ``claim_preview``'s, the S3 verdicts the cycle's own ``Storage``'s and the results
``preview_outcomes``' (the decider ``apply_outcome`` carries out): nothing is predicted here, and
nothing is claimed, counted or written.
"""

from __future__ import annotations

import argparse
from collections import Counter
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from .. import cliutil
from ..config import Settings
from ..model import Verdict
from ..queries import operator_state
from . import queries, s3

PREVIEW_ROWS = 1000


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--dry-run", action="store_true",
                     help="print what the next cycle would do with the rows due now (phase, "
                     "S3 verdict and the database's decision per row); claims, counts and "
                     "writes nothing; an operator's command (a login granted "
                     "recording_finalize_operator)")


def dry_run_command(args: argparse.Namespace, settings: Settings) -> int:
    as_of = datetime.now(UTC)
    with cliutil.connect(settings) as conn:
        paused = operator_state(conn).paused_parts()
        rows = queries.call(conn, "claim_preview", limit=PREVIEW_ROWS)
    reconcile = [r for r in rows if r["action"] == "reconcile"]
    # No connection is held while the objects are HEADed.
    heads = s3.head_rows(settings, reconcile)
    seen = {r["recording_id"]: v for r, v in zip(reconcile, heads.verdicts, strict=True)}
    with cliutil.connect(settings) as conn:
        previews = {p["recording_id"]: p for p in queries.preview_outcomes(
            conn, list(seen.items()), None if heads.config_error else heads.bucket_confirmed)}
    out_rows = [_entry(r, previews.get(r["recording_id"]), seen, heads.config_error)
                for r in rows]
    cliutil.print_json({"dryRun": True, "asOf": cliutil.iso(as_of), "paused": paused,
                        "due": len(rows), "truncated": len(rows) >= PREVIEW_ROWS,
                        "phases": dict(Counter(r["action"] for r in rows)),
                        "results": dict(Counter(e["result"] for e in out_rows)),
                        "configError": heads.config_error, "rows": out_rows})
    return cliutil.EXIT_FAILURE if heads.config_error else cliutil.EXIT_OK


def _entry(r: queries.Row, preview: queries.Row | None, seen: dict[UUID, Verdict],
           config_error: str | None) -> dict[str, Any]:
    entry = cliutil.json_row(r, "recording_id", "session_kind", "session_id", "attempts",
                             "detail", "next_attempt_at", phase="action")
    if r["action"] != "reconcile" or preview is None:
        return entry | {"result": r["action"]}
    outcome = cliutil.json_row(preview, "result", "finalize_status", attemptsAfter="attempts",
                               nextAttemptAfter="next_attempt_at", resultDetail="detail")
    return entry | {"s3": s3.verdict_dict(seen[r["recording_id"]], config_error)} | outcome
