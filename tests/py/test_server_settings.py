"""The start-up check against the server's settings (``recording_finalize.settings``).

The topic and the policy bounds live on the server; pgTAP proves that every API function
refuses another topic (RF009) or an out-of-bounds policy (RF010). Here: ``run`` and ``run-once``
read them before touching any row and exit 2 with a message naming the variable and both
values, and a worker whose settings agree runs as before.
"""

from __future__ import annotations

import pytest
from conftest import Db, Worker, finalize_row, seed_stuck


@pytest.mark.parametrize(
    ("variable", "value", "server"),
    [
        ("RFR_TOPIC", "pin.billing.invoice-paid.v1", None),
        ("RFR_MAX_ATTEMPTS", "2147483647", "20000"),
        ("RFR_FINALIZE_SLA_TIMEOUT", "0.5s", "1s..86400s"),
        ("RFR_BACKOFF_BASE", "0.01s", "0.1s..3600s"),
        ("RFR_BACKOFF_FACTOR", "50", "10"),
        ("RFR_BACKOFF_CAP", "172800s", "86400s"),
        ("RFR_BACKOFF_JITTER", "0.9", "0.5"),
        # recording_finalize.server_bounds() (migration 0014)
        ("RFR_UPLOAD_GRACE", "172800s", "1s..86400s"),
        ("RFR_RETENTION", "3600s", "86400s"),
    ],
)
def test_run_once_refuses_settings_the_server_refuses(
    worker: Worker, db: Db, variable: str, value: str, server: str | None
) -> None:
    seeded = seed_stuck(db)
    before = finalize_row(db, seeded.recording_id)
    proc = worker.cli("run-once", **{variable: value})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert f"configuration error: {variable}" in proc.stderr
    assert value in proc.stderr
    assert "recording_finalize.settings" in proc.stderr
    if server is None:  # the topic: the message names the server's
        assert worker.topic in proc.stderr
    else:
        assert server in proc.stderr
    assert finalize_row(db, seeded.recording_id) == before  # no row was touched


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
    assert "RFR_MAX_ATTEMPTS must be at most 5" in proc.stderr, proc.stderr
    worker.run_once(RFR_MAX_ATTEMPTS="5")
    with db.connect() as conn:  # the lower bound of migration 0014
        conn.execute("update recording_finalize.settings set max_attempts_min = 3")
    proc = worker.cli("run-once", RFR_MAX_ATTEMPTS="2")
    assert proc.returncode == 2
    assert "RFR_MAX_ATTEMPTS must be at least 3" in proc.stderr, proc.stderr
