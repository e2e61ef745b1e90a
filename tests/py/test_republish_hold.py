"""Republish discovery's hold, as the worker says it: held while service_events hides what the
service delivered, and its end logged by the run in which it ends - a ``run-once`` too, whose
process never saw the hold begin."""

from __future__ import annotations

import uuid

from conftest import Db, Worker, log_events, seed_stuck


def _delivered(db: Db, n: int) -> list[uuid.UUID]:
    """Recordings the service made Available two hours ago, whose events its outbox delivered
    and deleted: no finalize row, no event anywhere."""
    ids = [seed_stuck(db).recording_id for _ in range(n)]
    with db.connect() as conn:
        conn.execute("update messenger.call_recordings set status = 'Available', "
                     "file_id = 'files/' || id::text, size_bytes = 10, duration_seconds = 3, "
                     "format = 'Ogg', available_at = now() - interval '2 hours', "
                     "version = version + 1 where id = any(%s)", (ids,))
        conn.execute("delete from messenger.recording_finalize_attempts "
                     "where recording_id = any(%s)", (ids,))
    return ids


def _events(summary: dict[str, object], name: str) -> list[dict[str, object]]:
    return [e for e in log_events(str(summary["_stderr"])) if e["event"] == name]


def test_the_hold_and_its_end_are_said_by_the_runs_that_see_them(db: Db, worker: Worker,
                                                                   topic: str) -> None:
    delivered = _delivered(db, 30)
    held = worker.run_once()
    assert held["republished"] == 0 and held["discovered"] == 0, held
    [said] = _events(held, "republish held")
    assert said["level"] == "warning" and said["unshown"] == 30, said

    # The DBA maps service_events onto something that keeps delivered events: 25 show again.
    with db.connect() as conn:
        for rid in delivered[:25]:
            conn.execute("insert into messenger.integration_outbox (topic, message_key, "
                         "event_type, dedupe_key, payload, published_at) values (%s, %s, "
                         "'call-recording-available', %s, '{}', now())",
                         (topic, str(rid), str(rid)))
    ended = worker.run_once()
    assert _events(ended, "republish held") == [], ended["_stderr"]
    [end] = _events(ended, "republish hold ended")
    assert end["unshown"] == 5 and end["sampled"] == 30, end
    # What the hold kept back stays as it is.
    assert ended["discovered"] == 0 and worker.run_once()["discovered"] == 0
    assert db.one("select count(*) from recording_finalize.outbox")[0] == 0
