"""The peers: the same job written as a Procrastinate task and as a PgQueuer entrypoint.

What a Python team would otherwise build: one queued job per stuck recording, and the job does
the same real work as our worker — a boto3 ``head_object`` of the same object, the same
metadata rules (``recording_finalize.storage.parse_metadata``), and the same transition,
outbox and realtime rows and finalize-row close in one transaction
(``recording_finalize.recording_ingest_completed``,
the function the happy path calls, which shares ``transition_available`` with ``apply_outcome``).
The queue is the peer's own; enqueueing happens before the clock starts, as seeding our
finalize rows does.

Settings, as the projects document them: Procrastinate runs async tasks on one worker with
``concurrency`` (30 here, its documented way to run many I/O-bound jobs at once; blocking calls
go to a thread with ``asyncio.to_thread``); PgQueuer runs ``QueueManager.run(batch_size=10,
mode=drain)`` (its default batch) in two processes (one per core). Both peers use the owner
role (their queue tables live in the same database) and an async psycopg pool for the work.

Run as ``python -m bench.peers {procrastinate|pgqueuer} ...``: it sets everything up, prints
``ready``, waits for a line on stdin, drains the queue, prints one JSON object and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import boto3
from botocore.config import Config

KEY_TEMPLATE = "recordings/{recording_id}"
BUCKET = "call-recordings"
TOPIC_ENV = "RFR_TOPIC"

PROCRASTINATE_QUEUE = "finalize"
PGQUEUER_ENTRYPOINT = "finalize"
# Their queue tables, emptied between runs (only those that exist).
QUEUE_TABLES = ("procrastinate_jobs", "procrastinate_events", "procrastinate_workers",
                "procrastinate_periodic_defers",
                "pgqueuer", "pgqueuer_log", "pgqueuer_statistics")

FINALIZE = """
select recording_finalize.recording_ingest_completed(
    p_recording_id => %s, p_file_id => %s, p_size_bytes => %s, p_duration_seconds => %s,
    p_format => %s, p_topic => %s)
"""
FINALIZE_ASYNCPG = """
select recording_finalize.recording_ingest_completed(
    p_recording_id => $1, p_file_id => $2, p_size_bytes => $3, p_duration_seconds => $4,
    p_format => $5, p_topic => $6)
"""


def s3_client(env: dict[str, str], connections: int) -> Any:
    """boto3 as a team would configure it for a local S3: path style, standard retries."""
    config = Config(
        region_name=env.get("AWS_DEFAULT_REGION", "us-east-1"),
        retries={"mode": "standard", "total_max_attempts": 2},
        max_pool_connections=connections,
        s3={"addressing_style": "path"},
    )
    return boto3.session.Session(
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        region_name=env.get("AWS_DEFAULT_REGION", "us-east-1"),
    ).client("s3", endpoint_url=env["S3_ENDPOINT_URL"], config=config)


class Work:
    """The job's body, shared by both peers."""

    def __init__(self, env: dict[str, str], pool: Any, connections: int) -> None:
        from recording_finalize.storage import parse_metadata

        self._parse = parse_metadata
        self._s3 = s3_client(env, connections)
        self._pool = pool
        self._topic = env[TOPIC_ENV]
        self._s3.head_bucket(Bucket=BUCKET)  # loads botocore's model before the clock starts

    def _head(self, recording_id: str) -> Any:
        key = KEY_TEMPLATE.format(recording_id=recording_id)
        head = self._s3.head_object(Bucket=BUCKET, Key=key)
        verdict = self._parse(key, dict(head))
        if verdict.outcome != "found":
            raise RuntimeError(f"{recording_id}: {verdict.outcome} {verdict.error}")
        return verdict

    async def run(self, recording_id: str) -> None:
        verdict = await asyncio.to_thread(self._head, recording_id)
        args = (recording_id, verdict.file_id, verdict.size_bytes, verdict.duration_seconds,
                verdict.format, self._topic)
        if hasattr(self._pool, "acquire"):  # asyncpg
            async with self._pool.acquire() as conn:
                await conn.execute(FINALIZE_ASYNCPG, uuid.UUID(args[0]), *args[1:])
        else:
            async with self._pool.connection() as conn:
                await conn.execute(FINALIZE, args)


def _report(t0: float, cpu0: float, extra: dict[str, Any]) -> None:
    from bench.sysstat import peak_rss_kb

    out = {
        "wall_s": time.perf_counter() - t0,
        "cpu_s": time.process_time() - cpu0,
        "maxrss_kb": peak_rss_kb(),
        **extra,
    }
    print(json.dumps(out), flush=True)


async def _wait_for_go() -> None:
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)


# ------------------------------------------------------------------------------------------
# Procrastinate


def procrastinate_app(url: str) -> Any:
    import procrastinate

    return procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=url, min_size=2, max_size=10))


async def procrastinate_setup(url: str) -> None:
    """Creates Procrastinate's schema (once per database)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (await conn.execute(
            "select to_regclass('procrastinate_jobs') is not null")).fetchone()
        if row and row[0]:
            return
    app = procrastinate_app(url)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()


async def procrastinate_enqueue(url: str, ids: Sequence[str]) -> None:
    app = procrastinate_app(url)

    @app.task(name="finalize", queue=PROCRASTINATE_QUEUE)
    async def finalize(recording_id: str) -> None:  # only its name is used here
        del recording_id

    async with app.open_async():
        for i in range(0, len(ids), 2000):
            await finalize.batch_defer_async(*({"recording_id": x} for x in ids[i:i + 2000]))


async def procrastinate_worker(url: str, concurrency: int) -> None:
    import psycopg_pool

    env = dict(os.environ)
    app = procrastinate_app(url)
    done = 0
    async with psycopg_pool.AsyncConnectionPool(
        url, min_size=4, max_size=10, kwargs={"autocommit": True}, open=False
    ) as pool:
        work = Work(env, pool, connections=concurrency)

        @app.task(name="finalize", queue=PROCRASTINATE_QUEUE)
        async def finalize(recording_id: str) -> None:
            nonlocal done
            await work.run(recording_id)
            done += 1

        async with app.open_async():
            await _wait_for_go()
            t0, cpu0 = time.perf_counter(), time.process_time()
            # wait=False: the worker stops once it has caught up with the queue.
            await app.run_worker_async(queues=[PROCRASTINATE_QUEUE], concurrency=concurrency,
                                       wait=False, install_signal_handlers=False)
            _report(t0, cpu0, {"jobs": done})


# ------------------------------------------------------------------------------------------
# PgQueuer


async def _pgq_queries(url: str) -> tuple[Any, Any]:
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries

    conn = await asyncpg.connect(url)
    return conn, Queries(AsyncpgDriver(conn))


async def pgqueuer_setup(url: str) -> None:
    """Installs PgQueuer's schema (once per database)."""
    conn, queries = await _pgq_queries(url)
    try:
        if not await conn.fetchval("select to_regclass('pgqueuer') is not null"):
            await queries.install()
    finally:
        await conn.close()


async def pgqueuer_enqueue(url: str, ids: Sequence[str]) -> None:
    conn, queries = await _pgq_queries(url)
    try:
        for i in range(0, len(ids), 2000):
            chunk = ids[i:i + 2000]
            await queries.enqueue([PGQUEUER_ENTRYPOINT] * len(chunk),
                                  [x.encode() for x in chunk], [0] * len(chunk))
    finally:
        await conn.close()


async def pgqueuer_worker(url: str, batch_size: int) -> None:
    """PgQueuer as its README sets it up: asyncpg, ``AsyncpgDriver``; the work uses an asyncpg
    pool too."""
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries, QueueManager
    from pgqueuer.types import QueueExecutionMode

    env = dict(os.environ)
    done = 0
    pool = await asyncpg.create_pool(url, min_size=2, max_size=10)
    work = Work(env, pool, connections=16)
    conn = await asyncpg.connect(url)
    qm = QueueManager(Queries(AsyncpgDriver(conn)))

    @qm.entrypoint(PGQUEUER_ENTRYPOINT)
    async def finalize(job: Any) -> None:
        nonlocal done
        await work.run(job.payload.decode())
        done += 1

    await _wait_for_go()
    t0, cpu0 = time.perf_counter(), time.process_time()
    await qm.run(batch_size=batch_size, mode=QueueExecutionMode.drain,
                 dequeue_timeout=timedelta(seconds=1))
    _report(t0, cpu0, {"jobs": done})
    await conn.close()
    await pool.close()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.peers")
    ap.add_argument("peer", choices=("procrastinate", "pgqueuer"))
    ap.add_argument("--concurrency", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=10)
    args = ap.parse_args(argv)
    url = os.environ["DATABASE_URL"]
    if args.peer == "procrastinate":
        asyncio.run(procrastinate_worker(url, args.concurrency))
    else:
        asyncio.run(pgqueuer_worker(url, args.batch_size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
