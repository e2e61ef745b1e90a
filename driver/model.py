"""The value types ``queries``, ``storage`` and ``cycle`` hand each other, in a module that imports
none of them (so neither of the first two imports the other).
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

# The outcomes of the storage check: ``apply_outcome``'s vocabulary.
FOUND = "found"
MISSING = "missing"
TRANSIENT = "transient"
INVALID_METADATA = "invalid_metadata"
CONFIG_ERROR = "config_error"

# The words of ``claim_due``'s actions and ``apply_outcome``'s results the driver reacts to (the
# rest it only counts and logs). The run-once summary keeps its older JSON names for some of
# them (``deferred``, ``released``): those are a contract of their own (cycle.COUNTS).
#: ``claim_due``: the session has not reached the SLA yet; the row waits, no attempt counted.
DEFERRED_BY_SLA = "deferred_by_sla"
#: ``claim_due`` / ``apply_outcome``: a service transaction holds the recording (or writes its
#: event); the attempt is given back and the row is tried again after the backoff base.
BUSY = "busy"
#: ``apply_outcome``: a 404 a storage incident holds back (its attempt given back).
DEFERRED_BY_INCIDENT = "deferred_by_incident"
#: ``apply_outcome``: a transient answer while the worker's own storage incident is open.
HELD_BY_INCIDENT = "held_by_incident"
#: ``apply_outcome``'s result for a ``config_error`` verdict: the attempt is given back.
CONFIG_ERROR_RELEASED = "config_error_released"


@dataclass(frozen=True)
class ClaimedRow:
    """One row of ``claim_due``; ``action`` is reconcile, republished, closed, deferred_by_sla,
    quarantined or busy, and only reconcile rows carry a ``claim_token``."""

    recording_id: UUID
    session_kind: str
    session_id: UUID
    action: str
    attempts: int
    claim_token: UUID | None
    recording_version: int | None
    detail: str | None


@dataclass(frozen=True)
class Verdict:
    """The check's answer for one recording, ready for ``apply_outcome``."""

    outcome: str
    file_id: str | None = None
    size_bytes: int | None = None
    duration_seconds: int | None = None
    format: str | None = None
    error: str | None = None
