"""Pure-Python rules of the driver: durations, metadata parsing, log redaction.

No service needed; everything else in this folder runs against the real stack.
"""

from __future__ import annotations

import io
import json
import math
import uuid
from typing import Any

import pytest
from recording_finalize import logs
from recording_finalize.config import ConfigError, load_settings, mask_dsn, parse_duration
from recording_finalize.model import FOUND
from recording_finalize.storage import parse_metadata

MINIMAL_ENV = {"DATABASE_URL": "postgresql://w:hunter22@db.example:5432/rfr"}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90.0), ("1.5", 1.5), ("250ms", 0.25), ("30s", 30.0), ("5m", 300.0),
     ("1h", 3600.0), (" 2m ", 120.0), ("0", 0.0)],
)
def test_parse_duration_accepts_seconds_and_units(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "m", "-1", "1d", "nan", "inf", "1e3", "5 minutes", "1.s"])
def test_parse_duration_rejects_anything_else(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


def test_defaults_are_the_spec_defaults() -> None:
    s = load_settings(MINIMAL_ENV)
    assert (s.s3_bucket, s.s3_key_template, s.topic) == (
        "call-recordings", "recordings/{recording_id}", "pin.messenger.call-recording-available.v1")
    assert (s.polling_interval, s.batch_size) == (60.0, 100)
    # The retry policy unset: the server's defaults apply (recording_finalize.policy).
    assert (s.max_attempts, s.finalize_sla_timeout, s.upload_grace, s.backoff_base,
            s.backoff_factor, s.backoff_cap, s.backoff_jitter) == (None,) * 7
    assert (s.lock_ttl, s.max_run_duration, s.s3_timeout, s.metrics_port) == (
        300.0, 180.0, 10.0, 9464)
    assert (s.lock_key, s.s3_concurrency, s.relay_batch_size) == (5928001741300501, 16, 500)
    assert s.recordings_enabled is True
    assert (s.pacing, s.pacing_shared_rate, s.max_apply_rate) == ("adaptive", 50.0, 0.0)
    assert s.s3_region == "us-east-1"
    assert "hunter22" not in repr(s)


def test_aws_region_wins_over_aws_default_region() -> None:
    assert load_settings(MINIMAL_ENV | {"AWS_DEFAULT_REGION": "eu-west-1"}).s3_region == \
        "eu-west-1"
    both = {"AWS_DEFAULT_REGION": "eu-west-1", "AWS_REGION": "eu-central-1"}
    assert load_settings(MINIMAL_ENV | both).s3_region == "eu-central-1"


def test_a_rule_broken_names_the_flag_and_masks_a_secret() -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(MINIMAL_ENV, {"RFR_LOCK_TTL": "1m"})  # not > RFR_MAX_RUN_DURATION (3m)
    assert str(err.value).startswith("RFR_LOCK_TTL (--lock-ttl) must be a duration")
    sasl = {"KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "KAFKA_SASL_MECHANISM": "PLAIN",
            "KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD": "pw-not-shown"}
    assert load_settings(MINIMAL_ENV | sasl).kafka_security_protocol == "SASL_SSL"
    with pytest.raises(ConfigError) as err:
        load_settings(MINIMAL_ENV | sasl | {"KAFKA_SASL_MECHANISM": "md5"})
    assert err.value.variable == "KAFKA_SASL_MECHANISM"
    with pytest.raises(ConfigError) as err:
        load_settings(MINIMAL_ENV | {"DATABASE_URL": "postgresql://u:pw-not-shown@h/db?"
                                                     "sslmode=bogus"})
    assert "with a valid sslmode" in str(err.value) and "pw-not-shown" not in str(err.value)


def test_overrides_win_over_the_environment() -> None:
    s = load_settings(MINIMAL_ENV | {"RFR_BATCH_SIZE": "7"}, {"RFR_BATCH_SIZE": "9"})
    assert s.batch_size == 9
    with pytest.raises(ConfigError) as err:
        load_settings(MINIMAL_ENV, {"RFR_BATCH_SIZE": "0"})
    assert err.value.variable == "RFR_BATCH_SIZE"


@pytest.mark.parametrize(
    "dsn",
    ["postgresql://user:s3cr3t-pw@host:5432/db", "postgresql://user:s3cr3t-pw@host/db?x=1",
     "postgres://user:s3cr3t-pw@/db?host=/tmp", "host=h password=s3cr3t-pw dbname=d",
     "postgresql://u@h/db?password=s3cr3t-pw&sslmode=require"],
)
def test_mask_dsn_hides_the_password(dsn: str) -> None:
    assert "s3cr3t-pw" not in mask_dsn(dsn)


def _head(**overrides: object) -> dict[str, object]:
    head: dict[str, object] = {
        "ContentLength": 1234,
        "ContentType": "audio/webm",
        "Metadata": {"duration-seconds": "42"},
    }
    head.update(overrides)
    return head


def test_found_adopts_size_duration_format_and_key_as_file_id() -> None:
    v = parse_metadata("recordings/r1", _head())
    assert (v.outcome, v.file_id, v.size_bytes, v.duration_seconds, v.format) == (
        FOUND, "recordings/r1", 1234, 42, "Webm")


@pytest.mark.parametrize(
    ("meta_format", "content_type", "expected"),
    [("WEBM", "application/octet-stream", "Webm"), ("mp4", None, "Mp4"), ("Ogg", None, "Ogg"),
     ("m4A", None, "M4a"), (None, "video/webm", "Webm"), (None, "audio/mp4", "Mp4"),
     (None, "video/mp4; codecs=avc1", "Mp4"), (None, "video/ogg", "Ogg"),
     (None, "audio/x-m4a", "M4a"), (None, "audio/mp4a-latm", "M4a"), (None, "audio/m4a", "M4a")],
)
def test_format_from_metadata_or_content_type(
    meta_format: str | None, content_type: str | None, expected: str
) -> None:
    meta = {"duration-seconds": "1"} | ({"format": meta_format} if meta_format else {})
    v = parse_metadata("k", _head(Metadata=meta, ContentType=content_type))
    assert (v.outcome, v.format) == (FOUND, expected)


@pytest.mark.parametrize(
    ("head", "converted", "unread"),
    [
        # What can be converted is, whatever its value: metadata_problem (SQL) judges it.
        (_head(Metadata={"duration-seconds": " -5 "}), ("k", 1234, -5, "Webm"), None),
        (_head(Metadata={"duration-seconds": "+7"}), ("k", 1234, 7, "Webm"), None),
        (_head(Metadata={"duration-seconds": str(7 * 86400 + 1)}),
         ("k", 1234, 7 * 86400 + 1, "Webm"), None),
        # Past apply_outcome's integer: its bound, still more than any rule admits.
        (_head(Metadata={"duration-seconds": "999999999999"}),
         ("k", 1234, 2**31 - 1, "Webm"), None),
        (_head(Metadata={"duration-seconds": "1", "format": "flac"}),
         ("k", 1234, 1, "flac"), None),
        (_head(Metadata={"duration-seconds": "1", "file-id": " https://cdn.example/x "}),
         ("https://cdn.example/x", 1234, 1, "Webm"), None),
        (_head(Metadata={"duration-seconds": "1", "file-id": "  "}), ("", 1234, 1, "Webm"), None),
        (_head(ContentLength=-1), ("k", -1, 42, "Webm"), None),
        # What cannot be converted is None, and named.
        (_head(Metadata={}), ("k", 1234, None, "Webm"), "no duration-seconds metadata"),
        (_head(Metadata={"duration-seconds": "NaN"}), ("k", 1234, None, "Webm"),
         "duration-seconds is not a whole number"),
        (_head(Metadata={"duration-seconds": "12.5"}), ("k", 1234, None, "Webm"),
         "duration-seconds is not a whole number"),
        (_head(Metadata={"duration-seconds": "1_000"}), ("k", 1234, None, "Webm"),
         "duration-seconds is not a whole number"),
        (_head(Metadata={"duration-seconds": "١٢"}), ("k", 1234, None, "Webm"),  # Arabic-Indic
         "duration-seconds is not a whole number"),
        (_head(ContentType="application/octet-stream"), ("k", 1234, 42, None),
         "no format metadata, and the Content-Type names no known format"),
        (_head(ContentLength="12", Metadata={"duration-seconds": "x"}), ("k", None, None, "Webm"),
         "no Content-Length; duration-seconds is not a whole number"),
    ],
)
def test_metadata_is_converted_never_judged(
    head: dict[str, object], converted: tuple[object, ...], unread: str | None
) -> None:
    v = parse_metadata("k", head)
    assert v.outcome == FOUND
    assert (v.file_id, v.size_bytes, v.duration_seconds, v.format) == converted
    assert v.error == unread


def test_seven_days_exactly_is_still_fine_and_file_id_is_adopted() -> None:
    meta = {"duration-seconds": str(7 * 86400), "file-id": "files/abc"}
    v = parse_metadata("k", _head(Metadata=meta))
    assert (v.outcome, v.duration_seconds, v.file_id) == (FOUND, 7 * 86400, "files/abc")


def test_log_lines_are_json_without_urls_or_secrets() -> None:
    out = io.StringIO()
    logs.set_stream(out)
    try:
        logs.add_secrets(["hunter22-secret"])
        logs.log("thing happened", detail="connect to postgresql://u:hunter22-secret@h/db failed",
                 other="the key hunter22-secret leaked", blob=b"\x00\x01", ratio=math.nan)
    finally:
        logs.set_stream(None)
    record = json.loads(out.getvalue())
    assert record["event"] == "thing happened" and record["level"] == "info" and record["ts"]
    text = out.getvalue()
    assert "hunter22-secret" not in text and "u:" not in text
    assert record["detail"] == "connect to postgresql://… failed"
    assert record["blob"] == "<2 bytes>" and record["ratio"] is None


def test_secrets_added_later_and_secrets_inside_secrets_are_masked_whole() -> None:
    out = io.StringIO()
    logs.set_stream(out)
    try:
        logs.add_secrets(["sesame-long"])
        logs.log("first", detail="open sesame-long-and-more")
        # Added after a line was written (the sorted list is rebuilt), and containing the first.
        logs.add_secrets(["x-sesame-long-and-more"])
        logs.log("second", detail="open x-sesame-long-and-more", rid=uuid.UUID(int=7))
    finally:
        logs.set_stream(None)
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["detail"] == "open ***-and-more"
    assert second["detail"] == "open ***"
    assert second["rid"] == "00000000-0000-0000-0000-000000000007"


# --- HeadBucket answers and their classification (botocore's Stubber plays the server) --------
# The per-row HEAD goes through obstore: its answers are classified in tests/py/test_s3_client.py
# against a real local HTTP server.

def _stubbed() -> tuple[Any, Any]:
    import boto3
    from botocore.stub import Stubber
    from recording_finalize.storage import Storage

    client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="k",
                          aws_secret_access_key="s", endpoint_url="http://s3.invalid")
    env = MINIMAL_ENV | {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s",
                         "S3_ENDPOINT_URL": "http://s3.invalid"}
    return Storage(load_settings(env), client=client), Stubber(client)


def _row() -> Any:
    from uuid import uuid4

    from recording_finalize.model import ClaimedRow

    return ClaimedRow(uuid4(), "Direct", uuid4(), "reconcile", 1, uuid4(), 2, "Uploading")


@pytest.mark.parametrize(
    ("code", "status", "expected"),
    [("404", 404, "NoSuchBucket"), ("403", 403, "AccessDenied"),
     ("AccessDenied", 403, "AccessDenied"), ("503", 503, None), ("500", 500, None)],
)
def test_head_bucket_answers(code: str, status: int, expected: str | None) -> None:
    from recording_finalize.storage import StorageConfigError

    storage, stub = _stubbed()
    stub.add_client_error("head_bucket", service_error_code=code, http_status_code=status)
    with stub:
        if expected is None:
            assert storage.check_bucket() is False  # unreachable: rows back off, none fails
        else:
            with pytest.raises(StorageConfigError) as err:
                storage.check_bucket()
            assert err.value.code == expected


def test_the_key_template_places_the_object() -> None:
    from recording_finalize.storage import Storage

    env = MINIMAL_ENV | {"RFR_S3_KEY_TEMPLATE": "{session_kind}/{session_id}/{recording_id}.bin",
                         "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
    storage = Storage(load_settings(env), client=_stubbed()[0]._client)
    row = _row()
    assert storage.key_for(row) == f"Direct/{row.session_id}/{row.recording_id}.bin"


def test_obstore_attributes_become_the_metadata_parse_metadata_reads() -> None:
    from recording_finalize.storage import head_dict

    attributes = {"Content-Type": "audio/ogg", "Content-Encoding": "identity",
                  "Cache-Control": "no-cache", "duration-seconds": "9", "file-id": "files/x"}
    head = head_dict(5, attributes)
    assert head == {"ContentLength": 5, "ContentType": "audio/ogg",
                    "Metadata": {"duration-seconds": "9", "file-id": "files/x"}}
    assert parse_metadata("k", head).format == "Ogg"


def test_library_warnings_become_redacted_json_lines() -> None:
    import logging

    out = io.StringIO()
    logs.set_stream(out)
    try:
        logs.add_secrets(["pool-secret-123"])
        logs.capture_library_logs()
        logging.getLogger("psycopg.pool").warning(
            "error connecting to postgresql://u:pool-secret-123@h/db")
    finally:
        logs.set_stream(None)
        root = logging.getLogger()
        ours = "recording_finalize.logs"
        for handler in [h for h in root.handlers if type(h).__module__ == ours]:
            root.removeHandler(handler)
    record = json.loads(out.getvalue())
    assert (record["event"], record["level"], record["logger"]) == (
        "library log", "warning", "psycopg.pool")
    assert "pool-secret-123" not in out.getvalue() and "postgresql://…" in record["message"]


def test_a_republish_window_of_0_turns_republish_discovery_off() -> None:
    """0 is a setting (a transactional outbox), not a mistake: admitted, passed on as 0."""
    assert load_settings(MINIMAL_ENV | {"RFR_REPUBLISH_WINDOW": "0"}).republish_window == 0
    assert load_settings(MINIMAL_ENV).republish_window == 86400
    with pytest.raises(ConfigError, match="RFR_REPUBLISH_WINDOW"):
        load_settings(MINIMAL_ENV | {"RFR_REPUBLISH_WINDOW": "-1s"})


def test_explain_leaves_out_the_times_an_adapter_does_not_give() -> None:
    """A DBA's recordings view may have no created/updated times: explain's text then says
    nothing of them, rather than "created -, updated -" for every recording."""
    from recording_finalize.ops.explain import _lines

    rec = {"status": "Uploading", "mediaType": "Audio", "version": None}
    doc = {"recordingId": "r1", "recording": rec}
    assert next(line for line in _lines(doc) if "status" in line) == "  status Uploading, Audio"
    rec.update(createdAt="2026-12-07T10:00:00Z", updatedAt="2026-12-07T11:00:00Z")
    line = next(line for line in _lines(doc) if "status" in line)
    assert "created 2026-12-07T10:00:00Z" in line and "updated 2026-12-07T11:00:00Z" in line


def test_explain_says_of_a_session_of_no_kind_that_its_kind_is_unknown() -> None:
    """A DBA's recordings view may take the session's kind from the session: once a retention
    job purged the session, the kind is NULL, and explain's text says so rather than "None"."""
    from recording_finalize.ops.explain import _lines

    doc = {"recordingId": "r1", "recording": {"status": "Uploading", "mediaType": "Video"},
           "session": {"kind": None, "id": "s1", "found": False}}
    line = next(line for line in _lines(doc) if line.startswith("session"))
    assert line == "session    kind unknown, s1: no such session", line
