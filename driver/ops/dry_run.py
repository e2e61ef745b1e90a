"""``recording-finalize run-once --dry-run``: what the next cycle would do with the rows due now.

``claim_preview`` says each due row's phase without claiming it; the reconcile rows get the S3
verdict the worker would reach (the cycle's own ``Storage``) and the answer ``apply_outcome``
would give it. Claims, counts and writes nothing.
"""

from __future__ import annotations

import argparse
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from ..cliutil import EXIT_FAILURE, EXIT_OK, connect, iso, print_json
from ..config import Settings
from ..queries import operator_state
from . import queries, s3

if TYPE_CHECKING:
    from ..storage import Verdict

#: ``run-once --dry-run`` looks at no more due rows than this.
PREVIEW_ROWS = 1000


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--dry-run", action="store_true",
                     help="print what the next cycle would do with the rows due now (phase and "
                     "S3 verdict per row); claims, counts and writes nothing")


def _predicted(outcome: str, attempts: int, max_attempts: int) -> str:
    """What apply_outcome would answer for a reconcile row with this S3 outcome."""
    if outcome == "found":
        return "reconciled"
    if outcome == "missing":
        return "failed"
    if outcome == "invalid_metadata":
        return "quarantined"
    if outcome == "transient":
        return "quarantined" if attempts >= max_attempts else "backoff"
    return "released"


def dry_run_command(args: argparse.Namespace, settings: Settings) -> int:
    as_of = datetime.now(UTC)
    with connect(settings) as conn:
        state = operator_state(conn)
        rows = queries.claim_preview(conn, settings, PREVIEW_ROWS)
    reconcile = [r for r in rows if r.action == "reconcile"]
    verdicts: dict[UUID, Verdict] = {}
    config_error: str | None = None
    if reconcile:
        storage = s3.open_storage(settings)
        try:
            confirmed, config_error = s3.bucket(storage)
            if config_error is None:
                claimed = [s3.claimed(r.recording_id, r.session_kind, r.session_id, r.attempts)
                           for r in reconcile]
                heads = s3.head_all(storage, claimed, confirmed, settings.s3_concurrency)
                for row, verdict in zip(claimed, heads, strict=True):
                    verdicts[row.recording_id] = verdict
        finally:
            storage.close()
    out_rows = []
    results: Counter[str] = Counter()
    for r in rows:
        entry: dict[str, Any] = {"recordingId": str(r.recording_id), "sessionKind": r.session_kind,
                                 "sessionId": str(r.session_id), "phase": r.action,
                                 "attempts": r.attempts, "detail": r.detail,
                                 "nextAttemptAt": iso(r.next_attempt_at)}
        if r.action == "reconcile":
            seen = verdicts.get(r.recording_id)
            entry["s3"] = s3.verdict_dict(seen, config_error)
            entry["result"] = _predicted(seen.outcome if seen else "config_error",
                                         r.attempts, settings.max_attempts)
        else:
            entry["result"] = r.action
        results[entry["result"]] += 1
        out_rows.append(entry)
    print_json({"dryRun": True, "asOf": iso(as_of), "paused": state.paused_parts(),
                "due": len(rows), "truncated": len(rows) >= PREVIEW_ROWS,
                "phases": dict(Counter(r.action for r in rows)), "results": dict(results),
                "configError": config_error, "rows": out_rows})
    return EXIT_FAILURE if config_error else EXIT_OK
