"""The per-row S3 HEAD through obstore keeps the verdict table of the boto3 path it replaced.

Against the real SeaweedFS: the same verdicts as boto3's ``head_object`` on the same objects,
a 404 is ``missing`` named by bucket and key (whether it is believed, with the bucket
unconfirmed, is ``outcome_decision``'s: pgTAP), a dead endpoint is ``transient``. Against a
tiny local HTTP server (a real server on a loopback port, not a mock: it only answers the
statuses and the silences SeaweedFS cannot produce on demand): every status class, obstore's
retries, the per-row time limit, the request signed with the region and the session token
boto3's credential chain resolved, and checks that overlap in the cycle's threads.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import pytest
from conftest import DEAD_PORT, Worker, put_binary
from recording_finalize.config import load_settings
from recording_finalize.model import ClaimedRow, Verdict
from recording_finalize.storage import Storage, StorageConfigError, make_store, parse_metadata


def _row(recording_id: uuid.UUID | None = None) -> ClaimedRow:
    return ClaimedRow(recording_id or uuid.uuid4(), "Direct", uuid.uuid4(), "reconcile", 1,
                      uuid.uuid4(), 2, "Uploading")


# --- against the real SeaweedFS --------------------------------------------------------------


def test_obstore_and_boto3_heads_reach_the_same_verdicts(worker: Worker) -> None:
    objects = {
        "plain": ({"duration-seconds": "42", "format": "webm"}, "audio/webm"),
        "from-content-type": ({"duration-seconds": "7"}, "video/mp4"),
        "file-id": ({"duration-seconds": "1", "format": "ogg", "file-id": "files/abc"},
                    "audio/ogg"),
        "negative": ({"duration-seconds": "-5", "format": "webm"}, "audio/webm"),
        "nan": ({"duration-seconds": "NaN"}, "audio/webm"),
        "unknown-format": ({"duration-seconds": "3"}, "application/octet-stream"),
    }
    rows = {}
    for name, (meta, ctype) in objects.items():
        rid = uuid.uuid4()
        put_binary(worker.stack, worker.bucket, rid, metadata=meta, content_type=ctype,
                   size=100 + len(name))
        rows[name] = _row(rid)
    rows["missing"] = _row()

    settings = load_settings(worker.environ())
    storage = Storage(settings)
    assert storage.check_bucket() is True
    s3 = worker.stack.s3()
    for name, row in rows.items():
        key = storage.key_for(row)
        try:
            expected = parse_metadata(key, s3.head_object(Bucket=worker.bucket, Key=key))
        except s3.exceptions.ClientError:
            # A 404 names where the worker looked (a Failed row's last_error says it).
            expected = Verdict("missing", error=f"bucket {worker.bucket!r}, key {key!r}")
        assert storage.check(row) == expected, name
    assert storage.check(rows["plain"]) == Verdict(
        "found", file_id=storage.key_for(rows["plain"]), size_bytes=105, duration_seconds=42,
        format="Webm")
    assert storage.check(rows["file-id"]).file_id == "files/abc"
    # Converted as it is, never judged here: apply_outcome quarantines it (metadata_problem).
    assert storage.check(rows["negative"]).duration_seconds == -5


def test_a_bucket_the_head_client_cannot_see_is_not_confirmed(worker: Worker) -> None:
    """boto3 confirms the bucket, but the HEADs would go elsewhere (here: another bucket, as a
    divergent endpoint or addressing would): the cycle reports the bucket unconfirmed, and
    outcome_decision then believes no 404 (pgTAP: outcome_decision/believed_404)."""
    settings = load_settings(worker.environ())
    elsewhere = load_settings(worker.environ(RFR_S3_BUCKET=f"rfr-absent-{uuid.uuid4().hex[:8]}"))
    from recording_finalize.storage import _session

    store = make_store(elsewhere, _session(elsewhere))
    assert store is not None
    storage = Storage(settings, store=store)
    assert storage.check_bucket() is False
    # The same storage with its own store confirms the bucket.
    same = Storage(settings)
    assert same.check_bucket() is True
    row = _row()
    assert same.check(row) == Verdict(
        "missing", error=f"bucket {settings.s3_bucket!r}, key {same.key_for(row)!r}")


def test_a_dead_endpoint_is_transient(worker: Worker) -> None:
    settings = load_settings(worker.environ(
        S3_ENDPOINT_URL=f"http://127.0.0.1:{DEAD_PORT}", RFR_S3_TIMEOUT="2s"))
    storage = Storage(settings)
    assert storage.check_bucket() is False
    t0 = time.monotonic()
    verdict = storage.check(_row())
    assert verdict == Verdict("transient", error="GenericError")
    assert time.monotonic() - t0 < 2.0


def test_no_credentials_anywhere_is_a_configuration_failure(
    worker: Worker, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    settings = load_settings(worker.environ(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None))
    storage = Storage(settings)
    with pytest.raises(StorageConfigError) as err:
        storage.check_bucket()
    assert err.value.code == "NoCredentialsError"
    assert storage.check(_row()) == Verdict("config_error", error="NoCredentialsError")


# --- against a scripted local HTTP server ----------------------------------------------------


class _Scripted(http.server.BaseHTTPRequestHandler):
    """Answers each HEAD with the next status of ``statuses`` (200 with metadata when they
    run out); a status of 0 means: say nothing for ``silence_s``, then close."""

    protocol_version = "HTTP/1.1"
    statuses: ClassVar[list[int]] = []
    seen: ClassVar[list[dict[str, str]]] = []
    delay_s: ClassVar[float] = 0.0
    silence_s: ClassVar[float] = 5.0
    raw_header: ClassVar[bytes] = b""

    def do_HEAD(self) -> None:
        cls = type(self)
        cls.seen.append({k.lower(): v for k, v in self.headers.items()})
        status = cls.statuses.pop(0) if cls.statuses else 200
        if status == 0:
            time.sleep(cls.silence_s)
            self.close_connection = True
            return
        time.sleep(cls.delay_s)
        self.send_response(status)
        self.send_header("Content-Length", "5")
        if status == 200:
            self.send_header("Content-Type", "audio/ogg")
            self.send_header("x-amz-meta-duration-seconds", "9")
        if cls.raw_header:
            self._headers_buffer.append(cls.raw_header)  # type: ignore[attr-defined]
        self.end_headers()

    def do_GET(self) -> None:  # the bucket probe (ListObjectsV2)
        body = (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
                b"<Name>call-recordings</Name><KeyCount>0</KeyCount>"
                b"<IsTruncated>false</IsTruncated></ListBucketResult>")
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def scripted() -> Iterator[tuple[str, type[_Scripted]]]:
    handler = type("Handler", (_Scripted,), {"statuses": [], "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _storage(url: str, **env: str) -> Storage:
    return Storage(load_settings({
        "DATABASE_URL": "postgresql://u@h/d", "S3_ENDPOINT_URL": url,
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_SESSION_TOKEN": "session-token", "AWS_REGION": "eu-west-1", **env}))


@pytest.mark.parametrize(
    ("statuses", "outcome", "error", "requests"),
    [
        ([404], "missing", "bucket+key", 1),
        ([503, 503], "transient", "GenericError", 2),  # one retry, then it gives up
        ([503, 200], "found", None, 2),
        ([500, 404], "missing", "bucket+key", 2),
        ([429, 429], "transient", "GenericError", 2),  # throttling
        ([502, 504], "transient", "GenericError", 2),
        ([403], "config_error", "PermissionDeniedError 403", 1),
        ([401], "config_error", "UnauthenticatedError 401", 1),
        # Statuses obstore names no error type for: never final; the cycle's HeadBucket makes
        # the bucket-wide ones (wrong region, wrong endpoint) a configuration failure.
        ([400], "transient", "GenericError", 1),
        ([301], "transient", "GenericError", 1),
    ],
)
def test_answers_are_classified_by_obstores_error_types(
    scripted: tuple[str, type[_Scripted]], statuses: list[int], outcome: str,
    error: str | None, requests: int,
) -> None:
    url, handler = scripted
    handler.statuses.extend(statuses)
    storage = _storage(url)
    row = _row()
    verdict = storage.check(row)
    if error == "bucket+key":  # a 404 names where the worker looked
        error = f"bucket {storage.bucket!r}, key {storage.key_for(row)!r}"
    assert (verdict.outcome, verdict.error) == (outcome, error)
    assert len(handler.seen) == requests
    # Signed with what boto3's chain resolved: the region, and the session token (signed too).
    auth = handler.seen[0]["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/s3/aws4_request" in auth and "x-amz-security-token" in auth
    assert handler.seen[0]["x-amz-security-token"] == "session-token"


@pytest.mark.parametrize(("delay_s", "statuses"), [(0.0, [0, 0]), (3.0, [200, 200])])
def test_a_silent_or_slow_endpoint_is_transient_within_the_row_limit(
    scripted: tuple[str, type[_Scripted]], delay_s: float, statuses: list[int],
) -> None:
    url, handler = scripted
    handler.statuses.extend(statuses)
    handler.delay_s = delay_s
    storage = _storage(url, RFR_S3_TIMEOUT="1s")
    t0 = time.monotonic()
    verdict = storage.check(_row())
    elapsed = time.monotonic() - t0
    assert verdict == Verdict("transient", error="GenericError")
    assert elapsed <= 1.05, elapsed  # RFR_S3_TIMEOUT, the retry included
    assert len(handler.seen) == 2  # and the retry was made


def test_metadata_that_is_not_utf8_is_transient_not_adopted(
    scripted: tuple[str, type[_Scripted]],
) -> None:
    """obstore refuses a metadata value that is not UTF-8 with a GenericError, which names no
    cause: the row backs off (and is quarantined after RFR_MAX_ATTEMPTS) instead of being
    quarantined at once as invalid_metadata, as the boto3 path did. Never adopted, never
    final."""
    url, handler = scripted
    handler.raw_header = b"x-amz-meta-file-id: rec\xe9\xff\r\n"
    verdict = _storage(url).check(_row())
    assert verdict == Verdict("transient", error="GenericError")


def test_checks_overlap_in_the_cycles_threads(scripted: tuple[str, type[_Scripted]]) -> None:
    """obstore releases the GIL while a request is out: 8 checks of 0.4 s in 8 threads take
    about 0.4 s, not 3.2 s (RFR_S3_CONCURRENCY keeps its meaning)."""
    url, handler = scripted
    handler.delay_s = 0.4
    storage = _storage(url)
    t0 = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(lambda _: storage.check(_row()), range(8)))
    assert {v.outcome for v in verdicts} == {"found"}
    assert time.monotonic() - t0 < 1.2


def test_the_bucket_probe_goes_through_the_head_client(
    scripted: tuple[str, type[_Scripted]],
) -> None:
    url, _ = scripted
    storage = _storage(url)

    class _Confirmed:
        def head_bucket(self, **_: Any) -> dict[str, Any]:
            return {}

    storage._client = _Confirmed()  # type: ignore[assignment]  # HeadBucket said yes
    assert storage.check_bucket() is True
    assert storage._store is not None
    # A listener that accepts and never answers: obstore cannot confirm, rows back off.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        mute = _storage(f"http://127.0.0.1:{silent.getsockname()[1]}", RFR_S3_TIMEOUT="1s")
        mute._client = _Confirmed()  # type: ignore[assignment]
        assert mute.check_bucket() is False
