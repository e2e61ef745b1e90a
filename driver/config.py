"""Configuration: the environment (and CLI overrides) validated once into a frozen ``Settings``;
nothing else in the driver reads the environment. Every variable is a field of ``Settings`` with
its default and rule, from which the CLI builds ``--help`` and its flags. A bad value raises
``ConfigError`` naming the variable and the rule — before anything connects."""

from __future__ import annotations

import importlib.util
import math
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import timedelta
from functools import partial
from ipaddress import ip_address
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote, urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

# The single-runner advisory lock's key: fixed, like migrate's (a random 64-bit number no other
# tool picks by chance). Every runner of one database must use the same key, so it is no choice.
DEFAULT_LOCK_KEY = 5928001741300501

_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
DURATION_RULE = "a duration (a number of seconds, or a number with ms/s/m/h: 90, 250ms, 5m, 1h)"
DURATION_DAYS_RULE = ("a duration (a number of seconds, or a number with ms/s/m/h/d: 90, 5m, 1h, "
                      "30d)")
_MAX_DURATION_S = 366 * 24 * 3600.0
_INT32_MAX = 2**31 - 1
_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_DATABASE_URL_RULE = "a libpq URL (postgresql://user:password@host:port/dbname)"


def parse_duration(text: str, days: bool = False) -> float:
    """``"90"``, ``"90s"``, ``"250ms"``, ``"5m"``, ``"1.5h"`` → seconds, else ValueError;
    ``days``: also ``"30d"``, for retention (RFR_RETENTION and ``prune --older-than``)."""
    match = _DURATION.match(text)
    if match is None or (match.group(2) == "d" and not days):
        raise ValueError(f"not a duration: {text!r}")
    seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]
    if not math.isfinite(seconds):
        raise ValueError(f"not a finite duration: {text!r}")
    return seconds


class Rule(NamedTuple):
    """What a variable must be, in words: ``convert`` turns its text into the value, which ``ok``
    must accept (ValueError, KeyError or a false ``ok``: the rule is broken)."""

    text: str
    convert: Callable[[str], Any] = str
    ok: Callable[[Any], object] = lambda _value: True

    def parse(self, given: str) -> Any:
        value = self.convert(given)
        if not self.ok(value):
            raise ValueError(given)
        return value


class _Broken(ValueError):
    """A value that breaks a narrower rule than its variable's: ``rule`` says which."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


def _whole(text: str) -> int:
    # Decimal digits only: int() alone also takes "1_000" and other scripts' digits.
    if not re.fullmatch(r"[+-]?[0-9]+", text.strip()):
        raise ValueError(text)
    return int(text)


def _integer(low: int, high: int, note: str = "") -> Rule:
    return Rule(f"an integer in {low}..{high}{note}", _whole, lambda n: low <= n <= high)


def _number(low: float, high: float, note: str = "") -> Rule:
    return Rule(f"a number in {low:g}..{high:g}{note}", float,
                lambda n: math.isfinite(n) and low <= n <= high)


def _duration(note: str, high: float = _MAX_DURATION_S, days: bool = False) -> Rule:
    return Rule((DURATION_DAYS_RULE if days else DURATION_RULE) + note,
                partial(parse_duration, days=days), lambda seconds: 0 < seconds <= high)


def _one_of(words: Mapping[str, Any] | Sequence[str], text: str = "") -> Rule:
    """One of the words, in any case: the word as written, or a mapping's value for it."""
    values = words if isinstance(words, Mapping) else {word.lower(): word for word in words}
    return Rule(text or "one of " + ", ".join(values.values()),
                lambda given: values[given.strip().lower()])


def _policy(what: str, convert: Callable[[str], Any], unset: str = "its default") -> Rule:
    return Rule(f"{what}, within the server's bounds (recording_finalize.settings; unset: "
                f"{unset})", convert)


def _policy_duration(days: bool = False) -> Callable[[str], float]:
    """Seconds an ``interval`` parameter can carry (a timedelta: OverflowError beyond it)."""
    return lambda text: timedelta(seconds=parse_duration(text, days)).total_seconds()


def _int_in(low: int, high: int) -> Callable[[str], bool]:
    return lambda text: text.strip().isdigit() and low <= int(text) <= high


# libpq parses these only when it connects: a bad one must be a configuration error too.
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


def _database_url(text: str) -> str:
    if urlsplit(text).scheme not in ("postgresql", "postgres"):  # ValueError: "[::1/db"
        raise ValueError(text)
    try:
        # libpq's own parser: the same one that will connect later, so no surprises then.
        params = conninfo_to_dict(text)
    except psycopg.Error as exc:
        raise ValueError(text) from exc
    for key, ok in _DSN_VALUES.items():
        given = params.get(key)
        if given is not None and not all(ok(part) for part in str(given).split(",")):
            raise _Broken(f"{_DATABASE_URL_RULE} with a valid {key}")
    return text


def _endpoint(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(text)
    parts.port  # noqa: B018 - raises ValueError for a bad port
    return text


def _is_key_template(text: str) -> bool:
    fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text)
              if f is not None]
    names = {f for f, _, _ in fields}
    return (
        names <= {"recording_id", "session_id", "session_kind"}
        and bool({"recording_id", "session_id"} & names)
        and not any(spec or conv for _, spec, conv in fields)
        # The S3 client normalises a key's slashes away ("a/" is "a"): such a template would
        # HEAD another object than the one it names.
        and not (text.startswith("/") or text.endswith("/") or "//" in text)
    )


def _is_host_port(server: str) -> bool:
    host, sep, port = server.strip().rpartition(":")
    return bool(sep and host and port.isdigit() and 0 < int(port) < 65536)


def _is_sql_tree(path: Path) -> bool:
    return (path / "migrations").is_dir() and (path / "functions").is_dir()


@dataclass(frozen=True)
class Variable:
    """One environment variable: its default (None = unset), its rule, and its CLI flag."""

    name: str
    default: str | None
    rule: Rule
    help: str
    flag: str | None = None
    secret: bool = False

    @property
    def is_duration(self) -> bool:
        return self.rule.text.startswith((DURATION_RULE, DURATION_DAYS_RULE))


def _variable(name: str, default: str | None, rule: Rule, help: str, flag: str | None = None,
              *, secret: bool = False, shown: bool = True) -> Any:
    """A ``Settings`` field that the variable ``name`` sets (``shown``: in its repr)."""
    return field(repr=shown and not secret,
                 metadata={"variable": Variable(name, default, rule, help, flag, secret)})


_OPTIONAL = Rule("optional", str)
_POLICY_DURATION = _policy(DURATION_RULE, _policy_duration())
_POLICY_NUMBER = _policy("a finite number", _number(-math.inf, math.inf).parse)
_SASL_ONLY = Rule("required with SASL_*", str)


@dataclass(frozen=True)
class Settings:
    """The validated configuration: a field per variable, in ``--help`` order; durations in s."""

    database_url: str = _variable(
        "DATABASE_URL", None, Rule(_DATABASE_URL_RULE, _database_url),
        "the database (the worker's login role); its password is never printed", secret=True)
    s3_endpoint_url: str | None = _variable(
        "S3_ENDPOINT_URL", None, Rule("unset (AWS) or an http(s):// URL", _endpoint),
        "S3 endpoint; when set, path-style addressing is used")
    aws_access_key_id: str | None = _variable(
        "AWS_ACCESS_KEY_ID", None, _OPTIONAL, "S3 credentials (else the AWS default chain)",
        shown=False)
    aws_secret_access_key: str | None = _variable(
        "AWS_SECRET_ACCESS_KEY", None, _OPTIONAL, "S3 secret key", secret=True)
    aws_session_token: str | None = _variable(
        "AWS_SESSION_TOKEN", None, _OPTIONAL, "S3 session token", secret=True)
    aws_region: str | None = _variable(
        "AWS_REGION", None, _OPTIONAL, "S3 region (else AWS_DEFAULT_REGION, us-east-1)")
    aws_default_region: str = _variable(
        "AWS_DEFAULT_REGION", "us-east-1", Rule("a region name", str), "S3 region")
    s3_bucket: str = _variable(
        "RFR_S3_BUCKET", "call-recordings",
        Rule("an S3 bucket name (3-63 of a-z 0-9 . -)", str,
             re.compile(r"(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]").fullmatch),
        "the bucket of category CALL_RECORDINGS", "--bucket")
    s3_key_template: str = _variable(
        "RFR_S3_KEY_TEMPLATE", "recordings/{recording_id}",
        Rule("a key using only {recording_id}, {session_id}, {session_kind}, with "
             "{recording_id} or {session_id}, no leading or trailing / and no //", str,
             _is_key_template),
        "where the recorder puts a recording's binary", "--key-template")
    s3_timeout: float = _variable(
        "RFR_S3_TIMEOUT", "10s", _duration(", > 0 and < RFR_LOCK_TTL / 2"),
        "per-row limit on the S3 check", "--s3-timeout")
    s3_concurrency: int = _variable(
        "RFR_S3_CONCURRENCY", "16", _integer(1, 256), "S3 checks in flight at once",
        "--s3-concurrency")
    kafka_bootstrap_servers: str | None = _variable(
        "KAFKA_BOOTSTRAP_SERVERS", None,
        Rule("host:port[,host:port...] (required by run, run-once)", str,
             lambda text: all(_is_host_port(server) for server in text.split(","))),
        "the Kafka brokers")
    kafka_security_protocol: str = _variable(
        "KAFKA_SECURITY_PROTOCOL", "PLAINTEXT", _one_of(_SECURITY_PROTOCOLS),
        "Kafka security protocol")
    kafka_sasl_mechanism: str | None = _variable(
        "KAFKA_SASL_MECHANISM", None,
        _one_of(_SASL_MECHANISMS, f"one of {', '.join(_SASL_MECHANISMS)}; required with SASL_*"),
        "Kafka SASL mechanism")
    kafka_sasl_username: str | None = _variable(
        "KAFKA_SASL_USERNAME", None, _SASL_ONLY, "Kafka SASL user")
    kafka_sasl_password: str | None = _variable(
        "KAFKA_SASL_PASSWORD", None, _SASL_ONLY, "Kafka SASL password", secret=True)
    topic: str = _variable(
        "RFR_TOPIC", "pin.messenger.call-recording-available.v1",
        Rule("a Kafka topic name (1-249 of A-Z a-z 0-9 . _ -)", str,
             re.compile(r"(?!\.\.?$)[A-Za-z0-9._-]{1,249}").fullmatch),
        "the topic of call-recording-available", "--topic")
    relay_batch_size: int = _variable(
        "RFR_RELAY_BATCH_SIZE", "500", _integer(1, 10000), "outbox rows per relay batch",
        "--relay-batch-size")
    recordings_enabled: bool = _variable(
        "RECORDINGS_ENABLED", "true",
        _one_of(dict.fromkeys(("true", "1", "yes", "on"), True)
                | dict.fromkeys(("false", "0", "no", "off"), False),
                "true or false (also 1/0, yes/no, on/off)"),
        "feature flag; false: the worker idles and says so", "--recordings-enabled")
    polling_interval: float = _variable(
        "RFR_POLLING_INTERVAL", "60s", _duration(", > 0"), "time between cycle starts (run)",
        "--polling-interval")
    batch_size: int = _variable(
        "RFR_BATCH_SIZE", "100", _integer(1, 10000), "finalize rows per claim", "--batch-size")
    # The retry policy: parsed here, judged by the server (recording_finalize.set_policy, the
    # bounds of recording_finalize.settings); None (unset): the server's default applies.
    max_attempts: int | None = _variable(
        "RFR_MAX_ATTEMPTS", None,
        _policy("a whole number", _integer(-_INT32_MAX, _INT32_MAX).parse),
        "attempts before a row is quarantined", "--max-attempts")
    finalize_sla_timeout: float | None = _variable(
        "RFR_FINALIZE_SLA_TIMEOUT", None, _POLICY_DURATION,
        "how long after its session ends the happy path owns a recording",
        "--finalize-sla-timeout")
    upload_grace: float | None = _variable(
        "RFR_UPLOAD_GRACE", None,
        _policy(DURATION_DAYS_RULE, _policy_duration(days=True), "RFR_FINALIZE_SLA_TIMEOUT"),
        "after a storage incident ends, how long a 404 is not trusted for recordings whose "
        "upload window overlapped it", "--upload-grace")
    republish_window: float = _variable(
        "RFR_REPUBLISH_WINDOW", "1d",
        Rule(f"{DURATION_DAYS_RULE}, at most 30d; or 0 (off)", partial(parse_duration, days=True),
             lambda seconds: 0 <= seconds <= 30 * 86400),
        "how far back (before the SLA) discovery looks for Available recordings that never got "
        "their event; 0 turns that off, for a service whose happy path enqueues its event in the "
        "transaction that makes the recording Available", "--republish-window")
    service_event_lag: float = _variable(
        "RFR_SERVICE_EVENT_LAG", "5m", _duration(", > 0"),
        "how long the service's own events (the adapter's service_events) may stay unpublished "
        "before recording_finalize_service_events_unpublished counts them: the service's relay "
        "publishes them, never the product", "--service-event-lag")
    backoff_base: float | None = _variable(
        "RFR_BACKOFF_BASE", None, _POLICY_DURATION, "first retry delay", "--backoff-base")
    backoff_factor: float | None = _variable(
        "RFR_BACKOFF_FACTOR", None, _POLICY_NUMBER, "retry delay growth", "--backoff-factor")
    backoff_cap: float | None = _variable(
        "RFR_BACKOFF_CAP", None, _POLICY_DURATION, "longest retry delay", "--backoff-cap")
    backoff_jitter: float | None = _variable(
        "RFR_BACKOFF_JITTER", None, _POLICY_NUMBER, "retry delay jitter fraction",
        "--backoff-jitter")
    # At most 24h: PostgreSQL's idle_session_timeout takes at most 2^31-1 ms (~24.8 days).
    lock_ttl: float = _variable(
        "RFR_LOCK_TTL", "5m", _duration(", > RFR_MAX_RUN_DURATION, at most 24h", high=24 * 3600),
        "the single-runner lock's lifetime; a cycle never runs past it", "--lock-ttl")
    max_run_duration: float = _variable(
        "RFR_MAX_RUN_DURATION", "3m", _duration(", > 0 and < RFR_LOCK_TTL"),
        "claiming stops after this long in a cycle", "--max-run-duration")
    metrics_port: int = _variable(
        "RFR_METRICS_PORT", "9464", _integer(0, 65535, " (0 disables /metrics)"),
        "the port of /metrics, /livez and /readyz (run)", "--metrics-port")
    # An IP address literal: what to bind must not depend on a resolver.
    metrics_address: str = _variable(
        "RFR_METRICS_ADDRESS", "0.0.0.0", Rule("an IPv4 or IPv6 address of this host",
                                               lambda text: str(ip_address(text.strip()))),
        "the address /metrics, /livez and /readyz listen on (run): every interface by default, "
        "as a scraped pod needs; 127.0.0.1 keeps them on the host", "--metrics-address")
    # Retention (docs/retention.md): 0 = run never prunes; prune refuses less than 1m.
    retention: float = _variable(
        "RFR_RETENTION", "30d",
        Rule(f"{DURATION_DAYS_RULE}, >= 1m; or 0 (off)", partial(parse_duration, days=True),
             lambda seconds: seconds == 0 or 60 <= seconds <= 10 * _MAX_DURATION_S),
        "run prunes the product's finished rows (Done finalize rows, expired leases, ended "
        "incidents) older than this, hourly; never the service's outboxes")
    sql_dir: Path = _variable(  # noqa: RUF009 - a dataclasses.field(), as every _variable
        "RFR_SQL_DIR", None, Rule("a directory holding migrations/ and functions/",
                                  lambda text: Path(text).expanduser().resolve(), _is_sql_tree),
        "the SQL tree for migrate (default: the package's sql/)")
    max_apply_rate: float = _variable(
        "RFR_MAX_APPLY_RATE", "0", _number(0, 100000, " (0 = no limit)"),
        "at most this many verdicts applied per second: with RFR_PACING=adaptive the pace while "
        "nobody else is on the database, with off a fixed pace (docs/pacing.md)",
        "--max-apply-rate")
    pacing: str = _variable(
        "RFR_PACING", "adaptive", _one_of(("adaptive", "off"), "adaptive or off"),
        "adaptive: a drain runs unlimited while no other login's sessions are at work in the "
        "database, at RFR_PACING_SHARED_RATE while they are (or the probe does not answer); "
        "off: only RFR_MAX_APPLY_RATE paces (a database the worker has to itself, or a pace set "
        "by hand)", "--pacing")
    pacing_shared_rate: float = _variable(
        "RFR_PACING_SHARED_RATE", "50", _number(1, 100000),
        "adaptive pacing: the verdicts a drain applies per second while other logins' sessions "
        "are at work", "--pacing-shared-rate")
    lock_key: int = DEFAULT_LOCK_KEY

    @property
    def s3_region(self) -> str:
        return self.aws_region or self.aws_default_region

    def secrets(self) -> list[str]:
        """Values the logger must mask: passwords and keys, also as they appear URL-quoted."""
        values = [self.aws_secret_access_key, self.aws_session_token, self.kafka_sasl_password]
        try:
            password = str(conninfo_to_dict(self.database_url).get("password") or "")
        except psycopg.Error:
            password = ""
        if password:
            values += [password, quote(password, safe=""), quote(password)]
        return [v for v in values if v]


_FIELD_OF = {f.metadata["variable"].name: f.name for f in fields(Settings) if f.metadata}
VARIABLES: tuple[Variable, ...] = tuple(f.metadata["variable"] for f in fields(Settings)
                                        if f.metadata)
VARIABLE_BY_NAME = {v.name: v for v in VARIABLES}


class ConfigError(ValueError):
    """A variable breaks its rule. The message names the variable and the rule, and repeats the
    value with secrets masked and a URL's password replaced."""

    def __init__(self, variable: str, rule: str, value: str | None, source: str = "") -> None:
        self.variable = variable
        where = f"{variable} ({source})" if source else variable
        if value is None:
            super().__init__(f"{where} is not set; it must be {rule}")
            return
        if variable == "DATABASE_URL":
            value = mask_dsn(value)
        elif VARIABLE_BY_NAME[variable].secret:
            value = "***"
        elif len(value) > 200:
            value = value[:200] + "…"
        super().__init__(f"{where} must be {rule}; got {value!r}")


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its password replaced by ``***`` (URL form, keyword form or query string)."""
    masked = re.sub(r"(://[^:/@?#]*:)[^@/?#]*@", r"\1***@", dsn)
    return re.sub(r"(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", r"\1***", masked)


def packaged_sql_dir() -> Path | None:
    """The SQL tree the installed package ships (``recording_finalize.sql``), or None. Found
    through the import system, not a path next to this file: in a wheel it is package data under
    site-packages, in an editable install the checkout's ``sql/`` (the package maps it)."""
    try:
        spec = importlib.util.find_spec("recording_finalize.sql")
    except ModuleNotFoundError:
        return None
    locations = (spec.submodule_search_locations or []) if spec else []
    return next((Path(p).resolve() for p in locations if _is_sql_tree(Path(p))), None)


def load_settings(
    environ: Mapping[str, str], overrides: Mapping[str, str] | None = None,
    *, database_required: bool = True,
) -> Settings:
    """``ConfigError`` for the first variable that breaks its rule; ``overrides`` (the flags) win
    over ``environ``. A command that never connects (``service-sql``) passes
    ``database_required=False``: an unset DATABASE_URL is then ``""`` (a set one is checked)."""
    overrides = overrides or {}
    # Each variable's text and where it came from: its flag, or "" (the environment, the default).
    given = {spec.name: (overrides[spec.name], spec.flag or "flag") if spec.name in overrides
             else ((environ.get(spec.name) or "").strip() or spec.default, "")
             for spec in VARIABLES}

    def fail(name: str, rule: str | None = None) -> ConfigError:
        return ConfigError(name, rule or VARIABLE_BY_NAME[name].rule.text, *given[name])

    values: dict[str, Any] = {}
    for spec in VARIABLES:
        text = given[spec.name][0]
        try:
            values[spec.name] = None if text is None else spec.rule.parse(text)
        except _Broken as err:
            raise fail(spec.name, err.rule) from None
        except (ValueError, OverflowError, KeyError):
            raise fail(spec.name) from None
    if values["DATABASE_URL"] is None:
        if database_required:
            raise fail("DATABASE_URL")
        values["DATABASE_URL"] = ""
    if values["RFR_SQL_DIR"] is None:
        values["RFR_SQL_DIR"] = packaged_sql_dir()
        if values["RFR_SQL_DIR"] is None:
            raise fail("RFR_SQL_DIR", "set it: this installation ships no sql/ "
                       "(recording_finalize.sql) with migrations/ and functions/")
    # The rules that tie one variable to another.
    if values["RFR_LOCK_TTL"] <= values["RFR_MAX_RUN_DURATION"]:
        raise fail("RFR_LOCK_TTL")
    # An S3 check must end well inside the lock's lifetime, or a slow check could outlive it.
    if values["RFR_S3_TIMEOUT"] >= values["RFR_LOCK_TTL"] / 2:
        raise fail("RFR_S3_TIMEOUT")
    protocol = values["KAFKA_SECURITY_PROTOCOL"]
    if protocol.startswith("SASL_"):
        for name in ("KAFKA_SASL_MECHANISM", "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD"):
            if values[name] is None:
                raise fail(name, f"set when KAFKA_SECURITY_PROTOCOL is {protocol}")
    return Settings(**{_FIELD_OF[name]: value for name, value in values.items()})


def value_text(settings: Settings, variable: str) -> str | None:
    """``variable``'s value as an operator writes it (durations in seconds: "90s"); None: unset."""
    value = getattr(settings, _FIELD_OF[variable])
    if isinstance(value, float):
        return f"{value:g}s" if VARIABLE_BY_NAME[variable].is_duration else f"{value:g}"
    return None if value is None else str(value)


def require_kafka(settings: Settings) -> None:
    """run and run-once publish: they need the brokers."""
    if not settings.kafka_bootstrap_servers:
        spec = VARIABLE_BY_NAME["KAFKA_BOOTSTRAP_SERVERS"]
        raise ConfigError(spec.name, spec.rule.text, None)
