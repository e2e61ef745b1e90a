"""Outbox → Kafka: lease a batch (``relay_claim``), produce it all, wait once, mark what the
broker acknowledged (``relay_mark_published`` with the lease token).

Nothing is marked before the broker's acknowledgement (idempotent producer, ``acks=all``), so a
crash means a message is sent again, never lost. A batch with delivery failures, or a fatal
producer error, ends the drain and closes the producer: a broker that forgot the producer id
(Tansu with memory storage, after a restart) lets only a new producer through again.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from . import queries
from .config import Settings
from .db import PoolLike
from .logs import log
from .metrics import Metrics

CLIENT_ID = "recording-finalize-retry"

#: ``message.timeout.ms``: with the broker away, a batch's reports all fail within this bound.
DEFAULT_DELIVERY_TIMEOUT_S = 30.0
#: Head room of a batch's wait over the delivery timeout (at most the timeout itself).
FLUSH_MARGIN_S = 5.0
#: The database lease outlives claim + delivery wait + mark by this much, so a slow batch is
#: never taken over by a second relay while it is still in flight.
LEASE_MARGIN_S = 30.0
#: While waiting for the delivery reports, the acknowledged rows are marked this often.
MARK_EVERY_S = 0.5
#: How many failed row ids a "delivery failed" log line lists at most.
LOGGED_IDS = 20
#: A bounded drain (a stopping worker's) starts no batch with less time than this left.
BOUNDED_MIN_S = 0.2
#: A stop cuts a batch's wait for its reports to this: with the broker away a SIGTERM took 32 s
#: against Kubernetes' 30 s grace period. What is unacknowledged by then goes out again later.
STOP_WAIT_S = 2.0

# Without a logger librdkafka prints its own (non-JSON) lines to stderr.
LIBRDKAFKA_LOG = logging.getLogger("recording_finalize.relay.librdkafka")
LIBRDKAFKA_LOG.addHandler(logging.NullHandler())
LIBRDKAFKA_LOG.propagate = False


def client_config(settings: Settings) -> dict[str, Any]:
    """Where the broker is and how to log in: every Kafka client the product builds (the relay's
    producer, the start-up check's and /readyz's)."""
    sasl = {"sasl.mechanism": settings.kafka_sasl_mechanism or None,
            "sasl.username": settings.kafka_sasl_username,
            "sasl.password": settings.kafka_sasl_password}
    return {"bootstrap.servers": settings.kafka_bootstrap_servers, "client.id": CLIENT_ID,
            "security.protocol": settings.kafka_security_protocol,
            # A topic that does not exist is a configuration error, never created by our own
            # metadata requests: librdkafka's producer lets a broker with auto-creation on
            # (Tansu; Kafka with auto.create.topics.enable) create it, and a wrong RFR_TOPIC set
            # alike on the server's side then published every event to a topic nobody reads.
            "allow.auto.create.topics": False,
            "reconnect.backoff.max.ms": 2000} | {k: v for k, v in sasl.items() if v is not None}


#: How long a metadata request for the topic may take (start-up, /readyz).
TOPIC_CHECK_TIMEOUT_S = 5.0
#: The same before a drain's first claim: a broker that does not answer costs each drain no
#: more than this (its deliveries then fail as before). A producer just built may need longer
#: to connect (TLS, SASL): then that drain goes without the check, the next one has it.
DRAIN_TOPIC_CHECK_S = 1.0


def check_topic(client: Producer, topic: str,
                timeout_s: float = TOPIC_CHECK_TIMEOUT_S) -> tuple[int, str | None]:
    """(its partitions, None), or (0, why the broker has no ``topic`` for us), from a metadata
    request for that topic alone on ``client`` (built with ``client_config``: the request
    creates nothing). Raises ``KafkaException`` when the broker does not answer in time."""
    found = client.list_topics(topic=topic, timeout=timeout_s).topics.get(topic)
    if found is not None and found.error is None:
        return len(found.partitions), None
    why = "absent" if found is None else found.error.name()
    return 0, (f"the broker answers but has no topic {topic!r} for us ({why}): check "
               "RFR_TOPIC, the topic and its ACLs; the product never creates it")


def producer_config(settings: Settings,
                    delivery_timeout_s: float = DEFAULT_DELIVERY_TIMEOUT_S) -> dict[str, Any]:
    """Code, not configuration: "marked published only after the broker's ack" rests on the
    producer's idempotence and acks=all."""
    return client_config(settings) | {
        # The broker dedupes retries and keeps per-partition order (so per-key order).
        "enable.idempotence": True,
        "acks": "all",
        # The Java client's partitioner: the same SessionId lands on the same partition
        # whichever client (JVM or librdkafka-based) publishes it.
        "partitioner": "murmur2_random",
        # Small batches stay small on the wire; a full batch goes out as soon as it is produced.
        "linger.ms": 20,
        "batch.num.messages": 10000,
        "message.timeout.ms": max(1, round(delivery_timeout_s * 1000)),
        "socket.connection.setup.timeout.ms": max(1000, round(delivery_timeout_s * 1000)),
    }


def delivery_timeout_for(settings: Settings) -> float:
    """The delivery timeout that fits a batch (whose wait is at most twice it) in what a cycle
    leaves of the lock TTL: with a fixed 30 s a short TTL never published anything."""
    budget = settings.lock_ttl - settings.max_run_duration - settings.s3_timeout - 1.0
    return max(1.0, min(DEFAULT_DELIVERY_TIMEOUT_S, budget / 2))


@dataclass
class RelayResult:
    """What one ``drain`` did; ``reason``: empty, deadline, stopped, delivery_failed, fatal or
    no_topic (the broker has no such topic: a configuration error, nothing claimed)."""

    batches: int = 0
    claimed: int = 0
    published: int = 0
    failed: int = 0
    reason: str = "empty"


@dataclass
class _Batch:
    """One batch's delivery reports (filled during ``flush``), marked published by ``mark`` as
    they come; ``marked``: the rows marked (not those another relay took over meanwhile)."""

    mark: Callable[[list[int]], int]
    acked: list[int] = field(default_factory=list)
    failed: dict[int, KafkaError] = field(default_factory=dict)
    closed: bool = False
    marked_upto: int = 0
    marked: int = 0

    def on_delivery(self, row_id: int, err: KafkaError | None, msg: Message) -> None:
        if self.closed:
            return  # a report after the batch was given up: its row is already counted as failed
        error = err if err is not None else msg.error()
        if error is None:
            self.acked.append(row_id)
        else:
            self.failed[row_id] = error

    def mark_acknowledged(self) -> None:
        if len(self.acked) > self.marked_upto:
            self.marked += self.mark(sorted(self.acked[self.marked_upto:]))
            self.marked_upto = len(self.acked)


class Relay:
    """Publishes the product's own outbox (``recording_finalize.outbox``) to ``settings.topic``;
    the drain holds one autocommit connection of ``pool``, never inside a transaction."""

    def __init__(self, settings: Settings, pool: PoolLike, metrics: Metrics, *,
                 delivery_timeout_s: float | None = None,
                 lease_margin_s: float = LEASE_MARGIN_S,
                 producer_factory: Callable[[dict[str, Any]], Producer] = Producer) -> None:
        self._settings = settings
        self._pool = pool
        self._metrics = metrics
        self._producer_factory = producer_factory
        delivery_timeout_s = delivery_timeout_s or delivery_timeout_for(settings)
        self._config = producer_config(settings, delivery_timeout_s)
        self._flush_wait_s = delivery_timeout_s + min(FLUSH_MARGIN_S, delivery_timeout_s)
        self._lease_s = self._flush_wait_s + lease_margin_s
        self._producer: Producer | None = None
        self._fatal: KafkaError | None = None
        self._logged_errors: set[int] = set()
        # The current drain's stop (it cuts a batch's wait) and a bounded drain's deadline.
        self._stop = threading.Event()
        self._wait_until = math.inf

    def _on_error(self, err: KafkaError) -> None:
        """librdkafka's client-level errors, served during flush/poll on this thread."""
        if _is_fatal(err):
            self._fatal = err
        # Brokers going away and coming back repeat the same error: once per drain is enough.
        if err.code() in self._logged_errors and not err.fatal():
            return
        self._logged_errors.add(err.code())
        log("kafka error", level="error" if err.fatal() else "warning", error=err.name(),
            fatal=err.fatal(), reason=err.str())

    def close(self, wait_s: float = FLUSH_MARGIN_S) -> None:
        """Waits at most ``wait_s`` for in-flight messages, then purges the rest (unmarked, it goes
        out again later): librdkafka's close would wait for it up to the delivery timeout."""
        producer, self._producer = self._producer, None
        if producer is None:
            return
        # A fatal producer delivers nothing more.
        left = 1 if self._fatal is not None else producer.flush(
            max(0.0, min(wait_s, FLUSH_MARGIN_S)))
        if left:
            producer.purge(in_queue=True, in_flight=True, blocking=False)
            producer.poll(0)
        closer = getattr(producer, "close", None)  # confluent-kafka >= 2.13
        if closer is not None:
            closer()

    def drain(self, deadline: float, stop: threading.Event, *,
              bounded: bool = False) -> RelayResult:
        """Publishes batches until none is left, ``deadline`` is too close, ``stop`` is set or a
        delivery failed. ``bounded``: a stopping worker's drain, waiting until ``deadline``."""
        result = RelayResult()
        self._logged_errors.clear()
        self._stop, self._wait_until = stop, deadline if bounded else math.inf
        reason: str | None = None
        with self._pool.connection() as conn:
            while reason is None:
                # A batch may take the whole delivery wait: start one only if it ends in time
                # (bounded: only if any time is left; its wait ends at the deadline).
                if stop.is_set():
                    reason = "stopped"
                elif deadline - time.monotonic() <= (BOUNDED_MIN_S if bounded
                                                     else self._flush_wait_s):
                    reason = "deadline"
                    log("relay deadline", level="warning", batches=result.batches,
                        message="too little time left for another batch; the rest waits for "
                        "the next cycle")
                else:
                    reason = self._batch(conn, result)
        result.reason = reason
        return result

    def _batch(self, conn: queries.Connection, result: RelayResult) -> str | None:
        """One batch: claim, produce, wait, mark. Returns why the drain ends, or None."""
        settings = self._settings
        if self._producer is None:
            self._fatal = None
            self._producer = self._producer_factory(
                self._config | {"error_cb": self._on_error, "logger": LIBRDKAFKA_LOG})
        producer = self._producer
        if result.batches == 0 and (refused := self._topic_refused(producer)) is not None:
            self._metrics.config_errors_total.inc()
            log("relay topic missing", level="error", topic=settings.topic, message=refused)
            return "no_topic"
        rows = queries.relay_claim(conn, settings.relay_batch_size, self._lease_s,
                                   settings.lock_key, settings.topic)
        if not rows:
            return "empty"
        rows.sort(key=lambda row: row.id)
        token = rows[0].lease_token
        batch = self._publish(producer, rows, _Batch(
            lambda ids: queries.relay_mark_published(conn, ids, token)))
        self._metrics.count_published(batch.marked, len(batch.failed))
        result.batches += 1
        result.claimed += len(rows)
        result.published += batch.marked
        result.failed += len(batch.failed)
        if batch.acked:
            log("batch published", topic=settings.topic, rows=len(rows), published=batch.marked,
                firstId=batch.acked[0], lastId=batch.acked[-1])
        if batch.failed:
            log("delivery failed", level="warning", topic=settings.topic, failed=len(batch.failed),
                errors=sorted({err.name() for err in batch.failed.values()}),
                ids=sorted(batch.failed)[:LOGGED_IDS],
                message="not marked published; retried when the lease runs out")
        if self._fatal is not None or batch.failed:
            if self._fatal is not None:
                log("kafka producer fatal", level="error", error=self._fatal.name(),
                    reason=self._fatal.str(),
                    message="the producer is closed; the next drain builds a new one")
            # The producer's session may be what fails (module doc). A stopping worker's close
            # waits for nothing, a bounded one's until its deadline.
            self.close(0.0 if self._stop.is_set() else self._wait_until - time.monotonic())
            return "fatal" if self._fatal is not None else "delivery_failed"
        if len(rows) < settings.relay_batch_size:
            # A short batch took every row that was claimable: the drain is done. Claiming on
            # while the service writes would chase its new events a few at a time, each claim
            # walking the index entries of the rows just published until vacuum removes them
            # (~43 ms a claim was measured after a 20,000-row drain); they are the next cycle's.
            return "empty"
        return None

    def _topic_refused(self, producer: Producer) -> str | None:
        """A drain asks for the topic before it claims anything: a topic that is missing (or was
        deleted under the running worker) fails no delivery, holds no lease and fires the
        config-error alert. A broker that does not answer is no verdict: the deliveries'."""
        try:
            return check_topic(producer, self._settings.topic,
                               min(DRAIN_TOPIC_CHECK_S, self._flush_wait_s))[1]
        except KafkaException:
            return None

    def _publish(self, producer: Producer, rows: list[queries.OutboxRow], batch: _Batch) -> _Batch:
        """Produces every row, then marks what the broker acknowledges as it comes: a crash
        re-delivers only what was in flight."""
        for index, row in enumerate(rows):
            try:
                self._produce(producer, row, batch)
            except KafkaException as exc:
                err = batch.failed[row.id] = kafka_error(exc)
                if _is_fatal(err):
                    # Nothing more can be produced: the rest of the batch waits for its lease.
                    self._fatal = err
                    batch.failed |= dict.fromkeys((rest.id for rest in rows[index + 1:]), err)
                    break
        remaining = self._flush_marking(producer, batch)
        batch.closed = True
        if remaining:
            # Cannot happen with message.timeout.ms below the wait; if it does, those rows are
            # simply not marked (and may be delivered twice).
            log("kafka flush timed out", level="warning", inFlight=remaining)
        reported = set(batch.acked) | set(batch.failed)
        silent = KafkaError(KafkaError._MSG_TIMED_OUT)
        batch.failed |= {row.id: silent for row in rows if row.id not in reported}
        batch.mark_acknowledged()
        batch.acked.sort()
        return batch

    def _flush_marking(self, producer: Producer, batch: _Batch) -> int:
        """Waits for the reports in slices of MARK_EVERY_S, marking after each; returns the
        messages still in flight."""
        deadline = min(time.monotonic() + self._flush_wait_s, self._wait_until)
        while True:
            if self._stop.is_set():
                deadline = min(deadline, time.monotonic() + STOP_WAIT_S)
            try:
                remaining = int(producer.flush(max(0.0, min(MARK_EVERY_S,
                                                            deadline - time.monotonic()))))
            except (KafkaException, SystemError) as exc:
                # A fatal error: confluent-kafka 2.16 raises it from flush, as a SystemError
                # wrapping the KafkaException when an error_cb is set.
                raised = [c for c in (exc, exc.__cause__, exc.__context__)
                          if isinstance(c, KafkaException)]
                if not raised:
                    raise
                self._fatal = kafka_error(raised[0])
                return 0
            batch.mark_acknowledged()
            if not remaining or time.monotonic() >= deadline:
                return remaining

    def _produce(self, producer: Producer, row: queries.OutboxRow, batch: _Batch) -> None:
        headers: list[tuple[str, str | bytes | None]] = [
            (name, str(value).encode("utf-8")) for name, value in row.headers.items()]
        while True:
            try:
                producer.produce(self._settings.topic, value=row.payload.encode("utf-8"),
                                 key=row.message_key.encode("utf-8"), headers=headers,
                                 on_delivery=partial(batch.on_delivery, row.id))
                return
            except BufferError:
                # The local queue is full: let librdkafka send some, then try again.
                producer.poll(0.1)


def _is_fatal(err: KafkaError) -> bool:
    return bool(err.fatal()) or err.code() == KafkaError._FATAL


def kafka_error(exc: KafkaException) -> KafkaError:
    arg = exc.args[0] if exc.args else None
    return arg if isinstance(arg, KafkaError) else KafkaError(KafkaError._FAIL, str(exc))
