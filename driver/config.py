"""Configuration: the environment (and CLI overrides) validated once into a frozen ``Settings``.

Nothing else in the driver reads the environment. Every variable is listed in ``VARIABLES``
with its default and rule; the CLI builds its ``--help`` text and its override flags from it.
A bad value raises ``ConfigError`` naming the variable and the rule — before anything connects.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import math
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote, urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

DEFAULT_TOPIC = "pin.messenger.call-recording-available.v1"
# The single-runner advisory lock's key: fixed, like migrate's (a random 64-bit number no other
# tool picks by chance). Every runner of one database must use the same key, so it is no choice.
DEFAULT_LOCK_KEY = 5928001741300501

_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
DURATION_RULE = "a duration (a number of seconds, or a number with ms/s/m/h: 90, 250ms, 5m, 1h)"
# The variables of SPEC section 7 also take days (parse_duration(days=True)).
DURATION_DAYS_RULE = ("a duration (a number of seconds, or a number with ms/s/m/h/d: 90, 5m, 1h, "
                      "30d)")
# PostgreSQL's idle_session_timeout takes at most 2^31-1 ms (~24.8 days).
_MAX_LOCK_TTL_S = 24 * 3600.0
_MAX_DURATION_S = 366 * 24 * 3600.0
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
_KEY_FIELDS = ("recording_id", "session_id", "session_kind")
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_INT32_MAX = 2**31 - 1
_T = TypeVar("_T")
# The policy variables' rules: what the driver parses; the server judges the value.
_WHOLE_RULE = "a whole number"
_NUMBER_RULE = "a finite number"
_SERVER_RULE = ", within the server's bounds (recording_finalize.settings; unset: its default)"


@dataclass(frozen=True)
class Variable:
    """One environment variable: its default (None = unset), the rule, and its CLI flag."""

    name: str
    default: str | None
    rule: str
    help: str
    flag: str | None = None
    secret: bool = False


VARIABLES: tuple[Variable, ...] = (
    Variable("DATABASE_URL", None, "a libpq URL (postgresql://user:password@host:port/dbname)",
             "the database (the worker's login role); its password is never printed",
             secret=True),
    Variable("S3_ENDPOINT_URL", None, "unset (AWS) or an http(s):// URL",
             "S3 endpoint; when set, path-style addressing is used"),
    Variable("AWS_ACCESS_KEY_ID", None, "optional", "S3 credentials (else the AWS default chain)"),
    Variable("AWS_SECRET_ACCESS_KEY", None, "optional", "S3 secret key", secret=True),
    Variable("AWS_SESSION_TOKEN", None, "optional", "S3 session token", secret=True),
    Variable("AWS_REGION", None, "optional", "S3 region (else AWS_DEFAULT_REGION, us-east-1)"),
    Variable("AWS_DEFAULT_REGION", "us-east-1", "a region name", "S3 region"),
    Variable("RFR_S3_BUCKET", "call-recordings", "an S3 bucket name (3-63 of a-z 0-9 . -)",
             "the bucket of category CALL_RECORDINGS", "--bucket"),
    Variable("RFR_S3_KEY_TEMPLATE", "recordings/{recording_id}",
             "a key using only {recording_id}, {session_id}, {session_kind}, "
             "with {recording_id} or {session_id}, no leading or trailing / and no //",
             "where the recorder puts a recording's binary", "--key-template"),
    Variable("RFR_S3_TIMEOUT", "10s", f"{DURATION_RULE}, > 0 and < RFR_LOCK_TTL / 2",
             "per-row limit on the S3 check", "--s3-timeout"),
    Variable("RFR_S3_CONCURRENCY", "16", "an integer in 1..256",
             "S3 checks in flight at once", "--s3-concurrency"),
    Variable("KAFKA_BOOTSTRAP_SERVERS", None,
             "host:port[,host:port...] (required by run, run-once)",
             "the Kafka brokers"),
    Variable("KAFKA_SECURITY_PROTOCOL", "PLAINTEXT", "one of " + ", ".join(_SECURITY_PROTOCOLS),
             "Kafka security protocol"),
    Variable("KAFKA_SASL_MECHANISM", None, "one of " + ", ".join(_SASL_MECHANISMS)
             + "; required with SASL_*", "Kafka SASL mechanism"),
    Variable("KAFKA_SASL_USERNAME", None, "required with SASL_*", "Kafka SASL user"),
    Variable("KAFKA_SASL_PASSWORD", None, "required with SASL_*", "Kafka SASL password",
             secret=True),
    Variable("RFR_TOPIC", DEFAULT_TOPIC, "a Kafka topic name (1-249 of A-Z a-z 0-9 . _ -)",
             "the topic of call-recording-available", "--topic"),
    Variable("RFR_RELAY_BATCH_SIZE", "500", "an integer in 1..10000",
             "outbox rows per relay batch", "--relay-batch-size"),
    Variable("RECORDINGS_ENABLED", "true", "true or false (also 1/0, yes/no, on/off)",
             "feature flag; false: the worker idles and says so", "--recordings-enabled"),
    Variable("RFR_POLLING_INTERVAL", "60s", f"{DURATION_RULE}, > 0",
             "time between cycle starts (run)", "--polling-interval"),
    Variable("RFR_BATCH_SIZE", "100", "an integer in 1..10000",
             "finalize rows per claim", "--batch-size"),
    # The retry policy: parsed here, judged by the server (recording_finalize.set_policy, the
    # bounds of recording_finalize.settings); unset, the server's default applies.
    Variable("RFR_MAX_ATTEMPTS", None, f"{_WHOLE_RULE}{_SERVER_RULE}",
             "attempts before a row is quarantined", "--max-attempts"),
    Variable("RFR_FINALIZE_SLA_TIMEOUT", None, f"{DURATION_RULE}{_SERVER_RULE}",
             "how long after its session ends the happy path owns a recording",
             "--finalize-sla-timeout"),
    Variable("RFR_UPLOAD_GRACE", None,
             f"{DURATION_DAYS_RULE}, within the server's bounds (recording_finalize.settings; "
             "unset: RFR_FINALIZE_SLA_TIMEOUT)",
             "after a storage incident ends, how long a 404 is not trusted for recordings "
             "whose upload window overlapped it", "--upload-grace"),
    Variable("RFR_REPUBLISH_WINDOW", "1d", f"{DURATION_DAYS_RULE}, > 0, at most 30d",
             "how far back (before the SLA) discovery looks for Available recordings that "
             "never got their event", "--republish-window"),
    Variable("RFR_BACKOFF_BASE", None, f"{DURATION_RULE}{_SERVER_RULE}", "first retry delay",
             "--backoff-base"),
    Variable("RFR_BACKOFF_FACTOR", None, f"{_NUMBER_RULE}{_SERVER_RULE}", "retry delay growth",
             "--backoff-factor"),
    Variable("RFR_BACKOFF_CAP", None, f"{DURATION_RULE}{_SERVER_RULE}",
             "longest retry delay", "--backoff-cap"),
    Variable("RFR_BACKOFF_JITTER", None, f"{_NUMBER_RULE}{_SERVER_RULE}",
             "retry delay jitter fraction", "--backoff-jitter"),
    Variable("RFR_LOCK_TTL", "5m", f"{DURATION_RULE}, > RFR_MAX_RUN_DURATION, at most 24h",
             "the single-runner lock's lifetime; a cycle never runs past it", "--lock-ttl"),
    Variable("RFR_MAX_RUN_DURATION", "3m", f"{DURATION_RULE}, > 0 and < RFR_LOCK_TTL",
             "claiming stops after this long in a cycle", "--max-run-duration"),
    Variable("RFR_METRICS_PORT", "9464", "an integer in 0..65535 (0 disables /metrics)",
             "the port of /metrics, /livez and /readyz (run)", "--metrics-port"),
    Variable("RFR_METRICS_ADDRESS", "0.0.0.0", "an IPv4 or IPv6 address of this host",
             "the address /metrics, /livez and /readyz listen on (run): every interface by "
             "default, as a scraped pod needs; 127.0.0.1 keeps them on the host",
             "--metrics-address"),
    Variable("RFR_RETENTION", "30d", f"{DURATION_DAYS_RULE}, >= 1m; or 0 (off)",
             "run prunes the product's finished rows (Done finalize rows, expired leases, "
             "ended incidents) older than this, hourly; never the service's outboxes"),
    Variable("RFR_SQL_DIR", None, "a directory holding migrations/ and functions/",
             "the SQL tree for migrate (default: the package's sql/)"),
    Variable("RFR_MAX_APPLY_RATE", "0", "a number in 0..100000 (0 = no limit)",
             "at most this many verdicts applied per second: with RFR_PACING=adaptive the "
             "pace while nobody else is on the database, with off a fixed pace "
             "(docs/pacing.md)", "--max-apply-rate"),
    Variable("RFR_PACING", "adaptive", "adaptive or off",
             "adaptive: a drain runs unlimited while no other login's sessions are at work in "
             "the database, at RFR_PACING_SHARED_RATE while they are (or the probe does not "
             "answer); off: only RFR_MAX_APPLY_RATE paces (a database the worker has to "
             "itself, or a pace set by hand)", "--pacing"),
    Variable("RFR_PACING_SHARED_RATE", "50", "a number in 1..100000",
             "adaptive pacing: the verdicts a drain applies per second while other logins' "
             "sessions are at work", "--pacing-shared-rate"),
)

VARIABLE_BY_NAME = {v.name: v for v in VARIABLES}


class ConfigError(ValueError):
    """A variable breaks its rule. The message names the variable and the rule."""

    def __init__(self, variable: str, rule: str, value: str | None, source: str = "") -> None:
        self.variable = variable
        self.rule = rule
        self.value = value
        where = f"{variable} ({source})" if source else variable
        if value is None:
            super().__init__(f"{where} is not set; it must be {rule}")
        else:
            super().__init__(f"{where} must be {rule}; got {_shown(variable, value)!r}")


def _shown(variable: str, value: str) -> str:
    """What an error message may repeat of a value: secrets are masked, URLs lose the password."""
    spec = VARIABLE_BY_NAME.get(variable)
    if spec is not None and spec.secret and variable != "DATABASE_URL":
        return "***"
    if variable == "DATABASE_URL":
        return mask_dsn(value)
    return value if len(value) <= 200 else value[:200] + "…"


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its password replaced by ``***`` (URL form, keyword form or query string)."""
    masked = re.sub(r"(://[^:/@?#]*:)[^@/?#]*@", r"\1***@", dsn)
    masked = re.sub(r"(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", r"\1***", masked)
    return masked


def dsn_password(dsn: str) -> str | None:
    """The password inside ``dsn``, so the logger can mask it wherever it appears."""
    try:
        password = conninfo_to_dict(dsn).get("password")
    except psycopg.Error:
        return None
    return str(password) if password else None


def parse_duration(text: str, days: bool = False) -> float:
    """``"90"``, ``"90s"``, ``"250ms"``, ``"5m"``, ``"1.5h"`` → seconds. ValueError otherwise.

    ``days``: also ``"30d"`` (SPEC section 7: RFR_RETENTION and ``prune --older-than``)."""
    match = _DURATION.match(text)
    if match is None or (match.group(2) == "d" and not days):
        raise ValueError(f"not a duration: {text!r}")
    seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]
    if not math.isfinite(seconds):
        raise ValueError(f"not a finite duration: {text!r}")
    return seconds


@dataclass(frozen=True)
class Settings:
    """The validated configuration. Durations are in seconds."""

    database_url: str = field(repr=False)
    s3_endpoint_url: str | None
    s3_region: str
    aws_access_key_id: str | None = field(repr=False)
    aws_secret_access_key: str | None = field(repr=False)
    aws_session_token: str | None = field(repr=False)
    s3_bucket: str
    s3_key_template: str
    s3_timeout: float
    s3_concurrency: int
    kafka_bootstrap_servers: str | None
    kafka_security_protocol: str
    kafka_sasl_mechanism: str | None
    kafka_sasl_username: str | None
    kafka_sasl_password: str | None = field(repr=False)
    topic: str
    relay_batch_size: int
    recordings_enabled: bool
    polling_interval: float
    batch_size: int
    # The retry policy as the operator set it (None: unset, the server's default applies).
    max_attempts: int | None
    finalize_sla_timeout: float | None
    upload_grace: float | None
    republish_window: float
    backoff_base: float | None
    backoff_factor: float | None
    backoff_cap: float | None
    backoff_jitter: float | None
    lock_ttl: float
    max_run_duration: float
    lock_key: int
    metrics_port: int
    metrics_address: str
    sql_dir: Path
    # The operator toolkit (SPEC section 7): 0 = run never prunes.
    retention: float = 30 * 86400.0
    max_apply_rate: float = 0.0
    pacing: str = "adaptive"
    pacing_shared_rate: float = 100.0

    def secrets(self) -> list[str]:
        """Values the logger must mask: passwords and keys, also as they appear URL-quoted."""
        values = [self.aws_secret_access_key, self.aws_session_token, self.kafka_sasl_password]
        password = dsn_password(self.database_url)
        if password:
            values += [password, quote(password, safe=""), quote(password)]
        return [v for v in values if v]

    @property
    def safe_database_url(self) -> str:
        return mask_dsn(self.database_url)


class _Reader:
    """Reads one variable at a time from the overrides, then the environment, then the default."""

    def __init__(self, environ: Mapping[str, str], overrides: Mapping[str, str]) -> None:
        self.environ = environ
        self.overrides = overrides

    def raw(self, name: str) -> tuple[str | None, str]:
        spec = VARIABLE_BY_NAME[name]
        if name in self.overrides:
            return self.overrides[name], spec.flag or "flag"
        value = self.environ.get(name)
        if value is None or value.strip() == "":
            return spec.default, ""
        return value.strip(), ""

    def fail(
        self, name: str, value: str | None, source: str, rule: str | None = None
    ) -> ConfigError:
        return ConfigError(name, rule or VARIABLE_BY_NAME[name].rule, value, source)

    def text(self, name: str) -> str | None:
        return self.raw(name)[0]

    def integer(self, name: str, low: int, high: int) -> int:
        value, source = self.raw(name)
        if value is None or not re.fullmatch(r"[+-]?[0-9]+", value.strip()):
            raise self.fail(name, value, source)
        number = int(value)
        if not low <= number <= high:
            raise self.fail(name, value, source)
        return number

    def number(self, name: str, low: float, high: float, high_open: bool = False) -> float:
        value, source = self.raw(name)
        try:
            number = float(value) if value is not None else math.nan
        except ValueError:
            number = math.nan
        ok = math.isfinite(number) and low <= number and (
            number < high if high_open else number <= high
        )
        if not ok:
            raise self.fail(name, value, source)
        return number

    def duration(self, name: str, high: float = _MAX_DURATION_S, days: bool = False) -> float:
        value, source = self.raw(name)
        try:
            seconds = parse_duration(value, days) if value is not None else 0.0
        except ValueError:
            seconds = 0.0
        if not 0 < seconds <= high:
            raise self.fail(name, value, source)
        return seconds

    def policy_value(self, name: str, parse: Callable[[str], _T]) -> _T | None:
        """A retry-policy variable as the operator set it, parsed only; None when unset."""
        value, source = self.raw(name)
        if value is None:
            return None
        try:
            return parse(value)
        except (ValueError, OverflowError):
            raise self.fail(name, value, source) from None

    def boolean(self, name: str) -> bool:
        value, source = self.raw(name)
        lowered = (value or "").strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise self.fail(name, value, source)


def _check_database_url(r: _Reader, required: bool = True) -> str:
    value, source = r.raw("DATABASE_URL")
    if value is None and not required:
        return ""
    if value is None:
        raise r.fail("DATABASE_URL", value, source)
    try:
        scheme = urlsplit(value).scheme
    except ValueError as exc:  # e.g. an unclosed [IPv6] host
        raise r.fail("DATABASE_URL", value, source) from exc
    if scheme not in ("postgresql", "postgres"):
        raise r.fail("DATABASE_URL", value, source)
    try:
        params = conninfo_to_dict(value)
    except psycopg.Error as exc:
        # libpq's own parser: the same one that will connect later, so no surprises then.
        raise r.fail("DATABASE_URL", value, source) from exc
    # libpq parses these only when it connects: a bad one must be a configuration error too.
    for key, ok in _DSN_VALUES.items():
        given = params.get(key)
        if given is not None and not all(ok(part) for part in str(given).split(",")):
            raise r.fail("DATABASE_URL", value, source,
                         f"{VARIABLE_BY_NAME['DATABASE_URL'].rule} with a valid {key}")
    return value


def _int_in(low: int, high: int) -> Callable[[str], bool]:
    return lambda text: text.strip().isdigit() and low <= int(text) <= high


_DSN_VALUES: dict[str, Callable[[str], bool]] = {
    "port": lambda text: text == "" or _int_in(1, 65535)(text),
    "connect_timeout": _int_in(0, _INT32_MAX),
    "keepalives": _int_in(0, 1),
    "keepalives_idle": _int_in(0, _INT32_MAX),
    "keepalives_interval": _int_in(0, _INT32_MAX),
    "keepalives_count": _int_in(0, _INT32_MAX),
    "sslmode": lambda text: text in ("disable", "allow", "prefer", "require", "verify-ca",
                                     "verify-full"),
    "target_session_attrs": lambda text: text in ("any", "read-write", "read-only", "primary",
                                                  "standby", "prefer-standby"),
}


def _check_endpoint(r: _Reader) -> str | None:
    value, source = r.raw("S3_ENDPOINT_URL")
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise r.fail("S3_ENDPOINT_URL", value, source)
    try:
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise r.fail("S3_ENDPOINT_URL", value, source) from exc
    return value


def _check_key_template(r: _Reader) -> str:
    value, source = r.raw("RFR_S3_KEY_TEMPLATE")
    if not value:
        raise r.fail("RFR_S3_KEY_TEMPLATE", value, source)
    try:
        fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(value)
                  if f is not None]
    except ValueError as exc:
        raise r.fail("RFR_S3_KEY_TEMPLATE", value, source) from exc
    names = {f for f, _, _ in fields}
    if (
        not names <= set(_KEY_FIELDS)
        or not {"recording_id", "session_id"} & names
        or any(spec or conv for _, spec, conv in fields)
        or value.startswith("/")
        # The S3 client normalises a key's slashes away ("a/" is "a"): such a template would
        # HEAD another object than the one it names.
        or value.endswith("/")
        or "//" in value
    ):
        raise r.fail("RFR_S3_KEY_TEMPLATE", value, source)
    return value


def _check_bootstrap(r: _Reader) -> str | None:
    value, source = r.raw("KAFKA_BOOTSTRAP_SERVERS")
    if value is None:
        return None
    for server in value.split(","):
        host, sep, port = server.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise r.fail("KAFKA_BOOTSTRAP_SERVERS", value, source)
    return value


def _check_kafka_security(r: _Reader) -> tuple[str, str | None, str | None, str | None]:
    protocol, source = r.raw("KAFKA_SECURITY_PROTOCOL")
    protocol = (protocol or "").upper()
    if protocol not in _SECURITY_PROTOCOLS:
        raise r.fail("KAFKA_SECURITY_PROTOCOL", protocol, source)
    mechanism, source = r.raw("KAFKA_SASL_MECHANISM")
    username = r.text("KAFKA_SASL_USERNAME")
    password = r.text("KAFKA_SASL_PASSWORD")
    if mechanism is not None:
        mechanism = mechanism.upper()
        if mechanism not in _SASL_MECHANISMS:
            raise r.fail("KAFKA_SASL_MECHANISM", mechanism, source)
    if protocol.startswith("SASL_"):
        for name, value in (
            ("KAFKA_SASL_MECHANISM", mechanism),
            ("KAFKA_SASL_USERNAME", username),
            ("KAFKA_SASL_PASSWORD", password),
        ):
            if value is None:
                raise r.fail(name, None, "", f"set when KAFKA_SECURITY_PROTOCOL is {protocol}")
    return protocol, mechanism, username, password


def _check_address(r: _Reader, name: str) -> str:
    """An IP address literal (no host name: what to bind must not depend on a resolver)."""
    value, source = r.raw(name)
    try:
        return str(ipaddress.ip_address((value or "").strip()))
    except ValueError:
        raise r.fail(name, value, source) from None


def packaged_sql_dir() -> Path | None:
    """The SQL tree the installed package ships (``recording_finalize.sql``), or None.

    Found through the import system, not a path next to this file: in a wheel it is package data
    under site-packages, in an editable install the checkout's ``sql/`` (the package maps it).
    """
    try:
        spec = importlib.util.find_spec("recording_finalize.sql")
    except ModuleNotFoundError:
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location)
        if (path / "migrations").is_dir() and (path / "functions").is_dir():
            return path.resolve()
    return None


def _check_sql_dir(r: _Reader) -> Path:
    value, source = r.raw("RFR_SQL_DIR")
    if value is None:
        packaged = packaged_sql_dir()
        if packaged is None:
            raise r.fail("RFR_SQL_DIR", None, "", "set it: this installation ships no sql/ "
                         "(recording_finalize.sql) with migrations/ and functions/")
        return packaged
    path = Path(value).expanduser()
    if not (path / "migrations").is_dir() or not (path / "functions").is_dir():
        raise r.fail("RFR_SQL_DIR", value, source)
    return path.resolve()


def _check_retention(r: _Reader) -> float:
    """RFR_RETENTION: a duration of at least a minute (prune refuses less), or 0 for off."""
    value, source = r.raw("RFR_RETENTION")
    try:
        seconds = parse_duration(value, days=True) if value is not None else -1.0
    except ValueError:
        seconds = -1.0
    if seconds == 0:
        return 0.0
    if not 60 <= seconds <= 10 * _MAX_DURATION_S:
        raise r.fail("RFR_RETENTION", value, source)
    return seconds


def _check_bucket_and_topic(r: _Reader) -> tuple[str, str]:
    bucket = r.text("RFR_S3_BUCKET") or ""
    if not _BUCKET.match(bucket) or ".." in bucket:
        raise r.fail("RFR_S3_BUCKET", bucket, r.raw("RFR_S3_BUCKET")[1])
    topic = r.text("RFR_TOPIC") or ""
    if not _TOPIC.match(topic) or topic in (".", ".."):
        raise r.fail("RFR_TOPIC", topic, r.raw("RFR_TOPIC")[1])
    return bucket, topic


def _check_durations(r: _Reader) -> tuple[float, float, float]:
    """(lock TTL, max run duration, S3 timeout), checked together."""
    lock_ttl = r.duration("RFR_LOCK_TTL", high=_MAX_LOCK_TTL_S)
    max_run = r.duration("RFR_MAX_RUN_DURATION")
    if lock_ttl <= max_run:
        raise r.fail("RFR_LOCK_TTL", r.text("RFR_LOCK_TTL"), r.raw("RFR_LOCK_TTL")[1])
    s3_timeout = r.duration("RFR_S3_TIMEOUT")
    # An S3 check must end well inside the lock's lifetime, or a slow check could outlive it.
    if s3_timeout >= lock_ttl / 2:
        raise r.fail("RFR_S3_TIMEOUT", r.text("RFR_S3_TIMEOUT"), r.raw("RFR_S3_TIMEOUT")[1])
    return lock_ttl, max_run, s3_timeout


def _whole_number(text: str) -> int:
    """An integer the server's ``integer`` holds; its bounds are the server's."""
    if not re.fullmatch(r"[+-]?[0-9]+", text.strip()) or abs(int(text)) > _INT32_MAX:
        raise ValueError(f"not a whole number: {text!r}")
    return int(text)


def _finite_number(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"not a finite number: {text!r}")
    return number


def _policy_duration(text: str, days: bool = False) -> float:
    """Seconds an ``interval`` parameter can carry (a timedelta: OverflowError beyond it)."""
    seconds = parse_duration(text, days)
    return timedelta(seconds=seconds).total_seconds()


def _check_pacing(r: _Reader) -> tuple[str, float]:
    """(RFR_PACING, RFR_PACING_SHARED_RATE)."""
    value, source = r.raw("RFR_PACING")
    mode = (value or "").strip().lower()
    if mode not in ("adaptive", "off"):
        raise r.fail("RFR_PACING", value, source)
    return mode, r.number("RFR_PACING_SHARED_RATE", 1.0, 100000.0)


def load_settings(
    environ: Mapping[str, str], overrides: Mapping[str, str] | None = None,
    *, database_required: bool = True,
) -> Settings:
    """Validates ``environ`` (overridden by ``overrides``, keyed by variable name).

    Raises ``ConfigError`` for the first variable that breaks its rule. Touches nothing outside
    this process: no connection, no file but the ``RFR_SQL_DIR`` check. A command that never
    connects (``service-sql``) passes ``database_required=False``: an unset DATABASE_URL is
    then ``""`` (a set one is still checked).
    """
    r = _Reader(environ, overrides or {})
    # In this order: the first variable that breaks its rule is the one reported.
    bucket, topic = _check_bucket_and_topic(r)
    lock_ttl, max_run, s3_timeout = _check_durations(r)
    protocol, mechanism, username, password = _check_kafka_security(r)
    pacing, pacing_shared_rate = _check_pacing(r)
    return Settings(
        database_url=_check_database_url(r, database_required),
        s3_endpoint_url=_check_endpoint(r),
        s3_region=r.text("AWS_REGION") or r.text("AWS_DEFAULT_REGION") or "us-east-1",
        aws_access_key_id=r.text("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key=r.text("AWS_SECRET_ACCESS_KEY"),
        aws_session_token=r.text("AWS_SESSION_TOKEN"),
        s3_bucket=bucket,
        s3_key_template=_check_key_template(r),
        s3_timeout=s3_timeout,
        s3_concurrency=r.integer("RFR_S3_CONCURRENCY", 1, 256),
        kafka_bootstrap_servers=_check_bootstrap(r),
        kafka_security_protocol=protocol,
        kafka_sasl_mechanism=mechanism,
        kafka_sasl_username=username,
        kafka_sasl_password=password,
        topic=topic,
        relay_batch_size=r.integer("RFR_RELAY_BATCH_SIZE", 1, 10000),
        recordings_enabled=r.boolean("RECORDINGS_ENABLED"),
        polling_interval=r.duration("RFR_POLLING_INTERVAL"),
        batch_size=r.integer("RFR_BATCH_SIZE", 1, 10000),
        max_attempts=r.policy_value("RFR_MAX_ATTEMPTS", _whole_number),
        finalize_sla_timeout=r.policy_value("RFR_FINALIZE_SLA_TIMEOUT", _policy_duration),
        upload_grace=r.policy_value("RFR_UPLOAD_GRACE",
                                    lambda text: _policy_duration(text, days=True)),
        republish_window=r.duration("RFR_REPUBLISH_WINDOW", high=30 * 86400, days=True),
        backoff_base=r.policy_value("RFR_BACKOFF_BASE", _policy_duration),
        backoff_factor=r.policy_value("RFR_BACKOFF_FACTOR", _finite_number),
        backoff_cap=r.policy_value("RFR_BACKOFF_CAP", _policy_duration),
        backoff_jitter=r.policy_value("RFR_BACKOFF_JITTER", _finite_number),
        lock_ttl=lock_ttl,
        max_run_duration=max_run,
        lock_key=DEFAULT_LOCK_KEY,
        metrics_port=r.integer("RFR_METRICS_PORT", 0, 65535),
        metrics_address=_check_address(r, "RFR_METRICS_ADDRESS"),
        sql_dir=_check_sql_dir(r),
        retention=_check_retention(r),
        max_apply_rate=r.number("RFR_MAX_APPLY_RATE", 0.0, 100000.0),
        pacing=pacing,
        pacing_shared_rate=pacing_shared_rate,
    )


def require_kafka(settings: Settings) -> None:
    """run and run-once publish: they need the brokers."""
    if not settings.kafka_bootstrap_servers:
        raise ConfigError("KAFKA_BOOTSTRAP_SERVERS", VARIABLE_BY_NAME[
            "KAFKA_BOOTSTRAP_SERVERS"].rule, None)

