"""The value types ``queries``, ``storage`` and ``cycle`` hand each other, in a module that imports
none of them (so neither of the first two imports the other).
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

# The verdicts of the storage check, the words ``apply_outcome`` takes. The state machine's words
# are declared once, by ``recording_finalize_internal.vocabulary()`` in the database; these, and
# the counting tables of ``cycle.py``, are compared with it by tests/py/test_vocabulary.py.
FOUND = "found"
MISSING = "missing"
TRANSIENT = "transient"
INVALID_METADATA = "invalid_metadata"
CONFIG_ERROR = "config_error"
VERDICTS = (FOUND, MISSING, TRANSIENT, INVALID_METADATA, CONFIG_ERROR)
#: Why a finalize row is Quarantined (its quarantine_reason).
QUARANTINE_REASONS = ("max_attempts", "crash_loop", "invalid_metadata", "recording_not_found",
                      "session_not_found")


class UnknownWord(Exception):
    """The database answered with a word of the state machine this driver does not know (a
    newer schema than the package, or a copy that drifted): the cycle stops on it rather than
    leave a row uncounted."""

    def __init__(self, what: str, word: str) -> None:
        super().__init__(f"{what} {word!r} is not a word this driver knows: run the package "
                         "that matches the database's schema")
        self.what = what
        self.word = word


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
