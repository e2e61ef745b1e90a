"""The S3 check as the operator commands make it (``explain``, ``audit``, ``run-once --dry-run``):
through the same ``Storage`` the cycle uses, with the settings the worker reported, so the
verdicts are the ones the worker would reach.

``storage`` (boto3, obstore) is imported only when a command asks S3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from ..model import CONFIG_ERROR, FOUND, INVALID_METADATA, ClaimedRow, Verdict
from ..queries import Connection, WorkerConfig, worker_config

if TYPE_CHECKING:
    from ..config import Settings

S3_VARIABLES = ("DATABASE_URL", "S3_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                "AWS_REGION", "AWS_DEFAULT_REGION", "RFR_S3_BUCKET", "RFR_S3_KEY_TEMPLATE",
                "RFR_S3_TIMEOUT", "RFR_S3_CONCURRENCY", "RFR_TOPIC", "RFR_MAX_ATTEMPTS",
                "RFR_FINALIZE_SLA_TIMEOUT")


def worker_settings(conn: Connection, settings: Settings) -> tuple[Settings, WorkerConfig | None]:
    """``settings`` with the worker's bucket, key template and polling interval, as it reported
    them when it started: the commands judge by where the worker looks, not by this operator's
    environment (which stays the fallback until a worker has reported)."""
    worker = worker_config(conn)
    if worker is None:
        return settings, None
    return replace(settings, polling_interval=worker.polling_interval,
                   s3_bucket=worker.s3_bucket, s3_key_template=worker.s3_key_template), worker


class Heads(NamedTuple):
    keys: list[str]
    #: In the rows' order; each a ``config_error`` when the storage refuses the bucket.
    verdicts: list[Verdict]
    config_error: str | None
    bucket_confirmed: bool


def head_rows(settings: Settings, rows: Sequence[Mapping[str, Any]]) -> Heads:
    """HeadBucket, then the HEADs of the rows' objects, each row as ``claim_due`` would hand it
    to the check (reconcile, no claim token), at most RFR_S3_CONCURRENCY at a time."""
    from ..storage import Storage, StorageConfigError

    if not rows:
        return Heads([], [], None, False)
    claimed = [ClaimedRow(recording_id=row["recording_id"], session_kind=row["session_kind"],
                          session_id=row["session_id"], action="reconcile",
                          attempts=row.get("attempts", 0), claim_token=None,
                          recording_version=None, detail=None) for row in rows]
    storage = Storage(settings)
    keys = [storage.key_for(row) for row in claimed]
    try:
        confirmed = storage.check_bucket()
    except StorageConfigError as err:
        return Heads(keys, [Verdict(CONFIG_ERROR, error=err.code)] * len(rows), err.code, False)
    with ThreadPoolExecutor(max_workers=min(settings.s3_concurrency, len(rows))) as pool:
        return Heads(keys, list(pool.map(storage.check, claimed)), None, confirmed)


def verdict_dict(verdict: Verdict, config_error: str | None) -> dict[str, Any]:
    """A verdict as the commands' JSON shows it (the bucket refused: ``config_error`` only)."""
    if config_error is not None:
        return {"outcome": CONFIG_ERROR, "present": None, "error": config_error}
    return {
        "outcome": verdict.outcome,
        "present": verdict.outcome in (FOUND, INVALID_METADATA),
        "sizeBytes": verdict.size_bytes,
        "durationSeconds": verdict.duration_seconds,
        "format": verdict.format,
        "fileId": verdict.file_id,
        "error": verdict.error,
    }
