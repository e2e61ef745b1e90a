"""The SQL the worker sends, as named functions over a psycopg connection; the operator
commands' is in ``ops/queries.py``, the install tooling's in ``sql/service/queries.sql``.

The driver calls the functions of ``sql/functions`` (their ``COMMENT ON`` is the contract) and
builds no SQL but their calls. Each call is one statement: on autocommit, its own transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

import psycopg
from psycopg import sql
from psycopg.rows import RowFactory, class_row

from .errors import describe
from .model import ClaimedRow, Verdict

if TYPE_CHECKING:
    from .config import Settings

Connection = psycopg.Connection[Any]
T = TypeVar("T")


@dataclass(frozen=True)
class AppliedResult:
    """``apply_outcome``'s answer; ``detail`` is the last_error the call wrote."""

    result: str
    attempts: int | None
    detail: str | None = None


@dataclass(frozen=True)
class StorageFacts:
    """What the cycle saw of the storage as a whole, sent with each verdict: by these
    ``outcome_decision`` decides whether a 404 is believed (None: not reported)."""

    bucket_confirmed: bool | None = None
    #: Objects this cycle's HEADs found so far (the known uploads' included).
    objects_found: int | None = None
    #: How the HEADs of the known uploads that found nothing answered: 404, or otherwise.
    known_missing: int | None = None
    known_other: int | None = None


NO_FACTS = StorageFacts()


@dataclass(frozen=True)
class OutboxRow:
    """A leased outbox row: ``payload`` is the exact text to publish; ``lease_token`` (the
    batch's) goes back to ``relay_mark_published``."""

    id: int
    message_key: str
    payload: str
    headers: dict[str, str]
    lease_token: UUID


@dataclass(frozen=True)
class Stats:
    backlog: int
    due: int
    oldest_age_seconds: float
    quarantined: int
    publish_backlog: int
    oldest_unpublished_age_seconds: float


@dataclass(frozen=True)
class ServiceEvents:
    """``service_events_unpublished``: the service's own events its relay left unpublished past
    the lag, and the age of the oldest."""

    unpublished: int
    oldest_age_seconds: float


@dataclass(frozen=True)
class StorageIncident:
    """One row of ``storage_incident_open/close/list``."""

    id: int
    source: str
    started_at: datetime
    ended_at: datetime | None
    reason: str | None
    opened_by: str
    closed_by: str | None = None
    created: bool | None = None
    is_open: bool | None = None
    duration_seconds: float | None = None


@dataclass(frozen=True)
class StorageHealth:
    """``storage_health``'s answer: what it did to the worker's incident (``action``: opened,
    closed, kept, none), that incident (None: there is none), whether the HEADs reported were
    judged (``decided``: count anew) and whether their verdicts wait (``hold``)."""

    action: str
    incident_id: int | None
    kind: str | None
    started_at: datetime | None
    ended_at: datetime | None
    decided: bool
    hold: bool

    @property
    def is_open(self) -> bool:
        return self.incident_id is not None and self.ended_at is None


@dataclass(frozen=True)
class ApplyFailure:
    """``record_apply_failure``'s answer: whether the failures are a service fault (the cycle
    stops), the last_error it wrote and how many rows it recorded."""

    service_fault: bool
    last_error: str
    recorded: int


@dataclass(frozen=True)
class WorkerConfig:
    """What the last worker to start reported it runs with."""

    s3_bucket: str
    s3_key_template: str
    polling_interval: float
    reported_at: datetime


@dataclass(frozen=True)
class RepublishHold:
    """``recording_finalize.republish_hold()``: whether republish discovery holds, and why."""
    held: bool
    held_since: datetime | None
    republish_window: timedelta | None
    judged_at: datetime | None
    sampled: int | None
    unshown: int | None
    problem: str | None
    fix: str | None


@dataclass(frozen=True)
class OperatorState:
    reconcile_paused: bool
    relay_paused: bool
    pauses: list[dict[str, Any]]
    quarantined_by_reason: dict[str, int]

    def paused_parts(self) -> list[str]:
        """The parts the pause switch stops now, in a fixed order."""
        return [part for part, on in (("reconcile", self.reconcile_paused),
                                      ("relay", self.relay_paused)) if on]


@dataclass(frozen=True)
class PruneCounts:
    finalize: int
    events: int
    leases: int
    incidents: int


@dataclass(frozen=True)
class SchemaStateRow:
    kind: str
    name: str
    sha256: str | None
    recorded_md5: str | None
    live_md5: str | None
    package_version: str | None
    recorded_at: datetime | None


# Positional parameters typed in the statement: pipeline.py prepares it once per connection
# and sends the values as text.
APPLY_OUTCOME = b"""
select result, attempts, detail
from recording_finalize.apply_outcome(
    p_recording_id => $1::uuid, p_claim_token => $2::uuid, p_outcome => $3::text,
    p_file_id => $4::text, p_size_bytes => $5::bigint, p_duration_seconds => $6::integer,
    p_format => $7::text, p_error => $8::text, p_bucket_confirmed => $9::boolean,
    p_objects_found => $10::integer, p_known_missing => $11::integer,
    p_known_other => $12::integer)
"""

# Adaptive pacing's signal (driver/pacing.py): sessions of other logins at work right now. A role
# without pg_read_all_stats sees NULL in other logins' state and wait_event, but their
# backend_xmin (a snapshot: a statement is running) and backend_xid (a transaction that wrote);
# background processes (autovacuum, walwriter) have no login, so usename is NULL for them.
CONTENTION_SAMPLE = """
select count(*)::int from pg_catalog.pg_stat_activity
where usename <> session_user and pid <> pg_catalog.pg_backend_pid()
    and (backend_xmin is not null or backend_xid is not null)
"""


def interval(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def _optional_interval(seconds: float | None) -> timedelta | None:
    return None if seconds is None else interval(seconds)


def _rows(conn: Connection, cls: type[T], query: str, params: Any = None) -> list[T]:
    with psycopg.Cursor(conn, row_factory=class_row(cls)) as cur:
        return cur.execute(query, params).fetchall()


def _value(conn: Connection, query: str | sql.Composed, params: Any = None) -> Any:
    """The first column of the first row, or None."""
    row = conn.execute(query, params).fetchone()
    return None if row is None else row[0]


def _function_call(function: str, params: dict[str, Any], *, rows: bool) -> sql.Composed:
    """``recording_finalize.<function>(p_<name> => %s, ...)``, selected as one value or (``rows``)
    as its rows: the function's own result columns, which the row type takes by name."""
    arguments = sql.SQL(", ").join(
        sql.SQL("{} => {}").format(sql.Identifier("p_" + name), sql.Placeholder())
        for name in params)
    select = sql.SQL("select * from recording_finalize.{}({})" if rows
                     else "select recording_finalize.{}({})")
    return select.format(sql.Identifier(function), arguments)


def call_value(conn: Connection, function: str, **params: Any) -> Any:
    """``recording_finalize.<function>(p_<name> => value, ...)``'s value (None: no row)."""
    return _value(conn, _function_call(function, params, rows=False), list(params.values()))


def call_rows(conn: Connection, row: RowFactory[T], function: str, **params: Any) -> list[T]:
    """The rows of ``recording_finalize.<function>(p_<name> => value, ...)``, made by ``row``."""
    with psycopg.Cursor(conn, row_factory=row) as cur:
        return cur.execute(_function_call(function, params, rows=True),
                           list(params.values())).fetchall()


def claims(rows: Sequence[ClaimedRow]) -> dict[str, list[Any]]:
    """The ``p_recording_ids`` and ``p_claim_tokens`` of the functions that take claimed rows."""
    return {"recording_ids": [r.recording_id for r in rows],
            "claim_tokens": [r.claim_token for r in rows]}


def claim_due(conn: Connection, settings: Settings) -> list[ClaimedRow]:
    return call_rows(conn, class_row(ClaimedRow), "claim_due", batch_size=settings.batch_size)


def apply_params(row: ClaimedRow, verdict: Verdict, facts: StorageFacts) -> tuple[Any, ...]:
    """The parameters of ``APPLY_OUTCOME``, in their order."""
    return (row.recording_id, row.claim_token, verdict.outcome, verdict.file_id,
            verdict.size_bytes, verdict.duration_seconds, verdict.format, verdict.error,
            facts.bucket_confirmed, facts.objects_found, facts.known_missing, facts.known_other)


def worker_config(conn: Connection) -> WorkerConfig | None:
    return next(iter(_rows(conn, WorkerConfig, """
        select s3_bucket, s3_key_template,
            extract(epoch from polling_interval)::float8 as polling_interval, reported_at
        from recording_finalize.worker_config()""")), None)


def known_uploads(conn: Connection) -> list[ClaimedRow]:
    """The newest Available recordings, as many as the key-layout rule asks about, as rows whose
    keys the storage can build."""
    return _rows(conn, ClaimedRow, """
        select recording_id, session_kind, session_id, 'known' as action, 0 as attempts,
            null::uuid as claim_token, null::integer as recording_version, null::text as detail
        from recording_finalize.known_uploads()""")


def storage_layout_unconfirmed(conn: Connection, found: int, missing: int, other: int) -> bool:
    """The database's word on the known uploads' answers (/readyz)."""
    return bool(call_value(conn, "storage_layout_unconfirmed", known_found=found,
                           known_missing=missing, known_other=other))


def discover_unpublished(conn: Connection, settings: Settings, limit: int) -> int:
    return int(call_value(conn, "discover_unpublished",
                          window=interval(settings.republish_window), limit=limit))


def republish_hold(conn: Connection) -> RepublishHold:
    [row] = call_rows(conn, class_row(RepublishHold), "republish_hold")
    return row


def relay_claim(conn: Connection, limit: int, lease_s: float, lock_key: int | None,
                topic: str) -> list[OutboxRow]:
    return call_rows(conn, class_row(OutboxRow), "relay_claim", limit=limit,
                     lease=interval(lease_s), lock_key=lock_key, topic=topic)


def relay_mark_published(conn: Connection, ids: list[int], lease_token: UUID) -> int:
    return int(_value(conn, """
        select recording_finalize.relay_mark_published(p_ids => %s::bigint[],
            p_lease_token => %s)""", (ids, lease_token)))


def set_policy(conn: Connection, settings: Settings) -> dict[str, Any]:
    """Stores this worker's policy (unset: the server's default); returns it as resolved, with
    ``replaced``, the values it overwrote. RF001/RF009/RF010 on a bad value."""
    policy: dict[str, Any] = call_value(
        conn, "set_policy", max_attempts=settings.max_attempts,
        sla_timeout=_optional_interval(settings.finalize_sla_timeout),
        backoff_base=_optional_interval(settings.backoff_base),
        backoff_factor=settings.backoff_factor,
        backoff_cap=_optional_interval(settings.backoff_cap),
        backoff_jitter=settings.backoff_jitter,
        upload_grace=_optional_interval(settings.upload_grace), topic=settings.topic,
        relay_batch_size=settings.relay_batch_size,
        retention=_optional_interval(settings.retention or None))
    return policy


def try_lock_runner(conn: Connection, key: int) -> bool:
    return bool(call_value(conn, "try_lock_runner", lock_key=key))


def unlock_runner(conn: Connection, key: int) -> bool:
    return bool(call_value(conn, "unlock_runner", lock_key=key))


def backend_pid(conn: Connection) -> int:
    return int(_value(conn, "select pg_catalog.pg_backend_pid()"))


def contention_sample(conn: Connection) -> int:
    return int(_value(conn, CONTENTION_SAMPLE))


def idle_session_timeout_ms(conn: Connection) -> int:
    return int(_value(conn, "select setting::bigint from pg_catalog.pg_settings "
                            "where name = 'idle_session_timeout'"))


def stats(conn: Connection, topic: str) -> Stats:
    [row] = call_rows(conn, class_row(Stats), "stats", topic=topic)
    return row


def service_events_unpublished(conn: Connection, lag_s: float) -> ServiceEvents:
    [row] = call_rows(conn, class_row(ServiceEvents), "service_events_unpublished",
                      lag=interval(lag_s))
    return row


def operator_state(conn: Connection) -> OperatorState:
    [row] = call_rows(conn, class_row(OperatorState), "operator_state")
    return row


def prune(conn: Connection, older_than_s: float, batch_size: int, dry_run: bool) -> PruneCounts:
    """One prune batch (dry: the counts of everything that would go)."""
    [counts] = _rows(conn, PruneCounts, """
        select p.finalize, e.events, p.leases, p.incidents
        from recording_finalize.prune(p_older_than => %(older)s, p_batch_size => %(batch)s,
            p_dry_run => %(dry)s) as p
        cross join recording_finalize.prune_events(p_older_than => %(older)s,
            p_batch_size => %(batch)s, p_dry_run => %(dry)s) as e (events)""",
                {"older": interval(older_than_s), "batch": batch_size, "dry": dry_run})
    return counts


def storage_incident_open(
    conn: Connection, source: str, reason: str | None, at: datetime | None = None
) -> StorageIncident:
    [row] = call_rows(conn, class_row(StorageIncident), "storage_incident_open", source=source,
                      reason=reason, at=at)
    return row


def storage_incident_close(
    conn: Connection, source: str, at: datetime | None = None, reason: str | None = None
) -> StorageIncident | None:
    return next(iter(call_rows(conn, class_row(StorageIncident), "storage_incident_close",
                               source=source, at=at, reason=reason)), None)


def storage_health(
    conn: Connection, *, bucket_answered: bool | None = None, transient: int | None = None,
    checked: int | None = None, cycle_end: bool = False, error: str | None = None,
) -> StorageHealth:
    """What the cycle's S3 checks saw, reported: the database opens or closes the worker's
    storage incident by it."""
    [row] = call_rows(conn, class_row(StorageHealth), "storage_health",
                      bucket_answered=bucket_answered, transient=transient, checked=checked,
                      cycle_end=cycle_end, error=error)
    return row


def record_apply_failure(
    conn: Connection, failures: Sequence[tuple[ClaimedRow, psycopg.Error]], batch_size: int,
    unapplied: Sequence[ClaimedRow],
) -> ApplyFailure:
    """``apply_outcome`` raised for ``failures`` (of ``batch_size`` verdicts sent together);
    ``unapplied``: the other rows the cycle claimed and has not applied. The database decides
    whether it is a service fault and records it."""
    first = failures[0][1]
    diag = first.diag
    where = ", ".join(f"{k} {v}" for k, v in (
        ("table", diag.table_name), ("column", diag.column_name),
        ("constraint", diag.constraint_name)) if v)
    [row] = call_rows(
        conn, class_row(ApplyFailure), "record_apply_failure",
        **claims([row for row, _ in failures]),
        sqlstates=[err.sqlstate or "" for _, err in failures], error=describe(first),
        message=(diag.message_primary or "") + (f" ({where})" if where else ""),
        batch_size=batch_size, unapplied_ids=[r.recording_id for r in unapplied],
        unapplied_tokens=[r.claim_token for r in unapplied])
    return row


def storage_incident_list(
    conn: Connection, recent_s: float = 7 * 86400.0, limit: int = 100
) -> list[StorageIncident]:
    return call_rows(conn, class_row(StorageIncident), "storage_incident_list",
                     recent=interval(recent_s), limit=limit)


def has_schema_state(conn: Connection) -> bool:
    """The worker may not look into recording_finalize_migrations: it asks schema_state()."""
    return bool(_value(conn, "select pg_catalog.to_regprocedure("
                             "'recording_finalize.schema_state()') is not null"))


def schema_state(conn: Connection) -> list[SchemaStateRow]:
    return call_rows(conn, class_row(SchemaStateRow), "schema_state")
