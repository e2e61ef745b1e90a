"""Start-up: the worker's retry policy, stored once on the server (``set_policy``).

The Kafka topic and the bounds of every policy value live on the server
(``recording_finalize.settings``, owned by the product's owner); the policy itself is one row
(``recording_finalize.policy``) that every function reads, so no call carries it. ``run`` and
``run-once`` set it once, before touching any row, with what the operator set (an unset variable
is NULL: the server's default). The server refuses a value outside its bounds (RF010), one the
policy's own rules refuse (RF001) or another topic (RF009), naming the policy column in the
error's COLUMN field, never in text the driver parses; the worker then exits 2 naming the
variable. No rule or default is restated here.

Several runners with different values: the last one to start wins; it logs what it replaced.
"""

from __future__ import annotations

from typing import Any

import psycopg

from . import logs, queries
from .config import VARIABLE_BY_NAME, ConfigError, Settings, value_of
from .db import connect
from .errors import SqlState, sqlstate

#: The column (or argument) the server names → the variable that sets it.
VARIABLE_OF_COLUMN = {
    "topic": "RFR_TOPIC",
    "max_attempts": "RFR_MAX_ATTEMPTS",
    "sla_timeout": "RFR_FINALIZE_SLA_TIMEOUT",
    "backoff_base": "RFR_BACKOFF_BASE",
    "backoff_factor": "RFR_BACKOFF_FACTOR",
    "backoff_cap": "RFR_BACKOFF_CAP",
    "backoff_jitter": "RFR_BACKOFF_JITTER",
    "upload_grace": "RFR_UPLOAD_GRACE",
    "relay_batch_size": "RFR_RELAY_BATCH_SIZE",
    "retention": "RFR_RETENTION",
}
_REFUSED = (SqlState.INVALID_PARAMETER, SqlState.TOPIC_MISMATCH, SqlState.POLICY_OUT_OF_BOUNDS)


def set_server_policy(settings: Settings) -> dict[str, Any]:
    """Stores the policy and returns it as the server resolved it. Raises ``ConfigError``
    naming the variable when the server refuses it (its message is the server's: the value and
    the bound); ``psycopg.Error`` if it cannot connect or the call fails otherwise."""
    with connect(settings) as conn:
        try:
            policy = queries.set_policy(conn, settings)
        except psycopg.Error as err:
            if sqlstate(err) not in _REFUSED:
                raise
            variable = VARIABLE_OF_COLUMN.get(err.diag.column_name or "", "RFR_* (the policy)")
            raise ConfigError(variable,
                              f"what the server accepts ({err.diag.message_primary or err})",
                              _value(settings, variable)) from None
    replaced = policy.pop("replaced", None)
    if replaced is not None:
        logs.log("policy changed", level="warning", previous=replaced, policy=policy,
                 message="another runner had set another retry policy; the last to start wins, "
                         "so every runner now works with this one")
    else:
        logs.log("policy set", policy=policy)
    return policy


def _value(settings: Settings, variable: str) -> str | None:
    """What the operator set for ``variable``, as the message shows it (None: unset)."""
    spec = VARIABLE_BY_NAME.get(variable)
    value = None if spec is None else value_of(settings, variable)
    if spec is None or value is None:
        return None
    if spec.is_duration:
        return f"{value:g}s"
    return f"{value:g}" if isinstance(value, float) else str(value)
