"""The outbox relay against real PostgreSQL and a real Tansu broker.

Outbox rows are written by the real SQL (the happy-path ingest callback), the relay runs as the
least-privilege worker role through the real pool, and messages are read back with a consumer.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from conftest import CLI, Db, Stack, Worker, consume, seed_stuck
from psycopg.pq import Trace
from psycopg_pool import ConnectionPool
from recording_finalize import db as driver_db
from recording_finalize import logs
from recording_finalize.config import Settings, load_settings
from recording_finalize.metrics import Metrics
from recording_finalize.relay import Relay, producer_config

# Short enough for tests, long enough for a loopback broker.
DELIVERY_TIMEOUT_S = 2.0
LEASE_MARGIN_S = 0.5


# ------------------------------------------------------------------------------------------
# helpers


@dataclass(frozen=True)
class OutboxRow:
    id: int
    message_key: str
    payload: str
    headers: dict[str, str]
    published: bool
    leased: bool


def enqueue(db: Db, topic: str, n: int, *, with_ids: bool = True) -> list[uuid.UUID]:
    """n recordings completed through the real ingest callback: n events in the product's own
    outbox (recording_finalize.outbox; the service has no event of its own for them)."""
    ids = []
    for i in range(n):
        seeded = seed_stuck(db, kind="Direct" if i % 2 == 0 else "Conference", with_ids=with_ids)
        with db.connect() as conn:
            conn.execute(
                "select recording_finalize.recording_ingest_completed(%s, %s, 2048, 42, "
                "'Webm', %s)",
                # Non-ASCII in the file id: the bytes on the wire must be the database's text,
                # not a re-serialization (json.dumps would escape it).
                (seeded.recording_id, f"recordings/запись-{seeded.recording_id}", topic),
            )
        ids.append(seeded.recording_id)
    return ids


def service_event(db: Db, topic: str) -> None:
    """The service's own call-recording-available event (its happy path), unpublished."""
    seeded = seed_stuck(db)
    with db.connect() as conn:
        conn.execute(
            "insert into messenger.integration_outbox (topic, message_key, event_type, "
            "dedupe_key, payload, headers) values (%s, %s, 'call-recording-available', %s, "
            "'{\"service\": true}', '{\"event-type\": \"call-recording-available\"}')",
            (topic, str(seeded.session_id), str(seeded.recording_id)))


def outbox(db: Db, topic: str) -> list[OutboxRow]:
    # The product's own outbox (docs/contract/tables.md): the relay reads, leases and marks only it.
    rows = db.all(
        "select o.id, o.message_key, o.payload::text, o.headers, o.published_at is not null, "
        "exists (select from recording_finalize.relay_leases as l "
        "        where l.outbox_id = o.id and l.leased_until > now()) "
        "from recording_finalize.outbox as o where o.topic = %s order by o.id",
        (topic,),
    )
    return [OutboxRow(*row) for row in rows]


def wait_leases_expired(db: Db, topic: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while any(row.leased for row in outbox(db, topic)):
        assert time.monotonic() < deadline, "leases did not run out"
        time.sleep(0.2)


def create_topic(stack: Stack, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"]})
    deadline = time.monotonic() + 20
    while True:
        try:
            admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=10)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def restart_kafka(stack: Stack, topic: str) -> None:
    """Tansu with memory storage forgets everything on restart, topics included."""
    stack.stop_service("kafka")
    stack.start_service("kafka")
    create_topic(stack, topic)


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    logs.set_stream(stream)
    try:
        yield stream
    finally:
        logs.set_stream(None)


def events(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def make_settings(stack: Stack, db: Db, topic: str, **env: str) -> Settings:
    db.set_server_topic(topic)  # the topic lives on the server: the test's is the server's
    return load_settings(
        {
            "DATABASE_URL": db.worker_url,
            "KAFKA_BOOTSTRAP_SERVERS": stack.env["KAFKA_BOOTSTRAP_SERVERS"],
            "RFR_TOPIC": topic,
        }
        | env
    )


@pytest.fixture
def settings(stack: Stack, db: Db, topic: str) -> Settings:
    return make_settings(stack, db, topic)


@pytest.fixture
def pool(settings: Settings) -> Iterator[ConnectionPool[psycopg.Connection[Any]]]:
    p = driver_db.open_pool(settings)
    try:
        yield p
    finally:
        p.close()


@contextlib.contextmanager
def relay_for(settings: Settings, pool: Any, metrics: Metrics, **kwargs: Any) -> Iterator[Relay]:
    relay = Relay(
        settings,
        pool,
        metrics,
        delivery_timeout_s=DELIVERY_TIMEOUT_S,
        lease_margin_s=LEASE_MARGIN_S,
        **kwargs,
    )
    try:
        yield relay
    finally:
        relay.close()


def drain(relay: Relay, seconds: float = 60.0) -> Any:
    return relay.drain(time.monotonic() + seconds, threading.Event())


def counter(metrics: Metrics, name: str) -> float:
    value = metrics.registry.get_sample_value(f"messenger_recording_finalize_{name}")
    assert value is not None
    return value


# ------------------------------------------------------------------------------------------
# the message on the wire


def test_messages_carry_the_session_key_the_headers_and_the_exact_payload(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any, captured: io.StringIO
) -> None:
    enqueue(db, topic, 3)
    enqueue(db, topic, 1, with_ids=False)  # chatId/dealId/tenantId null
    rows = outbox(db, topic)
    assert len(rows) == 4 and not any(row.published for row in rows)
    # The service's own event of the same topic, unpublished: its relay's, never this one's.
    service_event(db, topic)

    metrics = Metrics()
    with relay_for(settings, pool, metrics) as relay:
        result = drain(relay)
    assert (result.published, result.failed, result.reason) == (4, 0, "empty")

    messages = consume(stack, topic, expect=4)
    assert len(messages) == 4  # and nothing twice
    # One partition: the broker's order is the relay's order, which is the outbox id order.
    for row, msg in zip(rows, messages, strict=True):
        assert msg.key == row.message_key
        assert msg.raw == row.payload.encode("utf-8")  # the bytes the database rendered
        assert msg.headers == row.headers
        assert msg.headers["event-type"] == "call-recording-available"
        uuid.UUID(msg.headers["event-id"])
        # The key is the recording's session.
        session = db.one(
            "select session_id::text from messenger.call_recordings where id = %s",
            (msg.value["recordingId"],),
        )
        assert msg.key == session[0] == msg.value["sessionId"]
    assert len({msg.headers["event-id"] for msg in messages}) == 4

    assert all(row.published for row in outbox(db, topic))
    assert db.all("select published_at from messenger.integration_outbox") == [(None,)]
    assert counter(metrics, "published_total") == 4
    assert counter(metrics, "publish_failures_total") == 0
    published = [e for e in events(captured) if e["event"] == "batch published"]
    assert [e["published"] for e in published] == [4]
    # No payload bodies in the log.
    text = captured.getvalue()
    assert "recordingId" not in text and "recordings/" not in text


def test_nothing_to_publish_is_one_call_and_no_message(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any
) -> None:
    with relay_for(settings, pool, Metrics()) as relay:
        result = drain(relay)
    assert (result.batches, result.claimed, result.published, result.reason) == (0, 0, 0, "empty")
    assert consume(stack, topic, expect=0, idle_s=0.5, timeout_s=3) == []


# ------------------------------------------------------------------------------------------
# round trips


class TracingPool:
    """Hands out the real pool's connections with libpq tracing on: every round trip to the
    server (a simple Query, or an extended-protocol Sync) ends with one ReadyForQuery."""

    def __init__(self, pool: ConnectionPool[psycopg.Connection[Any]]) -> None:
        self._pool = pool
        self.trace = ""

    @contextlib.contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[psycopg.Connection[Any]]:
        with (
            self._pool.connection(timeout) as conn,
            tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as f,
        ):
            conn.pgconn.trace(f.fileno())
            conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)
            try:
                yield conn
            finally:
                conn.pgconn.untrace()
                f.seek(0)
                self.trace += f.read()

    def round_trips(self) -> int:
        return sum(
            1 for line in self.trace.splitlines() if line.split("\t")[2:3] == ["ReadyForQuery"]
        )

    def calls(self) -> list[str]:
        """The API functions called, in order, from the statement texts sent (each statement
        is parsed anew below psycopg's prepare threshold of 5 executions)."""
        return re.findall(r'recording_finalize\."?(relay_claim|relay_mark_published)"?\(',
                          self.trace)


def test_two_database_calls_per_relay_batch(
    stack: Stack, db: Db, topic: str, pool: ConnectionPool[psycopg.Connection[Any]]
) -> None:
    enqueue(db, topic, 5)
    settings = make_settings(stack, db, topic, RFR_RELAY_BATCH_SIZE="2")
    traced = TracingPool(pool)
    with relay_for(settings, traced, Metrics()) as relay:
        result = drain(relay)
    assert (result.batches, result.published, result.reason) == (3, 5, "empty")
    # Batches of 2, 2 and 1, each claim + mark; the short one ends the drain: no empty claim.
    assert traced.round_trips() == 3 * 2
    assert traced.calls() == ["relay_claim", "relay_mark_published"] * 3
    assert len(consume(stack, topic, expect=5)) == 5


def test_a_full_last_batch_is_followed_by_one_claim_that_finds_nothing(
    stack: Stack, db: Db, topic: str, pool: ConnectionPool[psycopg.Connection[Any]]
) -> None:
    enqueue(db, topic, 4)
    settings = make_settings(stack, db, topic, RFR_RELAY_BATCH_SIZE="2")
    traced = TracingPool(pool)
    with relay_for(settings, traced, Metrics()) as relay:
        result = drain(relay)
    assert (result.batches, result.published, result.reason) == (2, 4, "empty")
    assert traced.calls() == ["relay_claim", "relay_mark_published"] * 2 + ["relay_claim"]


def test_events_written_after_a_short_batch_wait_for_the_next_drain(
    stack: Stack, db: Db, topic: str, pool: ConnectionPool[psycopg.Connection[Any]]
) -> None:
    # The service keeps writing while the relay drains (after a backlog, a relay that claimed until
    # nothing was left once chased the new events a few at a time, each claim slow). An event
    # written after the short batch was claimed is not claimed by this drain, and the next one sends
    # it.
    enqueue(db, topic, 3)
    settings = make_settings(stack, db, topic, RFR_RELAY_BATCH_SIZE="5")
    traced = TracingPool(pool)
    with relay_for(settings, traced, Metrics()) as relay:
        real_publish = relay._publish

        def publish_while_the_service_writes(producer: Any, rows: Any, batch: Any) -> Any:
            enqueue(db, topic, 1)  # committed before this batch is marked
            return real_publish(producer, rows, batch)

        relay._publish = publish_while_the_service_writes  # type: ignore[method-assign]
        first = drain(relay)
        relay._publish = real_publish  # type: ignore[method-assign]
        assert (first.batches, first.published, first.reason) == (1, 3, "empty")
        assert traced.calls() == ["relay_claim", "relay_mark_published"]
        assert sum(1 for row in outbox(db, topic) if not row.published) == 1
        second = drain(relay)
    assert (second.batches, second.published, second.reason) == (1, 1, "empty")
    assert all(row.published for row in outbox(db, topic))
    assert len(consume(stack, topic, expect=4)) == 4


def test_rows_another_relay_took_over_are_not_marked_by_this_one(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any
) -> None:
    """The relay presents its claim's lease token: once another relay has re-leased the rows
    (this one's lease ran out while it waited for the broker), marking them is the other's."""
    enqueue(db, topic, 3)
    other_token = uuid.uuid4()

    def take_over() -> None:
        # Between this relay's claim and its mark: another relay leases the same rows.
        with db.connect() as conn:
            conn.execute("update recording_finalize.relay_leases set lease_token = %s "
                         "where outbox_id in (select id from recording_finalize.outbox "
                         "where topic = %s)", (other_token, topic))

    def factory(config: dict[str, Any]) -> Producer:
        producer = Producer(config)

        def flush(*args: Any) -> int:
            take_over()
            return int(producer.flush(*args))

        return _FlushWrapped(producer, flush)  # type: ignore[return-value]

    with relay_for(settings, pool, Metrics(), producer_factory=factory) as relay:
        result = drain(relay)
    assert (result.claimed, result.published) == (3, 0), result
    assert not any(row.published for row in outbox(db, topic))
    tokens = db.all("select distinct l.lease_token from recording_finalize.relay_leases as l "
                    "join recording_finalize.outbox as o on o.id = l.outbox_id "
                    "where o.topic = %s", (topic,))
    assert tokens == [(other_token,)]
    assert len(consume(stack, topic, expect=3)) == 3  # delivered: the other relay resends


class _FlushWrapped:
    """A producer whose flush runs a hook first (everything else is the real producer's)."""

    def __init__(self, producer: Producer, flush: Callable[..., int]) -> None:
        self._producer = producer
        self.flush = flush

    def __getattr__(self, name: str) -> Any:
        return getattr(self._producer, name)


class _Acked:
    """A delivery report's message: no error."""

    def error(self) -> None:
        return None


class GradualProducer:
    """A broker stand-in that acknowledges half of what is outstanding per ``flush`` call (a
    slow broker, on demand), recording how many events the database shows published each time
    the relay waits again."""

    def __init__(self, published: Callable[[], int]) -> None:
        self._pending: list[Callable[..., None]] = []
        self._published = published
        self.seen: list[int] = []

    def produce(self, topic: str, *, on_delivery: Callable[..., None], **_: Any) -> None:
        self._pending.append(on_delivery)

    def flush(self, timeout: float = 0) -> int:
        self.seen.append(self._published())
        half = max(1, len(self._pending) // 2) if self._pending else 0
        for report in self._pending[:half]:
            report(None, _Acked())
        del self._pending[:half]
        return len(self._pending)

    def poll(self, timeout: float = 0) -> int:
        return 0

    def list_topics(self, topic: str, timeout: float = 0) -> Any:
        """The relay asks for its topic first: this broker has it."""
        return SimpleNamespace(topics={topic: SimpleNamespace(error=None, partitions={0: None})})


def test_acknowledgements_are_marked_as_they_arrive(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any
) -> None:
    """A batch the broker acknowledges bit by bit is marked bit by bit: a worker that dies while
    waiting for the rest sends again only what was not acknowledged yet."""
    enqueue(db, topic, 8)

    def published() -> int:
        return sum(1 for row in outbox(db, topic) if row.published)

    fake = GradualProducer(published)

    def factory(_config: dict[str, Any]) -> Producer:
        return fake  # type: ignore[return-value]

    with relay_for(settings, pool, Metrics(), producer_factory=factory) as relay:
        result = drain(relay)
    assert (result.published, result.failed, result.reason) == (8, 0, "empty")
    # Each wait for more reports began with the earlier acknowledgements already marked (the
    # last flush is the relay's close).
    assert fake.seen == [0, 4, 6, 7, 8]
    assert published() == 8


# ------------------------------------------------------------------------------------------
# published only after the broker's acknowledgement


def test_broker_down_marks_nothing_and_the_rows_go_out_when_it_is_back(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any, captured: io.StringIO
) -> None:
    enqueue(db, topic, 3)
    metrics = Metrics()
    with relay_for(settings, pool, metrics) as relay:
        stack.stop_service("kafka")
        try:
            started = time.monotonic()
            down = drain(relay)
            took = time.monotonic() - started
        finally:
            stack.start_service("kafka")
            create_topic(stack, topic)  # memory storage: the restart lost it

        # Bounded wait, nothing marked, every row still unpublished (and leased).
        assert took < DELIVERY_TIMEOUT_S * 2 + 2
        assert (down.published, down.failed, down.reason) == (0, 3, "delivery_failed")
        rows = outbox(db, topic)
        assert not any(row.published for row in rows)
        assert counter(metrics, "publish_failures_total") == 3
        assert counter(metrics, "published_total") == 0
        failed = [e for e in events(captured) if e["event"] == "delivery failed"]
        assert len(failed) == 1 and failed[0]["failed"] == 3
        assert failed[0]["ids"] == [row.id for row in rows]

        # The leases run out; the broker is back: the same rows go out, once.
        wait_leases_expired(db, topic)
        back = drain(relay)
    assert (back.published, back.failed, back.reason) == (3, 0, "empty")
    assert all(row.published for row in outbox(db, topic))
    messages = consume(stack, topic, expect=3)
    assert [m.raw for m in messages] == [row.payload.encode() for row in rows]
    assert counter(metrics, "published_total") == 3


# ------------------------------------------------------------------------------------------
# a worker killed with events in flight


def bulk_enqueue(db: Db, topic: str, n: int) -> None:
    """n events in the product's own outbox in one statement (the relay publishes its rows
    whatever wrote them; one per recording id); each has its own event-id header."""
    with db.connect() as conn:
        conn.execute(
            "insert into recording_finalize.outbox (recording_id, topic, message_key, "
            "payload, headers) "
            "select gen_random_uuid(), %s, 'k-' || (n %% 7), "
            "jsonb_build_object('n', n), jsonb_build_object('event-type', "
            "'call-recording-available', 'event-id', gen_random_uuid()::text) "
            "from generate_series(1, %s) as n", (topic, n))


def event_states(db: Db, topic: str) -> dict[str, str]:
    """Each event's id header → published, leased (claimed, not marked) or waiting."""
    rows = db.all(
        "select o.headers ->> 'event-id', case when o.published_at is not null then "
        "'published' when exists (select from recording_finalize.relay_leases as l "
        "where l.outbox_id = o.id and l.leased_until > now()) then 'leased' else 'waiting' end "
        "from recording_finalize.outbox as o where o.topic = %s", (topic,))
    return dict(rows)


def test_a_worker_killed_with_events_in_flight_loses_none_and_the_next_run_sends_them_at_once(
    stack: Stack, worker: Worker, db: Db, topic: str, tmp_path: Any
) -> None:
    """kill -9 mid-drain: what the broker acknowledged and the relay marked is never sent again;
    what was in flight (leased, not marked) is sent again once at most; and the next worker
    publishes it at once — the killed runner's leases died with its lock — rather than after
    the lease (about a minute: the delivery timeout, its flush margin and 30 s)."""
    total = 20000
    bulk_enqueue(db, topic, total)
    env = {"RFR_RELAY_BATCH_SIZE": "2000"}
    first = worker.spawn("run-once", **env)
    deadline = time.monotonic() + 60
    try:
        # Killed once the relay has marked a first batch and leased the next: mid-drain. The
        # state is judged with the worker stopped (SIGSTOP), so that what the kill leaves is what
        # was seen: a batch can be marked in the moment between a look and a kill.
        while True:
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the relay published nothing"
            first.send_signal(signal.SIGSTOP)
            states = set(event_states(db, topic).values())
            if {"published", "leased"} <= states:
                break
            first.send_signal(signal.SIGCONT)
            time.sleep(0.01)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    at_kill = event_states(db, topic)
    in_flight = {e for e, state in at_kill.items() if state == "leased"}
    published = {e for e, state in at_kill.items() if state == "published"}
    assert in_flight, Counter(at_kill.values())  # the kill found a batch in flight
    assert len(published) < total
    lease_s = db.one("select extract(epoch from max(leased_until - leased_at)) "
                     "from recording_finalize.relay_leases")[0]
    assert lease_s > 30  # the default lease: what the events would wait without the rule

    # The next worker: how long until every event is published.
    log = (tmp_path / "run.log").open("w+")
    started = time.monotonic()
    second = subprocess.Popen([CLI, "run"], env=worker.environ(RFR_POLLING_INTERVAL="1s", **env),
                              stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        while db.one("select count(*) from recording_finalize.outbox "
                     "where topic = %s and published_at is null", (topic,))[0]:
            assert second.poll() is None, (tmp_path / "run.log").read_text()
            assert time.monotonic() - started < 60, "events still unpublished after 60 s"
            time.sleep(0.05)
        delay = time.monotonic() - started
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(30) == 0, (tmp_path / "run.log").read_text()
    print(f"kill -9 mid-drain: {len(published)} published, {len(in_flight)} in flight, "
          f"{total - len(published) - len(in_flight)} waiting; all published {delay:.1f} s "
          f"after the restart (lease {lease_s:.0f} s)")
    # Start-up checks, one cycle's claim and the drain of the rest: far below the lease.
    assert delay < min(20.0, lease_s / 2), delay

    messages = consume(stack, topic, expect=total, idle_s=2.0, timeout_s=120)
    copies = Counter(m.headers["event-id"] for m in messages)
    assert set(copies) == set(at_kill)  # none lost
    assert all(copies[e] == 1 for e in published)  # marked: never sent again
    assert all(copies[e] <= 2 for e in in_flight)  # in flight: sent again once at most
    assert all(copies[e] == 1 for e in set(at_kill) - published - in_flight)
    print(f"redelivered: {sum(1 for e in in_flight if copies[e] == 2)} of {len(in_flight)} in "
          "flight")


# ------------------------------------------------------------------------------------------
# a producer the broker no longer knows is replaced


class CountingFactory:
    """Builds real producers with the relay's configuration and remembers them."""

    def __init__(self, prepare: Callable[[Producer, int], None] | None = None) -> None:
        self.built: list[Producer] = []
        self._prepare = prepare

    def __call__(self, config: dict[str, Any]) -> Producer:
        producer = Producer(config)
        if self._prepare is not None:
            self._prepare(producer, len(self.built))
        self.built.append(producer)
        return producer


def test_restarted_broker_gets_a_new_producer(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any, captured: io.StringIO
) -> None:
    factory = CountingFactory()
    with relay_for(settings, pool, Metrics(), producer_factory=factory) as relay:
        enqueue(db, topic, 2)
        assert drain(relay).published == 2
        assert len(factory.built) == 1

        # Tansu (memory storage) restarts and forgets the producer id: the producer that
        # worked before cannot deliver any more.
        restart_kafka(stack, topic)
        enqueue(db, topic, 2)
        after_restart = drain(relay)
        assert after_restart.published == 0
        assert after_restart.reason in ("fatal", "delivery_failed")
        assert [r.published for r in outbox(db, topic)] == [True, True, False, False]

        # The next drain builds a new producer, which gets through.
        wait_leases_expired(db, topic)
        again = drain(relay)
    assert (again.published, again.reason) == (2, "empty")
    assert len(factory.built) == 2
    assert all(row.published for row in outbox(db, topic))
    new_rows = outbox(db, topic)[2:]
    messages = consume(stack, topic, expect=2)  # the restart lost the first two
    assert [m.raw for m in messages] == [row.payload.encode() for row in new_rows]


def test_fatal_producer_error_closes_the_producer_and_the_next_drain_recovers(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any, captured: io.StringIO
) -> None:
    # The first producer gets its producer id from the broker (one delivered message), lives
    # through an outage with a message in its queue (it times out) and a restart that loses
    # the id: its next send is a real librdkafka fatal error (UNKNOWN_PRODUCER_ID, "unable to
    # retry without risking duplication").
    def outage(producer: Producer, index: int) -> None:
        if index > 0:
            return
        reports: list[Any] = []
        producer.produce(
            topic, b"warm-up", key=b"warm-up", on_delivery=lambda e, m: reports.append(e)
        )
        assert producer.flush(10) == 0 and reports == [None]
        stack.stop_service("kafka")
        try:
            producer.produce(topic, b"lost", key=b"lost")
            assert producer.flush(DELIVERY_TIMEOUT_S * 3) == 0
        finally:
            stack.start_service("kafka")
            create_topic(stack, topic)

    factory = CountingFactory(outage)
    enqueue(db, topic, 2)
    metrics = Metrics()
    with relay_for(settings, pool, metrics, producer_factory=factory) as relay:
        fatal = drain(relay)
        assert (fatal.published, fatal.reason) == (0, "fatal")
        assert not any(row.published for row in outbox(db, topic))
        logged = [e for e in events(captured) if e["event"] == "kafka producer fatal"]
        assert len(logged) == 1 and logged[0]["level"] == "error"
        assert counter(metrics, "publish_failures_total") == 2

        wait_leases_expired(db, topic)
        recovered = drain(relay)
    assert (recovered.published, recovered.reason) == (2, "empty")
    assert len(factory.built) == 2
    messages = consume(stack, topic, expect=2)
    assert [m.raw for m in messages] == [row.payload.encode() for row in outbox(db, topic)]


# ------------------------------------------------------------------------------------------
# a topic that does not exist: a configuration error, never created by the product


def topics(stack: Stack) -> set[str]:
    """The broker's topics, asked for all at once (a request that creates none)."""
    admin = AdminClient({"bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"]})
    return set(admin.list_topics(timeout=10).topics)


def test_run_once_with_a_topic_that_does_not_exist_exits_2_naming_it_and_creates_nothing(
    stack: Stack, db: Db, bucket: str
) -> None:
    """The same wrong topic on both sides (RFR_TOPIC and the server's setting): Tansu, like
    Kafka with auto.create.topics.enable, creates a topic for any metadata request that lets it,
    and librdkafka's producer lets it by default - so the product once created the wrong topic
    and published its events there, without a word."""
    missing = f"rfr-missing-{uuid.uuid4().hex[:12]}"
    db.set_server_topic(missing)
    enqueue(db, missing, 3)
    stuck = seed_stuck(db)
    assert missing not in topics(stack)
    proc = Worker(stack, db, bucket, missing).cli("run-once")
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert f"topic {missing!r}" in proc.stderr and "RFR_TOPIC" in proc.stderr, proc.stderr
    assert proc.stdout == ""
    # Not created by the check, nothing published, and no row touched (exit 2 at start).
    time.sleep(1.0)
    assert missing not in topics(stack)
    assert [row.published or row.leased for row in outbox(db, missing)] == [False] * 3
    [attempts] = db.all("select attempts from messenger.recording_finalize_attempts "
                        "where recording_id = %s", (stuck.recording_id,))
    assert attempts == (0,)


def test_a_topic_deleted_under_the_relay_is_a_configuration_error_and_is_not_recreated(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any, captured: io.StringIO
) -> None:
    enqueue(db, topic, 2)
    admin = AdminClient({"bootstrap.servers": stack.env["KAFKA_BOOTSTRAP_SERVERS"]})
    admin.delete_topics([topic])[topic].result(timeout=10)
    deadline = time.monotonic() + 10
    while topic in topics(stack):
        assert time.monotonic() < deadline, "the topic was not deleted"
        time.sleep(0.2)
    metrics = Metrics()
    with relay_for(settings, pool, metrics) as relay:
        result = drain(relay)
    assert (result.claimed, result.published, result.reason) == (0, 0, "no_topic")
    assert counter(metrics, "config_errors_total") == 1
    [event] = [e for e in events(captured) if e["event"] == "relay topic missing"]
    assert event["topic"] == topic and event["level"] == "error"
    time.sleep(1.0)
    assert topic not in topics(stack)
    assert not any(row.published or row.leased for row in outbox(db, topic))
    # Once the topic is there again, the rows go out.
    create_topic(stack, topic)
    with relay_for(settings, pool, Metrics()) as relay:
        assert drain(relay).published == 2


# ------------------------------------------------------------------------------------------
# deadline and stop


def test_no_batch_starts_that_could_outlive_the_deadline_or_after_stop_unless_bounded(
    stack: Stack, db: Db, topic: str, settings: Settings, pool: Any, captured: io.StringIO
) -> None:
    enqueue(db, topic, 1)
    with relay_for(settings, pool, Metrics()) as relay:
        # Less time left than one batch's delivery wait: nothing is claimed.
        late = relay.drain(time.monotonic() + DELIVERY_TIMEOUT_S, threading.Event())
        assert (late.claimed, late.reason) == (0, "deadline")
        assert [e["event"] for e in events(captured)] == ["relay deadline"]
        stop = threading.Event()
        stop.set()
        stopped = relay.drain(time.monotonic() + 60, stop)
        assert (stopped.claimed, stopped.reason) == (0, "stopped")
        assert outbox(db, topic)[0].leased is False
        # A stopping worker's last drain (bounded) starts a batch with whatever time is left
        # and waits for the broker only that long.
        started = time.monotonic()
        last = relay.drain(started + DELIVERY_TIMEOUT_S, threading.Event(), bounded=True)
        assert (last.published, last.reason) == (1, "empty")
        assert time.monotonic() - started < DELIVERY_TIMEOUT_S
        assert all(row.published for row in outbox(db, topic))


# ------------------------------------------------------------------------------------------
# the producer's configuration


OFFLINE_ENV = {
    "DATABASE_URL": "postgresql://w:pw@db.example:5432/rfr",
    "KAFKA_BOOTSTRAP_SERVERS": "kafka.example:9092",
}


def test_the_relay_producer_is_idempotent_with_acks_all() -> None:
    config = producer_config(load_settings(OFFLINE_ENV))
    assert config["enable.idempotence"] is True and config["acks"] == "all"
    assert config["message.timeout.ms"] == 30000  # a dead broker fails a batch, never hangs it
    assert config["partitioner"] == "murmur2_random"  # the contract's key → partition rule
    # No metadata request of the product may create a topic (librdkafka's producer would).
    assert config["allow.auto.create.topics"] is False


def test_security_settings_reach_the_producer() -> None:
    plain = producer_config(load_settings(OFFLINE_ENV))
    assert plain["security.protocol"] == "PLAINTEXT"
    assert not any(key.startswith("sasl.") for key in plain)
    settings = load_settings(
        OFFLINE_ENV
        | {
            "KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "KAFKA_SASL_USERNAME": "relay",
            "KAFKA_SASL_PASSWORD": "s3cret-pw",
        }
    )
    config = producer_config(settings)
    assert config["security.protocol"] == "SASL_SSL"
    assert config["sasl.mechanism"] == "SCRAM-SHA-512"
    assert (config["sasl.username"], config["sasl.password"]) == ("relay", "s3cret-pw")
