"""``recording-finalize prune --older-than D``: deletes finished rows in bounded batches.

The batches are ``maintenance.prune_batches``, the same that ``run`` prunes with every hour
(RFR_RETENTION); ``--dry-run`` counts in one ``prune`` call and deletes nothing.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from .. import logs
from ..cliutil import EXIT_OK, EXIT_USAGE, Command, add_json_flag, connect, fail, print_json
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
    add_json_flag(cmd)


def _older_than(text: str) -> float | None:
    try:
        seconds = parse_duration(text, days=True)
    except ValueError:
        return None
    return seconds if seconds >= 60 else None


def prune_command(args: argparse.Namespace, settings: Settings) -> int:
    older = _older_than(args.older_than)
    if older is None:
        return fail(f"prune: --older-than must be a duration of at least 1 minute (30d, 12h, "
                    f"90m); got {args.older_than!r}", EXIT_USAGE)
    if not 1 <= args.batch_size <= 10000:
        return fail(f"--batch-size must be an integer in 1..10000; got {args.batch_size}",
                    EXIT_USAGE)
    with connect(settings) as conn:
        if args.dry_run:
            counts = prune(conn, older, args.batch_size, True)
            totals = Counter(finalize=counts.finalize, events=counts.events,
                             leases=counts.leases, incidents=counts.incidents)
            calls = 0
        else:
            totals, calls = prune_batches(conn, older, args.batch_size)
    result = {"dryRun": bool(args.dry_run), "olderThanSeconds": older,
              "finalize": totals["finalize"], "events": totals["events"],
              "leases": totals["leases"],
              "incidents": totals["incidents"], "statements": calls}
    if not args.dry_run:
        fields: dict[str, Any] = {k: v for k, v in result.items() if k != "dryRun"}
        logs.log("pruned", **fields)
    if args.json:
        print_json(result)
    else:
        verb = "would delete" if args.dry_run else "deleted"
        print(f"{verb}: {totals['finalize']} Done finalize rows, {totals['events']} published "
              f"events of the product's outbox, {totals['leases']} expired relay leases, "
              f"{totals['incidents']} ended storage incidents"
              + ("" if args.dry_run else f" ({calls} batch(es))"))
        print("(the messenger service's outboxes are its own to prune)")
    return EXIT_OK


COMMAND = Command(
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
    exits=(
        "exit 2: --older-than is not a duration of at least 1 minute."
    ),
    handler=prune_command,
    variables=("DATABASE_URL",),
    add_arguments=_add_arguments,
)
