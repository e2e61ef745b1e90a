"""The file-storage check: HEAD the recording's object in S3 and classify the answer.

Outcomes (``apply_outcome``'s vocabulary): ``found`` with the adopted metadata, ``missing``
(404 on the object, and only once the bucket was confirmed this cycle: a HEAD on a missing
bucket is a bare 404 too), ``transient`` (timeouts, connection errors, 5xx, throttling),
``config_error`` (missing bucket, access denied, bad credentials) and ``invalid_metadata``
(binary present, metadata unusable). Error texts are an exception class and a code: never a
URL, never a message that could quote one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    NoCredentialsError,
    ParamValidationError,
    PartialCredentialsError,
)

from driver.config import Settings
from driver.queries import ClaimedRow

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

FOUND = "found"
MISSING = "missing"
TRANSIENT = "transient"
INVALID_METADATA = "invalid_metadata"
CONFIG_ERROR = "config_error"

# Seven days: a call recording longer than that is a corrupt value, not a long call.
MAX_DURATION_SECONDS = 7 * 24 * 3600
MAX_FILE_ID_LENGTH = 1024

FORMATS = {"webm": "Webm", "mp4": "Mp4", "ogg": "Ogg", "m4a": "M4a"}
CONTENT_TYPE_FORMATS = {
    "audio/webm": "Webm",
    "video/webm": "Webm",
    "video/mp4": "Mp4",
    "audio/mp4": "Mp4",
    "audio/ogg": "Ogg",
    "video/ogg": "Ogg",
    "audio/x-m4a": "M4a",
    "audio/m4a": "M4a",
    "audio/mp4a-latm": "M4a",
}

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_DIGITS = re.compile(r"^[0-9]{1,12}$")

# Codes that mean the deployment is wrong (bucket, credentials, region), not the recording.
_CONFIG_CODES = frozenset({
    "AccessDenied", "AllAccessDisabled", "NoSuchBucket", "InvalidBucketName",
    "InvalidAccessKeyId", "SignatureDoesNotMatch", "AuthorizationHeaderMalformed",
    "PermanentRedirect", "InvalidToken", "ExpiredToken", "AccountProblem",
})
_CONFIG_STATUSES = frozenset({301, 400, 401, 403})
_NOT_FOUND_CODES = frozenset({"404", "NoSuchKey", "NotFound"})


@dataclass(frozen=True)
class Verdict:
    """The check's answer for one recording, ready for ``apply_outcome``."""

    outcome: str
    file_id: str | None = None
    size_bytes: int | None = None
    duration_seconds: int | None = None
    format: str | None = None
    error: str | None = None


class StorageConfigError(Exception):
    """The bucket is missing or not ours to read: a configuration failure, not a recording's."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _client_error_parts(err: ClientError) -> tuple[str, int]:
    error: Mapping[str, Any] = err.response.get("Error", {})
    meta: Mapping[str, Any] = err.response.get("ResponseMetadata", {})
    status = int(meta.get("HTTPStatusCode") or 0)
    code = str(error.get("Code") or status or "Unknown")
    return code, status


def _error_text(err: BaseException, code: str | None = None) -> str:
    # botocore names modeled error classes after their code (AccessDenied, NoSuchKey…): say
    # ClientError for all of them so the text is always "class code".
    name = "ClientError" if isinstance(err, ClientError) else type(err).__name__
    return f"{name} {code}" if code else name


def parse_metadata(key: str, head: Mapping[str, Any]) -> Verdict:
    """The ``found`` verdict for a HEAD answer, or ``invalid_metadata`` with a short reason."""

    def invalid(reason: str) -> Verdict:
        return Verdict(INVALID_METADATA, error=reason)

    metadata = {str(k).lower(): str(v) for k, v in (head.get("Metadata") or {}).items()}

    size = head.get("ContentLength")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return invalid("Content-Length is missing or negative")

    raw_duration = metadata.get("duration-seconds")
    if raw_duration is None:
        return invalid("duration-seconds metadata is missing")
    raw_duration = raw_duration.strip()
    # isascii first: int() would accept other scripts' digits, and NaN/negatives fail the regex.
    if not raw_duration.isascii() or not _DIGITS.match(raw_duration):
        return invalid("duration-seconds is not an integer >= 0")
    duration = int(raw_duration)
    if duration > MAX_DURATION_SECONDS:
        return invalid(f"duration-seconds is more than {MAX_DURATION_SECONDS} (7 days)")

    raw_format = metadata.get("format")
    if raw_format is not None:
        fmt = FORMATS.get(raw_format.strip().lower()) if raw_format.isascii() else None
        if fmt is None:
            return invalid("format is not one of Webm, Mp4, Ogg, M4a")
    else:
        content_type = str(head.get("ContentType") or "").split(";", 1)[0].strip().lower()
        fmt = CONTENT_TYPE_FORMATS.get(content_type)
        if fmt is None:
            return invalid("no format metadata and the Content-Type names no known format")

    file_id = metadata.get("file-id")
    if file_id is not None:
        file_id = file_id.strip()
        if not file_id or not file_id.isascii() or not file_id.isprintable():
            return invalid("file-id is empty or not printable ASCII")
        if _URL.match(file_id):
            return invalid("file-id is a URL, not a storage reference")
        if len(file_id) > MAX_FILE_ID_LENGTH:
            return invalid(f"file-id is longer than {MAX_FILE_ID_LENGTH} characters")
    else:
        file_id = key

    return Verdict(FOUND, file_id=file_id, size_bytes=size, duration_seconds=duration, format=fmt)


class Storage:
    """One boto3 S3 client, shared by the check threads (boto3 clients are thread-safe)."""

    def __init__(self, settings: Settings, client: S3Client | None = None) -> None:
        self._settings = settings
        self.bucket = settings.s3_bucket
        self._client = client if client is not None else self._make_client(settings)

    @staticmethod
    def _make_client(settings: Settings) -> S3Client:
        # Two attempts of at most connect + read each: the timeouts are a quarter of
        # RFR_S3_TIMEOUT so that one check, retry included, stays near that limit.
        per_call = settings.s3_timeout / 4
        config = Config(
            region_name=settings.s3_region,
            connect_timeout=per_call,
            read_timeout=per_call,
            retries={"mode": "standard", "total_max_attempts": 2},
            max_pool_connections=settings.s3_concurrency + 2,
            s3={"addressing_style": "path"} if settings.s3_endpoint_url else None,
            user_agent_extra="recording-finalize",
        )
        session = boto3.session.Session(
            aws_access_key_id=settings.aws_access_key_id,
            aws_secret_access_key=settings.aws_secret_access_key,
            aws_session_token=settings.aws_session_token,
            region_name=settings.s3_region,
        )
        return session.client("s3", endpoint_url=settings.s3_endpoint_url, config=config)

    def key_for(self, row: ClaimedRow) -> str:
        return self._settings.s3_key_template.format(
            recording_id=row.recording_id,
            session_id=row.session_id,
            session_kind=row.session_kind,
        )

    def check_bucket(self) -> bool:
        """HeadBucket: True when the bucket is confirmed, False when storage is unreachable
        (rows then get ``transient``). Raises ``StorageConfigError`` when the bucket is missing
        or access is denied."""
        try:
            self._client.head_bucket(Bucket=self.bucket)
        except ClientError as err:
            code, status = _client_error_parts(err)
            if status == 404 or code in _NOT_FOUND_CODES or code == "NoSuchBucket":
                raise StorageConfigError("NoSuchBucket") from err
            if code in _CONFIG_CODES or status in _CONFIG_STATUSES:
                raise StorageConfigError(code if not code.isdigit() else "AccessDenied") from err
            return False
        except (NoCredentialsError, PartialCredentialsError, ParamValidationError) as err:
            raise StorageConfigError(type(err).__name__) from err
        except BotoCoreError:
            return False
        return True

    def check(self, row: ClaimedRow, bucket_confirmed: bool) -> Verdict:
        """HEADs the recording's object and classifies the answer."""
        key = self.key_for(row)
        try:
            head = self._client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as err:
            code, status = _client_error_parts(err)
            if status == 404 or code in _NOT_FOUND_CODES:
                if bucket_confirmed:
                    return Verdict(MISSING)
                # The 404 may be the bucket's: never fail a recording on it.
                return Verdict(TRANSIENT, error=f"{_error_text(err, code)} (bucket unconfirmed)")
            if code in _CONFIG_CODES or status in _CONFIG_STATUSES:
                return Verdict(CONFIG_ERROR, error=_error_text(err, code))
            return Verdict(TRANSIENT, error=_error_text(err, code))
        except (NoCredentialsError, PartialCredentialsError, ParamValidationError) as err:
            return Verdict(CONFIG_ERROR, error=_error_text(err))
        except BotoCoreError as err:
            return Verdict(TRANSIENT, error=_error_text(err))
        return parse_metadata(key, dict(head))
