"""``recording-finalize run-once --dry-run``: what the next cycle would do with the rows due now.

The phases are ``claim_preview``'s, the S3 verdicts the cycle's own ``Storage``'s and the results
``preview_outcomes``' (the decider ``apply_outcome`` carries out): nothing is predicted here, and
nothing is claimed, counted or written.
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
                     help="print what the next cycle would do with the rows due now (phase, "
                     "S3 verdict and the database's decision per row); claims, counts and "
                     "writes nothing; an operator's command (a login granted "
                     "recording_finalize_operator)")


def dry_run_command(args: argparse.Namespace, settings: Settings) -> int:
    as_of = datetime.now(UTC)
    with connect(settings) as conn:
        state = operator_state(conn)
        rows = queries.claim_preview(conn, PREVIEW_ROWS)
    reconcile = [r for r in rows if r.action == "reconcile"]
    verdicts, config_error, previews = _previews(settings, reconcile) if reconcile \
        else ({}, None, {})
    out_rows = [_entry(r, previews.get(r.recording_id), verdicts.get(r.recording_id),
                       config_error) for r in rows]
    print_json({"dryRun": True, "asOf": iso(as_of), "paused": state.paused_parts(),
                "due": len(rows), "truncated": len(rows) >= PREVIEW_ROWS,
                "phases": dict(Counter(r.action for r in rows)),
                "results": dict(Counter(e["result"] for e in out_rows)),
                "configError": config_error, "rows": out_rows})
    return EXIT_FAILURE if config_error else EXIT_OK


def _previews(settings: Settings, reconcile: list[queries.PreviewRow]
              ) -> tuple[dict[UUID, Verdict], str | None, dict[UUID, queries.OutcomePreview]]:
    """The S3 verdicts of the reconcile rows (none when the bucket is refused: its
    configuration error instead) and the database's decision for each."""
    verdicts: dict[UUID, Verdict] = {}
    storage = s3.open_storage(settings)
    try:
        confirmed, config_error = s3.bucket(storage)
        if config_error is None:
            claimed = [s3.claimed(r.recording_id, r.session_kind, r.session_id, r.attempts)
                       for r in reconcile]
            heads = s3.head_all(storage, claimed, settings.s3_concurrency)
            verdicts = {row.recording_id: v for row, v in zip(claimed, heads, strict=True)}
    finally:
        storage.close()
    with connect(settings) as conn:
        previews = {p.recording_id: p for p in queries.preview_outcomes(
            conn, [(r.recording_id, s3.verdict_of(verdicts.get(r.recording_id),
                                                            config_error)) for r in reconcile],
            bucket_confirmed=None if config_error else confirmed)}
    return verdicts, config_error, previews


def _entry(r: queries.PreviewRow, preview: queries.OutcomePreview | None,
           verdict: Verdict | None, config_error: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"recordingId": str(r.recording_id), "sessionKind": r.session_kind,
                             "sessionId": str(r.session_id), "phase": r.action,
                             "attempts": r.attempts, "detail": r.detail,
                             "nextAttemptAt": iso(r.next_attempt_at)}
    if r.action != "reconcile" or preview is None:
        return entry | {"result": r.action}
    return entry | {
        "s3": s3.verdict_dict(verdict, config_error), "result": preview.result,
        "finalizeStatus": preview.finalize_status, "attemptsAfter": preview.attempts,
        "nextAttemptAfter": iso(preview.next_attempt_at) if preview.next_attempt_at else None,
        "resultDetail": preview.detail}
