"""The retry policy, stored once at start (``recording_finalize.set_policy``), against the
server's settings (``recording_finalize.settings``).

The topic and the policy bounds live on the server; pgTAP proves what set_policy refuses
(RF001, RF009, RF010) and stores. Here: ``run`` and ``run-once`` set the policy before touching
any row and exit 2 with a message naming the variable (the server names the policy column in
the error's COLUMN field), its value and the server's rule or bound, having written nothing; a
worker whose settings agree runs and stores them, the last to start wins and says so, and the
operator commands use what it stored.
"""

from __future__ import annotations

import json

import pytest
from conftest import Db, Worker, db_fingerprint, finalize_row, log_events, seed_stuck


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
        ("RFR_MAX_ATTEMPTS", "0", "the server's bound is 1..20000"),
        ("RFR_MAX_ATTEMPTS", "2147483647", "the server's bound is 1..20000"),
        ("RFR_FINALIZE_SLA_TIMEOUT", "0s", "the server's bound is 00:00:01..24:00:00"),
        ("RFR_BACKOFF_JITTER", "1", "the server's bound is at most 0.5"),
        # The policy's own rules (RF001), which the driver does not restate.
        ("RFR_BACKOFF_FACTOR", "0.5", "backoff_factor must be >= 1"),
        ("RFR_BACKOFF_CAP", "30s", "backoff_cap must be >= backoff_base"),
        ("RFR_BACKOFF_JITTER", "-0.1", "backoff_jitter must be >= 0"),
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
    # The variable comes from the error's COLUMN field (driver/worker.py).
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


def _policy_events(stderr: str) -> list[dict[str, object]]:
    return [e for e in log_events(stderr) if e["event"] in ("policy set", "policy changed")]


def test_the_last_runner_to_start_wins_and_says_what_it_replaced(
    worker: Worker, db: Db, operator: Worker
) -> None:
    first = worker.run_once(RFR_MAX_ATTEMPTS="5", RFR_BACKOFF_JITTER="0")
    [event] = _policy_events(first["_stderr"])  # set, or changed from the defaults
    assert event["policy"]["max_attempts"] == 5  # type: ignore[index]
    again = worker.run_once(RFR_MAX_ATTEMPTS="5", RFR_BACKOFF_JITTER="0")
    assert [e["event"] for e in _policy_events(again["_stderr"])] == ["policy set"]
    other = worker.run_once(RFR_MAX_ATTEMPTS="6", RFR_BACKOFF_JITTER="0")
    [changed] = _policy_events(other["_stderr"])
    assert changed["event"] == "policy changed" and changed["level"] == "warning"
    assert changed["previous"]["max_attempts"] == 5  # type: ignore[index]
    assert changed["policy"]["max_attempts"] == 6  # type: ignore[index]
    assert db.one("select max_attempts from recording_finalize.policy") == (6,)
    # An operator command uses the stored policy, not the operator's environment.
    seeded = seed_stuck(db)
    proc = operator.cli("explain", str(seeded.recording_id), "--json", RFR_MAX_ATTEMPTS="3")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["next"]["maxAttempts"] == 6


def test_an_unset_variable_stores_the_servers_default(worker: Worker, db: Db) -> None:
    worker.run_once(RFR_MAX_ATTEMPTS="5", RFR_UPLOAD_GRACE="2h")
    summary = worker.run_once(RFR_MAX_ATTEMPTS=None, RFR_UPLOAD_GRACE=None)
    [event] = _policy_events(summary["_stderr"])
    with db.connect() as conn:
        default = conn.execute("select column_default from information_schema.columns where "
                               "table_schema = 'recording_finalize' and table_name = 'policy' "
                               "and column_name = 'max_attempts'").fetchone()
    assert default is not None
    assert event["policy"]["max_attempts"] == int(default[0])  # type: ignore[index]
    assert db.one("select upload_grace from recording_finalize.policy") == (None,)
