"""Cost growth: what grows with the history and the backlog, and what must not.

- claim: ``claim_due`` mean time in a database with no finished rows and in one with 1,000,000
  ``Done`` finalize rows (each with its Available recording and ended session, as the happy
  path leaves them), the same 5,000 due rows claimed in batches of 100 in both;
- relay: events/s draining 100,000 unpublished events of the product's own outbox
  (``recording_finalize.outbox``) to Kafka, through the driver's own ``Relay.drain`` as the
  worker role;
- RSS: the peak resident memory of the real ``recording-finalize run-once`` facing a backlog of
  100,000 due rows.
"""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

import psycopg

HISTORY_SQL = ("""
insert into messenger.call_sessions (id, started_at, ended_at)
select s.sid, now() - interval '3 days', now() - interval '3 days' + interval '10 minutes'
from (select md5('s' || i)::uuid as sid from generate_series(1, %(n)s) as i) as s
""", """
insert into messenger.call_recordings (
    id, session_kind, session_id, media_type, trigger, status, file_id, size_bytes,
    duration_seconds, format, started_at, ended_at, available_at, version, created_at,
    updated_at)
select md5('r' || i)::uuid, 'Direct', md5('s' || i)::uuid, 'Audio', 'Auto', 'Available',
    'recordings/' || md5('r' || i), 1000 + i, 60, 'Webm', now() - interval '3 days',
    now() - interval '3 days' + interval '10 minutes',
    now() - interval '3 days' + interval '11 minutes', 3, now() - interval '3 days',
    now() - interval '3 days'
from generate_series(1, %(n)s) as i
""", """
insert into messenger.recording_finalize_attempts (
    recording_id, session_kind, session_id, status, attempts, next_attempt_at, created_at,
    updated_at)
select md5('r' || i)::uuid, 'Direct', md5('s' || i)::uuid, 'Done', 1,
    now() - interval '3 days' + (i %% 1000) * interval '1 s', now() - interval '3 days',
    now() - interval '3 days'
from generate_series(1, %(n)s) as i
""")

# The product's own events (docs/contract/tables.md): what its relay publishes and marks.
OUTBOX_SQL = """
insert into recording_finalize.outbox (recording_id, topic, message_key, payload, headers)
select r, %(topic)s, s::text,
    jsonb_build_object(
        'recordingId', r, 'sessionKind', 'Direct', 'sessionId', s, 'chatId', gen_random_uuid(),
        'dealId', null, 'tenantId', gen_random_uuid(), 'mediaType', 'Audio',
        'fileId', 'recordings/' || r, 'format', 'Webm', 'durationSeconds', 240,
        'sizeBytes', 123456, 'trigger', 'Auto', 'startedAt', '2026-01-01T10:00:00.000Z',
        'endedAt', '2026-01-01T10:04:00.000Z', 'availableAt', '2026-01-01T10:05:00.000Z'),
    jsonb_build_object('event-type', 'call-recording-available',
        'event-id', gen_random_uuid()::text)
from (select gen_random_uuid() as r, gen_random_uuid() as s
      from generate_series(1, %(n)s)) as ids
"""

# The service's own events (its outbox, which the product only reads through the adapter's
# service_events view): history a prune must leave alone.
SERVICE_OUTBOX_SQL = """
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload,
    headers)
select %(topic)s, s::text, 'call-recording-available', r::text,
    jsonb_build_object('recordingId', r, 'sessionKind', 'Direct', 'sessionId', s),
    jsonb_build_object('event-type', 'call-recording-available',
        'event-id', gen_random_uuid()::text)
from (select gen_random_uuid() as r, gen_random_uuid() as s
      from generate_series(1, %(n)s)) as ids
"""


def seed_history(conn: psycopg.Connection[Any], n: int) -> float:
    """n finished recordings (Available, Done, sessions ended); returns seconds."""
    t0 = time.monotonic()
    for statement in HISTORY_SQL:
        conn.execute(statement, {"n": n})
    conn.execute("vacuum analyze messenger.call_sessions, messenger.call_recordings,"
                 " messenger.recording_finalize_attempts")
    return time.monotonic() - t0


def clear_pending(conn: psycopg.Connection[Any]) -> None:
    """Removes whatever a previous claim measurement left (only non-Done rows)."""
    with conn.transaction():
        for table in ("call_sessions", "conference_sessions"):
            conn.execute(f"""
                delete from messenger.{table} where id in (
                    select session_id from messenger.recording_finalize_attempts
                    where status <> 'Done')""")
        conn.execute("""
            delete from messenger.call_recordings where id in (
                select recording_id from messenger.recording_finalize_attempts
                where status <> 'Done')""")
        conn.execute("delete from messenger.recording_finalize_attempts where status <> 'Done'")


def time_claims(worker_url: str, settings: Any, batches: int) -> list[float]:
    """Milliseconds of each of ``batches`` claim_due calls, as the worker role."""
    from recording_finalize import queries

    out = []
    with psycopg.connect(worker_url, autocommit=True) as conn:
        for _ in range(batches):
            t0 = time.perf_counter()
            rows = queries.claim_due(conn, settings)
            out.append((time.perf_counter() - t0) * 1000)
            if not rows:
                break
    return out


def claim_blocks(conn: psycopg.Connection[Any], dbname: str) -> dict[str, float]:
    """Shared buffers the claims of ``dbname`` hit and read (from outside shared_buffers),
    per call, from pg_stat_statements (server-side execution time too)."""
    row = conn.execute(
        """
        select sum(calls), sum(shared_blks_hit), sum(shared_blks_read),
            sum(total_exec_time)
        from pg_stat_statements s join pg_database d on d.oid = s.dbid
        where d.datname = %s and s.query like %s
        """,
        (dbname, "%claim_due%"),
    ).fetchone()
    if not row or not row[0]:
        return {}
    calls = float(row[0])
    return {"calls": calls, "hit_per_call": float(row[1]) / calls,
            "read_per_call": float(row[2]) / calls, "exec_ms_per_call": float(row[3]) / calls}


def seed_outbox(conn: psycopg.Connection[Any], topic: str, n: int) -> None:
    """n unpublished events in the product's own outbox (and none of its leases)."""
    conn.execute("truncate recording_finalize.outbox, recording_finalize.relay_leases")
    conn.execute(OUTBOX_SQL, {"topic": topic, "n": n})
    conn.execute("vacuum analyze recording_finalize.outbox")


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "mean": statistics.fmean(values),
    }


def new_topic_name(kind: str) -> str:
    return f"bench-{kind}-{uuid.uuid4().hex[:8]}"
