"""Seeding the bench's binaries fast: SigV4-signed PUTs over keep-alive connections, in threads.

boto3 uploads a few hundred small objects per second here; 20,000 of them would eat a minute of
the bench's budget. The stand-in binaries are small and the payload is sent unsigned
(``UNSIGNED-PAYLOAD``, which S3 and SeaweedFS accept over plain HTTP from a signed request).
Bench-only: the worker never writes to the storage.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import http.client
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

UNSIGNED = "UNSIGNED-PAYLOAD"


@dataclass(frozen=True)
class Endpoint:
    url: str
    access_key: str
    secret_key: str
    region: str

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Endpoint:
        return cls(env["S3_ENDPOINT_URL"], env["AWS_ACCESS_KEY_ID"],
                   env["AWS_SECRET_ACCESS_KEY"], env.get("AWS_DEFAULT_REGION", "us-east-1"))


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


class Putter:
    """One keep-alive connection per thread; ``put`` raises on anything but 200."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        parts = urllib.parse.urlsplit(endpoint.url)
        self._host = parts.netloc
        self._hostname = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._local = threading.local()

    def _conn(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(self._hostname, self._port, timeout=30)
            self._local.conn = conn
        return conn

    def put(self, bucket: str, key: str, body: bytes, content_type: str,
            metadata: Mapping[str, str]) -> None:
        ep = self.endpoint
        amz_date = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        day = amz_date[:8]
        path = "/" + urllib.parse.quote(f"{bucket}/{key}", safe="/-_.~")
        headers = {
            "content-type": content_type,
            "host": self._host,
            "x-amz-content-sha256": UNSIGNED,
            "x-amz-date": amz_date,
            **{f"x-amz-meta-{k.lower()}": v for k, v in metadata.items()},
        }
        names = sorted(headers)
        canonical = "\n".join([
            "PUT", path, "",
            "".join(f"{n}:{headers[n].strip()}\n" for n in names),
            ";".join(names), UNSIGNED,
        ])
        scope = f"{day}/{ep.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        key_ = _hmac(_hmac(_hmac(_hmac(f"AWS4{ep.secret_key}".encode(), day), ep.region), "s3"),
                     "aws4_request")
        signature = hmac.new(key_, to_sign.encode(), hashlib.sha256).hexdigest()
        send = dict(headers)
        del send["host"]
        send["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={ep.access_key}/{scope}, "
                                 f"SignedHeaders={';'.join(names)}, Signature={signature}")
        send["Content-Length"] = str(len(body))
        for attempt in (1, 2):
            conn = self._conn()
            try:
                conn.request("PUT", path, body=body, headers=send)
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
                continue
            if resp.status != 200:
                raise RuntimeError(f"PUT {key}: HTTP {resp.status} {data[:200]!r}")
            return


def put_many(endpoint: Endpoint, bucket: str,
             objects: Iterable[tuple[str, bytes, str, Mapping[str, str]]],
             threads: int = 8) -> int:
    """Uploads (key, body, content_type, metadata) tuples; returns how many."""
    putter = Putter(endpoint)
    done = 0
    with ThreadPoolExecutor(threads, thread_name_prefix="seed-put") as pool:
        for _ in pool.map(lambda o: putter.put(bucket, *o), objects):
            done += 1
    return done
