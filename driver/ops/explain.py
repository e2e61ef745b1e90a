"""``recording-finalize explain RECORDING_ID``: everything about one recording, and what the
worker will do next: ``recording_finalize.explain()``'s document, plus the HEAD of its object.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import psycopg

from .. import cliutil
from ..config import Settings
from ..errors import SqlState, sqlstate
from ..queries import Connection, WorkerConfig, operator_state
from . import queries, s3

#: What a previewed result means, in words (the result itself is the database's decision).
RESULT_WORDS = {
    "reconciled": "the file storage has the binary now, so it becomes Available and its event "
                  "is published",
    "failed": "the file storage has no binary, so it becomes Failed (Timeout)",
    "deferred_by_incident": "the file storage has no binary, but a storage incident holds the "
                            "404 back: the attempt is given back and the row checked again "
                            "later",
    "backoff": "the file storage did not answer, so it backs off again",
    "held_by_incident": "the file storage did not answer while the worker's own storage "
                        "incident is open: the attempt is given back",
    "quarantined": "it is quarantined",
    "config_error_released": "the file storage refuses the bucket (configuration error): the "
                             "cycle stops without counting the attempt",
}


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("recording_id", metavar="RECORDING_ID", type=UUID,
                     help="the recording's UUID")
    cliutil.add_json_flag(cmd)


def explain_command(args: argparse.Namespace, settings: Settings) -> int:
    with cliutil.connect(settings) as conn:
        try:
            [row] = queries.call(conn, "explain", recording_id=args.recording_id)
        except psycopg.Error as err:
            if sqlstate(err) != SqlState.UNKNOWN_RECORDING:
                raise
            return cliutil.fail(f"explain: no recording and no finalize row with id "
                                f"{args.recording_id} (RF021)")
        doc: dict[str, Any] = row["explain"]
        doc["paused"] = operator_state(conn).paused_parts()
        _add_s3(conn, doc, args.recording_id, *s3.worker_settings(conn, settings))
    doc["next"]["sentence"] = _sentence(doc)
    cliutil.show(args, doc, _lines(doc))
    return cliutil.EXIT_OK


def _add_s3(conn: Connection, doc: dict[str, Any], recording_id: UUID, settings: Settings,
            worker: WorkerConfig | None) -> None:
    """What S3 says of the recording now, where the worker looks, and what the next cycle would
    do with that verdict: the database's decision (``preview_outcomes``), never a guess here."""
    whose = {"settingsOf": "the worker (reported " + cliutil.iso(worker.reported_at) + ")"
             if worker is not None else "this environment (no worker has reported its "
             "settings yet)"}
    session = doc.get("session") or {}
    # A key made of the recording's id alone is looked at whatever became of its session (a
    # person deciding about a recording whose session is gone wants to know if its binary is).
    if (not session.get("kind") or not session.get("id")) and re.search(
            r"\{session_(?:id|kind)\}", settings.s3_key_template):
        doc["s3"] = {"outcome": None, "present": None,
                     "error": "no session to build the key from"} | whose
        return
    heads = s3.head_rows(settings, [{"recording_id": recording_id,
                                     "session_kind": str(session.get("kind") or ""),
                                     "session_id": session.get("id") and UUID(str(session["id"]))}])
    confirmed = heads.bucket_confirmed if heads.config_error is None else None
    doc["s3"] = ({"key": heads.keys[0], "bucket": settings.s3_bucket, "bucketConfirmed": confirmed}
                 | s3.verdict_dict(heads.verdicts[0], heads.config_error) | whose)
    if doc["next"].get("action") == "reconcile":
        [preview] = queries.preview_outcomes(conn, [(recording_id, heads.verdicts[0])], confirmed)
        doc["next"]["outcome"] = cliutil.json_row(preview, "result", "finalize_status",
                                                  "attempts", "next_attempt_at", "detail")


def _sentence(doc: dict[str, Any]) -> str:
    nxt = doc["next"]
    text = str(nxt.get("text", ""))
    parts = [text[0].upper() + text[1:] if text else "Nothing"]
    outcome = nxt.get("outcome")
    if outcome:
        words = RESULT_WORDS.get(str(outcome["result"]), str(outcome["result"]))
        if outcome.get("nextAttemptAt") and outcome.get("finalizeStatus") == "Pending":
            words += f" (next attempt at {outcome['nextAttemptAt']})"
        if outcome.get("detail") and outcome["result"] in ("quarantined", "deferred_by_incident"):
            words += f": {outcome['detail']}"
        parts.append(words)
    outbox = doc.get("outbox") or {}
    if outbox and outbox.get("publishedAt") is None:
        parts.append("its event waits for the relay (enqueued "
                     f"{cliutil.iso(outbox.get('createdAt'))})")
    sentence = "; ".join(parts) + "."
    paused = doc.get("paused") or []
    if "reconcile" in paused and nxt.get("action") not in (None, "none"):
        sentence = "Reconcile is paused (recording-finalize resume reconcile): once resumed, " \
            + sentence[0].lower() + sentence[1:]
    return sentence


def _lines(doc: dict[str, Any]) -> Iterator[str]:
    rec, fin = doc.get("recording"), doc.get("finalize")
    ses = doc.get("session") or {}
    yield f"recording  {doc['recordingId']}"
    if rec:
        # An adapter's recordings view may have no version: then there is none to show.
        version = f" (version {rec['version']})" if rec.get("version") is not None else ""
        # Nor, perhaps, the times a row was written: then they are left out, not shown as "-".
        written = "".join(f", {word} {cliutil.iso(rec[key])}" for word, key in (
            ("created", "createdAt"), ("updated", "updatedAt")) if rec.get(key))
        yield f"  status {rec['status']}{version}, {rec.get('mediaType') or '-'}{written}"
        if rec.get("availableAt") or rec.get("failedAt"):
            yield (f"  available {cliutil.iso(rec.get('availableAt'))}, failed "
                   f"{cliutil.iso(rec.get('failedAt'))} ({rec.get('failureReason') or '-'})")
        if rec.get("fileId"):
            yield (f"  file {rec['fileId']}, {rec.get('sizeBytes')} bytes, "
                   f"{rec.get('durationSeconds')} s, {rec.get('format')}")
    else:
        yield ("  not in the adapter's recordings view (a finalize row without its "
               "recording)")
    if ses.get("found") is False:
        # A DBA's recordings view may take the kind from the session: gone with it, NULL.
        yield f"session    {ses.get('kind') or 'kind unknown,'} {ses.get('id')}: no such session"
    else:
        yield (f"session    {ses.get('kind')} {ses.get('id')}, ended "
               f"{cliutil.iso(ses.get('endedAt'))}, SLA due {cliutil.iso(ses.get('slaDueAt'))}")
    if fin:
        yield (f"finalize   {fin['status']}, attempts {fin['attempts']}, next attempt "
               f"{cliutil.iso(fin['nextAttemptAt'])}, last claimed "
               f"{cliutil.iso(fin.get('claimedAt'))}")
        yield f"  last error: {fin.get('lastError') or '-'}"
        if fin["status"] == "Quarantined":
            yield f"  quarantine reason: {fin.get('quarantineReason') or 'unknown'}"
    else:
        yield "finalize   no finalize row"
    yield from _later_lines(doc)


def _later_lines(doc: dict[str, Any]) -> Iterator[str]:
    s3, out = doc.get("s3") or {}, doc.get("outbox")
    if s3.get("outcome") is None:
        yield f"s3         not checked: {s3.get('error')}"
    else:
        present = {True: "present", False: "absent", None: "unknown"}[s3.get("present")]
        size = f", {s3['sizeBytes']} bytes" if s3.get("sizeBytes") is not None else ""
        error = f" ({s3['error']})" if s3.get("error") else ""
        yield (f"s3         {s3.get('bucket')}/{s3.get('key')}: {present}{size}; verdict "
               f"{s3['outcome']}{error}")
        yield f"           (with the settings of {s3.get('settingsOf')})"
    service = doc.get("serviceEvent")
    if out:
        yield (f"event      enqueued {cliutil.iso(out.get('createdAt'))}, published "
               f"{cliutil.iso(out.get('publishedAt'))}, event-id {out.get('eventId')}")
    if service:
        published = service.get("publishedAt")
        yield (f"event      the service's own (its service_events), enqueued "
               f"{cliutil.iso(service.get('enqueuedAt'))}, "
               + (f"published {cliutil.iso(published)}" if published is not None else
                  "not yet published (the service's relay publishes it, never the product's)"))
    if not out and not service:
        yield ("event      none, neither in the product's outbox nor in the service's "
               "service_events (never enqueued, or removed by a retention)")
    for action in doc.get("operatorActions") or []:
        yield (f"operator   {cliutil.iso(action['at'])} {action['action']} by "
               f"{action['operator']}: {action['reason']}")
    if doc.get("paused"):
        yield f"paused     {', '.join(doc['paused'])}"
    yield f"next       {doc['next']['sentence']}"


COMMAND = cliutil.Command(
    name="explain",
    summary="everything about one recording, and what the worker will do next",
    description=(
        "Prints the recording (status, version, times), its session (ended, SLA due), its\n"
        "finalize row (attempts, next attempt, last error, quarantine reason), what S3 says\n"
        "right now (present, size, the verdict the worker would reach), its integration event\n"
        "(the product's: enqueued, published, event-id; or the service's own, as the adapter's\n"
        "service_events shows it: enqueued, published or not yet), the operators' actions on\n"
        "it, and one sentence: what the worker will do next and when. Read-only. With\n"
        "--json one JSON object:\n"
        "recordingId, recording, session, finalize, s3, outbox, serviceEvent,\n"
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
