"""``recording-finalize status``: the safety net's gauges, the schema check, the quarantined
rows, the pause switch and the storage incidents, as a table or one JSON object."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING

from .. import cliutil
from .. import queries as core_queries
from ..config import Settings
from . import incidents, queries

if TYPE_CHECKING:
    from ..drift import SchemaDrift, Shipped


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cliutil.add_json_flag(cmd)
    cmd.add_argument("--limit", type=int, default=50, metavar="N",
                     help="list at most N quarantined rows (1..10000, default 50)")


def status_command(args: argparse.Namespace, settings: Settings) -> int:
    from ..drift import schema_drift, shipped

    package = shipped(settings.sql_dir)
    with cliutil.connect(settings) as conn:
        figures = core_queries.stats(conn, settings.topic)
        service = core_queries.service_events_unpublished(conn, settings.service_event_lag)
        rows = queries.call(conn, "quarantined_rows", limit=args.limit)
        state = core_queries.operator_state(conn)
        open_or_recent = core_queries.storage_incident_list(conn)
        hold = core_queries.republish_hold(conn)
        drift = schema_drift(conn, package)
    cliutil.show(args, {
        "schema": {"database": drift.database_schema_version, "package": package.schema_version,
                   "packageVersion": package.version,
                   "migratedBy": drift.database_package_version, "matches": drift.matches,
                   "databaseIsNewer": drift.database_is_newer, "differences": drift.differences},
        **cliutil.json_row(asdict(figures)),
        "serviceEventsUnpublished": service.unpublished,
        "serviceEventsOldestUnpublishedAgeSeconds": service.oldest_age_seconds,
        "serviceEventLagSeconds": settings.service_event_lag,
        "quarantinedRows": [cliutil.json_row(r, "recording_id", "session_kind", "session_id",
                                             "attempts", "last_error", "quarantined_at")
                            for r in rows],
        "storageIncidents": [incidents.incident_json(i) for i in open_or_recent],
        "paused": state.paused_parts(),
        "pauses": state.pauses,
        "quarantinedByReason": state.quarantined_by_reason,
        "republishHold": cliutil.json_row(asdict(hold)) | {"republishWindow": (
            None if hold.republish_window is None else hold.republish_window.total_seconds())},
    }, _lines(package, drift, figures, service, settings.service_event_lag, state, rows,
              open_or_recent, hold))
    return cliutil.EXIT_OK


def _lines(package: Shipped, drift: SchemaDrift, figures: core_queries.Stats,
           service: core_queries.ServiceEvents, lag_s: float,
           state: core_queries.OperatorState, rows: list[queries.Row],
           open_or_recent: list[core_queries.StorageIncident],
           hold: core_queries.RepublishHold) -> Iterator[str]:
    verdict = "matches" if drift.matches else (
        "DATABASE IS NEWER" if drift.database_is_newer else
        "AN OLDER HISTORY, see CHANGELOG.md" if drift.older_history else "DIFFERS, run migrate")
    yield (f"schema version                {drift.database_schema_version or '-'} (package "
           f"{package.schema_version}, recording-finalize {package.version}): {verdict}")
    for label, value in (("backlog (Pending rows)", figures.backlog), ("due now", figures.due),
                         ("oldest Pending row", cliutil.age(figures.oldest_age_seconds)),
                         ("quarantined rows", figures.quarantined),
                         ("publish backlog", figures.publish_backlog),
                         ("oldest unpublished event",
                          cliutil.age(figures.oldest_unpublished_age_seconds))):
        yield f"{label:<30}{value}"
    # The service's own events wait for the service's relay, never the product's.
    yield (f"{'service events unpublished':<30}{service.unpublished} (for over "
           f"{cliutil.age(lag_s)}; oldest {cliutil.age(service.oldest_age_seconds)})"
           + (": the service's own relay is not publishing them (runbook)"
              if service.unpublished else ""))
    if hold.republish_window is not None and not hold.republish_window:
        yield f"{'republish discovery':<30}off (RFR_REPUBLISH_WINDOW=0)"
    elif hold.held:
        yield (f"{'republish discovery':<30}HELD since {cliutil.iso(hold.held_since)}: "
               f"{hold.problem}\n{'':<30}way out: {hold.fix}")
    if not drift.matches:
        yield f"schema: {drift.message()}"
    for pause in state.pauses:
        yield (f"paused {pause['part']:<23}since {cliutil.iso(pause['pausedAt'])} by "
               f"{pause['pausedBy']}: {pause['reason']}")
    if state.quarantined_by_reason:
        by = ", ".join(f"{k} {v}" for k, v in sorted(state.quarantined_by_reason.items()))
        yield f"quarantined by reason         {by}"
    if rows:
        yield f"\nquarantined (oldest first, {len(rows)} of {figures.quarantined}):"
        yield from cliutil.table(
            ("RECORDING_ID", "KIND", "ATTEMPTS", "QUARANTINED_AT", "LAST_ERROR"),
            [(str(r["recording_id"]), r["session_kind"], str(r["attempts"]),
              cliutil.iso(r["quarantined_at"]), r["last_error"] or "-") for r in rows])
    yield f"storage incidents open        {sum(1 for i in open_or_recent if i.is_open)}"
    if open_or_recent:
        yield "\nstorage incidents (open, then ended in the last 7 days):"
        yield from incidents.incident_table(open_or_recent)


COMMAND = cliutil.Command(
    name="status",
    summary="backlog, oldest age, publish backlog and the quarantined rows",
    description=(
        "Prints the safety net's gauges (Pending backlog, due now, age of the oldest Pending\n"
        "row, quarantined rows, unpublished events of the product's outbox; the service's own\n"
        "events still unpublished RFR_SERVICE_EVENT_LAG after they were enqueued, which its\n"
        "relay, not the product, publishes), whether republish discovery is held (the\n"
        "adapter's service_events does not show what the service delivered) or off, the\n"
        "schema version of the database and\n"
        "whether it matches this package, the quarantined rows with their last error, and the\n"
        "open and recent (7 days) storage incidents: a table, or one JSON object with --json\n"
        "(its \"schema\" member: database, package, packageVersion, migratedBy, matches,\n"
        "databaseIsNewer, differences). Connect as a login granted recording_finalize_operator."
    ),
    handler=status_command,
    variables=("DATABASE_URL", "RFR_TOPIC", "RFR_SERVICE_EVENT_LAG"),
    flags=("RFR_TOPIC", "RFR_SERVICE_EVENT_LAG"),
    add_arguments=_add_arguments,
    check_args=lambda args: cliutil.check_range(args, "limit"),
)
