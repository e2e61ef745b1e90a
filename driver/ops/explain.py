"""``recording-finalize explain RECORDING_ID``: everything about one recording, and what the
worker will do next: ``recording_finalize.explain()``'s document, plus the HEAD of its object.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any
from uuid import UUID

import psycopg

from ..cliutil import (
    EXIT_OK,
    EXIT_USAGE,
    Command,
    add_json_flag,
    connect,
    fail,
    iso,
    parse_uuid,
    print_json,
)
from ..config import Settings
from ..errors import SqlState, sqlstate
from ..model import Verdict
from ..queries import operator_state, worker_config
from . import queries, s3


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("recording_id", metavar="RECORDING_ID", help="the recording's UUID")
    add_json_flag(cmd)


def explain_command(args: argparse.Namespace, settings: Settings) -> int:
    recording_id = parse_uuid(args.recording_id)
    if recording_id is None:
        return fail(f"RECORDING_ID must be a UUID; got {args.recording_id!r}", EXIT_USAGE)
    try:
        with connect(settings) as conn:
            doc = queries.explain(conn, recording_id)
            state = operator_state(conn)
            worker = worker_config(conn)
    except psycopg.Error as err:
        if sqlstate(err) == SqlState.UNKNOWN_RECORDING:
            return fail(f"explain: no recording and no finalize row with id {recording_id} "
                        "(RF021)")
        raise
    doc["paused"] = state.paused_parts()
    # Where the worker looks, not where this operator's environment says: the worker reported
    # its bucket and key template when it started (none yet: the operator's own).
    if worker is not None:
        settings = replace(settings, s3_bucket=worker.s3_bucket,
                           s3_key_template=worker.s3_key_template)
    doc["s3"] = _explain_s3(doc, recording_id, settings)
    doc["s3"]["settingsOf"] = ("the worker (reported " + iso(worker.reported_at) + ")"
                               if worker is not None else "this environment (no worker has "
                               "reported its settings yet)")
    if doc["next"].get("action") == "reconcile" and doc["s3"].get("outcome") is not None:
        doc["next"]["outcome"] = _outcome(recording_id, doc["s3"], settings)
    doc["next"]["sentence"] = _sentence(doc)
    if args.json:
        print_json(doc)
    else:
        _print_explain(doc)
    return EXIT_OK


def _explain_s3(doc: dict[str, Any], recording_id: UUID, settings: Settings) -> dict[str, Any]:
    session = doc.get("session") or {}
    kind, session_id = session.get("kind"), session.get("id")
    if not kind or not session_id:
        return {"outcome": None, "present": None, "error": "no session to build the key from"}
    storage = s3.open_storage(settings)
    try:
        row = s3.claimed(recording_id, str(kind), UUID(str(session_id)))
        confirmed, config_error = s3.bucket(storage)
        result = {"key": storage.key_for(row), "bucket": settings.s3_bucket,
                  "bucketConfirmed": confirmed if config_error is None else None}
        if config_error is not None:
            return result | s3.verdict_dict(None, config_error)
        return result | s3.verdict_dict(storage.check(row))
    finally:
        storage.close()


def _outcome(recording_id: UUID, seen: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """What the next cycle would do with this verdict: the database's decision
    (``preview_outcomes``, the decider ``apply_outcome`` carries out), never a guess here."""
    verdict = Verdict(str(seen["outcome"]), file_id=seen.get("fileId"),
                      size_bytes=seen.get("sizeBytes"),
                      duration_seconds=seen.get("durationSeconds"), format=seen.get("format"),
                      error=seen.get("error"))
    with connect(settings) as conn:
        preview = queries.preview_outcomes(conn, [(recording_id, verdict)],
                                           bucket_confirmed=seen.get("bucketConfirmed"))[0]
    return {"result": preview.result, "finalizeStatus": preview.finalize_status,
            "attempts": preview.attempts,
            "nextAttemptAt": iso(preview.next_attempt_at) if preview.next_attempt_at else None,
            "detail": preview.detail}


def _sentence(doc: dict[str, Any]) -> str:
    nxt = doc["next"]
    text = str(nxt.get("text", ""))
    parts = [text[0].upper() + text[1:] if text else "Nothing"]
    outcome = nxt.get("outcome")
    if outcome:
        words = s3.RESULT_WORDS.get(str(outcome["result"]), str(outcome["result"]))
        if outcome.get("nextAttemptAt") and outcome.get("finalizeStatus") == "Pending":
            words += f" (next attempt at {outcome['nextAttemptAt']})"
        if outcome.get("detail") and outcome["result"] in ("quarantined", "deferred_by_incident"):
            words += f": {outcome['detail']}"
        parts.append(words)
    outbox = doc.get("outbox") or {}
    if outbox and outbox.get("publishedAt") is None:
        parts.append("its event waits for the relay (enqueued "
                     f"{iso(outbox.get('createdAt'))})")
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
                     f"created {iso(rec['createdAt'])}, updated {iso(rec['updatedAt'])}")
        if rec.get("availableAt") or rec.get("failedAt"):
            lines.append(f"  available {iso(rec.get('availableAt'))}, failed "
                         f"{iso(rec.get('failedAt'))} ({rec.get('failureReason') or '-'})")
        if rec.get("fileId"):
            lines.append(f"  file {rec['fileId']}, {rec.get('sizeBytes')} bytes, "
                         f"{rec.get('durationSeconds')} s, {rec.get('format')}")
    else:
        lines.append("  no call_recordings row (a finalize row without its recording)")
    if ses.get("found") is False:
        lines.append(f"session    {ses.get('kind')} {ses.get('id')}: no such session")
    else:
        lines.append(f"session    {ses.get('kind')} {ses.get('id')}, ended "
                     f"{iso(ses.get('endedAt'))}, SLA due {iso(ses.get('slaDueAt'))}")
    if fin:
        lines.append(f"finalize   {fin['status']}, attempts {fin['attempts']}, next attempt "
                     f"{iso(fin['nextAttemptAt'])}, last claimed {iso(fin.get('claimedAt'))}")
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
        lines.append(f"           (with the settings of {s3.get('settingsOf')})")
    if out:
        lines.append(f"event      enqueued {iso(out.get('createdAt'))}, published "
                     f"{iso(out.get('publishedAt'))}, event-id {out.get('eventId')}")
    else:
        lines.append("event      none in the outbox (never enqueued, or removed by the service's "
                     "retention)")
    for push in doc.get("realtime") or []:
        lines.append(f"realtime   {push['kind']} created {iso(push['createdAt'])}, dispatched "
                     f"{iso(push.get('dispatchedAt'))}")
    for action in doc.get("operatorActions") or []:
        lines.append(f"operator   {iso(action['at'])} {action['action']} by "
                     f"{action['operator']}: {action['reason']}")
    if doc.get("paused"):
        lines.append(f"paused     {', '.join(doc['paused'])}")
    lines.append(f"next       {doc['next']['sentence']}")
    print("\n".join(lines), flush=True)


COMMAND = Command(
    name="explain",
    summary="everything about one recording, and what the worker will do next",
    description=(
        "Prints the recording (status, version, times), its session (ended, SLA due), its\n"
        "finalize row (attempts, next attempt, last error, quarantine reason), what S3 says\n"
        "right now (present, size, the verdict the worker would reach), its integration event\n"
        "(enqueued, published, event-id), its realtime rows, the operators' actions on it, and\n"
        "one sentence: what the worker will do next and when. Read-only. With --json one JSON\n"
        "object: recordingId, recording, session, finalize, s3, outbox, realtime,\n"
        "operatorActions, paused, next {action, at, text, sentence}."
    ),
    exits=(
        "exit 1: no recording and no finalize row has RECORDING_ID (or a database error).\n"
        "exit 2: RECORDING_ID is not a UUID."
    ),
    handler=explain_command,
    variables=s3.S3_VARIABLES,
    add_arguments=_add_arguments,
)
