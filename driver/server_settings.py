"""Start-up check: the server accepts this worker's policy (``recording_finalize.check_policy``).

The Kafka topic and the bounds of every policy value live on the server
(``recording_finalize.settings``, owned by the product's owner); the worker's calls refuse
another topic (RF009), a value the policy's own rules refuse (RF001) or one outside the bounds
(RF010). ``run`` and ``run-once`` ask the server once, before touching any row, exactly what
their calls would be told, and refuse to start (exit 2) with the variable it concerns: the
server names the policy key in the error's COLUMN field, never in text the driver parses. The
bounds themselves are not restated here.
"""

from __future__ import annotations

import psycopg

from . import queries
from .config import ConfigError, Settings
from .db import connect
from .errors import SqlState, sqlstate

#: The policy key (or argument) the server names → the variable that sets it.
VARIABLE_OF_KEY = {
    "topic": "RFR_TOPIC",
    "max_attempts": "RFR_MAX_ATTEMPTS",
    "sla_timeout_seconds": "RFR_FINALIZE_SLA_TIMEOUT",
    "backoff_base_seconds": "RFR_BACKOFF_BASE",
    "backoff_factor": "RFR_BACKOFF_FACTOR",
    "backoff_cap_seconds": "RFR_BACKOFF_CAP",
    "backoff_jitter": "RFR_BACKOFF_JITTER",
    "upload_grace_seconds": "RFR_UPLOAD_GRACE",
    "relay_batch_size": "RFR_RELAY_BATCH_SIZE",
    "retention": "RFR_RETENTION",
}
_REFUSED = (SqlState.INVALID_PARAMETER, SqlState.TOPIC_MISMATCH, SqlState.POLICY_OUT_OF_BOUNDS)


def check_server_settings(settings: Settings) -> None:
    """Raises ``ConfigError`` naming the variable when the server refuses the policy (its
    message is the server's: the value and the bound); ``psycopg.Error`` if it cannot connect
    or the call fails otherwise."""
    with connect(settings) as conn:
        try:
            queries.check_policy(conn, settings)
        except psycopg.Error as err:
            if sqlstate(err) not in _REFUSED:
                raise
            key = err.diag.column_name or ""
            variable = VARIABLE_OF_KEY.get(key, "RFR_* (the policy)")
            raise ConfigError(variable,
                              f"what the server accepts ({err.diag.message_primary or err})",
                              _value(settings, key)) from None


def _value(settings: Settings, key: str) -> str:
    """What the driver sent for ``key``, as the message shows it."""
    values = {
        "topic": settings.topic,
        "max_attempts": str(settings.max_attempts),
        "sla_timeout_seconds": f"{settings.finalize_sla_timeout:g}s",
        "backoff_base_seconds": f"{settings.backoff_base:g}s",
        "backoff_factor": f"{settings.backoff_factor:g}",
        "backoff_cap_seconds": f"{settings.backoff_cap:g}s",
        "backoff_jitter": f"{settings.backoff_jitter:g}",
        "upload_grace_seconds": f"{settings.upload_grace:g}s",
        "relay_batch_size": str(settings.relay_batch_size),
        "retention": f"{settings.retention:g}s",
    }
    return values.get(key, "")
