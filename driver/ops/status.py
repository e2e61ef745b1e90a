"""``recording-finalize status``: the safety net's gauges, the schema check, the quarantined
rows, the pause switch and the storage incidents, as a table or one JSON object."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..cliutil import (
    EXIT_OK,
    Command,
    add_json_flag,
    age,
    check_range,
    connect,
    iso,
    json_row,
    print_json,
    print_table,
)
from ..config import Settings
from ..queries import (
    Stats,
    StorageIncident,
    operator_state,
    stats,
    storage_incident_list,
)
from . import queries
from .incidents import incident_json, print_incidents

if TYPE_CHECKING:
    from ..drift import SchemaDrift, Shipped


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    add_json_flag(cmd)
    cmd.add_argument("--limit", type=int, default=50, metavar="N",
                     help="list at most N quarantined rows (1..10000, default 50)")


def status_command(args: argparse.Namespace, settings: Settings) -> int:
    from ..drift import schema_drift, shipped

    package = shipped(settings.sql_dir)
    with connect(settings) as conn:
        figures = stats(conn, settings.topic)
        rows = queries.call(conn, "quarantined_rows", limit=args.limit)
        state = operator_state(conn)
        incidents = storage_incident_list(conn)
        drift = schema_drift(conn, package)
    if args.json:
        print_json(_status_json(package, drift, figures, rows, incidents) | {
            "paused": state.paused_parts(), "pauses": state.pauses,
            "quarantinedByReason": state.quarantined_by_reason})
        return EXIT_OK
    _print_gauges(package, drift, figures)
    for pause in state.pauses:
        print(f"paused {pause['part']:<23}since {iso(pause['pausedAt'])} by "
              f"{pause['pausedBy']}: {pause['reason']}")
    if state.quarantined_by_reason:
        by = ", ".join(f"{k} {v}" for k, v in sorted(state.quarantined_by_reason.items()))
        print(f"quarantined by reason         {by}")
    if rows:
        print(f"\nquarantined (oldest first, {len(rows)} of {figures.quarantined}):")
        print_table(("RECORDING_ID", "KIND", "ATTEMPTS", "QUARANTINED_AT", "LAST_ERROR"),
                    [(str(r["recording_id"]), r["session_kind"], str(r["attempts"]),
                      iso(r["quarantined_at"]), r["last_error"] or "-") for r in rows])
    print(f"storage incidents open        {sum(1 for i in incidents if i.is_open)}")
    if incidents:
        print("\nstorage incidents (open, then ended in the last 7 days):")
        print_incidents(incidents)
    return EXIT_OK


def _status_json(package: Shipped, drift: SchemaDrift, figures: Stats,
                 rows: list[queries.Row], incidents: list[StorageIncident]
                 ) -> dict[str, Any]:
    return {
        "schema": {
            "database": drift.database_schema_version,
            "package": package.schema_version,
            "packageVersion": package.version,
            "migratedBy": drift.database_package_version,
            "matches": drift.matches,
            "databaseIsNewer": drift.database_is_newer,
            "differences": drift.differences,
        },
        **json_row(asdict(figures)),
        "quarantinedRows": [json_row(r, "recording_id", "session_kind", "session_id", "attempts",
                                     "last_error", "quarantined_at") for r in rows],
        "storageIncidents": [incident_json(i) for i in incidents],
    }


def _print_gauges(package: Shipped, drift: SchemaDrift, figures: Stats) -> None:
    verdict = "matches" if drift.matches else (
        "DATABASE IS NEWER" if drift.database_is_newer else
        "AN OLDER HISTORY, see CHANGELOG.md" if drift.older_history else "DIFFERS, run migrate")
    print(f"schema version                {drift.database_schema_version or '-'} (package "
          f"{package.schema_version}, recording-finalize {package.version}): {verdict}")
    for label, value in (("backlog (Pending rows)", figures.backlog), ("due now", figures.due),
                         ("oldest Pending row", age(figures.oldest_age_seconds)),
                         ("quarantined rows", figures.quarantined),
                         ("publish backlog", figures.publish_backlog),
                         ("oldest unpublished event",
                          age(figures.oldest_unpublished_age_seconds))):
        print(f"{label:<30}{value}")
    if not drift.matches:
        print(f"schema: {drift.message()}")


COMMAND = Command(
    name="status",
    summary="backlog, oldest age, publish backlog and the quarantined rows",
    description=(
        "Prints the safety net's gauges (Pending backlog, due now, age of the oldest Pending\n"
        "row, quarantined rows, unpublished events), the schema version of the database and\n"
        "whether it matches this package, the quarantined rows with their last error, and the\n"
        "open and recent (7 days) storage incidents: a table, or one JSON object with --json\n"
        "(its \"schema\" member: database, package, packageVersion, migratedBy, matches,\n"
        "databaseIsNewer, differences). Connect as a login granted recording_finalize_operator."
    ),
    handler=status_command,
    variables=("DATABASE_URL", "RFR_TOPIC"),
    flags=("RFR_TOPIC",),
    add_arguments=_add_arguments,
    check_args=lambda args: check_range(args, "limit"),
)
