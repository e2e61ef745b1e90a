"""The bench's data: N stuck recordings whose binaries are in SeaweedFS, reset before every run.

Every contender finds the same world: the same recording ids, sessions and objects, every
recording ``Uploading`` with its session ended an hour ago and its finalize row due. The objects
are uploaded once per bench (their keys follow the recording ids, which are derived from a
seed); the database is truncated and seeded again before every run, then ANALYZEd, so no run
inherits another's dead rows or plans. Seeding writes the tables directly as their owner, as the
spec allows another program to (the lifecycle functions would cost two calls per recording).
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from bench import s3put

BUCKET = "call-recordings"
KEY_TEMPLATE = "recordings/{recording_id}"
TOPIC_PARTITIONS = 3

_FORMATS = (("Webm", "audio/webm;codecs=opus"), ("Ogg", "audio/ogg;codecs=opus"),
            ("Mp4", "video/mp4"), ("M4a", "audio/x-m4a"))
_BODY = random.Random(11).randbytes(1024)

# Tables a run leaves rows in: the messenger's (its own outbox included: the product only reads
# it), the product's (its finalize rows, its own outbox and the relay's leases) and both peers'
# queues.
MESSENGER_TABLES = (
    "messenger.realtime_outbox", "messenger.integration_outbox",
    "messenger.recording_finalize_attempts", "messenger.call_recordings",
    "messenger.call_sessions", "messenger.conference_sessions",
    "recording_finalize.outbox", "recording_finalize.relay_leases",
)


@dataclass(frozen=True)
class Item:
    recording_id: uuid.UUID
    session_id: uuid.UUID
    session_kind: str
    media_type: str
    trigger: str
    format: str
    content_type: str
    duration_s: int

    @property
    def key(self) -> str:
        return KEY_TEMPLATE.format(recording_id=self.recording_id)


def migrate_new_database(url: str, what: str, sql_dir: Path | None = None) -> None:
    """``recording-finalize migrate --create-service-tables`` (the console script beside this
    Python) on the new database at ``url``, the service's reference tables included; with
    ``sql_dir``, that SQL tree instead of this one's (``RFR_SQL_DIR``: an earlier release's
    ``sql/``, its own service schema included); exits naming ``what`` with migrate's stderr
    when it fails."""
    cli = str(Path(sys.executable).parent / "recording-finalize")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DATABASE_URL": url}
    if sql_dir is not None:
        env["RFR_SQL_DIR"] = str(sql_dir)
    proc = subprocess.run([cli, "migrate", "--create-service-tables"], env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"{what}: migrate failed:\n{proc.stderr[-2000:]}")


def make_items(n: int, seed: int = 5) -> list[Item]:
    """n recordings, the same ones for the same seed."""
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        fmt, ctype = _FORMATS[rng.randrange(len(_FORMATS))]
        items.append(Item(
            recording_id=uuid.UUID(int=rng.getrandbits(128), version=4),
            session_id=uuid.UUID(int=rng.getrandbits(128), version=4),
            session_kind="Direct" if rng.random() < 0.7 else "Conference",
            media_type="Video" if fmt == "Mp4" else "Audio",
            trigger="Auto" if rng.random() < 0.6 else "Manual",
            format=fmt,
            content_type=ctype,
            duration_s=rng.randint(15, 5400),
        ))
    return items


def _objects(items: Sequence[Item]) -> Iterator[tuple[str, bytes, str, dict[str, str]]]:
    for it in items:
        meta = {"duration-seconds": str(it.duration_s), "format": it.format.lower()}
        yield it.key, _BODY, it.content_type, meta


def seed_objects(env: dict[str, str], items: Sequence[Item]) -> float:
    """Uploads every item's binary; returns the seconds it took."""
    t0 = time.monotonic()
    s3put.put_many(s3put.Endpoint.from_env(env), BUCKET, _objects(items))
    return time.monotonic() - t0


def reset(conn: psycopg.Connection[Any], extra_tables: Sequence[str] = ()) -> None:
    """Empties the messenger tables (and the peers' queue tables that exist)."""
    tables = list(MESSENGER_TABLES)
    for name in extra_tables:
        row = conn.execute("select to_regclass(%s)", (name,)).fetchone()
        if row and row[0] is not None:
            tables.append(name)
    conn.execute(f"truncate {', '.join(tables)}")


def seed_stuck(conn: psycopg.Connection[Any], items: Sequence[Item]) -> None:
    """Every item: session ended an hour ago, recording Uploading, finalize row due now."""
    cols = {
        "rid": [it.recording_id for it in items],
        "sid": [it.session_id for it in items],
        "kind": [it.session_kind for it in items],
        "media": [it.media_type for it in items],
        "trig": [it.trigger for it in items],
    }
    data = """
        select * from unnest(%(rid)s::uuid[], %(sid)s::uuid[], %(kind)s::text[],
            %(media)s::text[], %(trig)s::text[]) with ordinality
            as t(rid, sid, kind, media, trig, n)
    """
    with conn.transaction():
        for kind, table in (("Direct", "call_sessions"), ("Conference", "conference_sessions")):
            conn.execute(
                f"insert into messenger.{table} (id, chat_id, deal_id, tenant_id, started_at,"
                f" ended_at) select sid, gen_random_uuid(), null, gen_random_uuid(),"
                f" now() - interval '2 hours', now() - interval '1 hour'"
                f" from ({data}) as d where kind = %(k)s",
                cols | {"k": kind},
            )
        conn.execute(
            "insert into messenger.call_recordings (id, session_kind, session_id, media_type,"
            " trigger, status, started_at, created_at, updated_at)"
            " select rid, kind, sid, media, trig, 'Uploading', now() - interval '2 hours',"
            " now() - interval '2 hours', now() - interval '1 hour'"
            f" from ({data}) as d",
            cols,
        )
        # Due in the order the items were made (a millisecond apart), 30 min past the SLA.
        conn.execute(
            "insert into messenger.recording_finalize_attempts (recording_id, session_kind,"
            " session_id, next_attempt_at, created_at, updated_at)"
            " select rid, kind, sid, now() - interval '30 minutes' + n * interval '1 ms',"
            " now() - interval '1 hour', now() - interval '1 hour'"
            f" from ({data}) as d",
            cols,
        )


def analyze(conn: psycopg.Connection[Any]) -> None:
    conn.execute("vacuum analyze messenger.call_recordings, messenger.recording_finalize_attempts,"
                 " messenger.integration_outbox, messenger.realtime_outbox,"
                 " messenger.call_sessions, messenger.conference_sessions,"
                 " recording_finalize.outbox")


@dataclass
class Outcome:
    """What a run left in the database, and whether it is what it had to leave."""

    available: int
    done: int
    outbox: int
    published: int
    realtime: int

    def problems(self, n: int, published: bool) -> list[str]:
        out = []
        if self.available != n:
            out.append(f"{self.available} of {n} recordings Available")
        if self.done != n:
            out.append(f"{self.done} of {n} finalize rows Done")
        if self.outbox != n:
            out.append(f"{self.outbox} events in the product's outbox for {n} recordings")
        if self.realtime != n:
            out.append(f"{self.realtime} realtime rows for {n} recordings")
        if published and self.published != n:
            out.append(f"{self.published} of {n} outbox rows marked published")
        return out


def outcome(conn: psycopg.Connection[Any], topic: str) -> Outcome:
    """What the run left; its events are the product's own (``recording_finalize.outbox``: the
    worker's and the lifecycle functions' the peers and the simulated messenger call)."""
    row = conn.execute(
        """
        select
            (select count(*) from messenger.call_recordings where status = 'Available'),
            (select count(*) from messenger.recording_finalize_attempts where status = 'Done'),
            (select count(*) from recording_finalize.outbox where topic = %(t)s),
            (select count(*) from recording_finalize.outbox
                where topic = %(t)s and published_at is not null),
            (select count(*) from messenger.realtime_outbox where kind = 'RecordingAvailable')
        """,
        {"t": topic},
    ).fetchone()
    assert row is not None
    return Outcome(*(int(v) for v in row))


# ------------------------------------------------------------------------------------------
# Kafka


def create_topic(bootstrap: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})
    admin.create_topics([NewTopic(name, TOPIC_PARTITIONS, 1)])[name].result(timeout=15)


def delete_topic(bootstrap: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})
    # Memory storage: a topic left behind only costs memory.
    with contextlib.suppress(Exception):
        admin.delete_topics([name])[name].result(timeout=10)


def consumed_recording_ids(bootstrap: str, topic: str, expect: set[str],
                           idle_s: float = 3.0, timeout_s: float = 90.0) -> list[str]:
    """The recordingIds of the messages of ``topic``, read from the start until every id of
    ``expect`` was seen (then ``idle_s`` more, so that an extra message would show), or
    ``idle_s`` without a message, or ``timeout_s``. (Tansu's high watermarks lag behind what it
    serves, so they are no end marker.)"""
    import json

    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"rfr-bench-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
    })
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING)
                         for p in range(TOPIC_PARTITIONS)])
        ids: list[str] = []
        missing = set(expect)
        deadline = time.monotonic() + timeout_s
        last = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - last < idle_s:
            batch = consumer.consume(2000, timeout=0.5)
            for msg in batch:
                if msg.error():
                    continue
                rid = json.loads(msg.value())["recordingId"]
                ids.append(rid)
                missing.discard(rid)
                last = time.monotonic()
            if not missing and not batch and time.monotonic() - last >= 1.0:
                break
        return ids
    finally:
        consumer.close()
