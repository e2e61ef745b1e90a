"""The adapter and what lies beneath it (docs/contract/adapter.md): a DBA's adapter is kept and
its ports checked; what would fail at run time is found before any row is touched; a fault that
hits every row gives the attempts back and keeps its cause; the service's own outbox is only
read; a refusal by the database at start exits 2.

The test database is the reference schema; the stack's superuser plays the service's DBA (the
product's owner, which ran migrate, owns the service's tables here, so revoking from it is how a
missing grant is staged). tests/py/test_foreign_schema.py does the same end to end on a schema
this project did not write.
"""

from __future__ import annotations

import io
import json
import threading
import uuid
from typing import Any

import psycopg
from conftest import (
    Db,
    Worker,
    consume,
    finalize_row,
    recording,
    seed_stuck,
)
from recording_finalize import logs
from recording_finalize.config import load_settings
from recording_finalize.cycle import Context, run_cycle
from recording_finalize.db import open_pool
from recording_finalize.metrics import Metrics
from recording_finalize.storage import Storage

OWNER = "the product's owner"


def _owner(db: Db) -> str:
    row = db.one("select nspowner::regrole::text from pg_namespace "
                 "where nspname = 'recording_finalize'")
    return str(row[0])


def _migrate(worker: Worker, db: Db) -> Any:
    return worker.cli("migrate", DATABASE_URL=db.schema_owner_url, timeout=120)


def _as_owner(db: Db, sql: str) -> None:
    with psycopg.connect(db.schema_owner_url, autocommit=True) as conn:
        conn.execute(sql)


def _cycle(worker: Worker) -> tuple[Any, Context, list[dict[str, Any]]]:
    """One cycle in-process, past the start-up checks (a fault that shows only at run time)."""
    settings = load_settings(worker.environ())
    pool = open_pool(settings)
    try:
        ctx = Context(settings=settings, pool=pool, storage=Storage(settings), metrics=Metrics())
        out = io.StringIO()
        logs.set_stream(out)
        try:
            summary = run_cycle(ctx, threading.Event())
        finally:
            logs.set_stream(None)
    finally:
        pool.close()
    return summary, ctx, [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_fault_every_row_meets_gives_the_attempts_back_and_keeps_its_cause(
    worker: Worker, db: Db
) -> None:
    """Finding 5: one missing grant made every apply fail, each cycle burned an attempt on
    every claimed row, and 55 rows were quarantined crash_loop with "no error recorded"."""
    seeded = [seed_stuck(db) for _ in range(3)]  # no binary: each is a 404 -> Failed
    owner = _owner(db)
    with db.connect() as conn:  # the service's DBA takes every UPDATE away
        conn.execute(f"revoke update on messenger.call_recordings from {owner}")
    # Discovery locks recordings through the view (FOR SHARE needs UPDATE on some column of
    # the table): the cycle fails there, before any claim, and no attempt is spent.
    summary, _, events = _cycle(worker)
    assert summary.error == "InsufficientPrivilege 42501", summary
    assert summary.counts["claimed"] == 0, summary
    assert [e for e in events if e["event"] == "cycle failed"]
    for s in seeded:
        row = finalize_row(db, s.recording_id)
        assert (row["status"], row["attempts"], row["claim_token"]) == ("Pending", 0, None)

    # The grant the DBA's script forgot is one column only: discovery and the claim work, and
    # every apply (make_failed writes failed_at) is refused.
    with db.connect() as conn:
        columns = [r[0] for r in conn.execute(
            "select attname from pg_attribute where attrelid = "
            "'messenger.call_recordings'::regclass and attnum > 0 and not attisdropped "
            "and attname <> 'failed_at'").fetchall()]
        conn.execute(f"grant update ({', '.join(columns)}) on messenger.call_recordings "
                     f"to {owner}")
    summary, ctx, events = _cycle(worker)
    assert summary.service_fault is not None and summary.service_fault.startswith(
        "ServiceFault: 42501"), summary
    assert summary.result == "error" and summary.counts["failed"] == 0
    assert ctx.metrics.service_fault._value.get() == 1
    for s in seeded:
        row = finalize_row(db, s.recording_id)
        # The attempt counted at claim is given back: no row walks to quarantine for it.
        assert (row["status"], row["attempts"], row["claim_token"]) == ("Pending", 0, None)
        assert row["last_error"].startswith("ServiceFault: 42501"), row
        assert "call_recordings" in row["last_error"]
        assert recording(db, s.recording_id)["status"] == "Uploading"
    assert [e for e in events if e["event"] == "cycle stopped by a service fault"]

    with db.connect() as conn:  # fixed: the next cycle goes on
        conn.execute(f"grant update on messenger.call_recordings to {owner}")
        conn.execute("update messenger.recording_finalize_attempts set next_attempt_at = now()")
    summary, ctx, _ = _cycle(worker)
    assert summary.service_fault is None and summary.counts["failed"] == 3, summary
    assert ctx.metrics.service_fault._value.get() == 0
    assert {recording(db, s.recording_id)["status"] for s in seeded} == {"Failed"}


def test_a_trigger_whose_own_write_is_refused_stops_the_start_before_any_row(
    worker: Worker, db: Db
) -> None:
    """Finding 5's cause, found before any row is touched: the service's status-history trigger
    (invoker rights) writes a table the product's owner may not write."""
    seeded = seed_stuck(db)
    with db.connect() as conn:
        conn.execute("create table messenger.recording_status_history (recording_id uuid, "
                     "status text, changed_at timestamptz default now())")
        conn.execute("""
            create function messenger.log_status() returns trigger language plpgsql as $$
            begin
                insert into messenger.recording_status_history (recording_id, status)
                values (new.id, new.status);
                return new;
            end $$""")
        conn.execute("create trigger call_recordings_history after update of status on "
                     "messenger.call_recordings for each row execute function "
                     "messenger.log_status()")
    proc = worker.cli("run-once")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "42501" in proc.stderr and "recording_status_history" in proc.stderr
    assert "make_failed" in proc.stderr
    row = finalize_row(db, seeded.recording_id)
    assert (row["status"], row["attempts"]) == ("Pending", 0)  # nothing was claimed
    assert db.one("select count(*) from messenger.recording_status_history") == (0,)
    assert recording(db, seeded.recording_id)["status"] == "Uploading"  # rehearsal rolled back


def test_row_level_security_that_hides_recordings_stops_the_start(
    worker: Worker, db: Db
) -> None:
    """Finding 7: RLS made the worker find nothing, silently ("ok, discovered: 0")."""
    seed_stuck(db)
    owner = _owner(db)
    with db.connect() as conn:
        conn.execute("alter table messenger.call_recordings enable row level security")
        conn.execute("alter table messenger.call_recordings force row level security")
        conn.execute("create policy tenant_only on messenger.call_recordings using "
                     "(current_setting('app.tenant', true) = session_id::text)")
    proc = worker.cli("run-once")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "row-level security" in proc.stderr and "call_recordings" in proc.stderr
    assert f"to {owner} using (true)" in proc.stderr  # the fix, spelled out
    with db.connect() as conn:
        conn.execute(f"create policy recording_finalize_reads on messenger.call_recordings "
                     f"for all to {owner} using (true)")
    summary = worker.run_once()
    assert summary["failed"] == 1, summary


def test_migrate_keeps_a_dbas_adapter_and_refuses_one_that_lacks_a_port(
    worker: Worker, db: Db
) -> None:
    """A DBA's adapter is never overwritten; a port it lacks, or a column of the wrong type
    (finding 1: a varchar the relay could not return), is refused at migrate, nothing written."""
    edited = ("create or replace view recording_finalize_adapter.recordings as "
              "select r.id, r.session_kind::text as session_kind, r.session_id, "
              "r.status::text as status, r.file_id, r.size_bytes, r.duration_seconds, "
              "r.format::text as format, r.failure_reason::text as failure_reason, "
              "r.media_type::text as media_type, r.trigger::text as trigger, r.started_at, "
              "r.ended_at, r.available_at from messenger.call_recordings as r "
              "where r.media_type <> 'Screen'")
    _as_owner(db, edited)
    before = db.one("select pg_get_viewdef('recording_finalize_adapter.recordings'::regclass)")
    proc = _migrate(worker, db)
    assert proc.returncode == 0, proc.stderr
    assert "kept (a DBA's)" in proc.stdout
    assert db.one("select pg_get_viewdef('recording_finalize_adapter.recordings'::regclass)"
                  ) == before

    _as_owner(db, "drop function recording_finalize_adapter.make_failed(uuid, text, text, "
                  "timestamptz)")
    _as_owner(db, "drop view recording_finalize_adapter.service_events")
    _as_owner(db, "create view recording_finalize_adapter.service_events as "
                  "select r.id::text as recording_id, r.available_at as enqueued_at, "
                  "r.available_at as published_at from messenger.call_recordings as r "
                  "where false")
    state = db.one("select migrated_at from recording_finalize_migrations.migrate_state")
    proc = _migrate(worker, db)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "nothing was written" in proc.stderr
    assert "recording_finalize_adapter.make_failed(uuid, text, text, timestamp with time " \
           "zone): the function does not exist" in proc.stderr
    assert "recording_finalize_adapter.service_events.recording_id: type text, the product " \
           "needs uuid" in proc.stderr
    assert db.one("select migrated_at from recording_finalize_migrations.migrate_state") == state
    # The worker refuses to start on the same grounds, naming them.
    proc = worker.cli("run-once")
    assert proc.returncode == 2 and "make_failed" in proc.stderr, proc.stderr


def test_the_services_own_outbox_rows_are_only_read(worker: Worker, db: Db) -> None:
    """Finding 3: the relay took the service's unpublished rows of the topic, published them
    and marked them. And an Available recording with the service's own event gets none."""
    service_row = uuid.uuid4()
    with db.connect() as conn:
        conn.execute(
            "insert into messenger.integration_outbox (topic, message_key, event_type, "
            "dedupe_key, payload, headers) values (%s, 'k', 'chat-message', %s, '{}', '{}')",
            (worker.topic, str(service_row)))
    seeded = seed_stuck(db)
    with db.connect() as conn:  # the happy path made it Available and enqueued its own event
        conn.execute("update messenger.call_recordings set status = 'Available', "
                     "file_id = 'f', size_bytes = 1, duration_seconds = 1, format = 'Webm', "
                     "available_at = now() where id = %s", (seeded.recording_id,))
        conn.execute(
            "insert into messenger.integration_outbox (topic, message_key, event_type, "
            "dedupe_key, payload) values (%s, %s, 'call-recording-available', %s, '{}')",
            (worker.topic, str(seeded.session_id), str(seeded.recording_id)))
        conn.execute("update messenger.recording_finalize_attempts set next_attempt_at = now()")
    summary = worker.run_once()
    assert summary["published"] == 0 and summary["closed"] == 1, summary
    assert db.all("select published_at from messenger.integration_outbox") == [(None,), (None,)]
    assert db.one("select count(*) from recording_finalize.outbox") == (0,)
    assert consume(worker.stack, worker.topic, expect=0, idle_s=1.0, timeout_s=3.0) == []


def test_a_login_refused_by_the_database_exits_2(worker: Worker, db: Db) -> None:
    """Finding 10: a role without CONNECT exited 1, as if it were a passing failure."""
    login = psycopg.conninfo.conninfo_to_dict(db.worker_url)["user"]
    with db.connect() as conn:
        conn.execute(f'revoke connect on database "{db.name}" from public')
        conn.execute(f'revoke connect on database "{db.name}" from {login}')
    for command in (["run-once"], ["status"]):
        proc = worker.cli(*command)
        assert proc.returncode == 2, (command, proc.returncode, proc.stderr)
        assert "CONNECT" in proc.stderr, proc.stderr
