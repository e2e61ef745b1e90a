"""Start-up check: the driver's settings agree with the server's (``recording_finalize.settings``).

The Kafka topic and the bounds of every policy argument live on the server, owned by the
migrating role: the worker's API refuses another topic (RF009) and a policy outside the bounds
(RF010) on every call. ``run`` and ``run-once`` read them once before touching any row and
refuse to start (exit 2) when ``RFR_TOPIC`` differs or an ``RFR_*`` value is out of bounds, with
a message naming the variable and both values, rather than failing every cycle.
"""

from __future__ import annotations

from datetime import timedelta

from . import queries
from .config import ConfigError, Settings
from .db import connect

# Durations come back from PostgreSQL with microsecond precision; our floats may be off by less.
_EPSILON_S = 1e-6


def _s(value: timedelta) -> float:
    return value.total_seconds()


def _d(seconds: float) -> str:
    return f"{seconds:g}s"


def mismatches(settings: Settings, server: queries.ServerSettings,
               bounds: queries.ServerBounds | None = None) -> list[ConfigError]:
    """Every variable of ``settings`` the server's settings refuse, each as a ``ConfigError``
    (``bounds``: those of ``recording_finalize.server_bounds()``, migration 0014)."""
    where = "(recording_finalize.settings)"
    out: list[ConfigError] = []
    if settings.topic != server.topic:
        out.append(ConfigError("RFR_TOPIC", f"the server's topic {server.topic!r} {where}",
                               settings.topic))

    def upper(variable: str, value: float, high: float, shown: str, high_shown: str) -> None:
        if value > high + _EPSILON_S:
            out.append(ConfigError(variable, f"at most {high_shown}, the server's bound {where}",
                                   shown))

    def within(variable: str, value: float, low: timedelta, high: timedelta) -> None:
        if not _s(low) - _EPSILON_S <= value <= _s(high) + _EPSILON_S:
            out.append(ConfigError(
                variable, f"within {_d(_s(low))}..{_d(_s(high))}, the server's bounds {where}",
                _d(value)))

    upper("RFR_MAX_ATTEMPTS", settings.max_attempts, server.max_attempts_max,
          str(settings.max_attempts), str(server.max_attempts_max))
    within("RFR_FINALIZE_SLA_TIMEOUT", settings.finalize_sla_timeout, server.sla_timeout_min,
           server.sla_timeout_max)
    within("RFR_BACKOFF_BASE", settings.backoff_base, server.backoff_base_min,
           server.backoff_base_max)
    upper("RFR_BACKOFF_FACTOR", settings.backoff_factor, server.backoff_factor_max,
          f"{settings.backoff_factor:g}", f"{server.backoff_factor_max:g}")
    upper("RFR_BACKOFF_CAP", settings.backoff_cap, _s(server.backoff_cap_max),
          _d(settings.backoff_cap), _d(_s(server.backoff_cap_max)))
    upper("RFR_BACKOFF_JITTER", settings.backoff_jitter, server.backoff_jitter_max,
          f"{settings.backoff_jitter:g}", f"{server.backoff_jitter_max:g}")
    upper("RFR_RELAY_BATCH_SIZE", settings.relay_batch_size, server.relay_batch_max,
          str(settings.relay_batch_size), str(server.relay_batch_max))
    # After the SLA: an unset RFR_UPLOAD_GRACE is the SLA, whose own bound is named first.
    if bounds is not None:
        if settings.max_attempts < bounds.max_attempts_min:
            out.append(ConfigError(
                "RFR_MAX_ATTEMPTS",
                f"at least {bounds.max_attempts_min}, the server's bound {where}",
                str(settings.max_attempts)))
        within("RFR_UPLOAD_GRACE", settings.upload_grace, bounds.upload_grace_min,
               bounds.upload_grace_max)
        # 0 = retention off: nothing is pruned, nothing to bound.
        if settings.retention and settings.retention < _s(bounds.retention_min) - _EPSILON_S:
            out.append(ConfigError(
                "RFR_RETENTION",
                f"at least {_d(_s(bounds.retention_min))} (or 0), the server's bound {where}",
                _d(settings.retention)))
    return out


def check_server_settings(settings: Settings) -> None:
    """Raises ``ConfigError`` for the first variable the server's settings refuse (the message
    names the variable, its value and the server's); ``psycopg.Error`` if it cannot connect."""
    with connect(settings) as conn:
        server = queries.server_settings(conn)
        bounds = queries.server_bounds(conn)
    found = mismatches(settings, server, bounds)
    if found:
        raise found[0]
