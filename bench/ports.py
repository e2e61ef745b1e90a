"""What the adapter's indirection costs the database per row: each port beside the statement it
wraps, one row per call, interleaved.

Since 0.3.0 the product writes the service's rows only through the adapter's port functions
(``recording_finalize_adapter.make_available``, ``enqueue_realtime``: SQL functions with a
``SET search_path`` clause, so never inlined: each call sets and restores the setting and plans
its body afresh) and reads them through its views (inlined into the calling statement). This
figure isolates that cost from the rest of ``apply_outcome``: for each port, one connection calls
the port and another runs the very statement the reference adapter's port holds (the same
UPDATE, INSERT or SELECT, on the service's table, with the same parameters), each a prepared
statement, one call and one transaction per row, the two taking turns ``BATCH`` rows at a time
(each repetition starts with the other). Each backend's CPU (``/proc/<pid>/schedstat``) over the
rows is the figure, in microseconds per row, and the port's extra is port - inline.

- ``make_available``: N recordings ``Uploading`` made ``Available`` (a fresh row each call);
- ``enqueue_realtime``: N ``RecordingAvailable`` rows into ``messenger.realtime_outbox``;
- ``recordings``: N reads of one recording locked ``FOR NO KEY UPDATE SKIP LOCKED`` (as the
  claim and ``apply_outcome`` lock it), through the view beside the table.

``python -m bench.ports [--n 4000] [--repeat 3]`` against the stack of ``RFR_STACK_DIR``
(default ``.stack/dev``), in a throwaway database of its own migrated by this tree; prints one
JSON object (a summary on stderr). Not part of ``make bench``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from bench import sysstat, world

BATCH = 100
DBNAME = "rfr_bench_ports"

SEED = (
    "truncate messenger.call_sessions, messenger.call_recordings, messenger.realtime_outbox",
    """insert into messenger.call_sessions (id, started_at, ended_at, chat_id, deal_id, tenant_id)
    select md5('s' || g)::uuid, now() - interval '3 hours', now() - interval '2 hours',
        gen_random_uuid(), gen_random_uuid(), gen_random_uuid()
    from generate_series(1, %(n)s) as g""",
    """insert into messenger.call_recordings (
        id, session_kind, session_id, media_type, trigger, status, started_at, ended_at)
    select md5('r' || g)::uuid, 'Direct', md5('s' || g)::uuid, 'Audio', 'Auto', 'Uploading',
        now() - interval '3 hours', now() - interval '2 hours'
    from generate_series(1, %(n)s) as g""",
    "vacuum analyze messenger.call_sessions, messenger.call_recordings, messenger.realtime_outbox",
)

# The reference adapter's bodies (sql/adapter/reference.sql), as plain statements.
INLINE_AVAILABLE = """
with moved as (
    update messenger.call_recordings as r
    set status = 'Available',
        file_id = %(file_id)s,
        size_bytes = %(size)s,
        duration_seconds = %(duration)s,
        format = %(format)s,
        ended_at = coalesce(r.ended_at, %(at)s),
        started_at = coalesce(
            r.started_at,
            coalesce(r.ended_at, %(at)s) - make_interval(secs => %(duration)s)
        ),
        available_at = %(at)s,
        version = r.version + case when r.status = 'Uploading' then 1 else 2 end,
        updated_at = now()
    where r.id = %(id)s
        and r.status = %(from)s
        and r.status::text = any('{Pending,Recording,Uploading}'::text[])
    returning 1
)
select exists (select from moved)
"""
PORT_AVAILABLE = """
select recording_finalize_adapter.make_available(%(id)s, %(from)s, %(file_id)s, %(size)s,
    %(duration)s, %(format)s, %(at)s)
"""
INLINE_REALTIME = """
insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id, payload)
values ('RecordingAvailable', 'Direct', %(sid)s, %(id)s, %(payload)s)
"""
PORT_REALTIME = """
select recording_finalize_adapter.enqueue_realtime('RecordingAvailable', 'Direct', %(sid)s,
    %(id)s, %(payload)s)
"""
READ_COLUMNS = ("id, session_kind, session_id, status, file_id, size_bytes, duration_seconds, "
                "format, started_at, ended_at, available_at")
INLINE_READ = (f"select {READ_COLUMNS} from messenger.call_recordings where id = %(id)s "
               "for no key update skip locked")
PORT_READ = (f"select {READ_COLUMNS} from recording_finalize_adapter.recordings where id = %(id)s "
             "for no key update skip locked")

#: Per port: the statement of each variant (None: the variant does not apply).
PORTS: dict[str, dict[str, str | None]] = {
    "make_available": {
        "port": PORT_AVAILABLE,
        "port_noset": PORT_AVAILABLE.replace("recording_finalize_adapter.",
                                             "rfr_bench_ports.noset_"),
        "port_plpgsql": PORT_AVAILABLE.replace("recording_finalize_adapter.",
                                               "rfr_bench_ports.plpgsql_"),
        "inline": INLINE_AVAILABLE},
    "enqueue_realtime": {
        "port": PORT_REALTIME,
        "port_noset": PORT_REALTIME.replace("recording_finalize_adapter.",
                                            "rfr_bench_ports.noset_"),
        "port_plpgsql": PORT_REALTIME.replace("recording_finalize_adapter.",
                                              "rfr_bench_ports.plpgsql_"),
        "inline": INLINE_REALTIME},
    "recordings": {"port": PORT_READ, "inline": INLINE_READ},
}
VARIANT_NOTES = {
    "port": "the reference adapter's port as installed (SQL, SET search_path)",
    "port_noset": "the same SQL body without the SET clause",
    "port_plpgsql": "the same statement in a PL/pgSQL function with the SET clause",
    "inline": "the port's statement sent directly",
}

# Two copies of each port function beside it (schema rfr_bench_ports): what the SET clause costs,
# and what a PL/pgSQL body (its plan cached for the session) would.
_COPIES = """
select p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), p.prosrc
from pg_proc as p
where p.pronamespace = 'recording_finalize_adapter'::regnamespace
    and p.proname = any('{make_available,enqueue_realtime}'::text[])
"""


def _copy_ports(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("create schema if not exists rfr_bench_ports")
        for name, args, result, src in conn.execute(_COPIES).fetchall():
            conn.execute(  # type: ignore[call-overload]  # built from the catalog, as the owner
                f"create or replace function rfr_bench_ports.noset_{name}({args}) "
                f"returns {result} language sql volatile security invoker "
                f"as $body${src}$body$")
            body = (f"declare v {result}; begin {src.rstrip().rstrip(';')} into v; return v; end"
                    if result == "boolean" else f"begin {src.rstrip().rstrip(';')}; end")
            conn.execute(  # type: ignore[call-overload]
                f"create or replace function rfr_bench_ports.plpgsql_{name}({args}) "
                f"returns {result} language plpgsql volatile security invoker "
                f"set search_path = pg_catalog, pg_temp as $body${body}$body$")


def _ids(n: int) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """(recording id, session id) of the seeded rows, in seeding order."""
    return [(uuid.UUID(hashlib.md5(f"r{g}".encode()).hexdigest()),
             uuid.UUID(hashlib.md5(f"s{g}".encode()).hexdigest())) for g in range(1, n + 1)]


def run_once(url: str, port: str, n: int, rep: int) -> dict[str, float]:
    """N seeded recordings, an equal share for each variant of ``port``, BATCH rows in turn
    (the order rotates with ``rep``); each backend's µs of CPU per row."""
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in SEED:
            conn.execute(statement, {"n": n})  # type: ignore[arg-type]
        conn.execute("checkpoint")
    stmts = {v: sql for v, sql in PORTS[port].items() if sql}
    order = list(stmts)
    k = rep % len(order)
    order = order[k:] + order[:k]
    share = n // len(order)
    ids = _ids(n)
    rows = {v: ids[i * share:(i + 1) * share] for i, v in enumerate(order)}
    conns = {v: psycopg.connect(url, autocommit=True) for v in order}
    try:
        pids = {v: conns[v].execute("select pg_backend_pid()").fetchone()[0]  # type: ignore[index]
                for v in order}
        cpu = dict.fromkeys(order, 0)
        count = dict.fromkeys(order, 0)
        payload = json.dumps({"pad": "x" * 200})
        for start in range(0, share, BATCH):
            for v in order:
                conn = conns[v]
                t0 = sysstat.thread_cpu_ns(pids[v])
                for rid, sid in rows[v][start:start + BATCH]:
                    params = {"id": rid, "sid": sid, "from": "Uploading",
                              "file_id": f"recordings/{rid}", "size": 1234, "duration": 60,
                              "format": "Webm", "at": "2026-12-01T10:00:00Z",
                              "payload": payload}
                    cur = conn.execute(stmts[v], params, prepare=True)  # type: ignore[arg-type]
                    out = cur.fetchone() if cur.description else None
                    if port == "recordings" and not out:
                        raise SystemExit(f"ports: {port} {v}: no row for {rid}")
                    if port == "make_available" and out != (True,):
                        raise SystemExit(f"ports: {port} {v}: {out} for {rid}")
                    count[v] += 1
                t1 = sysstat.thread_cpu_ns(pids[v])
                if t0 is None or t1 is None:
                    raise SystemExit(f"ports: {port} {v}: its backend is gone")
                cpu[v] += t1 - t0
    finally:
        for conn in conns.values():
            conn.close()
    return {v: cpu[v] / 1e3 / count[v] for v in stmts}


def measure(admin_url: str, n: int, repeat: int, say: Any = print) -> dict[str, Any]:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{DBNAME}" with (force)')
        conn.execute(f'create database "{DBNAME}"')
    url = urlunsplit(urlsplit(admin_url)._replace(path="/" + DBNAME))
    out: dict[str, Any] = {"n": n, "repeat": repeat, "batch": BATCH, "runs": {}}
    try:
        world.migrate_new_database(url, "ports")
        _copy_ports(url)
        for rep in range(repeat):
            for port in PORTS if rep % 2 == 0 else list(PORTS)[::-1]:
                result = run_once(url, port, n, rep)
                out["runs"].setdefault(port, []).append(result)
                say(f"ports: rep {rep + 1} {port}: " + ", ".join(
                    f"{v} {us:.1f}" for v, us in result.items())
                    + " µs of PostgreSQL CPU per row")
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{DBNAME}" with (force)')
    out["median_us"] = {
        port: {v: statistics.median(r[v] for r in runs) for v in runs[0]}
        for port, runs in out["runs"].items()}
    out["extra_us"] = {
        port: {v: statistics.median(r[v] - r["inline"] for r in runs)
               for v in runs[0] if v != "inline"}
        for port, runs in out["runs"].items()}
    out["variants"] = VARIANT_NOTES
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ports",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4000,
                    help="recordings seeded per run: half for the port, half inline")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stack-dir", default=os.environ.get("RFR_STACK_DIR", ".stack/dev"))
    args = ap.parse_args(argv)
    env: dict[str, str] = {}
    for line in (Path(args.stack_dir) / "env").read_text().splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            env[key] = value.strip("'")
    admin = urlunsplit(urlsplit(env["DATABASE_URL"])._replace(path="/postgres"))
    result = measure(admin, args.n, args.repeat,
                     say=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=1))
    for port, med in result["median_us"].items():
        print(f"{port} (µs of PostgreSQL CPU per row, median of {args.repeat}): "
              + ", ".join(f"{v} {us:.1f}" for v, us in med.items()) + "; over inline: "
              + ", ".join(f"{v} {us:+.1f}" for v, us in result["extra_us"][port].items()),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
