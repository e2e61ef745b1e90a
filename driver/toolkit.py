"""The operator toolkit: explain, audit, audited requeue/retry, pause/resume, dry run, prune.

Every command here is a thin shell around one SQL function of ``sql/functions`` (see
``sql/README.md``, "The operator toolkit"), plus the S3 part that only the driver can do: the
HEAD of one recording's object (``explain``), of the Failed recordings' objects (``audit``) and
of the rows due now (``run-once --dry-run``), all through the same ``Storage`` the cycle uses, so
the verdicts are the ones the worker would reach.

The commands that write (requeue, retry, pause, resume, audit --repair) record who did it
(``--operator``, else the OS user) and why in ``messenger.recording_finalize_operator_actions``;
``explain`` shows that trail. They are meant for a login granted ``recording_finalize_operator``.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

import psycopg

from . import logs, queries
from .config import Settings, parse_duration
from .errors import SqlState, sqlstate
from .ops import queries as ops_queries

if TYPE_CHECKING:
    from .storage import Storage, Verdict

PROG = "recording-finalize"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

#: One bulk-requeue transaction, one prune statement per table: never more rows than this.
BATCH_ROWS = 1000
#: ``run-once --dry-run`` looks at no more due rows than this.
PREVIEW_ROWS = 1000
#: ``audit`` HEADs the objects of this many of the newest Failed recordings by default.
AUDIT_FAILED_ROWS = 1000
REASON_CODES = ("max_attempts", "crash_loop", "invalid_metadata", "recording_not_found",
                "session_not_found")

_DB = ["DATABASE_URL"]
_S3 = ["DATABASE_URL", "S3_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
       "AWS_REGION", "AWS_DEFAULT_REGION", "RFR_S3_BUCKET", "RFR_S3_KEY_TEMPLATE",
       "RFR_S3_TIMEOUT", "RFR_S3_CONCURRENCY", "RFR_TOPIC", "RFR_MAX_ATTEMPTS",
       "RFR_FINALIZE_SLA_TIMEOUT"]

#: name → (summary, description, exit codes); registered by cli.build_parser.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "explain": (
        "everything about one recording, and what the worker will do next",
        "Prints the recording (status, version, times), its session (ended, SLA due), its\n"
        "finalize row (attempts, next attempt, last error, quarantine reason), what S3 says\n"
        "right now (present, size, the verdict the worker would reach), its integration event\n"
        "(enqueued, published, event-id), its realtime rows, the operators' actions on it, and\n"
        "one sentence: what the worker will do next and when. Read-only. With --json one JSON\n"
        "object: recordingId, recording, session, finalize, s3, outbox, realtime,\n"
        "operatorActions, paused, next {action, at, text, sentence}.",
        "exit 1: no recording and no finalize row has RECORDING_ID (or a database error).\n"
        "exit 2: RECORDING_ID is not a UUID.",
    ),
    "audit": (
        "invariant checks by business state; --repair opens finalize rows for orphans",
        "Runs the invariant checks and prints, for each, the number of findings and a few\n"
        "recording ids: available_without_event (Available, no event enqueued, nothing to\n"
        "enqueue it), orphaned_recordings (not terminal, session ended past the SLA, no finalize\n"
        "row: the worker cannot see them), done_not_terminal, unpublished_overdue (older than\n"
        "one polling interval), quarantined (by reason) and failed_with_binary (a Failed\n"
        "recording whose binary is in S3 now: for a human to look at). --repair first opens a\n"
        "finalize row, due now, for every orphan (audited) and nothing else. With --json one\n"
        "object: clean, checks [{check, reason, found, examples}], repaired [ids].",
        "exit 1: a check found something (after --repair: something but the orphans).\n"
        "exit 0: every check is clean.",
    ),
    "retry": (
        "make a Pending row that is backing off due now (attempts kept), audited",
        "The finalize row of RECORDING_ID must be Pending (typically backing off after a\n"
        "transient S3 error): its next attempt becomes now, its attempts and last error stay.\n"
        "The operator (--operator, else the OS user) and --reason go to the audit trail.",
        "exit 1: no finalize row, or the row is not Pending (a Quarantined row: use requeue).\n"
        "exit 2: RECORDING_ID is not a UUID, or --reason is missing or empty.",
    ),
    "pause": (
        "pause reconcile, relay or all, for every runner from its next cycle",
        "A switch in the database: every runner reads it once per cycle and skips the paused\n"
        "part (reconcile: no claim, no S3 check; relay: nothing is published) until `resume`.\n"
        "The workers stay up: /metrics (messenger_recording_finalize_paused{part}), status and\n"
        "the logs (\"cycle paused\") show it. Audited (--operator, --reason).",
        "exit 2: the part is not reconcile, relay or all.",
    ),
    "resume": (
        "resume what pause stopped",
        "Clears the pause switch of reconcile, relay or all; runners pick it up on their next\n"
        "cycle. Audited (--operator, --reason).",
        "exit 2: the part is not reconcile, relay or all.",
    ),
    "prune": (
        "delete finished rows older than --older-than, in bounded batches",
        "Deletes published integration events of RFR_TOPIC, dispatched realtime rows and Done\n"
        "finalize rows (of terminal recordings) older than --older-than, at most --batch-size\n"
        "rows per table per statement, each statement its own transaction, skipping rows that\n"
        "are locked (it never waits on the worker or the ingest callback). A pruned event\n"
        "leaves a marker, so a late duplicate ingest callback never sends it again. `run` does\n"
        "this by itself every hour with RFR_RETENTION. --dry-run counts and deletes nothing.",
        "exit 2: --older-than is not a duration of at least 1 minute.",
    ),
}

COMMAND_VARIABLES: dict[str, list[str]] = {
    "explain": _S3,
    "audit": [*_S3, "RFR_POLLING_INTERVAL"],
    "retry": _DB,
    "pause": _DB,
    "resume": _DB,
    "prune": [*_DB, "RFR_TOPIC"],
}
REQUIRED: dict[str, tuple[str, ...]] = {name: ("DATABASE_URL",) for name in COMMANDS}
COMMAND_FLAGS: dict[str, list[str]] = {name: [] for name in COMMANDS}

REQUEUE_DESCRIPTION = (
    "Single: moves the finalize row of RECORDING_ID from Quarantined to Pending with\n"
    "attempts = 0, due now; its last_error is kept. Bulk: --quarantined takes every\n"
    "quarantined row (or those of --reason-code, quarantined since --since), at most --limit,\n"
    "in transactions of at most 1,000 rows; --dry-run lists them and changes nothing, --yes\n"
    "does it. Either way --reason is required, and the operator (--operator, else the OS\n"
    "user), the reason and the time are recorded per recording (see `explain`)."
)
REQUEUE_EXITS = (
    "exit 1: no finalize row for RECORDING_ID, or the row is not Quarantined.\n"
    "exit 2: RECORDING_ID is not a UUID; --reason missing; --quarantined without --dry-run\n"
    "        or --yes; both RECORDING_ID and --quarantined; a bad --since or --reason-code."
)


# ------------------------------------------------------------------------------------------
# argument parsing


def _operator_args(cmd: argparse.ArgumentParser, reason_required: bool) -> None:
    cmd.add_argument("--reason", metavar="R", required=reason_required, default=None,
                     help="why (recorded in the audit trail)"
                     + ("; required" if reason_required else ""))
    cmd.add_argument("--operator", metavar="NAME", default=None,
                     help="who (recorded in the audit trail; default: the OS user)")


def add_arguments(name: str, cmd: argparse.ArgumentParser) -> None:
    """The flags of the toolkit's commands (cli.build_parser registers the commands)."""
    if name in ("explain", "retry"):
        cmd.add_argument("recording_id", metavar="RECORDING_ID", help="the recording's UUID")
    if name in ("pause", "resume"):
        cmd.add_argument("part", metavar="PART", help="reconcile, relay or all")
    if name == "retry":
        _operator_args(cmd, reason_required=True)
    if name in ("pause", "resume"):
        _operator_args(cmd, reason_required=False)
    if name == "audit":
        cmd.add_argument("--repair", action="store_true",
                         help="open a finalize row (due now) for each orphan, audited")
        cmd.add_argument("--operator", metavar="NAME", default=None,
                         help="who repairs (default: the OS user)")
        cmd.add_argument("--failed-limit", type=int, default=AUDIT_FAILED_ROWS, metavar="N",
                         help="HEAD the objects of the N newest Failed recordings (1..10000, "
                         f"default {AUDIT_FAILED_ROWS})")
    if name == "prune":
        cmd.add_argument("--older-than", required=True, metavar="D",
                         help="a duration (30d, 12h, 90m), at least 1 minute")
        cmd.add_argument("--dry-run", action="store_true",
                         help="count what would be deleted; delete nothing")
        cmd.add_argument("--batch-size", type=int, default=BATCH_ROWS, metavar="N",
                         help=f"rows per table per statement (1..10000, default {BATCH_ROWS})")
    cmd.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def extend_requeue(cmd: argparse.ArgumentParser) -> None:
    """The audited requeue's flags; RECORDING_ID becomes optional (the bulk form has none)."""
    cmd.add_argument("recording_id", metavar="RECORDING_ID", nargs="?", default=None,
                     help="the recording's UUID (single form)")
    _operator_args(cmd, reason_required=True)
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


def add_dry_run(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--dry-run", action="store_true",
                     help="print what the next cycle would do with the rows due now (phase and "
                     "S3 verdict per row); claims, counts and writes nothing")


# ------------------------------------------------------------------------------------------
# helpers


def _fail(message: str, code: int = EXIT_FAILURE) -> int:
    print(f"{PROG}: {logs.redact(message)}", file=sys.stderr, flush=True)
    return code


def _iso(value: datetime | str | None) -> str:
    if value is None:
        return "-"
    moment: datetime
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return value
    else:
        moment = value
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _json(data: Any) -> None:
    print(json.dumps(data, separators=(",", ":"), default=str), flush=True)


def _operator(args: argparse.Namespace) -> str:
    name = getattr(args, "operator", None)
    if name:
        return str(name)
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _uuid(text: str) -> UUID | None:
    try:
        return UUID(text)
    except ValueError:
        return None


def _connect(settings: Settings) -> psycopg.Connection[Any]:
    from .db import connect

    return connect(settings)


def _storage(settings: Settings) -> Storage:
    from .storage import Storage

    return Storage(settings)


def _head(storage: Storage, row: queries.ClaimedRow, bucket_confirmed: bool) -> Verdict:
    return storage.check(row, bucket_confirmed)


def _claimed(recording_id: UUID, session_kind: str, session_id: UUID,
             attempts: int = 0) -> queries.ClaimedRow:
    return queries.ClaimedRow(recording_id=recording_id, session_kind=session_kind,
                              session_id=session_id, action="reconcile", attempts=attempts,
                              claim_token=None, recording_version=None, detail=None)


def _bucket(storage: Storage) -> tuple[bool, str | None]:
    """(bucket confirmed, configuration error code)."""
    from .storage import StorageConfigError

    try:
        return storage.check_bucket(), None
    except StorageConfigError as err:
        return False, err.code


def _verdict_dict(verdict: Verdict | None, config_error: str | None = None) -> dict[str, Any]:
    if verdict is None:
        return {"outcome": "config_error", "present": None, "error": config_error}
    return {
        "outcome": verdict.outcome,
        "present": verdict.outcome in ("found", "invalid_metadata"),
        "sizeBytes": verdict.size_bytes,
        "durationSeconds": verdict.duration_seconds,
        "format": verdict.format,
        "fileId": verdict.file_id,
        "error": verdict.error,
    }


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


_S3_CLAUSE = {
    "found": "S3 has the binary now, so it would become Available and its event be published",
    "missing": "S3 has no binary, so it would become Failed (Timeout)",
    "invalid_metadata": "S3 has the binary but its metadata is unusable, so it would be "
                        "quarantined (invalid_metadata)",
    "transient": "S3 did not answer, so it would back off again",
    "config_error": "S3 refuses the bucket (configuration error): the cycle would stop "
                    "without counting the attempt",
}


def _state(conn: queries.Connection) -> queries.OperatorState:
    return queries.operator_state(conn)


def _paused_parts(state: queries.OperatorState) -> list[str]:
    return [part for part, on in (("reconcile", state.reconcile_paused),
                                  ("relay", state.relay_paused)) if on]


# ------------------------------------------------------------------------------------------
# explain


def explain_command(args: argparse.Namespace, settings: Settings) -> int:
    recording_id = _uuid(args.recording_id)
    if recording_id is None:
        return _fail(f"RECORDING_ID must be a UUID; got {args.recording_id!r}", EXIT_USAGE)
    try:
        with _connect(settings) as conn:
            doc = ops_queries.explain(conn, recording_id, settings)
            state = _state(conn)
    except psycopg.Error as err:
        if sqlstate(err) == SqlState.UNKNOWN_RECORDING:
            return _fail(f"explain: no recording and no finalize row with id {recording_id} "
                         "(RF021)")
        raise
    doc["paused"] = _paused_parts(state)
    doc["s3"] = _explain_s3(doc, recording_id, settings)
    doc["next"]["sentence"] = _sentence(doc)
    if args.json:
        _json(doc)
    else:
        _print_explain(doc)
    return EXIT_OK


def _explain_s3(doc: dict[str, Any], recording_id: UUID, settings: Settings) -> dict[str, Any]:
    session = doc.get("session") or {}
    kind, session_id = session.get("kind"), session.get("id")
    if not kind or not session_id:
        return {"outcome": None, "present": None, "error": "no session to build the key from"}
    storage = _storage(settings)
    try:
        row = _claimed(recording_id, str(kind), UUID(str(session_id)))
        confirmed, config_error = _bucket(storage)
        result = {"key": storage.key_for(row), "bucket": settings.s3_bucket}
        if config_error is not None:
            return result | _verdict_dict(None, config_error)
        return result | _verdict_dict(_head(storage, row, confirmed))
    finally:
        storage.close()


def _sentence(doc: dict[str, Any]) -> str:
    nxt = doc["next"]
    text = str(nxt.get("text", ""))
    parts = [text[0].upper() + text[1:] if text else "Nothing"]
    if nxt.get("action") == "reconcile":
        outcome = (doc.get("s3") or {}).get("outcome")
        if outcome in _S3_CLAUSE:
            parts.append(_S3_CLAUSE[outcome])
    outbox = doc.get("outbox") or {}
    if outbox and not outbox.get("pruned") and outbox.get("publishedAt") is None:
        parts.append("its event waits for the relay (enqueued "
                     f"{_iso(outbox.get('createdAt'))})")
    sentence = "; ".join(parts) + "."
    paused = doc.get("paused") or []
    if "reconcile" in paused and nxt.get("action") not in (None, "none"):
        sentence = "Reconcile is paused (recording-finalize resume reconcile): once resumed, " \
            + sentence[0].lower() + sentence[1:]
    return sentence


def _print_explain(doc: dict[str, Any]) -> None:
    rec = doc.get("recording")
    ses = doc.get("session") or {}
    fin = doc.get("finalize")
    s3 = doc.get("s3") or {}
    out = doc.get("outbox")
    lines = [f"recording  {doc['recordingId']}"]
    if rec:
        lines.append(f"  status {rec['status']} (version {rec['version']}), {rec['mediaType']}, "
                     f"created {_iso(rec['createdAt'])}, updated {_iso(rec['updatedAt'])}")
        if rec.get("availableAt") or rec.get("failedAt"):
            lines.append(f"  available {_iso(rec.get('availableAt'))}, failed "
                         f"{_iso(rec.get('failedAt'))} ({rec.get('failureReason') or '-'})")
        if rec.get("fileId"):
            lines.append(f"  file {rec['fileId']}, {rec.get('sizeBytes')} bytes, "
                         f"{rec.get('durationSeconds')} s, {rec.get('format')}")
    else:
        lines.append("  no call_recordings row (a finalize row without its recording)")
    if ses.get("found") is False:
        lines.append(f"session    {ses.get('kind')} {ses.get('id')}: no such session")
    else:
        lines.append(f"session    {ses.get('kind')} {ses.get('id')}, ended "
                     f"{_iso(ses.get('endedAt'))}, SLA due {_iso(ses.get('slaDueAt'))}")
    if fin:
        lines.append(f"finalize   {fin['status']}, attempts {fin['attempts']}, next attempt "
                     f"{_iso(fin['nextAttemptAt'])}, last claimed {_iso(fin.get('claimedAt'))}")
        lines.append(f"  last error: {fin.get('lastError') or '-'}")
        if fin["status"] == "Quarantined":
            lines.append(f"  quarantine reason: {fin.get('quarantineReason') or 'unknown'}")
    else:
        lines.append("finalize   no finalize row")
    if s3.get("outcome") is None:
        lines.append(f"s3         not checked: {s3.get('error')}")
    else:
        present = {True: "present", False: "absent", None: "unknown"}[s3.get("present")]
        size = f", {s3['sizeBytes']} bytes" if s3.get("sizeBytes") is not None else ""
        error = f" ({s3['error']})" if s3.get("error") else ""
        lines.append(f"s3         {s3.get('bucket')}/{s3.get('key')}: {present}{size}; verdict "
                     f"{s3['outcome']}{error}")
    if out and out.get("pruned"):
        lines.append(f"event      published {_iso(out.get('publishedAt'))}, outbox row pruned "
                     f"{_iso(out.get('prunedAt'))}")
    elif out:
        lines.append(f"event      enqueued {_iso(out.get('createdAt'))}, published "
                     f"{_iso(out.get('publishedAt'))}, event-id {out.get('eventId')}")
    else:
        lines.append("event      not enqueued")
    for push in doc.get("realtime") or []:
        lines.append(f"realtime   {push['kind']} created {_iso(push['createdAt'])}, dispatched "
                     f"{_iso(push.get('dispatchedAt'))}")
    for action in doc.get("operatorActions") or []:
        lines.append(f"operator   {_iso(action['at'])} {action['action']} by "
                     f"{action['operator']}: {action['reason']}")
    if doc.get("paused"):
        lines.append(f"paused     {', '.join(doc['paused'])}")
    lines.append(f"next       {doc['next']['sentence']}")
    print("\n".join(lines), flush=True)


# ------------------------------------------------------------------------------------------
# audit


def audit_command(args: argparse.Namespace, settings: Settings) -> int:
    if not 1 <= args.failed_limit <= 10000:
        return _fail(f"--failed-limit must be an integer in 1..10000; got {args.failed_limit}",
                     EXIT_USAGE)
    repaired: list[ops_queries.RepairedRow] = []
    with _connect(settings) as conn:
        if args.repair:
            repaired = ops_queries.audit_repair(conn, _operator(args), settings)
            for row in repaired:
                logs.log("orphan repaired", recordingId=row.recording_id,
                         operator=_operator(args))
        checks = ops_queries.audit(conn, settings)
        failed = ops_queries.failed_recordings(conn, args.failed_limit)
    found_binaries = _failed_with_binary(failed, settings)
    results: list[dict[str, Any]] = [{"check": c.check_name, "reason": c.reason, "found": c.found,
                "examples": list(c.examples or [])} for c in checks]
    results.append({"check": "failed_with_binary", "reason": None,
                    "found": len(found_binaries), "examples": found_binaries[:5],
                    "checked": len(failed)})
    clean = all(r["found"] == 0 for r in results)
    if args.json:
        _json({"clean": clean, "checks": results,
               "repaired": [str(r.recording_id) for r in repaired]})
    else:
        if args.repair:
            print(f"repaired: {len(repaired)} orphaned recording(s) got a finalize row, due now"
                  + (": " + ", ".join(str(r.recording_id) for r in repaired) if repaired else ""))
        width = max(len(_check_label(r)) for r in results)
        for r in results:
            examples = ", ".join(r["examples"]) if r["examples"] else "-"
            print(f"{_check_label(r).ljust(width)}  {str(r['found']).rjust(6)}  {examples}")
        print("clean" if clean else "findings: see above (recording-finalize explain ID)")
    return EXIT_OK if clean else EXIT_FAILURE


def _check_label(result: dict[str, Any]) -> str:
    return str(result["check"]) + (f" ({result['reason']})" if result.get("reason") else "")


def _failed_with_binary(failed: list[ops_queries.FailedRecording], settings: Settings) -> list[str]:
    """The Failed recordings whose object is in S3 now (HEADs with bounded concurrency)."""
    if not failed:
        return []
    storage = _storage(settings)
    try:
        confirmed, config_error = _bucket(storage)
        if config_error is not None:
            raise RuntimeError(f"S3 refuses the bucket {settings.s3_bucket}: {config_error}")
        rows = [_claimed(f.recording_id, f.session_kind, f.session_id) for f in failed]
        with ThreadPoolExecutor(max_workers=min(settings.s3_concurrency, len(rows))) as pool:
            verdicts = list(pool.map(lambda r: _head(storage, r, confirmed), rows))
    finally:
        storage.close()
    return [str(row.recording_id) for row, v in zip(rows, verdicts, strict=True)
            if v.outcome in ("found", "invalid_metadata")]


# ------------------------------------------------------------------------------------------
# requeue (single and bulk) and retry


def _since(text: str) -> tuple[datetime | None, float | None]:
    """--since: an ISO-8601 time (with a zone; UTC if none), or a duration ago (2h, 1d)."""
    try:
        return None, parse_duration(text, days=True)
    except ValueError:
        pass
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)), None


def requeue_command(args: argparse.Namespace, settings: Settings) -> int:
    if not (args.reason or "").strip():
        return _fail("requeue: --reason must say why (it goes to the audit trail)", EXIT_USAGE)
    if args.quarantined:
        if args.recording_id is not None:
            return _fail("requeue: give RECORDING_ID or --quarantined, not both", EXIT_USAGE)
        if not (args.dry_run or args.yes):
            return _fail("requeue --quarantined needs --dry-run (list, change nothing) or --yes "
                         "(do it)", EXIT_USAGE)
        return _bulk_requeue(args, settings)
    if args.recording_id is None:
        return _fail("requeue: give RECORDING_ID, or --quarantined for the bulk form",
                     EXIT_USAGE)
    if args.dry_run or args.yes or args.reason_code or args.since or args.limit is not None:
        return _fail("requeue: --dry-run, --yes, --reason-code, --since and --limit belong to "
                     "the bulk form (--quarantined)", EXIT_USAGE)
    recording_id = _uuid(args.recording_id)
    if recording_id is None:
        return _fail(f"RECORDING_ID must be a UUID; got {args.recording_id!r}", EXIT_USAGE)
    try:
        with _connect(settings) as conn:
            row = ops_queries.operator_requeue(conn, recording_id, _operator(args), args.reason)
    except psycopg.Error as err:
        state = sqlstate(err)
        if state == SqlState.FINALIZE_ROW_NOT_FOUND:
            return _fail(f"requeue: recording {recording_id} has no finalize row (RF005)")
        if state == SqlState.NOT_QUARANTINED:
            return _fail(f"requeue: the finalize row of recording {recording_id} is not "
                         "Quarantined (RF006); only quarantined rows are re-enqueued "
                         "(a Pending row backing off: recording-finalize retry)")
        raise
    logs.log("recording requeued", recordingId=row.recording_id, operator=_operator(args),
             reason=args.reason)
    _print_row("requeued", row, args.json)
    return EXIT_OK


def _print_row(verb: str, row: ops_queries.RequeuedRow, as_json: bool) -> None:
    if as_json:
        _json({"recordingId": str(row.recording_id), "status": row.status,
               "attempts": row.attempts, "nextAttemptAt": _iso(row.next_attempt_at),
               "lastError": row.last_error})
        return
    print(f"{verb} {row.recording_id}: status {row.status}, attempts {row.attempts}, "
          f"due {_iso(row.next_attempt_at)}")
    print(f"last error (kept): {row.last_error or '-'}")


def _bulk_requeue(args: argparse.Namespace, settings: Settings) -> int:
    if args.limit is not None and args.limit < 1:
        return _fail(f"--limit must be a positive integer; got {args.limit}", EXIT_USAGE)
    since: datetime | None = None
    since_ago: float | None = None
    if args.since:
        try:
            since, since_ago = _since(args.since)
        except ValueError:
            return _fail(f"--since must be an ISO-8601 time or a duration (2h, 1d); got "
                         f"{args.since!r}", EXIT_USAGE)
    operator = _operator(args)
    total = args.limit
    done: list[ops_queries.BulkRequeuedRow] = []
    batches = 0
    truncated = False
    with _connect(settings) as conn:
        if args.dry_run:
            # One look, nothing locked or changed; the listing is capped at one batch.
            want = BATCH_ROWS if total is None else min(total, BATCH_ROWS)
            done = ops_queries.operator_requeue_quarantined(
                conn, operator=operator, reason=args.reason, reason_code=args.reason_code,
                since=since, since_ago_s=since_ago, limit=want, dry_run=True)
            truncated = len(done) == BATCH_ROWS and (total is None or total > BATCH_ROWS)
        while not args.dry_run:
            want = BATCH_ROWS if total is None else min(BATCH_ROWS, total - len(done))
            if want <= 0:
                break
            # One transaction per batch: the rows it requeued are no longer Quarantined, so the
            # next call takes the next ones.
            rows = ops_queries.operator_requeue_quarantined(
                conn, operator=operator, reason=args.reason, reason_code=args.reason_code,
                since=since, since_ago_s=since_ago, limit=want, dry_run=False)
            batches += 1
            done += rows
            logs.log("requeue batch", rows=len(rows), batch=batches, operator=operator,
                     reason=args.reason, reasonCode=args.reason_code)
            if not args.json:
                print(f"batch {batches}: requeued {len(rows)}")
            if len(rows) < want:
                break
    verb = "would requeue" if args.dry_run else "requeued"
    if args.json:
        _json({"dryRun": bool(args.dry_run), "requeued": 0 if args.dry_run else len(done),
               "matched": len(done), "batches": batches, "truncated": truncated, "rows": [
                   {"recordingId": str(r.recording_id), "quarantineReason": r.quarantine_reason,
                    "attempts": r.attempts, "lastError": r.last_error,
                    "quarantinedAt": _iso(r.quarantined_at)} for r in done]})
        return EXIT_OK
    for r in done:
        print(f"  {r.recording_id}  {r.quarantine_reason or 'unknown':<19} attempts "
              f"{r.attempts:<3} quarantined {_iso(r.quarantined_at)}  {r.last_error or '-'}")
    print(f"{verb} {len(done)} quarantined row(s)"
          + (" (nothing was changed)" if args.dry_run else f" in {batches} transaction(s)")
          + (f"; listing capped at {BATCH_ROWS}" if truncated else ""))
    return EXIT_OK


def retry_command(args: argparse.Namespace, settings: Settings) -> int:
    recording_id = _uuid(args.recording_id)
    if recording_id is None:
        return _fail(f"RECORDING_ID must be a UUID; got {args.recording_id!r}", EXIT_USAGE)
    if not (args.reason or "").strip():
        return _fail("retry: --reason must say why (it goes to the audit trail)", EXIT_USAGE)
    try:
        with _connect(settings) as conn:
            row = ops_queries.operator_retry(conn, recording_id, _operator(args), args.reason)
    except psycopg.Error as err:
        state = sqlstate(err)
        if state == SqlState.FINALIZE_ROW_NOT_FOUND:
            return _fail(f"retry: recording {recording_id} has no finalize row (RF005)")
        if state == SqlState.NOT_PENDING:
            return _fail(f"retry: the finalize row of recording {recording_id} is not Pending "
                         "(RF020); a Quarantined row is handed back with requeue")
        raise
    logs.log("recording retried", recordingId=row.recording_id, operator=_operator(args),
             reason=args.reason)
    _print_row("due now:", row, args.json)
    return EXIT_OK


# ------------------------------------------------------------------------------------------
# pause / resume


def pause_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.part not in ("reconcile", "relay", "all"):
        return _fail(f"{args.command}: PART must be reconcile, relay or all; got {args.part!r}",
                     EXIT_USAGE)
    paused = args.command == "pause"
    with _connect(settings) as conn:
        # SPEC section 7 keeps --reason optional; the database requires one (an audited action
        # always says why), so an omitted reason is recorded as such, in words.
        rows = ops_queries.set_pause(conn, args.part, paused, _operator(args),
                                 args.reason or "(no reason given)")
    logs.log("paused" if paused else "resumed", part=args.part, operator=_operator(args),
             reason=args.reason)
    if args.json:
        _json({"parts": [{"part": r.part, "paused": r.paused, "pausedAt": _iso(r.paused_at)
                          if r.paused else None, "pausedBy": r.paused_by, "reason": r.reason}
                         for r in rows]})
        return EXIT_OK
    for r in rows:
        state = f"paused since {_iso(r.paused_at)} by {r.paused_by}: {r.reason}" if r.paused \
            else "running"
        print(f"{r.part:<10} {state}")
    print("every runner honours this from its next cycle")
    return EXIT_OK


def status_lines(conn: queries.Connection) -> tuple[list[str], dict[str, Any]]:
    """What ``status`` adds: the pause switch and the quarantined rows by reason."""
    state = _state(conn)
    lines = []
    for pause in state.pauses:
        lines.append(f"paused {pause['part']:<23}since {_iso(pause['pausedAt'])} by "
                     f"{pause['pausedBy']}: {pause['reason']}")
    if state.quarantined_by_reason:
        by = ", ".join(f"{k} {v}" for k, v in sorted(state.quarantined_by_reason.items()))
        lines.append(f"quarantined by reason         {by}")
    return lines, {"paused": _paused_parts(state), "pauses": state.pauses,
                   "quarantinedByReason": state.quarantined_by_reason}


# ------------------------------------------------------------------------------------------
# prune


def _older_than(text: str) -> float | None:
    try:
        seconds = parse_duration(text, days=True)
    except ValueError:
        return None
    return seconds if seconds >= 60 else None


def prune_command(args: argparse.Namespace, settings: Settings) -> int:
    older = _older_than(args.older_than)
    if older is None:
        return _fail(f"prune: --older-than must be a duration of at least 1 minute (30d, 12h, "
                     f"90m); got {args.older_than!r}", EXIT_USAGE)
    if not 1 <= args.batch_size <= 10000:
        return _fail(f"--batch-size must be an integer in 1..10000; got {args.batch_size}",
                     EXIT_USAGE)
    with _connect(settings) as conn:
        if args.dry_run:
            counts = queries.prune(conn, older, args.batch_size, True, settings.topic)
            totals = Counter(outbox=counts.outbox, realtime=counts.realtime,
                             finalize=counts.finalize)
            calls = 0
        else:
            from .maintenance import prune_batches

            totals, calls = prune_batches(conn, older, settings.topic, args.batch_size)
    result = {"dryRun": bool(args.dry_run), "olderThanSeconds": older,
              "outbox": totals["outbox"], "realtime": totals["realtime"],
              "finalize": totals["finalize"], "statements": calls}
    if not args.dry_run:
        fields: dict[str, Any] = {k: v for k, v in result.items() if k != "dryRun"}
        logs.log("pruned", **fields)
    if args.json:
        _json(result)
    else:
        verb = "would delete" if args.dry_run else "deleted"
        print(f"{verb}: {totals['outbox']} published events, {totals['realtime']} dispatched "
              f"realtime rows, {totals['finalize']} Done finalize rows"
              + ("" if args.dry_run else f" ({calls} batch(es))"))
    return EXIT_OK


# ------------------------------------------------------------------------------------------
# run-once --dry-run


def dry_run_command(args: argparse.Namespace, settings: Settings) -> int:
    as_of = datetime.now(UTC)
    with _connect(settings) as conn:
        state = _state(conn)
        rows = ops_queries.claim_preview(conn, settings, PREVIEW_ROWS)
    reconcile = [r for r in rows if r.action == "reconcile"]
    verdicts: dict[UUID, Verdict] = {}
    config_error: str | None = None
    if reconcile:
        storage = _storage(settings)
        try:
            confirmed, config_error = _bucket(storage)
            if config_error is None:
                claimed = [_claimed(r.recording_id, r.session_kind, r.session_id, r.attempts)
                           for r in reconcile]
                workers = min(settings.s3_concurrency, len(claimed))
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    for row, verdict in zip(claimed, pool.map(
                            lambda c: _head(storage, c, confirmed), claimed), strict=True):
                        verdicts[row.recording_id] = verdict
        finally:
            storage.close()
    out_rows = []
    results: Counter[str] = Counter()
    for r in rows:
        entry: dict[str, Any] = {"recordingId": str(r.recording_id), "sessionKind": r.session_kind,
                                 "sessionId": str(r.session_id), "phase": r.action,
                                 "attempts": r.attempts, "detail": r.detail,
                                 "nextAttemptAt": _iso(r.next_attempt_at)}
        if r.action == "reconcile":
            seen = verdicts.get(r.recording_id)
            entry["s3"] = _verdict_dict(seen, config_error)
            entry["result"] = _predicted(seen.outcome if seen else "config_error",
                                         r.attempts, settings.max_attempts)
        else:
            entry["result"] = r.action
        results[entry["result"]] += 1
        out_rows.append(entry)
    _json({"dryRun": True, "asOf": _iso(as_of), "paused": _paused_parts(state),
           "due": len(rows), "truncated": len(rows) >= PREVIEW_ROWS,
           "phases": dict(Counter(r.action for r in rows)), "results": dict(results),
           "configError": config_error, "rows": out_rows})
    return EXIT_FAILURE if config_error else EXIT_OK
