"""The per-row HEAD as the driver sent it before obstore, kept for ONE comparison in make bench.

``SignedHead`` is the hand-made client ``driver/storage.py`` used until it moved to obstore: an
AWS Signature V4 HEAD signed here and sent over a pool of ``http.client`` keep-alive
connections, its target captured from the request boto3 would send. It lives on only so that
the levers figure can measure it beside obstore in the same run (``BENCH_S3_HEAD=signed``), and
``BENCH_S3_HEAD=boto3`` measures boto3's own ``head_object``. Nothing in the product imports
this module. The driver's arbitration (boto3 re-asked on 400/403/TLS failures and on every 404)
is not reproduced: the bench's objects all exist, so the happy path — what a drain costs — is
the same.
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
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from recording_finalize.config import Settings
from recording_finalize.model import CONFIG_ERROR, MISSING, TRANSIENT, ClaimedRow, Verdict
from recording_finalize.storage import Storage, _session, parse_metadata

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_CONFIG_STATUSES = frozenset({301, 400, 401, 403})
# Answers worth one more attempt, as botocore's standard retry mode does.
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_META_PREFIX = "x-amz-meta-"


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




def _boto3_client(settings: Settings) -> S3Client:
    """boto3's client as the driver configured it before obstore (a pool for the threads)."""
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
    return _session(settings).client("s3", endpoint_url=settings.s3_endpoint_url,
                                     config=config)


def _status_verdict(status: int) -> Verdict:
    if status == 404:
        return Verdict(MISSING)
    if status in _CONFIG_STATUSES:
        return Verdict(CONFIG_ERROR, error=f"ClientError {status}")
    return Verdict(TRANSIENT, error=f"ClientError {status}")


class SignedStorage(Storage):
    """The driver's ``Storage`` with the per-row HEAD of before: ``SignedHead``."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        signed = SignedHead.from_client(
            _boto3_client(settings), self.bucket, _session(settings).get_credentials(),
            timeout_s=settings.s3_timeout / 4, max_idle=settings.s3_concurrency + 2)
        if signed is None:
            raise SystemExit("the hand-signed HEAD cannot reproduce this client's requests")
        self._signed = signed

    def check(self, row: ClaimedRow) -> Verdict:
        key = self.key_for(row)
        try:
            status, headers = self._signed.head(key)
        except TransportError as err:
            return Verdict(TRANSIENT, error=err.name)
        if status == 200:
            return parse_metadata(key, _head_dict(headers))
        return _status_verdict(status)

    def close(self) -> None:
        self._signed.close()


class Boto3Storage(Storage):
    """The driver's ``Storage`` with every HEAD through boto3's ``head_object``."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self._heads = _boto3_client(settings)

    def check(self, row: ClaimedRow) -> Verdict:
        key = self.key_for(row)
        try:
            head = self._heads.head_object(Bucket=self.bucket, Key=key)
        except ClientError as err:
            status = int(err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
            return _status_verdict(status)
        except BotoCoreError as err:
            return Verdict(TRANSIENT, error=type(err).__name__)
        return parse_metadata(key, dict(head))


CLIENTS: dict[str, type[Storage]] = {
    "obstore": Storage, "signed": SignedStorage, "boto3": Boto3Storage}


def storage_for(name: str, settings: Settings) -> Storage:
    """The storage the bench's ``BENCH_S3_HEAD=name`` asks for (obstore: the driver's own)."""
    try:
        return CLIENTS[name](settings)
    except KeyError:
        raise SystemExit(f"unknown BENCH_S3_HEAD {name!r}: one of {', '.join(CLIENTS)}") from None
