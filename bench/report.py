"""The bench's report (Markdown) and its chart (PNG), beside the raw figures in out/bench/."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

PEERS = ("procrastinate", "pgqueuer")
LABELS = {"ours": "ours (recording-finalize)", "procrastinate": "Procrastinate",
          "pgqueuer": "PgQueuer"}


def _med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _span(values: list[float], fmt: str = ",.0f") -> str:
    if not values:
        return "-"
    return f"{min(values):{fmt}}-{max(values):{fmt}}"


def _by(runs: list[dict[str, Any]], figure: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        if run["figure"] == figure:
            out[run["contender"]].append(run)
    return out


def _per_row_ms(run: dict[str, Any], key: str) -> float:
    return run["usage"]["cpu_s"].get(key, 0.0) / run["n"] * 1000


def _busiest_backend_ms(runs: list[dict[str, Any]]) -> list[float]:
    """Per run that measured it, the CPU of the contender's busiest backend (the one that claims
    and applies) per row."""
    return [r["detail"]["backend_cpu_s"][0] / r["n"] * 1000 for r in runs
            if r["detail"].get("backend_cpu_s")]


def _statements_per_row(run: dict[str, Any]) -> float:
    return sum(run["statements"].values()) / run["n"] if run["statements"] else float("nan")


def _machine(runs: list[dict[str, Any]]) -> str:
    loads = [r["usage"]["load_start"] for r in runs]
    steal = [r["usage"]["steal_share"] * 100 for r in runs]
    others = [r["usage"]["others_s"] / max(r["wall_s"], 1e-9) for r in runs]
    return (f"load {_med(loads):.1f} ({_span(loads, '.1f')}), steal {_med(steal):.1f} %, "
            f"others {_med(others):.2f} cores")


def summary(results: dict[str, Any]) -> dict[str, Any]:
    """The headline figures and their targets."""
    runs = results["runs"]
    e2e = _by(runs, "e2e")
    rates = {c: [r["rate"] for r in e2e.get(c, [])] for c in ("ours", *PEERS)}
    out: dict[str, Any] = {"rates": {c: _med(v) for c, v in rates.items() if v}}
    ours = rates.get("ours") or []
    for peer in PEERS:
        if ours and rates.get(peer):
            out[f"ratio_{peer}"] = _med(ours) / _med(rates[peer])
    peer_rates = [_med(rates[p]) for p in PEERS if rates.get(p)]
    if ours and peer_rates:
        out["ratio_faster_peer"] = _med(ours) / max(peer_rates)
    if e2e.get("ours"):
        out["statements_per_row"] = _med([_statements_per_row(r) for r in e2e["ours"]])
        out["db_cpu_ms_per_row"] = _med([_per_row_ms(r, "postgres") for r in e2e["ours"]])
    claim = _by(runs, "claim")
    means = {c: _med([r["rate"] for r in rs]) for c, rs in claim.items()}
    if len(means) == 2:
        (empty, full) = sorted(means, key=lambda c: int(c.split()[0].replace(",", "")))
        out["claim_ms"] = {empty: means[empty], full: means[full]}
        out["claim_ratio"] = means[full] / means[empty]
    relay = [r["rate"] for r in _by(runs, "relay").get("ours", [])]
    if relay:
        out["relay_per_s"] = _med(relay)
    rss = [r["rate"] for r in _by(runs, "rss").get("ours", [])]
    if rss and results["facts"].get("rss_method") == "VmHWM":
        out["rss_mb"] = max(rss)
    now = _by(runs, "dbcost").get("SQL now")
    if now:
        out["dbcost_pg_ms"] = _med([_per_row_ms(r, "postgres") for r in now])
        out["dbcost_worker_ms"] = _med([_per_row_ms(r, "worker") for r in now])
        busiest = _busiest_backend_ms(now)
        if busiest:
            out["dbcost_backend_ms"] = _med(busiest)
    unthrottled = _by(runs, "drain").get("unthrottled")
    if unthrottled:
        idle = _med([_pct(r, "idle", 99) for r in unthrottled])
        during = _med([_pct(r, "drain", 99) for r in unthrottled])
        out["drain_p99"] = (idle, during)
    default = _by(runs, "drain").get(DEFAULT_LABEL)
    if default:
        out["pacing_p99_ratio"] = _med([_p99_ratio(r) for r in default])
        out["pacing_p99"] = (_med([_pct(r, "idle", 99) for r in default]),
                             _med([_pct(r, "drain", 99) for r in default]))
    ratios = _idle_ratios(runs)
    if ratios:
        out["pacing_idle_ratio"] = _med(ratios)
    return out


#: The drain variants' labels (bench/run.py, drain_variant).
DEFAULT_LABEL = "default (adaptive)"
OFF_LABEL = "pacing off"


def _p99_ratio(run: dict[str, Any]) -> float:
    idle = _pct(run, "idle", 99)
    return _pct(run, "drain", 99) / idle if idle else float("nan")


def _drain_rate(run: dict[str, Any]) -> float:
    """Rows the cycle finalized over its apply phase (a slow pace may stop at
    RFR_MAX_RUN_DURATION before the backlog is gone)."""
    done = run["detail"].get("output", {}).get("summary", {}).get("reconciled", run["n"])
    return float(done) / max(run["wall_s"], 1e-9)


def _idle_ratios(runs: list[dict[str, Any]]) -> list[float]:
    """Default ÷ off drain rate on the idle database, each repetition against its own."""
    idle = _by(runs, "drain-idle")
    off = {r["rep"]: _drain_rate(r) for r in idle.get(OFF_LABEL, [])}
    return [_drain_rate(r) / off[r["rep"]] for r in idle.get(DEFAULT_LABEL, [])
            if off.get(r["rep"])]


def _pct(run: dict[str, Any], phase: str, q: float,
         call: str = "recording_ingest_completed") -> float:
    """The q-th percentile (nearest rank) of ``call``'s latency in ``phase`` of a drain run."""
    vals = sorted(run["detail"]["latency"].get(phase, {}).get(call, []))
    if not vals:
        return float("nan")
    return float(vals[min(len(vals) - 1, max(0, round(q / 100 * len(vals)) - 1))])


def render(results: dict[str, Any]) -> str:
    facts, runs = results["facts"], results["runs"]
    head = summary(results)
    lines = [
        f"Produced by `{facts['command']}` on {facts['date']}: {facts['cores']} cores, "
        f"PostgreSQL {facts.get('postgres', '?')}, N = {facts['n']:,} stuck recordings, "
        f"{facts['repeat']} run(s) of every figure, ours and the peers interleaved; the whole "
        f"bench took {facts['elapsed_s'] / 60:.1f} min. Medians, with min-max. \"load\" is the "
        "1-minute load average when a run started, \"steal\" the CPU share the hypervisor "
        "took, \"others\" what the rest of the machine (other people's work) spent meanwhile, "
        "in cores.",
        "",
    ]
    lines += _targets(head, facts)
    vmhwm = facts.get("rss_method") == "VmHWM"
    lines += _e2e(runs, head, vmhwm)
    lines += _split(runs)
    lines += _statements(runs)
    lines += _growth(runs, head, facts, vmhwm)
    lines += _dbcost(runs)
    lines += _sqlcost(runs)
    lines += _drain(runs)
    lines += _heads(runs)
    lines += _levers(runs)
    lines += _discovery(runs)
    lines += _republish(runs)
    return "\n".join(lines).rstrip() + "\n"


def _targets(head: dict[str, Any], facts: dict[str, Any]) -> list[str]:
    def row(name: str, value: str, target: str, met: bool | None) -> str:
        verdict = "-" if met is None else ("met" if met else "**not met**")
        return f"| {name} | {value} | {target} | {verdict} |"

    rate = head["rates"].get("ours")
    lines = ["### Targets", "", "| figure | measured | target | |", "|---|---:|---:|---|"]
    if rate is not None:
        lines.append(row("end to end, ours", f"{rate:,.0f} recordings/s", "≥ 1,000/s",
                         rate >= 1000))
    if "ratio_faster_peer" in head:
        r = head["ratio_faster_peer"]
        lines.append(row("ours ÷ the faster peer", f"{r:.2f}x", "> 1x (goal ≥ 1.5x)", r > 1))
    if "statements_per_row" in head:
        s = head["statements_per_row"]
        lines.append(row("statements per finalized row", f"{s:.3f}", "≤ 1.05", s <= 1.05))
    if "claim_ratio" in head:
        c = head["claim_ratio"]
        lines.append(row(f"claim with {facts['done_rows']:,} Done rows ÷ with none",
                         f"{c:.2f}x", "≤ 1.2x", c <= 1.2))
    if "relay_per_s" in head:
        r = head["relay_per_s"]
        lines.append(row(f"relay, {facts['relay_rows']:,} unpublished rows",
                         f"{r:,.0f} events/s", "≥ 5,000/s", r >= 5000))
    if "rss_mb" in head:
        m = head["rss_mb"]
        lines.append(row(f"driver peak RSS, {facts['rss_backlog']:,} backlog",
                         f"{m:.0f} MB (max of runs)", "≤ 150 MB", m <= 150))
    if "dbcost_pg_ms" in head:
        d = head["dbcost_pg_ms"]
        lines.append(row("PostgreSQL CPU per finalized row (dbcost, SQL now)", f"{d:.2f} ms",
                         "≤ 0.8 ms", d <= 0.8))
        if "dbcost_backend_ms" in head:
            b = head["dbcost_backend_ms"]
            lines.append(row("PostgreSQL CPU per finalized row, the worker's busiest backend "
                             "(dbcost, SQL now)", f"{b:.2f} ms", "≤ 0.5 ms", b <= 0.5))
        w = head["dbcost_worker_ms"]
        lines.append(row("worker CPU per finalized row (dbcost, SQL now)", f"{w:.2f} ms",
                         "≤ 0.3 ms", w <= 0.3))
    if "pacing_p99_ratio" in head:
        ratio = head["pacing_p99_ratio"]
        idle, during = head["pacing_p99"]
        lines.append(row("ingest callback p99 during a drain at the default settings ÷ idle "
                         "(median of the runs' ratios)",
                         f"{ratio:.2f}x ({during:.1f} / {idle:.1f} ms)", "≤ 1.5x",
                         ratio <= 1.5))
    if "pacing_idle_ratio" in head:
        ratio = head["pacing_idle_ratio"]
        lines.append(row("drain rate on an idle database, default ÷ pacing off (same run)",
                         f"{ratio:.2f}", "≥ 0.8", ratio >= 0.8))
    if "drain_p99" in head:
        idle, during = head["drain_p99"]
        ratio = during / idle if idle else float("nan")
        lines.append(row("ingest callback p99 during an unthrottled drain ÷ idle",
                         f"{ratio:.2f}x ({during:.1f} / {idle:.1f} ms)", "≤ 1.5x",
                         ratio <= 1.5))
    return [*lines, ""] if len(lines) > 4 else []


def _e2e(runs: list[dict[str, Any]], head: dict[str, Any], vmhwm: bool) -> list[str]:
    e2e = _by(runs, "e2e")
    if not e2e:
        return []
    n = next(iter(e2e.values()))[0]["n"]
    lines = [
        f"### End to end: {n:,} stuck recordings → Available, every event acknowledged by Tansu",
        "",
        "Ours runs the driver's cycle (claim, HEAD, apply, then the relay to Kafka) as the "
        "worker role; the peers run the same HEAD (boto3) and the same transition and outbox "
        "insert as a queued task, and publish nothing (their figure stops at the outbox).",
        "",
        "| contender | rows/s | min-max | ours ÷ it | CPU ms per row: worker | PostgreSQL | "
        "S3 server | Kafka | statements/row | peak RSS MB | machine |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    ours = head["rates"].get("ours")
    for contender in ("ours", *PEERS):
        rs = e2e.get(contender)
        if not rs:
            continue
        rates = [r["rate"] for r in rs]
        ratio = "-" if contender == "ours" or ours is None else f"{ours / _med(rates):.2f}x"
        rss_kb = max(max(r["detail"].get("rss_kb") or [0]) for r in rs)
        rss = f"{rss_kb / 1024:.0f}" if vmhwm else "n/a"
        lines.append(
            f"| {LABELS[contender]} | {_med(rates):,.0f} | {_span(rates)} | {ratio} | "
            f"{_med([_per_row_ms(r, 'worker') for r in rs]):.2f} | "
            f"{_med([_per_row_ms(r, 'postgres') for r in rs]):.2f} | "
            f"{_med([_per_row_ms(r, 's3') for r in rs]):.2f} | "
            f"{_med([_per_row_ms(r, 'kafka') for r in rs]):.3f} | "
            f"{_med([_statements_per_row(r) for r in rs]):.3f} | {rss} | "
            f"{_machine(rs)} |")
    return [*lines, ""]


SPLIT = (("claim_due", "claim (database)"), ("s3_wait", "waiting for S3 verdicts"),
         ("apply_outcomes", "apply, pipelined (database)"),
         ("apply_outcome", "apply, one by one (database)"),
         ("relay", "relay: lease, produce, ack wait, mark"), ("stats", "gauges (database)"))


def _split(runs: list[dict[str, Any]]) -> list[str]:
    rs = _by(runs, "e2e").get("ours")
    if not rs:
        return []
    lines = ["Where our run's wall time went (the applying thread; medians of the runs):", "",
             "| part | seconds | share |", "|---|---:|---:|"]
    walls = [r["detail"]["outputs"][0]["wall_s"] for r in rs]
    accounted = [0.0] * len(rs)
    for key, label in SPLIT:
        secs = [r["detail"]["outputs"][0]["seconds"].get(key, 0.0) for r in rs]
        if not any(secs):
            continue
        if key == "relay":
            # The relay's own database calls are inside its time.
            pass
        for i, s in enumerate(secs):
            accounted[i] += s
        lines.append(f"| {label} | {_med(secs):.1f} | {_med(secs) / _med(walls) * 100:.0f} % |")
    other = [w - a for w, a in zip(walls, accounted, strict=True)]
    lines.append(f"| other: logging, counting, spans, hand-over | {_med(other):.1f} | "
                 f"{_med(other) / _med(walls) * 100:.0f} % |")
    lines.append(f"| **cycle** | **{_med(walls):.1f}** | |")
    heads = [r["detail"]["outputs"][0]["seconds"].get("s3_check", 0.0) for r in rs]
    checks = [r["detail"]["outputs"][0]["calls"].get("s3_check", 1) for r in rs]
    relay_db = [sum(r["detail"]["outputs"][0]["seconds"].get(k, 0.0)
                    for k in ("relay_claim", "relay_mark_published")) for r in rs]
    lines += ["", f"Meanwhile the check threads spent {_med(heads):.0f} thread-seconds on HEADs "
              f"({_med(heads) / _med(checks) * 1000:.1f} ms per HEAD, queueing for the GIL "
              f"included); the relay spent {_med(relay_db):.1f} s of its time in its two "
              "database calls per batch.", ""]
    return lines


def _statements(runs: list[dict[str, Any]]) -> list[str]:
    rs = _by(runs, "e2e").get("ours")
    if not rs:
        return []
    run = sorted(rs, key=lambda r: r["rate"])[len(rs) // 2]
    n = run["n"]
    lines = [f"Statements the worker sent (pg_stat_statements, the median run, {n:,} rows):",
             "", "| statement | calls | per finalized row |", "|---|---:|---:|"]
    for query, calls in run["statements"].items():
        name = re.search(r'recording_finalize\."?(\w+)', query)
        label = name.group(1) if name else query[:60]
        lines.append(f"| `{label}` | {calls:,} | {calls / n:.4f} |")
    total = sum(run["statements"].values())
    lines += [f"| **all** | **{total:,}** | **{total / n:.4f}** |", ""]
    return lines


def _growth(runs: list[dict[str, Any]], head: dict[str, Any], facts: dict[str, Any],
            vmhwm: bool) -> list[str]:
    lines = ["### Cost growth", "", "| figure | median | min-max | machine |",
             "|---|---:|---:|---|"]
    for contender, rs in sorted(_by(runs, "claim").items(),
                                key=lambda kv: int(kv[0].split()[0].replace(",", ""))):
        vals = [r["rate"] for r in rs]
        blocks = [r["detail"].get("blocks") or {} for r in rs]
        server = _med([b.get("exec_ms_per_call", float("nan")) for b in blocks])
        hit = _med([b.get("hit_per_call", float("nan")) for b in blocks])
        read = _med([b.get("read_per_call", float("nan")) for b in blocks])
        buffers = (f"; server {server:.2f} ms, {hit:,.0f} buffers hit + {read:,.1f} read per "
                   "call" if server == server else "")  # NaN: not measured in that run
        lines.append(f"| claim_due, batch of 100, {contender} (ms per call{buffers}) | "
                     f"{_med(vals):.2f} | {_span(vals, '.2f')} | {_machine(rs)} |")
    relay = _by(runs, "relay").get("ours", [])
    if relay:
        vals = [r["rate"] for r in relay]
        rss_kb = max(max(r["detail"].get("rss_kb") or [0]) for r in relay)
        rss = f"; relay process peak RSS {rss_kb / 1024:.0f} MB" if vmhwm else ""
        lines.append(f"| relay, {facts['relay_rows']:,} unpublished rows (events/s{rss}) | "
                     f"{_med(vals):,.0f} | {_span(vals)} | {_machine(relay)} |")
    rss_runs = _by(runs, "rss").get("ours", []) if vmhwm else []
    if rss_runs:
        vals = [r["rate"] for r in rss_runs]
        done = [r["detail"].get("done", 0) for r in rss_runs]
        lines.append(f"| peak RSS of `recording-finalize run-once` facing {facts['rss_backlog']:,} "
                     f"due rows, RFR_MAX_RUN_DURATION={facts['rss_seconds']}s ({_med(done):,.0f} "
                     f"finalized and relayed) (MB) | {_med(vals):.0f} | {_span(vals)} | "
                     f"{_machine(rss_runs)} |")
    return [*lines, ""] if len(lines) > 4 else []


def _dbcost(runs: list[dict[str, Any]]) -> list[str]:
    dc = _by(runs, "dbcost")
    if not dc:
        return []
    n = next(iter(dc.values()))[0]["n"]
    before = "SQL before" in dc
    lines = [(f"### What one finalized row costs the database: the SQL now and before, same run "
              f"({n:,} rows end to end, interleaved)" if before else
              f"### What one finalized row costs the database ({n:,} rows end to end)"), "",
             ("The SQL before is `bench/sql_before/` applied over a second, identically migrated "
              "database. " if before else "") +
             "PostgreSQL CPU: the whole cluster's (every backend, the relay's and the pacing "
             "sampler's included); busiest backend: the one worker backend that spent the most "
             "(the claim and apply connection), its CPU read from /proc while the worker ran, "
             "as a user would measure it from outside. Server ms per row: pg_stat_statements' "
             "execution time of the worker's calls over N (apply_outcome, claim_due, the "
             "relay's two calls).", "",
             "| SQL | PostgreSQL CPU ms/row | min-max | busiest backend ms/row | "
             "worker CPU ms/row | rows/s | server ms/row: apply | claim | relay | machine |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]

    def server(r: dict[str, Any], *names: str) -> float:
        times = r["detail"].get("times") or {}
        total = sum(ms for q, (_, ms) in times.items()
                    if any(f"recording_finalize.{name}" in q for name in names))
        return float(total) / r["n"]

    for label in ("SQL now", "SQL before"):
        rs = dc.get(label)
        if not rs:
            continue
        pg = [_per_row_ms(r, "postgres") for r in rs]
        busiest = _busiest_backend_ms(rs)
        lines.append(
            f"| {label} | {_med(pg):.2f} | {_span(pg, '.2f')} | "
            f"{f'{_med(busiest):.2f}' if busiest else '-'} | "
            f"{_med([_per_row_ms(r, 'worker') for r in rs]):.2f} | "
            f"{_med([r['rate'] for r in rs]):,.0f} | "
            f"{_med([server(r, 'apply_outcome') for r in rs]):.3f} | "
            f"{_med([server(r, 'claim_due') for r in rs]):.3f} | "
            f"{_med([server(r, 'relay_claim', 'relay_mark_published') for r in rs]):.3f} | "
            f"{_machine(rs)} |")
    return [*lines, ""]


def _sqlcost(runs: list[dict[str, Any]]) -> list[str]:
    sc = _by(runs, "sqlcost")
    if not sc:
        return []
    from bench.sqlcost import BATCH

    first = next(iter(sc.values()))[0]
    n = first["n"]
    lines = [f"### The SQL alone: claim and apply by one connection ({n:,} rows a run)", "",
             f"`bench/sqlcost.py`: one connection claims with `claim_due({BATCH}, ...)` "
             "and reports `found` for every claimed row with `apply_outcome`, one transaction per "
             "row; that backend's CPU (schedstat) over N. *now* is this tree (the adapter's "
             "views and port functions, the product's own outbox); the others are earlier "
             "releases' SQL from git history, each in a database of its own (*0.2.1+ix*: 0.2.1 "
             "with this tree's service schema, its available_at index); the variants take turns "
             "batch by batch. One round trip per row (the worker pipelines its applies): the "
             "issue-19 target (0.5 ms) is judged on the worker's busiest backend in `dbcost`; "
             "this figure is for the ratios.", "",
             "| SQL | commit | PostgreSQL CPU ms/row | min-max | runs |",
             "|---|---|---:|---:|---:|"]
    # Runs before the variants had names: "before" was 0.1.x's.
    for label, rs in sc.items():
        values = [r["rate"] for r in rs]
        commit = rs[0]["detail"].get("commit", rs[0]["detail"].get("before_commit"))
        lines.append(f"| {label} | {f'`{commit[:10]}`' if commit else 'this tree'} | "
                     f"{_med(values):.3f} | "
                     f"{_span(values, '.3f')} | {len(rs)} |")
    now = sc.get("now", [])
    if now:
        base = _med([r["rate"] for r in now])
        ratios = [f"now / {label}: {base / max(_med([r['rate'] for r in rs]), 1e-9):.2f}"
                  for label, rs in sc.items() if label != "now"]
        if ratios:
            lines += ["", "; ".join(ratios) + "."]
    return [*lines, ""]


def _discovery(runs: list[dict[str, Any]]) -> list[str]:
    dr = _by(runs, "discovery")
    if not dr:
        return []
    first = next(iter(dr.values()))[0]["detail"]
    lines = ["### Discovery: `discover_stuck` beside active recordings that are not stuck", "",
             f"`bench/discovery.py`: a database per size with {first['history']:,} finished "
             f"recordings (finalize rows Done), A active recordings (live calls: Recording or "
             f"Pending, sessions not ended) and {first['stuck']} stuck ones without a finalize "
             f"row; calls of `discover_stuck(1000)` as the worker role, each reading the "
             f"next 1,000 active recordings, from the start of a sweep until one ended and at "
             f"least {first['calls']} were made (the rows each opened deleted again), then its "
             "INSERT's plan (auto_explain). Every whole sweep must open each stuck row once. "
             "Once per cycle in the worker.", "",
             "| active recordings | ms per call | min-max | rows read: active recordings | "
             "finalize rows read | machine |", "|---:|---:|---:|---:|---:|---|"]

    def read_n(plan: list[str], table: str) -> int | None:
        """The most rows one scan of ``table`` returned in the plan (its actual rows)."""
        counts = [int(line.split(" rows=")[-1].split()[0]) for line in plan
                  if f" on {table} " in line and "Scan" in line and "actual time" in line]
        return max(counts) if counts else None

    def read(plan: list[str], table: str) -> str:
        n = read_n(plan, table)
        return "-" if n is None else f"{n:,}"

    order = sorted(dr.items(), key=lambda kv: kv[1][0]["n"])
    for _, rs in order:
        plan = rs[-1]["detail"].get("plan") or []
        lines.append(f"| {rs[0]['n']:,} | {_med([r['rate'] for r in rs]):.2f} | "
                     f"{_span([r['rate'] for r in rs], '.2f')} | {read(plan, 'call_recordings')} | "
                     f"{read(plan, 'recording_finalize_attempts')} | {_machine(rs)} |")
    small, large = order[0][1], order[-1][1]
    ratio = _med([r["rate"] for r in large]) / max(_med([r["rate"] for r in small]), 1e-9)
    plan = large[-1]["detail"].get("plan") or []
    scanned = read_n(plan, "call_recordings") or 0
    finalize = read_n(plan, "recording_finalize_attempts") or 0
    why = []
    if scanned >= large[0]["n"]:
        why.append("it reads every active recording")
    if finalize > large[0]["detail"]["stuck"] * 10:
        why.append(f"it reads {finalize:,} finalize rows (the history's too)")
    lines += ["", f"From {small[0]['n']:,} to {large[0]['n']:,} active recordings the time per "
              f"call grows {ratio:.1f}x" + (f": to find {large[0]['detail']['stuck']} stuck "
              f"recordings {' and '.join(why)}" if why else "") + f". The plan at "
              f"{large[0]['n']:,}:", "", "```"]
    lines += plan or ["(no plan recorded)"]
    return [*lines, "```", ""]


def _republish(runs: list[dict[str, Any]]) -> list[str]:
    rp = _by(runs, "republish")
    if not rp:
        return []
    first = next(iter(rp.values()))[0]["detail"]
    lines = ["### Republish discovery: `discover_unpublished` beside Available recordings "
             "outside its window", "",
             f"`bench/discovery.py`: a database per size with O recordings Available three days "
             f"ago (outside the window of {first['window_s'] / 3600:g} h ending an SLA ago) and "
             f"{first['inside']} Available an hour ago without any event; {first['calls']} calls "
             "as the worker role (the driver's own call), the rows each opened deleted again, so "
             "every call must open each of those inside. Once per cycle in the worker.", "",
             "| Available outside the window | ms per call | min-max | rows of call_recordings "
             "read | machine |", "|---:|---:|---:|---:|---|"]
    order = sorted(rp.items(), key=lambda kv: kv[1][0]["n"])
    for _, rs in order:
        scans = rs[-1]["detail"].get("recording_scans") or []
        read = max((int(line.split(" rows=")[-1].split()[0]) for line in scans
                    if " rows=" in line), default=None)
        lines.append(f"| {rs[0]['n']:,} | {_med([r['rate'] for r in rs]):.2f} | "
                     f"{_span([r['rate'] for r in rs], '.2f')} | "
                     f"{'-' if read is None else f'{read:,}'} | {_machine(rs)} |")
    small, large = order[0][1], order[-1][1]
    ratio = _med([r["rate"] for r in large]) / max(_med([r["rate"] for r in small]), 1e-9)
    lines += ["", f"From {small[0]['n']:,} to {large[0]['n']:,} outside the window: "
              f"{ratio:.2f}x per call."]
    return [*lines, ""]


def _pacing(runs: list[dict[str, Any]]) -> list[str]:
    """The drain figure with pacing variants (bench/run.py, docs/pacing.md)."""
    dr, idle = _by(runs, "drain"), _by(runs, "drain-idle")
    first = next(iter(dr.values()))[0] if dr else next(iter(idle.values()))[0]
    lines = [f"### Adaptive pacing: {first['n']:,} rows drained, with the messenger's callbacks "
             "and on an idle database", ""]

    def order(kv: tuple[str, list[dict[str, Any]]]) -> tuple[int, float]:
        label, rs = kv
        rank = {DEFAULT_LABEL: 0, OFF_LABEL: 1}.get(label, 2)
        return rank, -float(rs[0]["detail"].get("cap") or 0)

    def pacing(rs: list[dict[str, Any]]) -> str:
        ps = [r["detail"].get("pacing") or {} for r in rs]
        if not any(p.get("limited") for p in ps):
            return "not limited"
        reasons = sorted({str(p.get("reason")) for p in ps if p.get("limited")})
        ends = [float(p.get("rowsPerSecond") or 0) for p in ps]
        slow = [int(p.get("slowdowns") or 0) for p in ps]
        return (f"{', '.join(reasons)}; {_med(slow):.0f} slowdowns; pace at the end "
                f"{_med(ends):.0f} rows/s")

    if dr:
        rate = first["detail"]["call_rate"]
        lines += [f"With the service: `bench/messenger.py` starts {rate:.0f} recordings/s (the "
                  "session insert, `recording_started`, `session_ended`, "
                  "`recording_ingest_completed`; open loop, one connection, a login granted "
                  "`recording_finalize_service`); "
                  "the latency of `recording_ingest_completed`, idle (the "
                  f"{first['detail'].get('idle_s', 10):g} s before the worker starts) and "
                  "during the drain (the "
                  "cycle's claim, check and apply phase). One cycle each, with "
                  f"`RFR_MAX_RUN_DURATION={first['detail'].get('max_run') or '3m'}`: a slow "
                  "pace stops claiming then, and the drain rate is what the cycle finalized "
                  "over its apply phase. Interleaved: every repetition runs every variant, in "
                  "alternating order.", "",
                  "| worker | drain rows/s | ingest p50 idle / drain ms | p99 idle / drain ms | "
                  "p99 ÷ idle: median (per run) | pacing | machine |",
                  "|---|---:|---:|---:|---:|---|---|"]
        for label, rs in sorted(dr.items(), key=order):
            per_run = ", ".join(f"{_p99_ratio(r):.2f}" for r in sorted(rs, key=lambda r: r["rep"]))
            lines.append(
                f"| {label} | {_med([_drain_rate(r) for r in rs]):,.0f} | "
                f"{_med([_pct(r, 'idle', 50) for r in rs]):.1f} / "
                f"{_med([_pct(r, 'drain', 50) for r in rs]):.1f} | "
                f"{_med([_pct(r, 'idle', 99) for r in rs]):.1f} / "
                f"{_med([_pct(r, 'drain', 99) for r in rs]):.1f} | "
                f"{_med([_p99_ratio(r) for r in rs]):.2f}x ({per_run}) | {pacing(rs)} | "
                f"{_machine(rs)} |")
        lines.append("")
    if idle:
        off = {r["rep"]: _drain_rate(r) for r in idle.get(OFF_LABEL, [])}
        lines += ["On an idle database (nobody else connected): the same drain.", "",
                  "| worker | drain rows/s: median (per run) | ÷ pacing off, same run | pacing | "
                  "machine |", "|---|---:|---:|---|---|"]
        for label, rs in sorted(idle.items(), key=order):
            rs = sorted(rs, key=lambda r: r["rep"])
            per_run = ", ".join(f"{_drain_rate(r):,.0f}" for r in rs)
            ratios = [_drain_rate(r) / off[r["rep"]] for r in rs if off.get(r["rep"])]
            ratio = (f"{_med(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)})"
                     if label != OFF_LABEL and ratios else "-")
            lines.append(f"| {label} | {_med([_drain_rate(r) for r in rs]):,.0f} ({per_run}) | "
                         f"{ratio} | {pacing(rs)} | {_machine(rs)} |")
        lines.append("")
    return lines


def _drain(runs: list[dict[str, Any]]) -> list[str]:
    dr = _by(runs, "drain")
    if not dr and not _by(runs, "drain-idle"):
        return []
    if any("variant" in r["detail"] for rs in (*dr.values(), *_by(runs, "drain-idle").values())
           for r in rs):
        return _pacing(runs)
    first = next(iter(dr.values()))[0]
    lines = [f"### The happy path under a drain: the messenger's callbacks at "
             f"{first['detail']['call_rate']:.0f} recordings/s while ours drains "
             f"{first['n']:,} rows", "",
             "`bench/messenger.py` runs, per recording, the session insert, `recording_started`, "
             "`session_ended`, `recording_ingest_completed` (open loop, one connection); "
             "latency of `recording_ingest_completed` from its own start, idle (before the "
             "worker starts) and during the drain (the cycle's claim, check and apply phase, "
             "until its relay starts); the drain's rate over that phase.", "",
             "| worker | drain rows/s | ingest p50 idle / drain ms | p95 | p99 | p99 ÷ idle | "
             "every call p99 idle / drain ms | machine |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]

    def cap(kv: tuple[str, list[dict[str, Any]]]) -> int:
        c = int(kv[1][0]["detail"]["cap"])
        return c if c else 10**9

    def rate(r: dict[str, Any]) -> float:
        # Rows the cycle finalized over its apply phase (a slow cap may stop at
        # RFR_MAX_RUN_DURATION before the backlog is gone).
        done = r["detail"].get("output", {}).get("summary", {}).get("reconciled", r["n"])
        return float(done) / max(r["wall_s"], 1e-9)

    for label, rs in sorted(dr.items(), key=cap, reverse=True):
        cells = []
        for q in (50, 95, 99):
            cells.append(f"{_med([_pct(r, 'idle', q) for r in rs]):.1f} / "
                         f"{_med([_pct(r, 'drain', q) for r in rs]):.1f}")
        idle99 = _med([_pct(r, "idle", 99) for r in rs])
        drain99 = _med([_pct(r, "drain", 99) for r in rs])

        def every(r: dict[str, Any], phase: str) -> float:
            vals = sorted(v for vs in r["detail"]["latency"].get(phase, {}).values() for v in vs)
            return float(vals[max(0, round(0.99 * len(vals)) - 1)]) if vals else float("nan")

        lines.append(
            f"| {label} | {_med([rate(r) for r in rs]):,.0f} | {cells[0]} | {cells[1]} | "
            f"{cells[2]} | {drain99 / idle99:.2f}x | "
            f"{_med([every(r, 'idle') for r in rs]):.1f} / "
            f"{_med([every(r, 'drain') for r in rs]):.1f} | {_machine(rs)} |")
    return [*lines, ""]


def _heads(runs: list[dict[str, Any]]) -> list[str]:
    hd = _by(runs, "head")
    if not hd:
        return []
    n = next(iter(hd.values()))[0]["n"]
    lines = [f"### The per-row HEAD's client: CPU per HEAD ({n:,} existing objects, one thread, "
             "the client process's CPU, every thread of it)", "",
             "| client | CPU ms per HEAD | min-max | wall ms per HEAD | machine |",
             "|---|---:|---:|---:|---|"]
    for client, rs in sorted(hd.items(), key=lambda kv: _med([r["rate"] for r in kv[1]])):
        vals = [r["rate"] for r in rs]
        walls = [r["wall_s"] / r["n"] * 1000 for r in rs]
        lines.append(f"| {client} | {_med(vals):.3f} | {_span(vals, '.3f')} | "
                     f"{_med(walls):.3f} | {_machine(rs)} |")
    return [*lines, ""]


def _levers(runs: list[dict[str, Any]]) -> list[str]:
    lv = _by(runs, "levers")
    if not lv:
        return []
    lines = ["### Levers (ours, each switched off in turn; the HEAD through each client)", "",
             "| variant | rows/s | min-max | worker CPU ms/row | machine |",
             "|---|---:|---:|---:|---|"]
    for contender, rs in sorted(lv.items(), key=lambda kv: -_med([r["rate"] for r in kv[1]])):
        vals = [r["rate"] for r in rs]
        lines.append(f"| {contender} | {_med(vals):,.0f} | {_span(vals)} | "
                     f"{_med([_per_row_ms(r, 'worker') for r in rs]):.2f} | {_machine(rs)} |")
    return [*lines, ""]


def chart(results: dict[str, Any], path: Path) -> Path | None:
    """Rows/s per contender (median bar, min-max whiskers) and CPU per row by component."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    e2e = _by(results["runs"], "e2e")
    names = [c for c in ("ours", *PEERS) if e2e.get(c)]
    if not names:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    meds = [_med([r["rate"] for r in e2e[c]]) for c in names]
    lo = [m - min(r["rate"] for r in e2e[c]) for m, c in zip(meds, names, strict=True)]
    hi = [max(r["rate"] for r in e2e[c]) - m for m, c in zip(meds, names, strict=True)]
    colors = ["#2b7bba" if c == "ours" else "#9a9a9a" for c in names]
    ax1.bar([LABELS[c] for c in names], meds, yerr=[lo, hi], capsize=6, color=colors)
    for i, m in enumerate(meds):
        ax1.text(i, m, f" {m:,.0f}", ha="center", va="bottom")
    ax1.set_ylabel("finalized recordings per second")
    n = e2e[names[0]][0]["n"]
    ax1.set_title(f"{n:,} stuck recordings, end to end (median, min-max)")
    parts = (("worker", "worker process"), ("postgres", "PostgreSQL"),
             ("s3", "S3 server (SeaweedFS)"), ("kafka", "Kafka (Tansu)"))
    bottom = [0.0] * len(names)
    for key, label in parts:
        vals = [_med([_per_row_ms(r, key) for r in e2e[c]]) for c in names]
        ax2.bar([LABELS[c] for c in names], vals, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax2.set_ylabel("CPU ms per finalized recording")
    ax2.set_title("what each row costs the machine")
    ax2.legend(fontsize=8)
    for ax in (ax1, ax2):
        ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
