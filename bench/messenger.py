"""A simulated messenger service: the happy path at a fixed rate, each call's latency recorded.

``python -m bench.messenger RATE`` (as the service's login, ``DATABASE_URL``: granted
``recording_finalize_service`` and INSERT on its session table, as the service's own role would
be): prints ``ready``, waits for ``go`` on stdin, then starts one recording every 1/RATE seconds
on an open-loop schedule (a late start does not shift the ones after it) until a line ``stop``
comes on stdin. Each recording is what the service does for a short call, in its own
transactions: the session row (the service's own table), then the product's
``recording_finalize.recording_started``, ``session_ended``, the binary put into the file storage
(``S3_ENDPOINT_URL``, bucket ``call-recordings``: the worker HEADs the newest Available
recordings' binaries before it trusts a 404, ``known_uploads``) and
``recording_ingest_completed`` (its events go to the product's own outbox on the server's topic,
and our relay publishes them with the backlog's). Prints
one JSON object: for every database call its start on the system-wide monotonic clock
(``time.monotonic``, comparable with the worker's), its name and its latency in ms; how many
recordings it completed; how far behind its schedule it fell.

Latency is measured from the call's own start, not from its scheduled time: the figure is what
the service's request would see, and the schedule lag is reported beside it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from typing import Any

import psycopg

from bench import s3put
from bench.world import BUCKET, KEY_TEMPLATE

SESSION_SQL = ("insert into messenger.call_sessions (id, chat_id, deal_id, tenant_id, started_at)"
               " values (%s, %s, null, %s, now() - interval '5 minutes')")
STARTED_SQL = ("select recording_finalize.recording_started(%s, 'Direct', %s, 'Audio', "
               "'Auto')")
ENDED_SQL = "select recording_finalize.session_ended('Direct', %s)"
INGEST_SQL = ("select recording_finalize.recording_ingest_completed(%s, %s, 120000, 240, "
              "'Webm')")


def main() -> int:
    rate = float(sys.argv[1])
    stop = threading.Event()
    conn = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True, prepare_threshold=0)
    conn.execute("select 1")
    putter = s3put.Putter(s3put.Endpoint.from_env(os.environ))
    print("ready", flush=True)
    sys.stdin.readline()

    def wait_for_stop() -> None:
        sys.stdin.readline()
        stop.set()

    threading.Thread(target=wait_for_stop, daemon=True).start()
    samples: list[tuple[float, str, float]] = []
    done, worst_lag, i, upload_s = 0, 0.0, 0, 0.0
    t0 = time.monotonic()
    cpu0 = time.process_time()
    while not stop.is_set():
        due = t0 + i / rate
        now = time.monotonic()
        if due > now:
            stop.wait(due - now)
            if stop.is_set():
                break
        worst_lag = max(worst_lag, time.monotonic() - due)
        i += 1
        rid, sid = uuid.uuid4(), uuid.uuid4()
        key = KEY_TEMPLATE.format(recording_id=rid)
        calls: list[tuple[str, str, tuple[Any, ...]]] = [
            ("session_insert", SESSION_SQL, (sid, uuid.uuid4(), uuid.uuid4())),
            ("recording_started", STARTED_SQL, (rid, sid)),
            ("session_ended", ENDED_SQL, (sid,)),
            ("upload", "", ()),
            ("recording_ingest_completed", INGEST_SQL, (rid, key)),
        ]
        for name, sql, params in calls:
            start = time.monotonic()
            if not sql:
                # The file storage's, not the database's: kept out of the latency samples.
                putter.put(BUCKET, key, b"\0" * 1024, "audio/webm",
                           {"duration-seconds": "240", "format": "webm"})
                upload_s += time.monotonic() - start
                continue
            conn.execute(sql, params)
            samples.append((start, name, (time.monotonic() - start) * 1000))
        done += 1
    out = {"samples": samples, "recordings": done, "worst_lag_ms": worst_lag * 1000,
           "wall_s": time.monotonic() - t0, "cpu_s": time.process_time() - cpu0,
           "upload_s": upload_s}
    conn.close()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
