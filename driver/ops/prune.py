"""``recording-finalize prune --older-than D``: deletes finished rows in bounded batches, the
``maintenance.prune_batches`` that ``run`` prunes with every hour (RFR_RETENTION)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from .. import cliutil, logs
from ..config import Settings, parse_duration
from ..maintenance import PRUNE_BATCH_ROWS, prune_batches
from ..queries import prune


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--older-than", required=True, metavar="D",
                     help="a duration (30d, 12h, 90m), at least 1 minute")
    cmd.add_argument("--dry-run", action="store_true",
                     help="count what would be deleted; delete nothing")
    cmd.add_argument("--batch-size", type=int, default=PRUNE_BATCH_ROWS, metavar="N",
                     help=f"rows per table per statement (1..10000, default {PRUNE_BATCH_ROWS})")
    cliutil.add_json_flag(cmd)


def _at_least_a_minute(text: str) -> float:
    seconds = parse_duration(text, days=True)
    if seconds < 60:
        raise ValueError(text)
    return seconds


def _check_args(args: argparse.Namespace) -> None:
    cliutil.parse_flag(args, "older_than", _at_least_a_minute,
                       "a duration of at least 1 minute (30d, 12h, 90m)")
    cliutil.check_range(args, "batch_size")


def prune_command(args: argparse.Namespace, settings: Settings) -> int:
    older = args.older_than
    counts: Mapping[str, int]  # finalize, events, leases, incidents: PruneCounts' fields
    with cliutil.connect(settings) as conn:
        if args.dry_run:
            counts, calls = asdict(prune(conn, older, args.batch_size, True)), 0
        else:
            counts, calls = prune_batches(conn, older, args.batch_size)
    result: dict[str, Any] = {"olderThanSeconds": older, **counts, "statements": calls}
    if not args.dry_run:
        logs.log("pruned", **result)
    verb = "would delete" if args.dry_run else "deleted"
    cliutil.show(args, {"dryRun": bool(args.dry_run), **result}, [
        f"{verb}: {counts['finalize']} Done finalize rows, {counts['events']} published events "
        f"of the product's outbox, {counts['leases']} expired relay leases, "
        f"{counts['incidents']} ended storage incidents"
        + ("" if args.dry_run else f" ({calls} batch(es))"),
        "(the messenger service's outboxes are its own to prune)"])
    return cliutil.EXIT_OK


COMMAND = cliutil.Command(
    name="prune",
    summary="delete finished rows older than --older-than, in bounded batches",
    description=(
        "Deletes the product's own finished rows older than --older-than: Done finalize rows\n"
        "(of terminal recordings), published events of its own outbox, expired relay leases\n"
        "and ended storage incidents, at most\n"
        "--batch-size of each per statement, each statement its own transaction, skipping rows\n"
        "that are locked (it never waits). The messenger service's integration_outbox and\n"
        "realtime_outbox are never touched: their retention is the service's. `run` does this\n"
        "by itself every hour with RFR_RETENTION. --dry-run counts and deletes nothing. With\n"
        "--json one object: dryRun, olderThanSeconds, finalize, events, leases, incidents,\n"
        "statements."
    ),
    exits="exit 2: --older-than is not a duration of at least 1 minute.",
    handler=prune_command,
    add_arguments=_add_arguments,
    check_args=_check_args,
)
