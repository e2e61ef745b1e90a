"""The ``RF`` SQLSTATE class of ``sql/README.md``, mirrored as one enum.

The driver reacts to database errors by SQLSTATE only, never by message text.
"""

from __future__ import annotations

from enum import StrEnum

import psycopg


class SqlState(StrEnum):
    INVALID_PARAMETER = "RF001"
    INVALID_FILE_METADATA = "RF002"
    RECORDING_NOT_FOUND = "RF003"
    SESSION_NOT_FOUND = "RF004"
    FINALIZE_ROW_NOT_FOUND = "RF005"
    NOT_QUARANTINED = "RF006"
    RECORDING_CONFLICT = "RF007"
    TERMINAL_RECORDING_IMMUTABLE = "RF008"
    TOPIC_MISMATCH = "RF009"
    POLICY_OUT_OF_BOUNDS = "RF010"
    INCIDENT_SOURCE_INVALID = "RF016"
    INCIDENT_TIME_INVALID = "RF017"
    INCIDENT_SOURCE_FORBIDDEN = "RF018"
    NOT_PENDING = "RF020"
    UNKNOWN_RECORDING = "RF021"


def sqlstate(exc: psycopg.Error) -> SqlState | None:
    """The project SQLSTATE of ``exc``, or None for any other error."""
    try:
        return SqlState(exc.sqlstate or "")
    except ValueError:
        return None


def describe(exc: BaseException) -> str:
    """An error's class and SQLSTATE, for the logs: never its message, which may quote
    connection details or data."""
    name = type(exc).__name__
    if isinstance(exc, psycopg.Error) and exc.sqlstate:
        return f"{name} {exc.sqlstate}"
    return name
