#!/usr/bin/env python3
"""The Grafana dashboard of recording-finalize-retry, built with Grafana's foundation SDK.

    python -m tools.dashboard             # (re)writes deploy/grafana/recording-finalize.json
    python -m tools.dashboard --check     # exit 1 if the committed file is not what this builds
    python -m tools.dashboard --png OUT --prometheus URL [--minutes M]
                                          # one PNG of every panel's data, as on-call sees it

The panels are declared once, in ``PANELS`` (what an on-call engineer reads, in that order);
the JSON is generated from them, and tests/py/test_dashboard.py runs every query of the
generated JSON against a real Prometheus scraping a running sidecar. The PNG is drawn from the
JSON's queries too (matplotlib, not Grafana), so it shows the same data.

Queries select ``namespace=~"$namespace"`` (the label deploy/prometheus.yml gives every series)
and, for the generic ``process_*`` and ``up`` series, the scrape job as well. Rates use
``$__rate_interval``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "deploy" / "grafana" / "recording-finalize.json"
UID = "recording-finalize-retry"
JOB = "recording-finalize-retry"
P = "messenger_recording_finalize"
NS = 'namespace=~"$namespace"'
PROC = f'job="{JOB}", {NS}'


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str


@dataclass(frozen=True)
class PanelSpec:
    title: str
    description: str
    queries: tuple[Query, ...]
    unit: str = "short"
    kind: str = "timeseries"  # timeseries | stat | table
    width: int = 8
    #: (value, colour) steps drawn as lines on a timeseries (SLA, alert threshold).
    thresholds: tuple[tuple[float, str], ...] = ()
    row: str = ""
    stack: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _rate(metric: str, per: str = "60") -> str:
    return f"sum(rate({metric}{{{NS}}}[$__rate_interval])) * {per}"


ROWS = ("Now", "Backlog and SLA", "Outcomes", "Publishing", "Storage", "Pace", "Process")

PANELS: tuple[PanelSpec, ...] = (
    # --- Now: the first glance -----------------------------------------------------------------
    PanelSpec("Ready pods", "Pods whose /readyz answers 200, of the pods scraped.",
              (Query(f"sum({P}_ready{{{NS}}})", "ready"),
               Query(f'count(up{{{PROC}}})', "scraped")),
              kind="stat", width=4, row="Now"),
    PanelSpec("Backlog", "Pending finalize rows.",
              (Query(f"max({P}_backlog{{{NS}}})", "pending"),), kind="stat", width=4,
              row="Now"),
    PanelSpec("Quarantined", "Rows waiting for an operator (runbook: requeue).",
              (Query(f"max({P}_quarantined_rows{{{NS}}})", "quarantined"),), kind="stat",
              width=4, row="Now", thresholds=((1, "red"),)),
    PanelSpec("Last successful cycle", "Seconds since the last successful cycle (alert: 120 s).",
              (Query(f"time() - max({P}_last_success_timestamp_seconds{{{NS}}})", "age"),),
              unit="s", kind="stat", width=4, row="Now", thresholds=((120, "red"),)),
    PanelSpec("Paused", "1 while `recording-finalize pause` holds the part.",
              (Query(f"max by (part) ({P}_paused{{{NS}}})", "{{part}}"),), kind="stat",
              width=4, row="Now", thresholds=((1, "orange"),)),
    PanelSpec("Build", "The running package and the schema version it ships, per pod.",
              (Query(f"max by (pod, version, schema_version) ({P}_build_info{{{NS}}})",
                     "{{pod}} {{version}} {{schema_version}}"),),
              kind="table", width=4, row="Now"),
    # --- Backlog and SLA -------------------------------------------------------------------------
    PanelSpec("Backlog and due rows",
              "Pending finalize rows, and those due now (claimable at the next cycle).",
              (Query(f"max({P}_backlog{{{NS}}})", "pending"),
               Query(f"max({P}_due_rows{{{NS}}})", "due now")),
              row="Backlog and SLA"),
    PanelSpec("Oldest pending age against the SLA",
              "Age of the oldest Pending row. Lines: the default SLA (30 min) and the "
              "RecordingFinalizeOldestAgeGrowing threshold (40 min).",
              (Query(f"max({P}_oldest_age_seconds{{{NS}}})", "oldest pending"),),
              unit="s", row="Backlog and SLA", thresholds=((1800, "orange"), (2400, "red"))),
    PanelSpec("Freshness",
              "Seconds since the last successful cycle and since the database gauges were "
              "last refreshed (stale while the database is unreachable).",
              (Query(f"time() - max({P}_last_success_timestamp_seconds{{{NS}}})",
                     "since last success"),
               Query(f"time() - max({P}_last_refresh_timestamp_seconds{{{NS}}})",
                     "since last refresh")),
              unit="s", row="Backlog and SLA", thresholds=((120, "red"),)),
    # --- Outcomes --------------------------------------------------------------------------------
    PanelSpec("Outcomes per minute",
              "What the cycles did with the rows: reconciled (Available), failed (Timeout), "
              "republished, quarantined, and finalize rows opened by discovery.",
              (Query(_rate(f"{P}_reconciled_total"), "reconciled"),
               Query(_rate(f"{P}_failed_total"), "failed"),
               Query(_rate(f"{P}_republished_total"), "republished"),
               Query(_rate(f"{P}_quarantined_total"), "quarantined"),
               Query(_rate(f"{P}_discovered_total"), "discovered")),
              unit="short", row="Outcomes"),
    PanelSpec("Cycles per minute by result",
              "ok, degraded (storage unreachable or deliveries failed), skipped (another "
              "runner holds the lock), config_error, error, disabled.",
              (Query(f"sum by (result) (rate({P}_cycles_total{{{NS}}}[$__rate_interval])) * 60",
                     "{{result}}"),),
              row="Outcomes", stack=True),
    PanelSpec("Cycle duration",
              "Wall time of a cycle, lock to unlock (RFR_MAX_RUN_DURATION bounds it).",
              tuple(Query(f"histogram_quantile({q}, sum by (le) (rate("
                          f"{P}_cycle_duration_seconds_bucket{{{NS}}}[$__rate_interval])))",
                          f"p{int(q * 100)}") for q in (0.5, 0.95)),
              unit="s", row="Outcomes"),
    PanelSpec("Quarantined rows by reason",
              "Rows in quarantine by quarantine_reason (sums to the quarantined gauge).",
              (Query(f"max by (reason) ({P}_quarantined_rows_by_reason{{{NS}}})", "{{reason}}"),),
              row="Outcomes", stack=True, width=24),
    # --- Publishing ------------------------------------------------------------------------------
    PanelSpec("Publish backlog", "Unpublished integration-outbox rows of the topic (alert: 1000).",
              (Query(f"max({P}_publish_backlog{{{NS}}})", "unpublished"),),
              row="Publishing", thresholds=((1000, "red"),)),
    PanelSpec("Deliveries per minute",
              "Messages the broker acknowledged, and deliveries that failed (retried).",
              (Query(_rate(f"{P}_published_total"), "published"),
               Query(_rate(f"{P}_publish_failures_total"), "failed")),
              row="Publishing"),
    PanelSpec("Oldest unpublished event",
              "Age of the oldest unpublished event (SLO: one polling interval; alert: 180 s).",
              (Query(f"max({P}_oldest_unpublished_age_seconds{{{NS}}})", "oldest"),),
              unit="s", row="Publishing", thresholds=((180, "red"),)),
    # --- Storage ---------------------------------------------------------------------------------
    PanelSpec("Storage incidents open",
              "Open file-storage incidents of any source; while one is open no 404 fails a "
              "recording (alert: open for 15 min).",
              (Query(f"max({P}_storage_incidents_open{{{NS}}})", "open"),),
              row="Storage", width=12),
    PanelSpec("Storage verdicts per minute",
              "Transient S3 checks, 404s deferred by an incident, attempts given back during "
              "the worker's own incident, cycles stopped by a configuration failure.",
              (Query(_rate(f"{P}_transient_total"), "transient"),
               Query(_rate(f"{P}_missing_deferred_total"), "404 deferred"),
               Query(_rate(f"{P}_attempts_held_total"), "attempts held"),
               Query(_rate(f"{P}_config_errors_total"), "config errors")),
              row="Storage", width=12),
    # --- Pace ------------------------------------------------------------------------------------
    PanelSpec("Pace (rows/s)",
              "The apply pace the worker holds itself to (0 = unlimited) and the rows it "
              "actually settled per second.",
              (Query(f"max({P}_pace_rows_per_second{{{NS}}})", "pace limit"),
               Query(" + ".join(_rate(f"{P}_{o}_total", "1") for o in (
                   "reconciled", "failed", "republished", "quarantined")), "settled")),
              unit="short", row="Pace", width=12),
    PanelSpec("Slowdowns per minute",
              "Times the worker slowed its pace down (the database pushed back).",
              (Query(_rate(f"{P}_pace_slowdowns_total"), "slowdowns"),),
              row="Pace", width=12),
    # --- Process ---------------------------------------------------------------------------------
    PanelSpec("Memory (resident)", "Resident memory per pod (limit in deploy/kubernetes: 256 MiB).",
              (Query(f"max by (pod) (process_resident_memory_bytes{{{PROC}}})", "{{pod}}"),),
              unit="bytes", row="Process"),
    PanelSpec("CPU", "CPU seconds per second, per pod.",
              (Query(f"sum by (pod) (rate(process_cpu_seconds_total{{{PROC}}}"
                     "[$__rate_interval]))", "{{pod}}"),),
              unit="short", row="Process"),
    PanelSpec("Open file descriptors", "Per pod (its limit: process_max_fds).",
              (Query(f"max by (pod) (process_open_fds{{{PROC}}})", "{{pod}}"),),
              row="Process"),
)


# --- the JSON ---------------------------------------------------------------------------------


def build() -> dict[str, Any]:
    from grafana_foundation_sdk.builders import common as common_builders
    from grafana_foundation_sdk.builders import dashboard, prometheus, stat, table, timeseries
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.models import common
    from grafana_foundation_sdk.models import dashboard as model

    ds = model.DataSourceRef(type_val="prometheus", uid="${datasource}")
    board = (
        dashboard.Dashboard("recording-finalize-retry")
        .uid(UID)
        .description("The safety net of the messenger's call recordings: backlog against the "
                     "SLA, what each cycle does, publishing, storage, pace, the process. "
                     "Generated by tools/dashboard.py; do not edit by hand.")
        .tags(["messenger", "recording-finalize-retry"])
        .editable()
        .refresh("1m")
        .time("now-6h", "now")
        .timezone("browser")
        .tooltip(model.DashboardCursorSync.CROSSHAIR)
        .with_variable(dashboard.DatasourceVariable("datasource").label("Prometheus")
                       .type("prometheus"))
        .with_variable(
            dashboard.QueryVariable("namespace").label("Namespace").datasource(ds)
            .query(f"label_values({P}_build_info, namespace)")
            .refresh(model.VariableRefresh.ON_TIME_RANGE_CHANGED)
            .sort(model.VariableSort.ALPHABETICAL_ASC)
            .include_all(True).all_value(".*").multi(False))
    )
    for row in ROWS:
        board = board.with_row(dashboard.Row(row))
        for spec in (s for s in PANELS if s.row == row):
            builder: Any
            if spec.kind == "stat":
                builder = (stat.Panel().graph_mode(common.BigValueGraphMode.AREA)
                           .reduce_options(common_builders.ReduceDataOptions()
                                           .calcs(["lastNotNull"]).values(False)))
            elif spec.kind == "table":
                builder = table.Panel()
            else:
                builder = (timeseries.Panel().line_width(1).fill_opacity(10)
                           .show_points(common.VisibilityMode.NEVER))
                if spec.stack:
                    builder = builder.stacking(
                        common_builders.StackingConfig().mode(common.StackingMode.NORMAL))
                if spec.thresholds:
                    builder = builder.thresholds_style(
                        common_builders.GraphThresholdsStyleConfig()
                        .mode(common.GraphThresholdsStyleMode.LINE))
            builder = (builder.title(spec.title).description(spec.description).datasource(ds)
                       .unit(spec.unit).span(spec.width).height(8 if spec.kind != "stat"
                                                               else 5))
            steps = [model.Threshold(value=None, color="green")]
            steps += [model.Threshold(value=v, color=c) for v, c in spec.thresholds]
            builder = builder.thresholds(dashboard.ThresholdsConfig()
                                         .mode(model.ThresholdsMode.ABSOLUTE).steps(steps))
            for i, q in enumerate(spec.queries):
                target = (prometheus.Dataquery().expr(q.expr).legend_format(q.legend)
                          .ref_id(chr(ord("A") + i)).datasource(ds))
                target = target.instant().format(_table_format()) if spec.kind == "table" \
                    else target.range()
                builder = builder.with_target(target)
            board = board.with_panel(builder)
    built: dict[str, Any] = json.loads(json.dumps(board.build(), cls=JSONEncoder))
    return built


def _table_format() -> Any:
    from grafana_foundation_sdk.models import prometheus as pm

    return pm.PromQueryFormat.TABLE


def render_json() -> str:
    return json.dumps(build(), indent=2, sort_keys=True) + "\n"


# --- reading the JSON back (the test and the PNG use the file, not PANELS) -------------------


def panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    """Every non-row panel of the dashboard, in order."""
    out = []
    for panel in board["panels"]:
        if panel["type"] == "row":
            out.extend(panel.get("panels", []))
        else:
            out.append(panel)
    return out


def substitute(expr: str, namespace: str, rate_interval: str) -> str:
    """A panel's expression as Grafana would send it for one namespace."""
    return expr.replace("$namespace", namespace).replace("$__rate_interval", rate_interval)


# --- the PNG ----------------------------------------------------------------------------------


def _get(base: str, path: str, **params: str) -> Any:
    url = f"{base}{path}?{urllib.parse.urlencode(params)}"
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            body = json.loads(resp.read())
    except urllib.error.HTTPError as err:
        raise RuntimeError(f"{path} {params}: {err.code} {err.read().decode()}") from None
    if body.get("status") != "success":
        raise RuntimeError(f"{path}: {body}")
    return body["data"]


def render_png(board: dict[str, Any], prometheus_url: str, out: Path, start: float, end: float,
               namespace: str, rate_interval: str = "1m", title: str = "") -> None:
    """One figure of every panel, from the panels' own queries over [start, end]: the stat and
    table panels as a band of values on top (their value at ``end``), then one plot per
    timeseries panel, with its threshold lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = panels(board)
    values = [p for p in items if p["type"] in ("stat", "table")]
    series = [p for p in items if p["type"] not in ("stat", "table")]
    cols = 4
    rows = math.ceil(len(series) / cols)
    fig = plt.figure(figsize=(cols * 4.6, 1.6 + rows * 2.9))
    grid = fig.add_gridspec(rows + 1, cols * len(values),
                            height_ratios=[0.55] + [1.0] * rows)
    for i, panel in enumerate(values):
        ax = fig.add_subplot(grid[0, i * cols:(i + 1) * cols])
        unit = _unit(panel)
        lines = []
        for target in panel["targets"]:
            expr = substitute(target["expr"], namespace, rate_interval)
            data = _get(prometheus_url, "/api/v1/query", query=expr, time=str(end))
            for r in data["result"]:
                value = _fmt(float(r["value"][1]), unit)
                label = _legend(target.get("legendFormat", ""), r["metric"])
                single = len(panel["targets"]) == 1 and len(data["result"]) == 1
                lines.append(value if single else f"{label}: {value}")
            if not data["result"]:
                lines.append(f"{target.get('legendFormat', '')}: no data (pending)")
        if panel["type"] == "table":
            [target] = panel["targets"]
            data = _get(prometheus_url, "/api/v1/query",
                        query=substitute(target["expr"], namespace, rate_interval),
                        time=str(end))
            lines = [" ".join(r["metric"].get(k, "") for k in ("version", "schema_version"))
                     for r in data["result"]]
        ax.axis("off")
        ax.set_title(panel["title"], fontsize=9, loc="left")
        big = len(lines) == 1 and len(lines[0]) < 12
        ax.text(0.02, 0.45 if big else 0.8, "\n".join(lines) or "no data",
                va="center" if big else "top", fontsize=20 if big else 8,
                family="monospace", transform=ax.transAxes)
    step = max(1.0, (end - start) / 300)
    for k, panel in enumerate(series):
        ax = fig.add_subplot(grid[1 + k // cols,
                                  (k % cols) * len(values):(k % cols + 1) * len(values)])
        unit = _unit(panel)
        ax.set_title(panel["title"], fontsize=9, loc="left")
        ax.tick_params(labelsize=7)
        drawn, top = 0, 0.0
        for target in panel["targets"]:
            expr = substitute(target["expr"], namespace, rate_interval)
            data = _get(prometheus_url, "/api/v1/query_range", query=expr, start=str(start),
                        end=str(end), step=f"{step:g}")
            for r in data["result"]:
                xs = [(float(t) - start) / 60 for t, _ in r["values"]]
                ys = [_scale(float(v), unit) for _, v in r["values"]]
                top = max([top, *(y for y in ys if not math.isnan(y))])
                ax.plot(xs, ys, linewidth=1.2,
                        label=_legend(target.get("legendFormat", ""), r["metric"]))
                drawn += 1
            if not data["result"]:
                ax.plot([], [], label=f"{target.get('legendFormat', '')}: no data (pending)",
                        color="grey")
        for step_ in panel.get("fieldConfig", {}).get("defaults", {}).get(
                "thresholds", {}).get("steps", []):
            if step_.get("value") is not None:
                ax.axhline(_scale(step_["value"], unit), color=step_["color"], linestyle="--",
                           linewidth=0.8)
        ax.legend(fontsize=6, loc="upper left")
        marks = [_scale(t["value"], unit) for t in panel.get("fieldConfig", {}).get(
            "defaults", {}).get("thresholds", {}).get("steps", []) if t.get("value") is not None]
        ax.set_ylim(0, max([top, *marks]) * 1.1 or 1)
        ax.set_xlim(0, (end - start) / 60)
        ax.set_xlabel("minutes", fontsize=7)
        ax.set_ylabel(_unit_label(unit), fontsize=7)
        ax.grid(alpha=0.3)
        if not drawn:
            ax.text(0.5, 0.5, "no data (pending metric)", ha="center", va="center",
                    fontsize=8, color="grey", transform=ax.transAxes)
    fig.suptitle(title or "recording-finalize-retry", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=80)
    plt.close(fig)


def _unit(panel: dict[str, Any]) -> str:
    return str(panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short"))


def _legend(template: str, labels: dict[str, str]) -> str:
    out = template
    for k, v in labels.items():
        out = out.replace("{{" + k + "}}", v)
    return out or "value"


def _scale(v: float, unit: str) -> float:
    return v / 2**20 if unit == "bytes" else v


def _unit_label(unit: str) -> str:
    return {"bytes": "MiB", "s": "seconds"}.get(unit, "")


def _fmt(v: float, unit: str) -> str:
    if unit == "bytes":
        return f"{v / 2**20:.1f} MiB"
    if unit == "s":
        return f"{v:.0f} s"
    return f"{v:g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the committed JSON differs from what this builds")
    parser.add_argument("--png", type=Path, help="draw the panels' data into this PNG")
    parser.add_argument("--prometheus", help="the Prometheus to query for --png")
    parser.add_argument("--minutes", type=float, default=15.0, help="the window of --png")
    parser.add_argument("--namespace", default=".*", help="the $namespace of --png")
    args = parser.parse_args(argv)
    if args.png:
        if not args.prometheus:
            parser.error("--png needs --prometheus")
        import time

        end = time.time()
        render_png(json.loads(OUT.read_text()), args.prometheus, args.png,
                   end - args.minutes * 60, end, args.namespace)
        print(f"wrote {args.png}")
        return 0
    text = render_json()
    if args.check:
        if OUT.read_text() != text:
            print(f"{OUT.relative_to(REPO)} is not what tools/dashboard.py builds: run "
                  "`make dashboard`", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(REPO)} ({len(panels(json.loads(text)))} panels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
