"""``recording-finalize audit [--repair]``: the invariant checks by business state.

The checks are ``recording_finalize.audit()``'s; ``failed_with_binary`` is the driver's own: the
HEADs of the newest Failed recordings' objects. ``--repair`` first opens a finalize row, due now,
for every orphan (``audit_repair``, audited) and nothing else.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from .. import logs
from ..cliutil import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Command,
    add_json_flag,
    connect,
    fail,
    iso,
    operator,
    print_json,
)
from ..config import Settings
from ..queries import WorkerConfig, worker_config
from . import queries, s3

#: ``audit`` HEADs the objects of this many of the newest Failed recordings by default.
AUDIT_FAILED_ROWS = 1000


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--repair", action="store_true",
                     help="open a finalize row (due now) for each orphan, audited")
    cmd.add_argument("--operator", metavar="NAME", default=None,
                     help="who repairs (default: the OS user)")
    cmd.add_argument("--failed-limit", type=int, default=AUDIT_FAILED_ROWS, metavar="N",
                     help="HEAD the objects of the N newest Failed recordings (1..10000, "
                     f"default {AUDIT_FAILED_ROWS})")
    add_json_flag(cmd)


def audit_command(args: argparse.Namespace, settings: Settings) -> int:
    if not 1 <= args.failed_limit <= 10000:
        return fail(f"--failed-limit must be an integer in 1..10000; got {args.failed_limit}",
                    EXIT_USAGE)
    repaired: list[queries.RepairedRow] = []
    with connect(settings) as conn:
        # The worker's own interval and storage settings, as it reported them at start: audit
        # judges by them, not by this operator's environment (which is the fallback).
        worker = worker_config(conn)
        if worker is not None:
            settings = replace(settings, polling_interval=worker.polling_interval,
                               s3_bucket=worker.s3_bucket,
                               s3_key_template=worker.s3_key_template)
        if args.repair:
            repaired = queries.audit_repair(conn, operator(args))
            for row in repaired:
                logs.log("orphan repaired", recordingId=row.recording_id,
                         operator=operator(args))
        checks = queries.audit(conn, settings)
        failed = queries.failed_recordings(conn, args.failed_limit)
    found_binaries = _failed_with_binary(failed, settings)
    results: list[dict[str, Any]] = [{"check": c.check_name, "reason": c.reason, "found": c.found,
                "examples": list(c.examples or [])} for c in checks]
    results.append({"check": "failed_with_binary", "reason": None,
                    "found": len(found_binaries), "examples": found_binaries[:5],
                    "checked": len(failed)})
    clean = all(r["found"] == 0 for r in results)
    if args.json:
        print_json({"clean": clean, "overdueAfterSeconds": settings.polling_interval,
                    "settingsOf": "worker" if worker is not None else "environment",
                    "checks": results, "repaired": [str(r.recording_id) for r in repaired]})
    else:
        _print_audit(args, settings, worker, results, repaired)
    return EXIT_OK if clean else EXIT_FAILURE


def _print_audit(args: argparse.Namespace, settings: Settings, worker: WorkerConfig | None,
                 results: list[dict[str, Any]], repaired: list[queries.RepairedRow]) -> None:
    if args.repair:
        print(f"repaired: {len(repaired)} orphaned recording(s) got a finalize row, due now"
              + (": " + ", ".join(str(r.recording_id) for r in repaired) if repaired else ""))
    width = max(len(_check_label(r)) for r in results)
    for r in results:
        examples = ", ".join(r["examples"]) if r["examples"] else "-"
        print(f"{_check_label(r).ljust(width)}  {str(r['found']).rjust(6)}  {examples}")
    # Say which interval and bucket were used.
    whose = ("the worker's, reported " + iso(worker.reported_at) if worker is not None
             else "this environment's: no worker has reported its settings")
    print(f"unpublished_overdue: older than {settings.polling_interval:g} s; "
          f"failed_with_binary: bucket {settings.s3_bucket!r} ({whose})")
    clean = all(r["found"] == 0 for r in results)
    print("clean" if clean else "findings: see above (recording-finalize explain ID)")


def _check_label(result: dict[str, Any]) -> str:
    return str(result["check"]) + (f" ({result['reason']})" if result.get("reason") else "")


def _failed_with_binary(failed: list[queries.FailedRecording], settings: Settings) -> list[str]:
    """The Failed recordings whose object is in S3 now (HEADs with bounded concurrency)."""
    if not failed:
        return []
    storage = s3.open_storage(settings)
    try:
        _, config_error = s3.bucket(storage)
        if config_error is not None:
            raise RuntimeError(f"S3 refuses the bucket {settings.s3_bucket}: {config_error}")
        rows = [s3.claimed(f.recording_id, f.session_kind, f.session_id) for f in failed]
        verdicts = s3.head_all(storage, rows, settings.s3_concurrency)
    finally:
        storage.close()
    return [str(row.recording_id) for row, v in zip(rows, verdicts, strict=True)
            if v.outcome in ("found", "invalid_metadata")]


COMMAND = Command(
    name="audit",
    summary="invariant checks by business state; --repair opens finalize rows for orphans",
    description=(
        "Runs the invariant checks and prints, for each, the number of findings and a few\n"
        "recording ids: available_without_event (Available, no event enqueued, nothing to\n"
        "enqueue it), orphaned_recordings (not terminal, session ended past the SLA, no finalize\n"
        "row: the worker cannot see them), done_not_terminal, unpublished_overdue (older than\n"
        "one polling interval of the worker), quarantined (by reason) and failed_with_binary (a\n"
        "Failed recording whose binary is in S3 now, in the worker's bucket: for a human to\n"
        "look at). The worker's interval, bucket and key template are those it reported when\n"
        "it started (recording_finalize.worker_config); before any worker has, this\n"
        "environment's (RFR_POLLING_INTERVAL, RFR_S3_*). --repair first opens a finalize row,\n"
        "due now, for every orphan (audited) and nothing else. With --json one object: clean,\n"
        "overdueAfterSeconds, settingsOf (worker or environment), checks [{check, reason,\n"
        "found, examples}], repaired [ids]."
    ),
    exits=(
        "exit 1: a check found something (after --repair: something but the orphans).\n"
        "exit 0: every check is clean."
    ),
    handler=audit_command,
    variables=(*s3.S3_VARIABLES, "RFR_POLLING_INTERVAL"),
    flags=("RFR_POLLING_INTERVAL",),
    add_arguments=_add_arguments,
)
