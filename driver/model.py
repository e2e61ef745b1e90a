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
