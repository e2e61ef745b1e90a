"""The value types the driver's modules hand each other, in one module that imports none of them.

``queries`` returns ``ClaimedRow`` and records ``Verdict``; ``storage`` turns a ``ClaimedRow``
into a ``Verdict``; ``cycle`` moves both between them. Defined here, neither of the two has to
import the other (they used to, each for the other's type).
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

# One word, two meanings, told apart here by name (the SQL keeps the word: it is a contract).
#: ``claim_due``'s action for a row whose session has not reached the SLA yet: it waits.
DEFERRED_BY_SLA = "deferred"
#: ``apply_outcome``'s result for a 404 a storage incident holds back (its attempt given back).
DEFERRED_BY_INCIDENT = "deferred"
#: ``apply_outcome``'s result for a ``config_error`` verdict: the attempt is given back.
CONFIG_ERROR_RELEASED = "released"


@dataclass(frozen=True)
class ClaimedRow:
    """One row of ``claim_due``; ``action`` is reconcile, republished, closed, deferred or
    quarantined, and only reconcile rows carry a ``claim_token``."""

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
