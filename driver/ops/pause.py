"""``recording-finalize pause|resume PART``: the pause switch in the database, audited; every
runner reads it once per cycle.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from .. import cliutil, logs
from ..config import Settings
from . import queries


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("part", metavar="PART", choices=("reconcile", "relay", "all"),
                     help="reconcile, relay or all")
    cliutil.add_operator_args(cmd, reason_required=False)
    cliutil.add_json_flag(cmd)


def pause_command(args: argparse.Namespace, settings: Settings) -> int:
    paused = args.command == "pause"
    by = cliutil.operator(args)
    with cliutil.connect(settings) as conn:
        # The command keeps --reason optional; the database requires one (an audited action
        # always says why), so an omitted reason is recorded as such, in words.
        rows = queries.call(conn, "set_pause", part=args.part, paused=paused, operator=by,
                            reason=args.reason or "(no reason given)")
    logs.log("paused" if paused else "resumed", part=args.part, operator=by, reason=args.reason)
    cliutil.show(args, {"parts": [cliutil.json_row(r) for r in rows]}, [
        *(f"{r['part']:<10} " + (f"paused since {cliutil.iso(r['paused_at'])} by "
                                 f"{r['paused_by']}: {r['reason']}" if r["paused"] else "running")
          for r in rows),
        "every runner honours this from its next cycle"])
    return cliutil.EXIT_OK


PAUSE = cliutil.Command(
    name="pause",
    summary="pause reconcile, relay or all, for every runner from its next cycle",
    description=(
        "A switch in the database: every runner reads it once per cycle and skips the paused\n"
        "part (reconcile: no claim, no S3 check; relay: nothing is published) until `resume`.\n"
        "The workers stay up: /metrics (messenger_recording_finalize_paused{part}), status and\n"
        "the logs (\"cycle paused\") show it. Audited (--operator, --reason)."
    ),
    exits="exit 2: the part is not reconcile, relay or all.",
    handler=pause_command,
    add_arguments=_add_arguments,
)

RESUME = replace(
    PAUSE,
    name="resume",
    summary="resume what pause stopped",
    description=(
        "Clears the pause switch of reconcile, relay or all; runners pick it up on their next\n"
        "cycle. Audited (--operator, --reason)."
    ),
)
