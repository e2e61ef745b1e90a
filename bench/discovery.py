"""Discovery's cost: ``discover_stuck`` beside many active recordings that are not stuck.

Every cycle the worker calls ``recording_finalize.discover_stuck`` once (``driver/cycle.py``): it
opens finalize rows for recordings stuck in Pending/Recording/Uploading whose session ended more
than the SLA ago and that have none. A messenger database at its busiest holds many *active*
recordings that are not stuck at all (calls still going on); what one call costs beside them,
and whether that cost grows with them, is this figure.

For each size A of ``--active`` (default 1,000, 10,000 and 100,000), in a database of its own
(migrated like any other, ``--create-service-tables``): ``--history`` finished recordings
(default 100,000: Available, their sessions ended three days ago, their finalize rows Done), A
active recordings (90 % Recording, 10 % Pending), each with its own session that has not ended
(a live call), and ``--stuck`` recordings (default 5) Uploading whose session ended an hour ago,
without a finalize row. Then,
as the least-privilege worker role, calls of ``discover_stuck(p_limit => 1000)`` (the
stored default policy), each timed on the client: each call reads the next 1,000 active
recordings (the sweep's position in ``recording_finalize.discovery_sweep``), so the calls start
at the beginning of a sweep and go on until at least ``--calls`` (default 20) were made and a
sweep has ended. After each call the owner deletes the rows it opened, so every whole sweep must
open each stuck recording exactly once (the figure's check). Last, the plan of the call's
INSERT, through ``auto_explain`` (the function is PL/pgSQL and SECURITY DEFINER: never inlined
into an EXPLAIN of its caller), with its buffers.

Republish discovery (``--republish``): ``recording_finalize.discover_unpublished`` the same
way, beside O Available recordings *outside* its window (for each O of ``--outside``, default
1,000 and 100,000: Available three days ago, each with the service's own published event and no
finalize row, as a service that never opens one leaves them; the window is the driver's default,
1 day counted back from an SLA ago) and ``--inside`` (default 5) that became Available
an hour ago with no event (the service's nor the product's) and no finalize row: the crash
between committing Available and enqueueing the event. Calls as the worker role, through the
driver's own ``queries.discover_unpublished`` (its default window and limit), the rows each
opened deleted again by the owner, so that each call reads the whole (small) window and must
open every recording inside it (the check). The sizes' databases are all seeded first and
their calls then take turns (each size first in turn: the machine's noise falls on all alike);
last, each one's INSERT plan, whose scans of ``call_recordings`` must read the window's rows
only.

``python -m bench.discovery [--active 1000,10000,100000] [--stuck 5] [--history 100000]
[--calls 20] [--republish [--outside 1000,100000] [--inside 5]]`` against the
stack of ``RFR_STACK_DIR`` (default ``.stack/dev``) prints one JSON object; ``make bench`` runs
both as the ``discovery`` figure (``--only discovery`` alone).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg

from bench import costs, world

DISCOVER_LIMIT = 1000
#: Active recordings one call reads (discover_stuck's p_scan default, which the worker uses).
DISCOVER_SCAN = 1000
WORKER_ROLE = "rfr_bench_discovery_worker"

ACTIVE_SQL = ("""
insert into messenger.call_sessions (id, chat_id, tenant_id, started_at)
select md5('as' || i)::uuid, gen_random_uuid(), gen_random_uuid(),
    now() - (i %% 3600) * interval '1 s'
from generate_series(1, %(n)s) as i
""", """
insert into messenger.call_recordings (
    id, session_kind, session_id, media_type, trigger, status, started_at, created_at,
    updated_at)
select md5('ar' || i)::uuid, 'Direct', md5('as' || i)::uuid, 'Audio', 'Auto',
    case when i %% 10 = 0 then 'Pending' else 'Recording' end,
    now() - (i %% 3600) * interval '1 s', now() - (i %% 3600) * interval '1 s', now()
from generate_series(1, %(n)s) as i
""")

STUCK_SQL = ("""
insert into messenger.call_sessions (id, chat_id, tenant_id, started_at, ended_at)
select md5('ss' || i)::uuid, gen_random_uuid(), gen_random_uuid(),
    now() - interval '2 hours', now() - interval '1 hour'
from generate_series(1, %(n)s) as i
""", """
insert into messenger.call_recordings (
    id, session_kind, session_id, media_type, trigger, status, started_at, ended_at,
    created_at, updated_at)
select md5('sr' || i)::uuid, 'Direct', md5('ss' || i)::uuid, 'Audio', 'Auto', 'Uploading',
    now() - interval '2 hours', now() - interval '1 hour', now() - interval '2 hours',
    now() - interval '1 hour'
from generate_series(1, %(n)s) as i
""")

# Available an hour ago, no event, no finalize row: inside the republish window.
INSIDE_SQL = ("""
insert into messenger.call_sessions (id, chat_id, tenant_id, started_at, ended_at)
select md5('is' || i)::uuid, gen_random_uuid(), gen_random_uuid(),
    now() - interval '2 hours', now() - interval '70 minutes'
from generate_series(1, %(n)s) as i
""", """
insert into messenger.call_recordings (
    id, session_kind, session_id, media_type, trigger, status, file_id, size_bytes,
    duration_seconds, format, started_at, ended_at, available_at, version, created_at,
    updated_at)
select md5('ir' || i)::uuid, 'Direct', md5('is' || i)::uuid, 'Audio', 'Auto', 'Available',
    'recordings/' || md5('ir' || i), 1000 + i, 60, 'Webm', now() - interval '2 hours',
    now() - interval '70 minutes', now() - interval '1 hour', 3, now() - interval '2 hours',
    now() - interval '1 hour'
from generate_series(1, %(n)s) as i
""")

# Outside the republish window: what a service that never opens a finalize row holds, each
# recording Available three days ago with the service's own event, published (its outbox).
OUTSIDE_SQL = (*costs.HISTORY_SQL[:2], """
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload,
    headers, created_at, published_at)
select (select topic from recording_finalize.settings), md5('s' || i), 'call-recording-available',
    md5('r' || i)::uuid::text, jsonb_build_object('recordingId', md5('r' || i)::uuid),
    jsonb_build_object('event-type', 'call-recording-available', 'event-id', 'e' || i),
    now() - interval '3 days', now() - interval '3 days'
from generate_series(1, %(n)s) as i
""")

FORGET_SQL = "delete from messenger.recording_finalize_attempts where opened_by = 'discovery'"
REPUBLISH_START_SQL = ("update recording_finalize.discovery_sweep "
                       "set republish_after_at = null, republish_after_id = null")
# The sweep's position back to the start (as at the end of a sweep; the owner may write it).
SWEEP_START_SQL = ("update recording_finalize.discovery_sweep "
                   "set after_session_kind = null, after_session_id = null")


def _url(url: str, dbname: str, user: str | None = None, password: str | None = None) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if user is not None:
        host = netloc.rsplit("@", 1)[1]
        netloc = f"{quote(user, safe='')}:{quote(password or '', safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, f"/{dbname}", parts.query, ""))


def _settings() -> Any:
    from recording_finalize.config import load_settings

    return load_settings({"DATABASE_URL": "postgresql://unused/unused"})


def _plan(owner_url: str, republish: bool = False) -> list[str]:
    """The plan of discover_stuck's (or discover_unpublished's) INSERT, from auto_explain (as
    the owner, a superuser on the bench's stack), then the rows it opened forgotten again."""
    lines: list[str] = []
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: lines.append(d.message_primary or ""))
        conn.execute("load 'auto_explain'")
        for setting, value in (("log_min_duration", "0"), ("log_nested_statements", "on"),
                               ("log_analyze", "on"), ("log_buffers", "on"),
                               ("log_timing", "on")):
            conn.execute(f"set auto_explain.{setting} = {value}")
        conn.execute("set client_min_messages = log")
        if republish:
            from recording_finalize import queries

            conn.execute(REPUBLISH_START_SQL)
            queries.discover_unpublished(conn, _settings(), DISCOVER_LIMIT)
        else:
            conn.execute("select recording_finalize.discover_stuck(%s)", (DISCOVER_LIMIT,))
        conn.execute("set client_min_messages = warning")
        conn.execute(FORGET_SQL)
    inserts = [m for m in lines if "messenger.recording_finalize_attempts" in m
               and "Insert on" in m]
    return (inserts[-1] if inserts else "\n".join(lines)).splitlines()


def scan_nodes(plan: list[str]) -> list[str]:
    """The plan's scans of call_recordings, each as its node line (e.g. "Index Scan using
    ix_recording_active on call_recordings r ... rows=100005 ...")."""
    return [line.strip() for line in plan
            if "call_recordings" in line and ("Scan" in line or "scan" in line)]


def measure(owner_url: str, sizes: list[int], stuck: int, calls: int, history: int = 100_000,
            say: Any = print) -> dict[str, Any]:
    """Per active size: the calls' times (ms), what they opened, the plan; one database each."""
    password = uuid.uuid4().hex
    out: dict[str, Any] = {"stuck": stuck, "calls": calls, "history": history,
                           "limit": DISCOVER_LIMIT, "sizes": []}
    admin = _url(owner_url, "postgres")
    for active in sizes:
        name = f"rfr_bench_discovery_{active}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            conn.execute(f'create database "{name}"')
        try:
            url = _url(owner_url, name)
            world.migrate_new_database(url, f"discovery {name}")
            t0 = time.monotonic()
            with psycopg.connect(url, autocommit=True) as conn:
                if history:
                    costs.seed_history(conn, history)
                for statement in ACTIVE_SQL:
                    conn.execute(statement, {"n": active})  # type: ignore[arg-type]
                for statement in STUCK_SQL:
                    conn.execute(statement, {"n": stuck})  # type: ignore[arg-type]
                conn.execute("vacuum analyze messenger.call_sessions, messenger.call_recordings,"
                             " messenger.recording_finalize_attempts")
                exists = conn.execute("select 1 from pg_roles where rolname = %s",
                                      (WORKER_ROLE,)).fetchone()
                verb = "alter" if exists else "create"
                conn.execute(f"{verb} role {WORKER_ROLE} login password '{password}'")
                conn.execute(f"grant recording_finalize_worker to {WORKER_ROLE}")
            seeded_s = time.monotonic() - t0
            times: list[float] = []
            opened: list[int] = []
            call = "select recording_finalize.discover_stuck(%s)"
            with psycopg.connect(_url(owner_url, name, WORKER_ROLE, password),
                                 autocommit=True) as worker, \
                    psycopg.connect(url, autocommit=True) as owner:
                worker.execute(call, (DISCOVER_LIMIT,))  # warms the caches: not counted
                owner.execute(FORGET_SQL)
                # The measured calls start a sweep and end one (each call reads the next slice
                # of the active recordings; the last of a sweep starts the next over): every
                # whole sweep must open each stuck recording once, since the owner deletes what
                # a call opened.
                owner.execute(SWEEP_START_SQL)
                sweeps0 = _sweeps(owner)
                most = calls + 2 * (active // DISCOVER_SCAN + 2)
                sweeps, ended = 0, False
                while len(times) < most:
                    c0 = time.perf_counter()
                    row = worker.execute(call, (DISCOVER_LIMIT,)).fetchone()
                    times.append((time.perf_counter() - c0) * 1000)
                    opened.append(int(row[0]) if row else -1)
                    owner.execute(FORGET_SQL)
                    now = _sweeps(owner) - sweeps0
                    ended, sweeps = now > sweeps, now
                    if ended and len(times) >= calls:
                        break
            plan = _plan(url)
            entry = {"active": active, "seeded_s": seeded_s, "ms": times,
                     "calls_made": len(times), "sweeps": sweeps, "ended_a_sweep": ended,
                     "median_ms": statistics.median(times), "min_ms": min(times),
                     "max_ms": max(times), "opened": opened, "plan": plan,
                     "recording_scans": scan_nodes(plan)}
            out["sizes"].append(entry)
            say(f"discovery: {active:>7,} active + {stuck} stuck ({history:,} finished): median "
                f"{entry['median_ms']:.2f} ms per call (min {entry['min_ms']:.2f}, max "
                f"{entry['max_ms']:.2f}), {len(times)} calls, {sweeps} sweep(s), opened "
                f"{sum(opened)}; "
                f"{'; '.join(entry['recording_scans']) or 'no scan of call_recordings?'}")
        finally:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'drop database if exists "{name}" with (force)')
    return out


def measure_republish(owner_url: str, sizes: list[int], inside: int, calls: int,
                      say: Any = print) -> dict[str, Any]:
    """Per size O of Available recordings outside the window: discover_unpublished's calls'
    times (ms), what each opened, the plan. One database each, all seeded first; the calls then
    take turns between them (each size goes first in turn), so that the machine's noise falls
    on every size alike."""
    from recording_finalize import queries

    settings = _settings()
    password = uuid.uuid4().hex
    out: dict[str, Any] = {"inside": inside, "calls": calls, "limit": DISCOVER_LIMIT,
                           "window_s": settings.republish_window, "sizes": []}
    admin = _url(owner_url, "postgres")
    names = {outside: f"rfr_bench_republish_{outside}" for outside in sizes}
    entries: dict[int, dict[str, Any]] = {}
    try:
        for outside, name in names.items():
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'drop database if exists "{name}" with (force)')
                conn.execute(f'create database "{name}"')
            url = _url(owner_url, name)
            world.migrate_new_database(url, f"discovery {name}")
            t0 = time.monotonic()
            with psycopg.connect(url, autocommit=True) as conn:
                for statement in OUTSIDE_SQL:
                    conn.execute(statement, {"n": outside})  # type: ignore[arg-type]
                for statement in INSIDE_SQL:
                    conn.execute(statement, {"n": inside})  # type: ignore[arg-type]
                conn.execute("vacuum analyze messenger.call_sessions, messenger.call_recordings,"
                             " messenger.recording_finalize_attempts,"
                             " messenger.integration_outbox")
                exists = conn.execute("select 1 from pg_roles where rolname = %s",
                                      (WORKER_ROLE,)).fetchone()
                verb = "alter" if exists else "create"
                conn.execute(f"{verb} role {WORKER_ROLE} login password '{password}'")
                conn.execute(f"grant recording_finalize_worker to {WORKER_ROLE}")
                row = conn.execute("select count(*) from messenger.call_recordings"
                                   " where status = 'Available'").fetchone()
            entries[outside] = {"outside": outside, "available": int(row[0]) if row else 0,
                                "seeded_s": time.monotonic() - t0, "ms": [], "opened": []}
        workers = {o: psycopg.connect(_url(owner_url, n, WORKER_ROLE, password),
                                      autocommit=True) for o, n in names.items()}
        owners = {o: psycopg.connect(_url(owner_url, n), autocommit=True)
                  for o, n in names.items()}
        try:
            for o in sizes:
                queries.discover_unpublished(workers[o], settings, DISCOVER_LIMIT)  # warms
                owners[o].execute(FORGET_SQL)
                owners[o].execute(REPUBLISH_START_SQL)
            for i in range(calls):
                k = i % len(sizes)
                for o in sizes[k:] + sizes[:k]:
                    c0 = time.perf_counter()
                    got = queries.discover_unpublished(workers[o], settings, DISCOVER_LIMIT)
                    entries[o]["ms"].append((time.perf_counter() - c0) * 1000)
                    entries[o]["opened"].append(got)
                    owners[o].execute(FORGET_SQL)
        finally:
            for conn in (*workers.values(), *owners.values()):
                conn.close()
        for outside, name in names.items():
            entry = entries[outside]
            times = entry["ms"]
            plan = _plan(_url(owner_url, name), republish=True)
            entry.update(calls_made=len(times), median_ms=statistics.median(times),
                         min_ms=min(times), max_ms=max(times), plan=plan,
                         recording_scans=scan_nodes(plan))
            out["sizes"].append(entry)
            say(f"republish discovery: {outside:>7,} Available outside the window + {inside} "
                f"inside: median {entry['median_ms']:.2f} ms per call (min "
                f"{entry['min_ms']:.2f}, max {entry['max_ms']:.2f}), {len(times)} calls, opened "
                f"{sum(entry['opened'])}; "
                f"{'; '.join(entry['recording_scans']) or 'no scan of call_recordings?'}")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in names.values():
                conn.execute(f'drop database if exists "{name}" with (force)')
    return out


def republish_problems(result: dict[str, Any]) -> list[str]:
    """Wrong work (never a time): every call opens each recording inside the window, and reads
    no more rows of call_recordings than the window holds."""
    out = []
    for s in result["sizes"]:
        if any(n != result["inside"] for n in s["opened"]):
            out.append(f"{s['outside']:,} outside: discover_unpublished opened {s['opened']}, "
                       f"not {result['inside']} a call")
        for line in s["recording_scans"]:
            if " rows=" in line and "actual" in line:
                read = int(line.split(" rows=")[-1].split()[0])
                if read > result["inside"] + 1:
                    out.append(f"{s['outside']:,} outside: a scan of call_recordings read "
                               f"{read:,} rows: {line}")
    return out


def _sweeps(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("select sweeps from recording_finalize.discovery_sweep").fetchone()
    return int(row[0]) if row else 0


def problems(result: dict[str, Any]) -> list[str]:
    """Wrong work (never a time): the measured calls end a sweep, and every whole sweep opens
    each stuck recording exactly once."""
    out = []
    for s in result["sizes"]:
        want = result["stuck"] * s["sweeps"]
        if not s["ended_a_sweep"] or s["sweeps"] < 1:
            out.append(f"{s['active']:,} active: {s['calls_made']} calls of discover_stuck did "
                       "not end a sweep of the active recordings")
        elif sum(s["opened"]) != want:
            out.append(f"{s['active']:,} active: {s['sweeps']} sweep(s) of discover_stuck opened "
                       f"{sum(s['opened'])} rows, not {want}")
    return out


def growth(result: dict[str, Any], key: str = "active") -> float | None:
    """Median time per call at the largest size over the smallest (1.0: does not grow)."""
    sizes = sorted(result["sizes"], key=lambda s: s[key])
    if len(sizes) < 2 or sizes[0]["median_ms"] <= 0:
        return None
    return float(sizes[-1]["median_ms"] / sizes[0]["median_ms"])


def _env(stack_dir: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in (Path(stack_dir) / "env").read_text().splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            env[key] = value.strip("'")
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.discovery",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--active", default="1000,10000,100000",
                    help="comma list of active (not stuck) recordings, one database each")
    ap.add_argument("--stuck", type=int, default=5)
    ap.add_argument("--history", type=int, default=100_000,
                    help="finished recordings beside them (Available, finalize rows Done)")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--republish", action="store_true",
                    help="discover_unpublished instead, beside --outside Available recordings "
                    "outside its window and --inside within it")
    ap.add_argument("--outside", default="1000,100000",
                    help="comma list of Available recordings outside the republish window")
    ap.add_argument("--inside", type=int, default=5)
    ap.add_argument("--stack-dir", default=os.environ.get("RFR_STACK_DIR", ".stack/dev"))
    args = ap.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    url = _env(args.stack_dir)["DATABASE_URL"]
    if args.republish:
        sizes = [int(x) for x in args.outside.split(",") if x.strip()]
        result = measure_republish(url, sizes, args.inside, args.calls, say=say)
        result["growth"] = growth(result, "outside")
        result["problems"] = republish_problems(result)
    else:
        sizes = [int(x) for x in args.active.split(",") if x.strip()]
        result = measure(url, sizes, args.stuck, args.calls, args.history, say=say)
        result["growth"] = growth(result)
        result["problems"] = problems(result)
    print(json.dumps(result, indent=1))
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
