"""``recording-finalize storage-incident open|close|list``: file-storage incidents the worker
could not see (the worker records its own, source ``worker``: ``incidents.py``).
``incident_json`` and ``incident_table`` are ``status``'s too.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

import psycopg

from .. import cliutil, logs
from .. import queries as core_queries
from ..config import Settings, parse_duration
from ..errors import SqlState, sqlstate


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("action", choices=("open", "close", "list"),
                     help="open, close or list")
    cmd.add_argument("--source", default=None, metavar="S",
                     help="who saw it: a short lowercase name (default: ops; list: "
                     "every source)")
    cmd.add_argument("--at", default=None, metavar="T",
                     help="when it started (open) or ended (close): ISO-8601 or a "
                     "duration ago; default now")
    cmd.add_argument("--reason", default=None, metavar="R",
                     help="what happened (no URLs: they are masked)")
    cmd.add_argument("--recent", default="7d", metavar="DURATION",
                     help="list: ended incidents this recent (default 7d)")
    cmd.add_argument("--limit", type=int, default=100, metavar="N",
                     help="list: at most N incidents (1..10000, default 100)")
    cliutil.add_json_flag(cmd, "print JSON instead of text")


def _check_args(args: argparse.Namespace) -> None:
    cliutil.check_range(args, "limit")
    cliutil.parse_flag(args, "at", cliutil.moment, cliutil.MOMENT_RULE)
    if args.action == "list" and (args.at is not None or args.reason is not None):
        raise cliutil.UsageError("--at and --reason go with open and close, not list")
    cliutil.parse_flag(args, "recent", lambda text: parse_duration(text, days=True),
                       "a duration (90, 5m, 1h, 30d)")


def incident_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.action != "list":
        return _open_or_close(args, settings, args.source or "ops")
    with cliutil.connect(settings) as conn:
        incidents = [i for i in core_queries.storage_incident_list(conn, args.recent, args.limit)
                     if args.source is None or i.source == args.source]
    cliutil.show(args, {"storageIncidents": [incident_json(i) for i in incidents]},
                 incident_table(incidents) or ["no open storage incident, none ended recently"])
    return cliutil.EXIT_OK


def _open_or_close(args: argparse.Namespace, settings: Settings, source: str) -> int:
    try:
        with cliutil.connect(settings) as conn:
            incident = (core_queries.storage_incident_open(conn, source, args.reason, args.at)
                        if args.action == "open" else
                        core_queries.storage_incident_close(conn, source, args.at, args.reason))
    except psycopg.Error as err:
        state = sqlstate(err)
        message = f"storage-incident {args.action}: {err.diag.message_primary or err} ({state})"
        if state in (SqlState.INCIDENT_SOURCE_INVALID, SqlState.INCIDENT_TIME_INVALID):
            return cliutil.fail(message, cliutil.EXIT_USAGE)
        if state == SqlState.INCIDENT_SOURCE_FORBIDDEN:
            return cliutil.fail(f"{message}; log in as a role granted "
                                "recording_finalize_operator")
        raise
    if incident is None:
        return cliutil.fail(f"storage-incident close: source {source!r} has no open incident "
                            "(see `recording-finalize storage-incident list`)")
    event, what = (("storage incident closed", "closed") if args.action == "close"
                   else ("storage incident opened", "opened") if incident.created
                   else ("storage incident already open", "already open (unchanged)"))
    logs.log(event, incidentId=incident.id, source=incident.source)
    lines = [f"storage incident {incident.id} ({incident.source}) {what}: started "
             f"{cliutil.iso(incident.started_at)}, ended {cliutil.iso(incident.ended_at)}"]
    if args.action == "close":
        lines.append("a 404 stays untrusted for RFR_UPLOAD_GRACE after the end for the "
                     "recordings whose upload window overlapped it")
    cliutil.show(args, incident_json(incident), lines)
    return cliutil.EXIT_OK


def incident_json(i: core_queries.StorageIncident) -> dict[str, Any]:
    out = cliutil.json_row(asdict(i), "id", "source", "started_at", "ended_at", "reason",
                           "opened_by", "closed_by") | {"open": i.ended_at is None}
    extras = (("durationSeconds", i.duration_seconds), ("created", i.created))
    return out | {name: value for name, value in extras if value is not None}


def incident_table(incidents: list[core_queries.StorageIncident]) -> list[str]:
    """The incidents as a table; none: no lines at all."""
    return cliutil.table(("ID", "SOURCE", "STARTED_AT", "ENDED_AT", "DURATION", "REASON"), [
        (str(i.id), i.source, cliutil.iso(i.started_at),
         "open" if i.ended_at is None else cliutil.iso(i.ended_at),
         cliutil.age(i.duration_seconds or 0.0), i.reason or "-") for i in incidents]
    ) if incidents else []


COMMAND = cliutil.Command(
    name="storage-incident",
    summary="record a file-storage incident the worker could not see; list incidents",
    description=(
        "While a storage incident is open, and for RFR_UPLOAD_GRACE after it was closed, a 404\n"
        "fails no recording whose upload window (recording stop or session end, to now)\n"
        "overlapped it: the row is re-checked at incident end + grace, its attempt given back.\n"
        "The worker opens and closes incidents of source 'worker' itself (HeadBucket\n"
        "unreachable, or most HEADs of a cycle transient). Record here what it could not see,\n"
        "e.g. the recorders' path to S3 was broken while the worker's was not:\n"
        "\n"
        "  open    opens an incident of --source (idempotent: an open one is shown unchanged)\n"
        "  close   closes the open incident of --source\n"
        "  list    open incidents, then those that ended within --recent\n"
        "\n"
        "--at back-dates the start (open) or the end (close): an ISO-8601 time (no offset =\n"
        "UTC) or a duration ago (20m, 2h, 1d). Log in as a role granted\n"
        "recording_finalize_operator; the worker's role may only record source 'worker'."
    ),
    exits=(
        "exit 1: close found no open incident of --source; the role may not record that\n"
        "source (RF018); a database error.\n"
        "exit 2: a bad --source, --at (in the future, before the start), --recent or --limit."
    ),
    handler=incident_command,
    add_arguments=_add_arguments,
    check_args=_check_args,
)
