"""The start-up check against the server's settings (``recording_finalize.settings``).

The topic and the policy bounds live on the server; pgTAP proves that every API function
refuses another topic (RF009) or an out-of-bounds policy (RF010). Here: ``run`` and ``run-once``
read them before touching any row and exit 2 with a message naming the variable (the server
names the policy key in the error's COLUMN field), its value and the server's rule or bound,
having written nothing; a worker whose settings agree runs as before.
"""

from __future__ import annotations

import pytest
from conftest import Db, Worker, db_fingerprint, finalize_row, seed_stuck


@pytest.mark.parametrize(
    ("variable", "value", "server"),
    [
        ("RFR_TOPIC", "pin.billing.invoice-paid.v1", None),
        # The server's bounds (RF010): the message is the server's, with its bound.
        ("RFR_MAX_ATTEMPTS", "30000", "the server's bound is 1..20000"),
        ("RFR_FINALIZE_SLA_TIMEOUT", "0.5s", "the server's bound is 00:00:01..24:00:00"),
        ("RFR_BACKOFF_BASE", "0.01s", "the server's bound is 00:00:00.1..01:00:00"),
        ("RFR_BACKOFF_FACTOR", "50", "the server's bound is at most 10"),
        ("RFR_BACKOFF_CAP", "172800s", "the server's bound is at most 24:00:00"),
        ("RFR_BACKOFF_JITTER", "0.9", "the server's bound is at most 0.5"),
        ("RFR_UPLOAD_GRACE", "172800s", "the server's bound is 00:00:01..24:00:00"),
        ("RFR_RETENTION", "3600s", "recording_finalize.settings.retention_min) is at least 1 day"),
        # The policy's own rule (RF001), which the driver's range does not restate.
        ("RFR_MAX_ATTEMPTS", "2147483647", "max_attempts must be a whole number in 1..1000000000"),
    ],
)
def test_run_once_refuses_settings_the_server_refuses(
    worker: Worker, db: Db, variable: str, value: str, server: str | None
) -> None:
    seeded = seed_stuck(db)
    before = db_fingerprint(db)
    proc = worker.cli("run-once", **{variable: value})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    # The variable comes from the error's COLUMN field (driver/server_settings.py).
    assert f"configuration error: {variable} must be what the server accepts" in proc.stderr
    assert f"got {value!r}" in proc.stderr
    if server is None:  # the topic: the message names the server's
        assert worker.topic in proc.stderr
    else:
        assert server in proc.stderr, proc.stderr
    assert db_fingerprint(db) == before  # nothing was written
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0


def test_run_refuses_another_topic_before_any_work(worker: Worker, db: Db) -> None:
    seeded = seed_stuck(db)
    proc = worker.cli("run", RFR_TOPIC="pin.billing.invoice-paid.v1", timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "RFR_TOPIC" in proc.stderr and worker.topic in proc.stderr
    assert finalize_row(db, seeded.recording_id)["attempts"] == 0


def test_the_owner_tightening_a_bound_stops_the_next_start(worker: Worker, db: Db) -> None:
    seed_stuck(db)
    summary = worker.run_once(RFR_MAX_ATTEMPTS="8")
    assert summary["claimed"] == 1
    with db.connect() as conn:
        conn.execute("update recording_finalize.settings set max_attempts_max = 5")
    proc = worker.cli("run-once", RFR_MAX_ATTEMPTS="8")
    assert proc.returncode == 2
    assert "RFR_MAX_ATTEMPTS must be what the server accepts" in proc.stderr, proc.stderr
    assert "max_attempts is 8; the server's bound is 1..5" in proc.stderr, proc.stderr
    worker.run_once(RFR_MAX_ATTEMPTS="5")
    with db.connect() as conn:
        conn.execute("update recording_finalize.settings set max_attempts_min = 3")
    proc = worker.cli("run-once", RFR_MAX_ATTEMPTS="2")
    assert proc.returncode == 2
    assert "RFR_MAX_ATTEMPTS must be what the server accepts" in proc.stderr, proc.stderr
    assert "max_attempts is 2; the server's bound is 3..5" in proc.stderr, proc.stderr
