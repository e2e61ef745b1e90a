"""``recording-finalize requeue`` and ``retry``: hand rows back to the worker, audited.

Both are ``recording_finalize.reschedule``: from Quarantined (requeue, attempts 0; in bulk, in
transactions of at most ``BATCH_ROWS``) or from Pending (retry: due now, attempts kept).
"""

from __future__ import annotations

import argparse
from uuid import UUID

import psycopg

from .. import cliutil, logs, model
from ..config import Settings
from ..errors import SqlState, sqlstate
from ..queries import Connection
from . import queries

#: One bulk-requeue transaction: never more rows than this (reschedule's own limit).
BATCH_ROWS = 1000
#: Per single-row command: the status it takes a row from, its log event, its word.
_ONE = {"requeue": ("Quarantined", "recording requeued", "requeued"),
        "retry": ("Pending", "recording retried", "due now:")}
REASON_CODES = model.QUARANTINE_REASONS


def _add_requeue_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("recording_id", metavar="RECORDING_ID", nargs="?", default=None, type=UUID,
                     help="the recording's UUID (single form)")
    cliutil.add_operator_args(cmd, reason_required=True)
    cmd.add_argument("--quarantined", action="store_true",
                     help="bulk form: the quarantined rows (with --dry-run or --yes)")
    cmd.add_argument("--reason-code", metavar="C", default=None, choices=REASON_CODES,
                     help="bulk: only rows quarantined for C: " + ", ".join(REASON_CODES))
    cmd.add_argument("--since", metavar="T", default=None,
                     help="bulk: only rows quarantined at or after T (ISO-8601 time, or a "
                     "duration ago: 2h, 1d)")
    cmd.add_argument("--limit", type=int, default=None, metavar="N",
                     help="bulk: at most N rows in all (default: all)")
    mode = cmd.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="bulk: list, change nothing")
    mode.add_argument("--yes", action="store_true", help="bulk: do it")
    cliutil.add_json_flag(cmd)


def _add_retry_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("recording_id", metavar="RECORDING_ID", type=UUID,
                     help="the recording's UUID")
    cliutil.add_operator_args(cmd, reason_required=True)
    cliutil.add_json_flag(cmd)


def _check_requeue(args: argparse.Namespace) -> None:
    cliutil.check_reason(args)
    if not args.quarantined:
        if args.recording_id is None:
            raise cliutil.UsageError("requeue: give RECORDING_ID, or --quarantined for the bulk "
                                     "form")
        if args.dry_run or args.yes or args.reason_code or args.since or args.limit is not None:
            raise cliutil.UsageError("requeue: --dry-run, --yes, --reason-code, --since and "
                                     "--limit belong to the bulk form (--quarantined)")
        return
    if args.recording_id is not None:
        raise cliutil.UsageError("requeue: give RECORDING_ID or --quarantined, not both")
    if not (args.dry_run or args.yes):
        raise cliutil.UsageError("requeue --quarantined needs --dry-run (list, change nothing) "
                                 "or --yes (do it)")
    if args.limit is not None and args.limit < 1:
        raise cliutil.UsageError(f"--limit must be a positive integer; got {args.limit}")
    cliutil.parse_flag(args, "since", cliutil.moment, cliutil.MOMENT_RULE)


def reschedule_one(args: argparse.Namespace, settings: Settings) -> int:
    """Strict: a row in another status than the command's is refused, in the database's words."""
    from_status, event, verb = _ONE[args.command]
    by = cliutil.operator(args)
    try:
        with cliutil.connect(settings) as conn:
            [row] = queries.call(conn, "reschedule", recording_ids=[args.recording_id],
                                 from_status=from_status, operator=by, reason=args.reason,
                                 strict=True)
    except psycopg.Error as err:
        state = sqlstate(err)
        if state not in (SqlState.FINALIZE_ROW_NOT_FOUND, SqlState.NOT_QUARANTINED,
                         SqlState.NOT_PENDING):
            raise
        return cliutil.fail(f"{args.command}: {err.diag.message_primary} ({state}). "
                            f"{err.diag.message_hint or ''}".rstrip())
    logs.log(event, recordingId=row["recording_id"], operator=by, reason=args.reason)
    cliutil.show(args, cliutil.json_row(row, "recording_id", "status", "attempts",
                                        "next_attempt_at", "last_error"), [
        f"{verb} {row['recording_id']}: status {row['status']}, attempts {row['attempts']}, "
        f"due {cliutil.iso(row['next_attempt_at'])}",
        f"last error (kept): {row['last_error'] or '-'}"])
    return cliutil.EXIT_OK


def _bulk_requeue(args: argparse.Namespace, settings: Settings) -> int:
    with cliutil.connect(settings) as conn:
        if args.dry_run:
            # One look, nothing locked or changed, capped at one batch.
            limit = BATCH_ROWS if args.limit is None else min(args.limit, BATCH_ROWS)
            rows = queries.call(conn, "quarantined_rows", limit=limit,
                                reason_code=args.reason_code, since=args.since)
            batches = 0
        else:
            rows, batches = _requeue_batches(conn, args)
    truncated = bool(args.dry_run) and len(rows) == BATCH_ROWS and (
        args.limit is None or args.limit > BATCH_ROWS)
    verb = "would requeue" if args.dry_run else "requeued"
    cliutil.show(args, {
        "dryRun": bool(args.dry_run), "requeued": 0 if args.dry_run else len(rows),
        "matched": len(rows), "batches": batches, "truncated": truncated,
        "rows": [cliutil.json_row(r, "recording_id", "quarantine_reason", "attempts",
                                  "last_error", "quarantined_at") for r in rows]}, [
        *(f"  {r['recording_id']}  {r['quarantine_reason'] or 'unknown':<19} attempts "
          f"{r['attempts']:<3} quarantined {cliutil.iso(r['quarantined_at'])}  "
          f"{r['last_error'] or '-'}" for r in rows),
        f"{verb} {len(rows)} quarantined row(s)"
        + (" (nothing was changed)" if args.dry_run else f" in {batches} transaction(s)")
        + (f"; listing capped at {BATCH_ROWS}" if truncated else "")])
    return cliutil.EXIT_OK


def _requeue_batches(conn: Connection, args: argparse.Namespace
                     ) -> tuple[list[queries.Row], int]:
    """One transaction per batch: the rows it requeued are no longer Quarantined, so the next
    listing takes the next ones; a row requeued by someone else meanwhile is skipped (not
    strict), never an error."""
    by, total = cliutil.operator(args), args.limit
    done: list[queries.Row] = []
    batches = 0
    while (want := BATCH_ROWS if total is None else min(BATCH_ROWS, total - len(done))) > 0:
        ids = [q["recording_id"] for q in queries.call(
            conn, "quarantined_rows", limit=want, reason_code=args.reason_code, since=args.since)]
        rows = (queries.call(conn, "reschedule", recording_ids=ids, from_status="Quarantined",
                             operator=by, reason=args.reason, strict=False) if ids else [])
        batches += 1 if ids else 0
        done += rows
        logs.log("requeue batch", rows=len(rows), batch=batches, operator=by,
                 reason=args.reason, reasonCode=args.reason_code)
        if not args.json:
            print(f"batch {batches}: requeued {len(rows)}")
        if len(ids) < want:
            break
    return done, batches


REQUEUE = cliutil.Command(
    name="requeue",
    summary="runbook: hand quarantined recordings back to the worker (one, or in bulk), audited",
    description=(
        "Single: moves the finalize row of RECORDING_ID from Quarantined to Pending with\n"
        "attempts = 0, due now; its last_error is kept. Bulk: --quarantined takes every\n"
        "quarantined row (or those of --reason-code, quarantined since --since), at most --limit,\n"
        "in transactions of at most 1,000 rows; --dry-run lists them and changes nothing, --yes\n"
        "does it. Either way --reason is required, and the operator (--operator, else the OS\n"
        "user), the reason and the time are recorded per recording (see `explain`)."
    ),
    exits=(
        "exit 1: no finalize row for RECORDING_ID, or the row is not Quarantined.\n"
        "exit 2: RECORDING_ID is not a UUID; --reason missing; --quarantined without --dry-run\n"
        "        or --yes; both RECORDING_ID and --quarantined; a bad --since or --reason-code."
    ),
    handler=lambda args, settings: (_bulk_requeue if args.quarantined else reschedule_one)(
        args, settings),
    add_arguments=_add_requeue_arguments,
    check_args=_check_requeue,
)

RETRY = cliutil.Command(
    name="retry",
    summary="make a Pending row that is backing off due now (attempts kept), audited",
    description=(
        "The finalize row of RECORDING_ID must be Pending (typically backing off after a\n"
        "transient S3 error): its next attempt becomes now, its attempts and last error stay.\n"
        "The operator (--operator, else the OS user) and --reason go to the audit trail."
    ),
    exits=(
        "exit 1: no finalize row, or the row is not Pending (a Quarantined row: use requeue).\n"
        "exit 2: RECORDING_ID is not a UUID, or --reason is missing or empty."
    ),
    handler=reschedule_one,
    add_arguments=_add_retry_arguments,
    check_args=cliutil.check_reason,
)
