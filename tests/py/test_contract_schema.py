"""The published JSON Schema of call-recording-available holds for what the SQL really emits.

Payloads come from a real database: the happy path
(``recording_finalize.recording_ingest_completed``) and the safety net (``claim_due`` →
``apply_outcome(found)`` as the worker role). Both must validate, and both must have the same
shape; the schema must refuse what the contract forbids.
"""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import TOPIC_DEFAULT, Db, seed_stuck
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from recording_finalize import pipeline, queries
from recording_finalize.config import load_settings
from recording_finalize.model import FOUND, Verdict
from recording_finalize.queries import AppliedResult

SCHEMA_PATH = (
    Path(__file__).resolve().parents[2] / "docs/contract/call-recording-available.schema.json"
)
REQUIRED = [
    "recordingId", "sessionKind", "sessionId", "chatId", "dealId", "tenantId", "mediaType",
    "fileId", "format", "durationSeconds", "sizeBytes", "trigger", "startedAt", "endedAt",
    "availableAt",
]  # fmt: skip


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def payload_of(db: Db, recording_id: uuid.UUID) -> dict[str, Any]:
    # Both paths enqueue the product's own event, in its own outbox (recording_finalize.outbox).
    row = db.one(
        "select payload::text from recording_finalize.outbox "
        "where topic = %s and recording_id = %s",
        (TOPIC_DEFAULT, recording_id),
    )
    assert row is not None, "no event enqueued"
    value: dict[str, Any] = json.loads(row[0])
    return value


def ingest(db: Db, recording_id: uuid.UUID, file_id: str, fmt: str = "Webm") -> None:
    with db.connect() as conn:
        result = conn.execute(
            "select recording_finalize.recording_ingest_completed(%s, %s, 73400320, 1834, %s)",
            (recording_id, file_id, fmt),
        ).fetchone()
    assert result == ("available",)


def test_the_schema_lists_exactly_the_contract_fields(validator: Draft202012Validator) -> None:
    schema = validator.schema
    assert schema["required"] == REQUIRED
    assert sorted(schema["properties"]) == sorted(REQUIRED)
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("kind", "with_ids"), [("Direct", True), ("Conference", True), ("Direct", False)]
)
def test_happy_path_payloads_validate(
    validator: Draft202012Validator, db: Db, kind: str, with_ids: bool
) -> None:
    seeded = seed_stuck(db, kind=kind, media_type="Video", with_ids=with_ids)
    ingest(db, seeded.recording_id, f"recordings/{seeded.recording_id}")
    payload = payload_of(db, seeded.recording_id)
    validator.validate(payload)
    assert sorted(payload) == sorted(REQUIRED)
    assert payload["recordingId"] == str(seeded.recording_id)
    assert payload["sessionKind"] == kind
    assert payload["sessionId"] == str(seeded.session_id)
    assert payload["chatId"] == (str(seeded.chat_id) if with_ids else None)
    assert payload["tenantId"] == (str(seeded.tenant_id) if with_ids else None)
    assert (payload["sizeBytes"], payload["durationSeconds"]) == (73400320, 1834)


def test_safety_net_payload_validates_and_has_the_happy_path_shape(
    validator: Draft202012Validator, db: Db
) -> None:
    happy = seed_stuck(db)
    ingest(db, happy.recording_id, f"recordings/{happy.recording_id}", "Mp4")

    stuck = seed_stuck(db)  # ended an hour ago, SLA 30 minutes: due for reconciliation
    settings = load_settings({"DATABASE_URL": db.worker_url})
    with psycopg.connect(db.worker_url, autocommit=True) as conn:
        claimed = [r for r in queries.claim_due(conn, settings) if r.action == "reconcile"]
        assert [r.recording_id for r in claimed] == [stuck.recording_id]
        verdict = Verdict(FOUND, f"recordings/{stuck.recording_id}", 73400320, 1834, "Mp4")
        [answer] = pipeline.apply_outcomes(conn, [(claimed[0], verdict)])
        assert isinstance(answer, AppliedResult) and answer.result == "reconciled"

    net, ingested = payload_of(db, stuck.recording_id), payload_of(db, happy.recording_id)
    validator.validate(net)
    # Same keys, same types, same value formats: a consumer cannot tell the paths apart.
    assert list(net) == list(ingested)
    assert {k: type(v) for k, v in net.items()} == {k: type(v) for k, v in ingested.items()}
    for key in ("startedAt", "endedAt", "availableAt"):
        assert len(net[key]) == len(ingested[key]) and net[key].endswith("Z")


# --- what the schema must refuse ------------------------------------------------------------

VALID: dict[str, Any] = {
    "recordingId": "c4f2d8a6-1e3b-4d5f-8a7c-9b0e2d4f6a81",
    "sessionKind": "Direct",
    "sessionId": "6f1c2a9e-3b7d-4c1e-9a58-2d0f4b7e8c31",
    "chatId": "0b9d5e2c-7a41-4f3e-8c6d-1e2f3a4b5c6d",
    "dealId": None,
    "tenantId": "5e8f0a2b-4c6d-4e8f-9a1b-3c5d7e9f1a2b",
    "mediaType": "Video",
    "fileId": "recordings/c4f2d8a6-1e3b-4d5f-8a7c-9b0e2d4f6a81",
    "format": "Webm",
    "durationSeconds": 1834,
    "sizeBytes": 73400320,
    "trigger": "Manual",
    "startedAt": "2026-11-30T09:10:05.402871Z",
    "endedAt": "2026-11-30T09:40:39.527114Z",
    "availableAt": "2026-11-30T09:41:02.118734Z",
}


def test_the_reference_example_is_valid(validator: Draft202012Validator) -> None:
    validator.validate(VALID)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("fileId", "https://storage.example/recordings/c4f2d8a6.webm"),
        ("fileId", "s3://call-recordings/recordings/c4f2d8a6"),
        ("fileId", ""),
        ("fileId", "   "),
        ("fileId", "x" * 1025),
        ("recordingId", None),
        ("recordingId", "C4F2D8A6-1E3B-4D5F-8A7C-9B0E2D4F6A81"),
        ("sessionId", "not-a-uuid"),
        ("chatId", "0b9d5e2c7a414f3e8c6d1e2f3a4b5c6d"),
        ("sessionKind", "direct"),
        ("mediaType", "Screen"),
        ("format", "Mkv"),
        ("trigger", "Scheduled"),
        ("durationSeconds", -1),
        ("durationSeconds", 1.5),
        ("sizeBytes", -5),
        ("sizeBytes", "2048"),
        ("startedAt", "2026-11-30T11:10:05.402871+02:00"),
        ("endedAt", "2026-11-30 09:40:39Z"),
        ("availableAt", None),
    ],
)
def test_forbidden_values_are_rejected(
    validator: Draft202012Validator, field: str, value: Any
) -> None:
    payload = copy.deepcopy(VALID)
    payload[field] = value
    with pytest.raises(ValidationError):
        validator.validate(payload)


def test_an_extra_key_is_rejected(validator: Draft202012Validator) -> None:
    payload = copy.deepcopy(VALID)
    payload["downloadUrl"] = "https://storage.example/x"
    with pytest.raises(ValidationError, match="Additional properties"):
        validator.validate(payload)


@pytest.mark.parametrize("field", REQUIRED)
def test_a_missing_key_is_rejected(validator: Draft202012Validator, field: str) -> None:
    payload = copy.deepcopy(VALID)
    del payload[field]
    with pytest.raises(ValidationError, match="required"):
        validator.validate(payload)


def test_a_real_payload_with_a_url_file_id_or_an_extra_key_is_rejected(
    validator: Draft202012Validator, db: Db
) -> None:
    seeded = seed_stuck(db)
    ingest(db, seeded.recording_id, f"recordings/{seeded.recording_id}")
    payload = payload_of(db, seeded.recording_id)
    validator.validate(payload)
    with pytest.raises(ValidationError):
        validator.validate(payload | {"fileId": "https://storage.example/" + payload["fileId"]})
    with pytest.raises(ValidationError):
        validator.validate(payload | {"url": "https://storage.example/x"})
