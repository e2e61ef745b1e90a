"""A stand-in for the crm/notifications consumers of call-recording-available.

It does what the contract asks of a real consumer: join its own consumer group, read the topic,
and process each recording once — the first delivery per ``recordingId`` wins, later ones are
duplicates (at-least-once delivery allows them). It also checks every message against the
contract: key = sessionId, header ``event-type``, an ``event-id``, and the JSON Schema in
``docs/contract/`` when the repository has one.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError

SCHEMA_PATH = Path("docs/contract/call-recording-available.schema.json")
EVENT_TYPE = "call-recording-available"
# The fields the contract names; used when no JSON Schema file is there to validate against.
PAYLOAD_FIELDS = (
    "recordingId", "sessionKind", "sessionId", "chatId", "dealId", "tenantId", "mediaType",
    "fileId", "format", "durationSeconds", "sizeBytes", "trigger", "startedAt", "endedAt",
    "availableAt",
)
# librdkafka's own log lines are not ours to print.
_QUIET = logging.getLogger("demo.consumer.librdkafka")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


@dataclass(frozen=True)
class Delivery:
    recording_id: str
    key: str | None
    headers: dict[str, str]
    payload: dict[str, Any]
    raw: bytes
    seen_wall: float
    partition: int
    offset: int


class RecordingConsumer:
    """Reads the topic in a thread; ``first`` maps recordingId to its first delivery."""

    def __init__(self, bootstrap: str, topic: str, schema_path: Path = SCHEMA_PATH) -> None:
        self.topic = topic
        self.group_id = f"demo-crm-{uuid.uuid4().hex[:12]}"
        self.first: dict[str, Delivery] = {}
        self.duplicates: list[Delivery] = []
        self.problems: list[str] = []
        self.messages = 0
        self.schema_used: str | None = None
        self._validator: Any = None
        if schema_path.exists():
            import jsonschema  # type: ignore[import-untyped]  # no stubs in the dev extra

            schema = json.loads(schema_path.read_text())
            self._validator = jsonschema.Draft202012Validator(schema)
            self.schema_used = str(schema_path)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._assigned = threading.Event()
        self._consumer = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": self.group_id,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            # Tansu takes about half the session timeout to complete a group join.
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
            "logger": _QUIET,
        })
        self._thread = threading.Thread(target=self._loop, name="consumer", daemon=True)

    def start(self, timeout: float = 20.0) -> float:
        """Subscribes and waits until the group gave us partitions; returns the join time."""
        t0 = time.monotonic()
        self._consumer.subscribe([self.topic], on_assign=lambda c, p: self._assigned.set())
        self._thread.start()
        if not self._assigned.wait(timeout):
            raise RuntimeError(f"the consumer got no partition within {timeout:.0f} s")
        return time.monotonic() - t0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._consumer.close()

    def seen_count(self) -> int:
        with self._lock:
            return len(self.first)

    def _loop(self) -> None:
        while not self._stop.is_set():
            msg = self._consumer.poll(0.2)
            if msg is None:
                continue
            err = msg.error()
            if err is not None:
                if err.code() != KafkaError._PARTITION_EOF:
                    with self._lock:
                        self.problems.append(f"consumer error: {err.str()}")
                continue
            self._handle(msg)

    def _handle(self, msg: Any) -> None:
        seen = time.time()
        raw: bytes = msg.value() or b""
        key = msg.key().decode() if msg.key() is not None else None
        headers = {k: (v.decode() if v is not None else "") for k, v in (msg.headers() or [])}
        problems: list[str] = []
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = {}
            problems.append(f"offset {msg.offset()}: value is not JSON")
        if not isinstance(payload, dict):
            payload = {}
            problems.append(f"offset {msg.offset()}: value is not a JSON object")
        rid = str(payload.get("recordingId"))
        problems += self._contract_problems(rid, key, headers, payload)
        delivery = Delivery(rid, key, headers, payload, raw, seen, msg.partition(), msg.offset())
        with self._lock:
            self.messages += 1
            self.problems += problems
            if rid in self.first:
                self.duplicates.append(delivery)
            else:
                self.first[rid] = delivery  # first seen: this is where crm would act

    def _contract_problems(
        self, rid: str, key: str | None, headers: dict[str, str], payload: dict[str, Any]
    ) -> list[str]:
        out: list[str] = []
        if key != payload.get("sessionId"):
            out.append(f"{rid}: key {key!r} is not the sessionId")
        if headers.get("event-type") != EVENT_TYPE:
            out.append(f"{rid}: header event-type is {headers.get('event-type')!r}")
        if not headers.get("event-id"):
            out.append(f"{rid}: no event-id header")
        if self._validator is not None:
            for error in self._validator.iter_errors(payload):
                out.append(f"{rid}: schema: {error.message}")
        else:
            missing = [f for f in PAYLOAD_FIELDS if f not in payload]
            extra = [f for f in payload if f not in PAYLOAD_FIELDS]
            if missing or extra:
                out.append(f"{rid}: payload fields missing {missing}, unexpected {extra}")
        return out
