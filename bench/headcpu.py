"""HEAD CPU: what one per-row S3 check costs the client process, per client, in one thread.

``python -m bench.headcpu CLIENT N`` (run by ``make bench``'s levers figure, in a process of its
own, with the worker's environment): builds the ``Storage`` the driver would (``obstore``), or
the bench's stand-ins for the paths it replaced (``signed``: the hand-signed HEAD of
``bench/signed_head.py``; ``boto3``: ``head_object``), warms it up, then checks N existing
objects of the bench one after the other and prints one JSON object: CPU seconds of the whole
process (every thread: obstore's runtime threads included) and wall seconds.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> int:
    from recording_finalize.config import load_settings
    from recording_finalize.model import ClaimedRow

    from bench import world
    from bench.signed_head import storage_for

    client, n = sys.argv[1], int(sys.argv[2])
    settings = load_settings(os.environ)
    storage = storage_for(client, settings)
    rows = [ClaimedRow(it.recording_id, it.session_kind, it.session_id, "reconcile", 1, None,
                       None, None) for it in world.make_items(n)]
    if not storage.check_bucket():
        raise SystemExit("the bucket could not be confirmed")
    for row in rows[:50]:
        storage.check(row)  # connections, credentials, code paths warm
    cpu0, t0 = time.process_time(), time.perf_counter()
    outcomes: dict[str, int] = {}
    for row in rows:
        verdict = storage.check(row)
        outcomes[verdict.outcome] = outcomes.get(verdict.outcome, 0) + 1
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
    print(json.dumps({"client": client, "n": n, "cpu_s": cpu, "wall_s": wall,
                      "outcomes": outcomes}), flush=True)
    return 0 if outcomes.get("found") == n else 1


if __name__ == "__main__":
    sys.exit(main())
