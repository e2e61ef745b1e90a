"""The file-storage check: HEAD the recording's object in S3 and classify the answer.

Outcomes: ``found`` (the metadata converted, never judged: ``metadata_problem`` judges it),
``missing`` (a 404, named by bucket and key; ``outcome_decision`` decides whether to believe it),
``transient`` (timeouts, connection errors, 5xx, throttling), ``config_error`` (missing bucket,
access denied, bad credentials). Error texts are an exception class and its HTTP status: never a
URL, never a message that could quote one.

Two clients, each where it is best. **obstore** sends the per-row HEAD, the hot call of a backlog
drain: ~0.2 ms of CPU against boto3's ~2.4 ms (signing and HTTP run in Rust, outside the GIL, so
the check threads really overlap). Its errors are typed by status (404, 403, 401); anything else,
a 400/301 or a metadata value that is not UTF-8 included, is ``transient``: never adopted, the
row backs off until ``RFR_MAX_ATTEMPTS`` quarantines it. **boto3** confirms the bucket once per
cycle (HeadBucket turns a wrong region or endpoint into a configuration failure before any HEAD
goes out) and resolves the credentials through its provider chain. Because ``Failed`` is
terminal, a 404 is believed only with the bucket confirmed by both: after HeadBucket, obstore
lists an empty prefix of the same bucket.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

import boto3
import obstore
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    NoCredentialsError,
    ParamValidationError,
    PartialCredentialsError,
)
from obstore.auth.boto3 import Boto3CredentialProvider
from obstore.exceptions import (
    BaseError,
    InvalidPathError,
    NotSupportedError,
    PermissionDeniedError,
    UnauthenticatedError,
    UnknownConfigurationKeyError,
)
from obstore.store import S3Store

from . import model
from .config import Settings
from .logs import log

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from obstore.store import ClientConfig, RetryConfig, S3Config

FORMATS = {"webm": "Webm", "mp4": "Mp4", "ogg": "Ogg", "m4a": "M4a"}
CONTENT_TYPE_FORMATS = {
    "audio/webm": "Webm", "video/webm": "Webm", "video/mp4": "Mp4", "audio/mp4": "Mp4",
    "audio/ogg": "Ogg", "video/ogg": "Ogg", "audio/x-m4a": "M4a", "audio/m4a": "M4a",
    "audio/mp4a-latm": "M4a",
}

_WHOLE_NUMBER = re.compile(r"^[+-]?[0-9]+$")
# apply_outcome's p_duration_seconds is an integer: a number past it is passed as its bound.
_INTEGER_MAX = 2**31 - 1

# HeadBucket statuses that mean the deployment is wrong (credentials, region, endpoint). A HEAD
# answer has no body: its error code is its status.
_CONFIG_STATUSES = frozenset({301, 400, 401, 403})
_OBSTORE_STATUS: dict[type[BaseException], int] = {
    FileNotFoundError: 404, PermissionDeniedError: 403, UnauthenticatedError: 401}
# obstore errors that mean the deployment is wrong, not the recording: the credentials are
# refused, or the key template makes keys the client cannot address.
_OBSTORE_CONFIG_ERRORS = (PermissionDeniedError, UnauthenticatedError, InvalidPathError,
                          UnknownConfigurationKeyError, NotSupportedError)
# Attributes obstore reports under its own names; every other one is x-amz-meta-* metadata.
_STANDARD_ATTRIBUTES = frozenset({"Content-Disposition", "Content-Encoding", "Content-Language",
                                  "Content-Type", "Cache-Control", "Storage-Class"})
# Below botocore's mandatory refresh window (10 minutes before expiry): credentials handed to
# obstore are re-read from botocore before they could expire in obstore's cache.
CREDENTIAL_TTL = timedelta(minutes=9)
# The per-cycle probe lists this prefix: nothing lives there, an empty answer is the point.
BUCKET_PROBE_PREFIX = "recording-finalize-bucket-probe"


class StorageConfigError(Exception):
    """The bucket is missing or not ours to read: a configuration failure, not a recording's."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _error_text(err: BaseException) -> str:
    """``last_error``'s text for an obstore error: its class, and the status it stands for."""
    status = next((f" {s}" for cls, s in _OBSTORE_STATUS.items() if isinstance(err, cls)), "")
    return type(err).__name__ + status


def parse_metadata(key: str, head: Mapping[str, Any]) -> model.Verdict:
    """The ``found`` verdict for a HEAD answer in boto3's shape, in ``apply_outcome``'s types.
    A value that cannot be converted is passed as None and named in ``error``, which the
    quarantine's reason quotes; a format word that names no format is passed as given."""
    metadata = {str(k).lower(): str(v) for k, v in (head.get("Metadata") or {}).items()}
    unread: list[str] = []

    size = head.get("ContentLength")
    if not isinstance(size, int) or isinstance(size, bool):
        size = None
        unread.append("no Content-Length")

    raw_duration = metadata.get("duration-seconds")
    duration = _whole_number(raw_duration)
    if duration is None:
        unread.append("no duration-seconds metadata" if raw_duration is None
                      else "duration-seconds is not a whole number")

    raw_format = metadata.get("format")
    if raw_format is not None:
        fmt: str | None = FORMATS.get(raw_format.strip().lower(), raw_format.strip())
    else:
        content_type = str(head.get("ContentType") or "").split(";", 1)[0].strip().lower()
        fmt = CONTENT_TYPE_FORMATS.get(content_type)
        if fmt is None:
            unread.append("no format metadata, and the Content-Type names no known format")

    file_id = metadata.get("file-id")
    return model.Verdict(model.FOUND, file_id=key if file_id is None else file_id.strip(),
                         size_bytes=size, duration_seconds=duration, format=fmt,
                         error="; ".join(unread) or None)


def _whole_number(raw: str | None) -> int | None:
    """ASCII digits with an optional sign, or None (``int()`` alone would take other scripts'
    digits, underscores and white space inside)."""
    text = (raw or "").strip()
    if not text.isascii() or not _WHOLE_NUMBER.match(text):
        return None
    return max(-_INTEGER_MAX - 1, min(int(text), _INTEGER_MAX))


def head_dict(size: object, attributes: Mapping[str, str]) -> dict[str, Any]:
    """An obstore head-only answer in the shape ``parse_metadata`` reads."""
    return {
        "ContentLength": size,
        "ContentType": attributes.get("Content-Type"),
        "Metadata": {k: v for k, v in attributes.items() if k not in _STANDARD_ATTRIBUTES},
    }


def _session(settings: Settings) -> boto3.session.Session:
    return boto3.session.Session(
        aws_access_key_id=settings.aws_access_key_id,
        aws_secret_access_key=settings.aws_secret_access_key,
        aws_session_token=settings.aws_session_token,
        region_name=settings.s3_region,
    )


def make_client(settings: Settings, session: boto3.session.Session) -> S3Client:
    """The boto3 client of HeadBucket: two attempts of at most connect + read each, a quarter
    of RFR_S3_TIMEOUT apiece, so that the call, retry included, stays within that limit."""
    per_call = settings.s3_timeout / 4
    config = Config(
        region_name=settings.s3_region,
        connect_timeout=per_call,
        read_timeout=per_call,
        retries={"mode": "standard", "total_max_attempts": 2},
        max_pool_connections=2,
        s3={"addressing_style": "path"} if settings.s3_endpoint_url else None,
        user_agent_extra="recording-finalize",
    )
    return session.client("s3", endpoint_url=settings.s3_endpoint_url, config=config)


def make_store(settings: Settings, session: boto3.session.Session) -> S3Store | None:
    """The obstore client of the per-row HEAD, or None when there are no credentials at all.
    Time budget per row, RFR_S3_TIMEOUT = T: a try is bounded by ``timeout`` (connect included)
    = 0.4 T; one retry at most, begun only while less than ``retry_timeout`` = 0.5 T has passed
    since the first try began (so a timed-out first try is retried), after a backoff of at most
    0.1 T. Worst case 0.5 + 0.1 + 0.4 = T."""
    if session.get_credentials() is None:
        return None
    budget = settings.s3_timeout
    per_try = timedelta(seconds=budget * 0.4)
    client: ClientConfig = {
        "timeout": per_try,
        "connect_timeout": per_try,
        "pool_max_idle_per_host": str(settings.s3_concurrency + 2),
        "user_agent": "recording-finalize (obstore)",
    }
    retry: RetryConfig = {
        "max_retries": 1,
        "retry_timeout": timedelta(seconds=budget * 0.5),
        "backoff": {
            "init_backoff": timedelta(seconds=min(0.1, budget * 0.05)),
            "max_backoff": timedelta(seconds=budget * 0.1),
            "base": 2,
        },
    }
    # Where the request goes is given explicitly (obstore would otherwise also read AWS_*
    # variables from the environment); path-style for a custom endpoint, as boto3 does.
    config: S3Config = {
        "region": settings.s3_region,
        "skip_signature": False,
        "request_payer": False,
        "s3_express": False,
        "virtual_hosted_style_request": not settings.s3_endpoint_url,
    }
    if settings.s3_endpoint_url:
        config["endpoint"] = settings.s3_endpoint_url
        client["allow_http"] = settings.s3_endpoint_url.startswith("http://")
    return S3Store(settings.s3_bucket, config=config, client_options=client, retry_config=retry,
                   credential_provider=Boto3CredentialProvider(session, ttl=CREDENTIAL_TTL))


class KnownAnswers(NamedTuple):
    """How the HEADs of the known uploads answered."""

    found: int
    missing: int
    other: int


class Storage:
    """The S3 check; thread-safe: the check threads share one obstore store and boto3 client.
    Tests may hand in a stubbed ``client`` or a ``store`` aimed elsewhere."""

    def __init__(self, settings: Settings, client: S3Client | None = None,
                 store: S3Store | None = None) -> None:
        self._settings = settings
        self.bucket = settings.s3_bucket
        session = _session(settings)
        self._client = client if client is not None else make_client(settings, session)
        self._store = store if store is not None else make_store(settings, session)

    def key_for(self, row: model.ClaimedRow) -> str:
        return self._settings.s3_key_template.format(
            recording_id=row.recording_id, session_id=row.session_id,
            session_kind=row.session_kind)

    def known_upload_answers(self, known: Sequence[model.ClaimedRow]) -> KnownAnswers:
        """HEADs recordings known to be there (the newest Available): the facts the database
        judges the key layout by (``key_layout_unconfirmed``)."""
        outcomes = Counter(self.check(row).outcome for row in known)
        found, missing = outcomes[model.FOUND], outcomes[model.MISSING]
        return KnownAnswers(found, missing, outcomes.total() - found - missing)

    def check_bucket(self) -> bool:
        """HeadBucket, then obstore's probe of the same bucket: True when confirmed, False when
        unreachable or obstore cannot see it; ``StorageConfigError`` when missing or denied."""
        try:
            self._client.head_bucket(Bucket=self.bucket)
        except ClientError as err:
            status = int(err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
            if status == 404:
                raise StorageConfigError("NoSuchBucket") from err
            if status in _CONFIG_STATUSES:
                code = str(err.response.get("Error", {}).get("Code") or status)
                raise StorageConfigError(code if not code.isdigit() else "AccessDenied") from err
            return False
        except (NoCredentialsError, PartialCredentialsError, ParamValidationError) as err:
            raise StorageConfigError(type(err).__name__) from err
        except BotoCoreError:
            return False
        if self._store is None:
            raise StorageConfigError("NoCredentialsError")
        try:
            obstore.list_with_delimiter(self._store, BUCKET_PROBE_PREFIX)
        except _OBSTORE_CONFIG_ERRORS as err:
            raise StorageConfigError(_error_text(err)) from err
        except (BaseError, OSError, ValueError) as err:
            log("s3 bucket not confirmed", level="warning", bucket=self.bucket,
                error=_error_text(err),
                message="HeadBucket found the bucket but the HEAD client could not list it: "
                "no 404 fails a recording until both see it")
            return False
        return True

    def check(self, row: model.ClaimedRow) -> model.Verdict:
        """HEADs the recording's object; classified by obstore's error types, never messages."""
        store = self._store
        if store is None:
            return model.Verdict(model.CONFIG_ERROR, error="NoCredentialsError")
        key = self.key_for(row)
        try:
            result = obstore.get(store, key, options={"head": True})
        except FileNotFoundError:
            # Named, so that a Failed row says where the worker looked.
            return model.Verdict(model.MISSING, error=f"bucket {self.bucket!r}, key {key!r}")
        except _OBSTORE_CONFIG_ERRORS as err:
            return model.Verdict(model.CONFIG_ERROR, error=_error_text(err))
        except ValueError as err:
            # obstore refuses the key itself (an empty segment, "." or ".."): the template.
            return model.Verdict(model.CONFIG_ERROR, error=type(err).__name__)
        except BaseError as err:
            return model.Verdict(model.TRANSIENT, error=_error_text(err))
        return parse_metadata(key, head_dict(result.meta["size"], result.attributes))
