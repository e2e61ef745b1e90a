"""The file-storage check: HEAD the recording's object in S3 and classify the answer.

Outcomes (``apply_outcome``'s vocabulary): ``found`` with the adopted metadata, ``missing``
(404 on the object, and only once the bucket was confirmed this cycle: a HEAD on a missing
bucket is a bare 404 too), ``transient`` (timeouts, connection errors, 5xx, throttling),
``config_error`` (missing bucket, access denied, bad credentials) and ``invalid_metadata``
(binary present, metadata unusable). Error texts are an exception class and a code: never a
URL, never a message that could quote one.

The HEAD itself goes out through ``SignedHead``: an AWS Signature V4 request signed here and
sent over pooled keep-alive connections. boto3 spends 1.5 to 3 ms of CPU on one ``head_object``
(its event system, parameter validation, its own signer, response parsing); this path spends
about 0.4 ms, and the S3 client is the first throughput ceiling of a backlog drain (see
``docs/benchmarks.md``). botocore still decides everything that is not hot: where the request
goes (the HEAD boto3 would send is built once and captured just before sending, so endpoint,
addressing style and signing region are botocore's), and the credentials (its provider chain,
refreshed as it refreshes them). boto3 remains the arbiter: HeadBucket goes through it, and an
answer the signed path could have caused itself (400, 403, a TLS failure) or that would fail a
recording for good (404) is asked again through boto3 — if boto3 disagrees, the signed path is
switched off for good.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import random
import re
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
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

from .config import Settings
from .logs import log
from .queries import ClaimedRow

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
# Answers the signed path could have caused itself (a signing or TLS mismatch): boto3 decides.
_ASK_BOTO3_STATUSES = frozenset({400, 403})
# Answers worth one more attempt, as botocore's standard retry mode does.
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_META_PREFIX = "x-amz-meta-"


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


def _classify(code: str, status: int, text: str, bucket_confirmed: bool) -> Verdict:
    """The verdict for an S3 error answer to a HEAD (``text`` is what ``last_error`` says)."""
    if status == 404 or code in _NOT_FOUND_CODES:
        if bucket_confirmed:
            return Verdict(MISSING)
        # The 404 may be the bucket's: never fail a recording on it.
        return Verdict(TRANSIENT, error=f"{text} (bucket unconfirmed)")
    if code in _CONFIG_CODES or status in _CONFIG_STATUSES:
        return Verdict(CONFIG_ERROR, error=text)
    return Verdict(TRANSIENT, error=text)


class TransportError(Exception):
    """The signed HEAD got no HTTP answer; ``name`` is what botocore would call the failure."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _Captured(Exception):
    """Stops boto3 right before it would send the request it built."""


class SignedHead:
    """HEAD Object with a hand-made AWS Signature V4, over pooled keep-alive connections.

    ``from_client`` learns the target from the boto3 client: it has it build and sign a HEAD,
    captures it on ``before-send`` and keeps its scheme, host, path prefix and signing region.
    ``head(key)`` returns ``(status, headers)``, raises ``TransportError`` when no answer came.
    Thread-safe: a connection is used by one thread at a time and goes back to the pool.
    """

    def __init__(self, url: str, region: str, credentials: Any, timeout_s: float,
                 max_idle: int) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"unsupported endpoint scheme {parts.scheme!r}")
        self._https = parts.scheme == "https"
        self._host = parts.netloc
        self._hostname = parts.hostname
        self._port = parts.port
        self._prefix = parts.path
        self._region = region
        self._credentials = credentials  # botocore Credentials (may refresh itself)
        self._timeout_s = timeout_s
        self._max_idle = max_idle
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._ssl = ssl.create_default_context() if self._https else None
        self._keys: dict[tuple[str, str], bytes] = {}

    @classmethod
    def from_client(cls, client: S3Client, bucket: str, credentials: Any, timeout_s: float,
                    max_idle: int) -> SignedHead | None:
        """The signed path for ``client``'s requests to ``bucket``, or None when it cannot
        reproduce them (no credentials, a proxy, an unexpected request shape)."""
        if credentials is None:
            return None
        probe = "rfr-probe"
        seen: dict[str, Any] = {}

        def capture(request: Any, **_: Any) -> None:
            seen["url"] = request.url
            seen["auth"] = request.headers.get("Authorization")
            raise _Captured

        client.meta.events.register("before-send.s3.HeadObject", capture)
        try:
            client.head_object(Bucket=bucket, Key=probe)
        except _Captured:
            pass
        except (BotoCoreError, ClientError):
            return None
        finally:
            client.meta.events.unregister("before-send.s3.HeadObject", capture)
        url, auth = seen.get("url"), seen.get("auth")
        if isinstance(auth, bytes):
            auth = auth.decode("ascii", "replace")
        if not isinstance(url, str) or not isinstance(auth, str):
            return None
        scope = re.search(r"Credential=[^/]+/\d{8}/([^/]+)/s3/aws4_request", auth)
        parts = urllib.parse.urlsplit(url)
        if (not auth.startswith("AWS4-HMAC-SHA256 ") or scope is None or parts.query
                or not parts.path.endswith("/" + probe)):
            return None
        if parts.hostname and (urllib.request.getproxies().get(parts.scheme)
                               and not urllib.request.proxy_bypass(parts.hostname)):
            return None  # boto3 goes through the proxy; this path would not
        base = urllib.parse.urlunsplit(
            (parts.scheme, parts.netloc, parts.path[: -len(probe)], "", ""))
        try:
            return cls(base, scope.group(1), credentials, timeout_s, max_idle)
        except ValueError:
            return None

    def _signing_key(self, secret: str, day: str) -> bytes:
        cached = self._keys.get((secret, day))
        if cached is None:
            key = f"AWS4{secret}".encode()
            for part in (day, self._region, "s3", "aws4_request"):
                key = hmac.new(key, part.encode(), hashlib.sha256).digest()
            self._keys = {(secret, day): key}  # one day, one secret at a time
            cached = key
        return cached

    def _headers(self, path: str) -> dict[str, str]:
        creds = self._credentials.get_frozen_credentials()
        amz_date = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        day = amz_date[:8]
        headers = {"host": self._host, "x-amz-content-sha256": _EMPTY_SHA256,
                   "x-amz-date": amz_date}
        if creds.token:
            headers["x-amz-security-token"] = creds.token
        names = ";".join(headers)  # already in sorted order
        canonical = (f"HEAD\n{path}\n\n"
                     + "".join(f"{name}:{value}\n" for name, value in headers.items())
                     + f"\n{names}\n{_EMPTY_SHA256}")
        scope = f"{day}/{self._region}/s3/aws4_request"
        to_sign = (f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n"
                   + hashlib.sha256(canonical.encode()).hexdigest())
        signature = hmac.new(self._signing_key(creds.secret_key, day), to_sign.encode(),
                             hashlib.sha256).hexdigest()
        headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={creds.access_key}/{scope}, "
                                    f"SignedHeaders={names}, Signature={signature}")
        headers["Host"] = headers.pop("host")
        return headers

    def _take(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        if self._https:
            return http.client.HTTPSConnection(self._hostname, self._port,
                                               timeout=self._timeout_s, context=self._ssl), False
        return http.client.HTTPConnection(self._hostname, self._port,
                                          timeout=self._timeout_s), False

    def _give(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def _once(self, path: str) -> tuple[int, http.client.HTTPMessage, bool]:
        conn, reused = self._take()
        try:
            if conn.sock is None:
                conn.connect()
        except ssl.SSLError as err:
            conn.close()
            raise TransportError("SSLError") from err
        except TimeoutError as err:
            conn.close()
            raise TransportError("ConnectTimeoutError") from err
        except OSError as err:
            conn.close()
            raise TransportError("EndpointConnectionError") from err
        try:
            conn.request("HEAD", path, headers=self._headers(path))
            response = conn.getresponse()
            response.read()
        except TimeoutError as err:
            conn.close()
            raise TransportError("ReadTimeoutError") from err
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            # A pooled connection the server closed meanwhile: the request never arrived.
            raise TransportError("StaleConnection" if reused else "ConnectionClosedError") from err
        if response.will_close:
            conn.close()
        else:
            self._give(conn)
        return response.status, response.headers, reused

    def head(self, key: str) -> tuple[int, http.client.HTTPMessage]:
        """Two attempts at most (as the boto3 client is configured), plus a free one when a
        pooled keep-alive connection turned out to be closed by the server."""
        path = self._prefix + urllib.parse.quote(key, safe="/~")
        attempts = 0
        while True:
            try:
                status, headers, _ = self._once(path)
            except TransportError as err:
                if err.name == "StaleConnection":
                    continue  # not an attempt: the pool's connection was dead
                attempts += 1
                if attempts >= 2 or err.name == "SSLError":
                    raise
            else:
                attempts += 1
                if status not in _RETRY_STATUSES or attempts >= 2:
                    return status, headers
            time.sleep(random.uniform(0.05, 0.2))

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _head_dict(headers: http.client.HTTPMessage) -> dict[str, Any]:
    """The parts of a HEAD answer ``parse_metadata`` reads, shaped as boto3 returns them."""
    raw_length = headers.get("Content-Length")
    length = int(raw_length) if raw_length is not None and raw_length.isdigit() else None
    metadata = {name[len(_META_PREFIX):].lower(): value for name, value in headers.items()
                if name.lower().startswith(_META_PREFIX)}
    return {"ContentLength": length, "ContentType": headers.get("Content-Type"),
            "Metadata": metadata}


class Storage:
    """One boto3 S3 client, shared by the check threads (boto3 clients are thread-safe)."""

    def __init__(self, settings: Settings, client: S3Client | None = None) -> None:
        self._settings = settings
        self.bucket = settings.s3_bucket
        # A client handed in (tests: botocore's Stubber) is used for everything.
        self._signed: SignedHead | None = None
        if client is not None:
            self._client = client
        else:
            session = self._session(settings)
            self._client = self._make_client(settings, session)
            self._signed = SignedHead.from_client(
                self._client, self.bucket, session.get_credentials(),
                timeout_s=settings.s3_timeout / 4, max_idle=settings.s3_concurrency + 2)

    @property
    def signed(self) -> bool:
        """True while HEADs go through the signed path (False: boto3 for everything)."""
        return self._signed is not None

    @staticmethod
    def _session(settings: Settings) -> boto3.session.Session:
        return boto3.session.Session(
            aws_access_key_id=settings.aws_access_key_id,
            aws_secret_access_key=settings.aws_secret_access_key,
            aws_session_token=settings.aws_session_token,
            region_name=settings.s3_region,
        )

    @staticmethod
    def _make_client(settings: Settings, session: boto3.session.Session) -> S3Client:
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
        signed = self._signed
        if signed is not None:
            try:
                status, headers = signed.head(key)
            except TransportError as err:
                if err.name != "SSLError":
                    return Verdict(TRANSIENT, error=err.name)
                return self._arbitrate(key, bucket_confirmed, "a TLS failure",
                                       disagree=(FOUND, MISSING, INVALID_METADATA))
            if status == 200:
                return parse_metadata(key, _head_dict(headers))
            if status in _ASK_BOTO3_STATUSES:
                return self._arbitrate(key, bucket_confirmed, f"HTTP {status}",
                                       disagree=(FOUND, MISSING, INVALID_METADATA))
            if status == 404 and bucket_confirmed:
                # Failed is terminal: a recording fails on a 404 that boto3 saw too, never on
                # the signed path's word alone (a wrong URL would answer 404 for everything).
                return self._arbitrate(key, bucket_confirmed, "HTTP 404",
                                       disagree=(FOUND, INVALID_METADATA))
            return _classify(str(status), status, f"ClientError {status}", bucket_confirmed)
        return self._boto3_check(key, bucket_confirmed)

    def _arbitrate(self, key: str, bucket_confirmed: bool, answer: str,
                   disagree: tuple[str, ...]) -> Verdict:
        """The signed path got an answer it may have caused itself, or one that would end a
        recording: boto3 asks again, and its verdict stands. If boto3 got an answer that
        contradicts the signed one (an outcome in ``disagree``), the signed path is wrong for
        this deployment and is switched off for good."""
        verdict = self._boto3_check(key, bucket_confirmed)
        signed = self._signed
        if verdict.outcome in disagree and signed is not None:
            self._signed = None
            signed.close()
            log("s3 signed head disabled", level="warning", answer=answer,
                outcome=verdict.outcome,
                message="boto3 was answered where the signed HEAD was refused: every HEAD "
                "goes through boto3 from now on (slower, same verdicts)")
        return verdict

    def _boto3_check(self, key: str, bucket_confirmed: bool) -> Verdict:
        try:
            head = self._client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as err:
            code, status = _client_error_parts(err)
            return _classify(code, status, _error_text(err, code), bucket_confirmed)
        except (NoCredentialsError, PartialCredentialsError, ParamValidationError) as err:
            return Verdict(CONFIG_ERROR, error=_error_text(err))
        except BotoCoreError as err:
            return Verdict(TRANSIENT, error=_error_text(err))
        return parse_metadata(key, dict(head))

    def close(self) -> None:
        """Closes the signed path's idle connections."""
        if self._signed is not None:
            self._signed.close()
