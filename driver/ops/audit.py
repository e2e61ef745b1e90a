"""``recording-finalize audit [--repair]``: ``recording_finalize.audit()``'s invariant checks,
and the driver's own ``failed_with_binary``: the HEADs of the newest Failed recordings' objects."""

from __future__ import annotations

import argparse

from .. import cliutil, logs
from ..config import Settings
from ..model import FOUND, INVALID_METADATA
from ..queries import interval
from . import queries, s3

AUDIT_FAILED_ROWS = 1000


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--repair", action="store_true",
                     help="open a finalize row (due now) for each orphan, audited")
    cmd.add_argument("--operator", metavar="NAME", default=None,
                     help="who repairs (default: the OS user)")
    cmd.add_argument("--failed-limit", type=int, default=AUDIT_FAILED_ROWS, metavar="N",
                     help="HEAD the objects of the N newest Failed recordings (1..10000, "
                     f"default {AUDIT_FAILED_ROWS})")
    cliutil.add_json_flag(cmd)


def audit_command(args: argparse.Namespace, settings: Settings) -> int:
    repaired: list[queries.Row] = []
    by = cliutil.operator(args)
    with cliutil.connect(settings) as conn:
        settings, worker = s3.worker_settings(conn, settings)
        if args.repair:
            repaired = queries.call(conn, "audit_repair", operator=by)
            for row in repaired:
                logs.log("orphan repaired", recordingId=row["recording_id"], operator=by)
        checks = queries.call(conn, "audit", polling_interval=interval(settings.polling_interval))
        failed = queries.call(conn, "failed_recordings", limit=args.failed_limit)
    results = [{"check": c["check_name"], "reason": c["reason"], "found": c["found"],
                "examples": c["examples"] or []} for c in checks]
    heads = s3.head_rows(settings, failed)
    if heads.config_error is not None:
        raise RuntimeError(f"S3 refuses the bucket {settings.s3_bucket}: {heads.config_error}")
    with_binary = [str(f["recording_id"]) for f, v in zip(failed, heads.verdicts, strict=True)
                   if v.outcome in (FOUND, INVALID_METADATA)]
    results.append({"check": "failed_with_binary", "reason": None, "found": len(with_binary),
                    "examples": with_binary[:5], "checked": len(failed)})
    clean = all(r["found"] == 0 for r in results)
    repaired_ids = [str(r["recording_id"]) for r in repaired]
    labels = [r["check"] + (f" ({r['reason']})" if r["reason"] else "") for r in results]
    width = max(len(label) for label in labels)
    whose = ("the worker's, reported " + cliutil.iso(worker.reported_at) if worker is not None
             else "this environment's: no worker has reported its settings")
    # The HEADs cover the newest --failed-limit Failed recordings only: say so, or a clean
    # audit after an incident that failed more than that would read as "no Failed recording has
    # its binary" while the older ones were never looked at.
    scope = (f"the newest {len(failed)} Failed recordings only (--failed-limit reached: older "
             "ones, if any, not checked)" if len(failed) >= args.failed_limit
             else f"every Failed recording ({len(failed)})")
    cliutil.show(args, {"clean": clean, "overdueAfterSeconds": settings.polling_interval,
                        "settingsOf": "worker" if worker is not None else "environment",
                        "checks": results, "repaired": repaired_ids}, [
        *([f"repaired: {len(repaired)} orphaned recording(s) got a finalize row, due now"
           + (": " + ", ".join(repaired_ids) if repaired else "")] if args.repair else []),
        *(f"{label.ljust(width)}  {str(r['found']).rjust(6)}  {', '.join(r['examples']) or '-'}"
          for label, r in zip(labels, results, strict=True)),
        f"unpublished_overdue: older than {settings.polling_interval:g} s; "
        f"failed_with_binary: {scope}, bucket {settings.s3_bucket!r} ({whose})",
        "clean" if clean else "findings: see above (recording-finalize explain ID)"])
    return cliutil.EXIT_OK if clean else cliutil.EXIT_FAILURE


COMMAND = cliutil.Command(
    name="audit",
    summary="invariant checks by business state; --repair opens finalize rows for orphans",
    description=(
        "Runs the invariant checks and prints, for each, the number of findings and a few\n"
        "recording ids: available_without_event (Available, no event enqueued, nothing to\n"
        "enqueue it), orphaned_recordings (not terminal, session ended past the SLA, no finalize\n"
        "row: the worker cannot see them), recordings_without_session (not terminal, no finalize\n"
        "row, quiet for the SLA, no session in the adapter's sessions view: discovery never\n"
        "finds them; a person restores the session or finalizes them through the service),\n"
        "done_not_terminal, unpublished_overdue (older than one polling interval of the\n"
        "worker), quarantined (by reason) and failed_with_binary (a Failed recording whose\n"
        "binary is in S3 now, in the worker's bucket: for a human to look at). The worker's\n"
        "interval, bucket and key template are those it reported when it started\n"
        "(recording_finalize.worker_config); before any worker has, this environment's\n"
        "(RFR_POLLING_INTERVAL, RFR_S3_*). --repair first opens a finalize row, due now, for\n"
        "every orphan (audited) and nothing else. With --json one object: clean,\n"
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
    check_args=lambda args: cliutil.check_range(args, "failed_limit"),
)
