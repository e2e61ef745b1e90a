"""The service's own events that its relay leaves unpublished are seen, never sent.

A 0.2.x install relayed every unpublished row of the topic in the service's outbox, the
service's own included; from 0.3.0 the product relays only its own outbox, so a service that had
no relay of its own lost its events silently after the upgrade (and ``status`` said publish
backlog 0). The product still never publishes a service row, but counts those unpublished past
RFR_SERVICE_EVENT_LAG: the gauge ``recording_finalize_service_events_unpublished`` on /metrics,
and ``status``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

from conftest import Db, Worker, consume
from test_run import Running, metric, start_run, wait_for

__all__ = ["start_run"]  # the fixture, used by name

GAUGE = "recording_finalize_service_events_unpublished"


def service_finalizes(db: Db, *, published: bool) -> uuid.UUID:
    """The service's happy path, as the reference schema's service writes it: the recording
    Available and its own event in messenger.integration_outbox, in one transaction; the
    service has no relay, so nobody publishes it (unless ``published``)."""
    rid, sid = uuid.uuid4(), uuid.uuid4()
    with db.connect() as conn, conn.transaction():
        conn.execute("insert into messenger.call_sessions (id, started_at, ended_at) "
                     "values (%s, now() - interval '1 hour', now() - interval '10 minutes')",
                     (sid,))
        conn.execute(
            "insert into messenger.call_recordings (id, session_kind, session_id, media_type, "
            "trigger, status, file_id, size_bytes, duration_seconds, format, started_at, "
            "ended_at, available_at) values (%s, 'Direct', %s, 'Audio', 'Manual', 'Available', "
            "'files/x', 10, 3, 'Ogg', now() - interval '1 hour', now() - interval '10 minutes', "
            "now())", (rid, sid))
        conn.execute(
            "insert into messenger.integration_outbox (topic, message_key, event_type, "
            "dedupe_key, payload, published_at) select s.topic, %s, 'call-recording-available', "
            "%s, '{}', case when %s then now() end from recording_finalize.settings as s",
            (str(sid), str(rid), published))
    return rid


def test_the_services_unpublished_events_show_after_the_lag_and_are_never_sent(
    worker: Worker, db: Db, start_run: Callable[..., Running]
) -> None:
    waiting = [service_finalizes(db, published=False) for _ in range(3)]
    service_finalizes(db, published=True)  # its relay did publish this one

    def status(lag: str) -> dict[str, object]:
        proc = worker.cli("status", "--json", DATABASE_URL=db.operator_url,
                          RFR_SERVICE_EVENT_LAG=lag)
        assert proc.returncode == 0, proc.stderr
        shown: dict[str, object] = json.loads(proc.stdout)
        return shown

    # Younger than the lag: not counted yet.
    assert status("1h")["serviceEventsUnpublished"] == 0
    running = start_run(RFR_SERVICE_EVENT_LAG="2s", RFR_POLLING_INTERVAL="1s")
    wait_for(lambda: metric(running.metrics(), GAUGE) == len(waiting), 20,
             f"{GAUGE} = {len(waiting)} on /metrics", running)
    shown = status("2s")
    assert shown["serviceEventsUnpublished"] == len(waiting), shown
    assert shown["serviceEventLagSeconds"] == 2.0
    assert shown["publishBacklog"] == 0  # the product's own outbox: nothing of ours waits
    text = worker.cli("status", DATABASE_URL=db.operator_url, RFR_SERVICE_EVENT_LAG="2s").stdout
    assert f"service events unpublished    {len(waiting)} " in text, text
    assert "the service's own relay is not publishing them" in text
    running.stop()
    # Seen, never sent: nothing on the topic, the service's rows untouched, no event of ours.
    assert consume(worker.stack, worker.topic, expect=0, idle_s=1.0, timeout_s=3.0) == []
    assert db.one("select count(*) from messenger.integration_outbox "
                  "where published_at is null")[0] == len(waiting)
    assert db.one("select count(*) from recording_finalize.outbox")[0] == 0
