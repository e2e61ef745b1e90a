"""``recording-finalize run-once --dry-run``: what the next cycle would do with the rows due now.

``claim_preview`` says each due row's phase without claiming it; the reconcile rows get the S3
verdict the worker would reach (the cycle's own ``Storage``), and ``preview_outcomes`` the
result the database would decide for it, by the same decider ``apply_outcome`` carries out (the
storage-incident rules included): nothing here predicts an outcome itself. Claims, counts and
writes nothing.
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
    verdicts: dict[UUID, Verdict] = {}
    config_error: str | None = None
    confirmed = False
    previews: dict[UUID, queries.OutcomePreview] = {}
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
        with connect(settings) as conn:
            previews = {p.recording_id: p for p in queries.preview_outcomes(
                conn, [(r.recording_id, s3.verdict_of(verdicts.get(r.recording_id),
                                                      config_error))
                       for r in reconcile],
                bucket_confirmed=None if config_error else confirmed)}
    out_rows = []
    results: Counter[str] = Counter()
    for r in rows:
        entry: dict[str, Any] = {"recordingId": str(r.recording_id), "sessionKind": r.session_kind,
                                 "sessionId": str(r.session_id), "phase": r.action,
                                 "attempts": r.attempts, "detail": r.detail,
                                 "nextAttemptAt": iso(r.next_attempt_at)}
        preview = previews.get(r.recording_id)
        if r.action == "reconcile" and preview is not None:
            entry["s3"] = s3.verdict_dict(verdicts.get(r.recording_id), config_error)
            entry["result"] = preview.result
            entry["finalizeStatus"] = preview.finalize_status
            entry["attemptsAfter"] = preview.attempts
            entry["nextAttemptAfter"] = (iso(preview.next_attempt_at)
                                         if preview.next_attempt_at else None)
            entry["resultDetail"] = preview.detail
        else:
            entry["result"] = r.action
        results[entry["result"]] += 1
        out_rows.append(entry)
    print_json({"dryRun": True, "asOf": iso(as_of), "paused": state.paused_parts(),
                "due": len(rows), "truncated": len(rows) >= PREVIEW_ROWS,
                "phases": dict(Counter(r.action for r in rows)), "results": dict(results),
                "configError": config_error, "rows": out_rows})
    return EXIT_FAILURE if config_error else EXIT_OK
