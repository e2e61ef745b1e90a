"""The S3 check as the operator commands make it (``explain``, ``audit``, ``run-once --dry-run``):
through the same ``Storage`` the cycle uses, so the verdicts are the ones the worker would reach.

``storage`` (boto3, obstore) is imported only when a command asks S3.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any
from uuid import UUID

from ..model import ClaimedRow

if TYPE_CHECKING:
    from ..config import Settings
    from ..storage import Storage, Verdict

#: The variables of a command that asks S3.
S3_VARIABLES = ("DATABASE_URL", "S3_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                "AWS_REGION", "AWS_DEFAULT_REGION", "RFR_S3_BUCKET", "RFR_S3_KEY_TEMPLATE",
                "RFR_S3_TIMEOUT", "RFR_S3_CONCURRENCY", "RFR_TOPIC", "RFR_MAX_ATTEMPTS",
                "RFR_FINALIZE_SLA_TIMEOUT")


def open_storage(settings: Settings) -> Storage:
    from ..storage import Storage

    return Storage(settings)


def claimed(recording_id: UUID, session_kind: str, session_id: UUID,
            attempts: int = 0) -> ClaimedRow:
    """A reconcile row as ``claim_due`` would hand it to the check (no claim token)."""
    return ClaimedRow(recording_id=recording_id, session_kind=session_kind,
                      session_id=session_id, action="reconcile", attempts=attempts,
                      claim_token=None, recording_version=None, detail=None)


def bucket(storage: Storage) -> tuple[bool, str | None]:
    """(bucket confirmed, configuration error code)."""
    from ..storage import StorageConfigError

    try:
        return storage.check_bucket(), None
    except StorageConfigError as err:
        return False, err.code


def head_all(storage: Storage, rows: list[ClaimedRow], concurrency: int) -> list[Verdict]:
    """The verdicts of ``rows``, in order, at most ``concurrency`` HEADs at a time."""
    with ThreadPoolExecutor(max_workers=min(concurrency, len(rows))) as pool:
        return list(pool.map(storage.check, rows))


def verdict_of(verdict: Verdict | None, config_error: str | None) -> Verdict:
    """The verdict the cycle would apply: a bucket the storage refuses is a ``config_error``."""
    from ..storage import CONFIG_ERROR, Verdict

    return verdict if verdict is not None else Verdict(CONFIG_ERROR, error=config_error)


#: What a previewed result means, in words (the result itself is the database's decision).
RESULT_WORDS = {
    "reconciled": "the file storage has the binary now, so it becomes Available and its event "
                  "is published",
    "failed": "the file storage has no binary, so it becomes Failed (Timeout)",
    "deferred_by_incident": "the file storage has no binary, but a storage incident holds the "
                            "404 back: the attempt is given back and the row checked again "
                            "later",
    "backoff": "the file storage did not answer, so it backs off again",
    "held_by_incident": "the file storage did not answer while the worker's own storage "
                        "incident is open: the attempt is given back",
    "quarantined": "it is quarantined",
    "config_error_released": "the file storage refuses the bucket (configuration error): the "
                             "cycle stops without counting the attempt",
}


def verdict_dict(verdict: Verdict | None, config_error: str | None = None) -> dict[str, Any]:
    """A verdict as the commands' JSON shows it (None: the bucket refused, ``config_error``)."""
    if verdict is None:
        return {"outcome": "config_error", "present": None, "error": config_error}
    return {
        "outcome": verdict.outcome,
        "present": verdict.outcome in ("found", "invalid_metadata"),
        "sizeBytes": verdict.size_bytes,
        "durationSeconds": verdict.duration_seconds,
        "format": verdict.format,
        "fileId": verdict.file_id,
        "error": verdict.error,
    }
