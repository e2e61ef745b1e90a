"""The hand-signed S3 HEAD (``storage.SignedHead``) keeps the guarantees of boto3's.

It reaches the same verdicts as boto3 on the same objects, classifies the same answers the same
way, signs as botocore signs (region, session token), and hands anything it may have caused
itself (400/403, TLS) to boto3, switching itself off for good if boto3 disagrees.
"""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from conftest import Worker, put_binary
from recording_finalize.config import load_settings
from recording_finalize.queries import ClaimedRow
from recording_finalize.storage import SignedHead, Storage, Verdict


def _row(recording_id: uuid.UUID) -> ClaimedRow:
    return ClaimedRow(recording_id, "Direct", uuid.uuid4(), "reconcile", 1, uuid.uuid4(), 2,
                      "Uploading")


# --- SignedHead against the real SeaweedFS ---------------------------------------------------


def test_signed_and_boto3_heads_reach_the_same_verdicts(worker: Worker) -> None:
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
    rows["missing"] = _row(uuid.uuid4())

    settings = load_settings(worker.environ())
    signed = Storage(settings)
    assert signed.signed, "the signed path should be on against a plain S3 endpoint"
    plain = Storage(settings, client=signed._client)  # a client handed in: boto3 only
    assert not plain.signed
    for name, row in rows.items():
        for confirmed in (True, False):
            assert signed.check(row, confirmed) == plain.check(row, confirmed), name
    assert signed.check(rows["plain"], True).outcome == "found"
    assert signed.check(rows["negative"], True).outcome == "invalid_metadata"
    assert signed.check(rows["missing"], True).outcome == "missing"
    assert signed.signed  # nothing switched it off


def test_a_dead_endpoint_is_transient_with_botocores_name(worker: Worker) -> None:
    from conftest import free_port

    settings = load_settings(worker.environ(
        S3_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}", RFR_S3_TIMEOUT="2s"))
    storage = Storage(settings)
    assert storage.signed
    verdict = storage.check(_row(uuid.uuid4()), bucket_confirmed=True)
    assert verdict == Verdict("transient", error="EndpointConnectionError")


# --- SignedHead against a scripted server ----------------------------------------------------


class _Scripted(http.server.BaseHTTPRequestHandler):
    statuses: ClassVar[list[int]] = []
    seen: ClassVar[list[dict[str, str]]] = []

    def do_HEAD(self) -> None:
        type(self).seen.append(dict(self.headers))
        status = type(self).statuses.pop(0) if type(self).statuses else 200
        self.send_response(status)
        self.send_header("Content-Length", "5")
        self.send_header("Content-Type", "audio/ogg")
        self.send_header("x-amz-meta-duration-seconds", "9")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def scripted() -> Iterator[tuple[str, type[_Scripted]]]:
    handler = type("Handler", (_Scripted,), {"statuses": [], "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


class _Creds:
    def get_frozen_credentials(self) -> Any:
        from botocore.credentials import ReadOnlyCredentials

        return ReadOnlyCredentials("AKID", "secret", "session-token")


@pytest.mark.parametrize(
    ("statuses", "confirmed", "outcome", "error", "asks_boto3"),
    [
        ([404], True, "missing", None, True),  # a 404 that fails a recording: boto3 confirms
        ([404], False, "transient", "ClientError 404 (bucket unconfirmed)", False),
        ([503, 503], True, "transient", "ClientError 503", False),
        ([503, 200], True, "found", None, False),  # one retry, as botocore's standard mode
        ([500, 404], True, "missing", None, True),
        ([301], True, "config_error", "ClientError 301", False),
    ],
)
def test_signed_answers_are_classified_like_boto3s(
    scripted: tuple[str, type[_Scripted]], statuses: list[int], confirmed: bool, outcome: str,
    error: str | None, asks_boto3: bool,
) -> None:
    url, handler = scripted
    handler.statuses.extend(statuses)
    head = SignedHead(url + "/call-recordings/", "eu-west-1", _Creds(), timeout_s=2,
                      max_idle=2)
    settings = load_settings({"DATABASE_URL": "postgresql://u@h/d"})
    boto3_client = _NoBoto3(missing=asks_boto3)
    storage = Storage(settings, client=boto3_client)  # type: ignore[arg-type]
    storage._signed = head
    verdict = storage.check(_row(uuid.uuid4()), confirmed)
    assert (verdict.outcome, verdict.error) == (outcome, error)
    assert boto3_client.calls == (1 if asks_boto3 else 0)
    assert storage.signed  # boto3 agreed, or was not asked
    # Signed like botocore signs: the region of the client, the session token signed too.
    auth = handler.seen[0]["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKID/")
    assert "/eu-west-1/s3/aws4_request" in auth
    assert "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token" in auth
    assert handler.seen[0]["x-amz-security-token"] == "session-token"


class _NoBoto3:
    """A stand-in boto3 client: answers ``answer``, or a 404 with ``missing``, or must not be
    asked at all."""

    def __init__(self, answer: dict[str, Any] | None = None, missing: bool = False) -> None:
        self.answer = answer
        self.missing = missing
        self.calls = 0

    def head_object(self, **_: Any) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        self.calls += 1
        if self.missing:
            raise ClientError({"Error": {"Code": "404", "Message": "Not Found"},
                               "ResponseMetadata": {"HTTPStatusCode": 404}}, "HeadObject")
        if self.answer is None:
            raise AssertionError("boto3 was asked")
        return self.answer


@pytest.mark.parametrize("status", [403, 404])
def test_an_answer_boto3_contradicts_switches_the_signed_path_off(
    scripted: tuple[str, type[_Scripted]], status: int,
) -> None:
    url, handler = scripted
    handler.statuses.append(status)
    settings = load_settings({"DATABASE_URL": "postgresql://u@h/d"})
    boto3_says = _NoBoto3({"ContentLength": 5, "ContentType": "audio/ogg",
                           "Metadata": {"duration-seconds": "9"}})
    storage = Storage(settings, client=boto3_says)  # type: ignore[arg-type]
    storage._signed = SignedHead(url + "/b/", "us-east-1", _Creds(), timeout_s=2, max_idle=2)
    verdict = storage.check(_row(uuid.uuid4()), bucket_confirmed=True)
    assert verdict.outcome == "found" and boto3_says.calls == 1
    assert not storage.signed  # boto3 got through where the signed HEAD was refused
    storage.check(_row(uuid.uuid4()), bucket_confirmed=True)
    assert boto3_says.calls == 2 and len(handler.seen) == 1
