"""The demo's judgement: what should have happened, what did, and whether every guarantee held.

Inputs are facts gathered after the run — the database's final state, the worker's JSON log,
what the consumer received, what the simulated world did and when — never the worker's own
opinion of itself. Every check is a promise the product makes (docs/reliability.md, and the
list in docs/demo.md) that a broken safety net would violate; ``evaluate`` returns them,
``render`` writes the report, ``chart`` the PNG.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tools.demo_consumer import RecordingConsumer
from tools.demo_sim import (
    BAD,
    CRASH,
    HAPPY,
    LABELS,
    LATE,
    LOST,
    NEVER,
    Outage,
    Recording,
    World,
)

HELD = "held_up"
GROUP_LABELS = {**LABELS, HELD: "upload held past its SLA by the S3 outage"}
GROUP_ORDER = (HAPPY, LATE, LOST, NEVER, CRASH, BAD, HELD)
# Payload fields that must equal the database row (the consumer's copy of the truth).
_COMPARED = {
    "sessionKind": "session_kind", "sessionId": "session_id", "chatId": "chat_id",
    "dealId": "deal_id", "tenantId": "tenant_id", "mediaType": "media_type",
    "fileId": "file_id", "format": "format", "durationSeconds": "duration_seconds",
    "sizeBytes": "size_bytes", "trigger": "trigger",
}


@dataclass(frozen=True)
class Knobs:
    """The worker's settings as the demo ran it, and the demo's own allowances (seconds)."""

    sla_s: float
    interval_s: float
    backoff_base_s: float
    backoff_factor: float
    backoff_cap_s: float
    backoff_jitter: float
    max_attempts: int
    s3_timeout_s: float
    lock_ttl_s: float
    max_run_s: float
    allowance_s: float  # processing time on top of SLA + interval: a cycle, the relay, a fetch
    upload_grace_s: float = 0.0  # RFR_UPLOAD_GRACE


@dataclass
class WorkerRun:
    """The real `recording-finalize run` process, from the outside."""

    log_path: Path
    pid: int | None = None
    exit_code: int | None = None
    stop_seconds: float | None = None
    died_early: bool = False


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class GroupRow:
    group: str
    n: int
    expected: str
    actual: str
    ok: bool


@dataclass
class Evaluation:
    checks: list[Check] = field(default_factory=list)
    groups: list[GroupRow] = field(default_factory=list)
    outcomes: list[tuple[str, int]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    group_of: dict[str, str] = field(default_factory=dict)  # recording id -> report group

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)

    def check(self, name: str, ok: bool, detail: str) -> None:
        self.checks.append(Check(name, ok, detail))


# ---- gathering -----------------------------------------------------------------------------

SNAPSHOT_SQL = """
select r.id::text as id, r.status, r.failure_reason, r.file_id, r.size_bytes,
       r.duration_seconds, r.format, r.media_type, r.trigger, r.session_kind,
       r.session_id::text as session_id, r.version,
       extract(epoch from r.available_at)::float8 as available_at,
       extract(epoch from r.failed_at)::float8 as failed_at,
       extract(epoch from coalesce(cs.ended_at, fs.ended_at))::float8 as session_ended,
       coalesce(cs.chat_id, fs.chat_id)::text as chat_id,
       coalesce(cs.deal_id, fs.deal_id)::text as deal_id,
       coalesce(cs.tenant_id, fs.tenant_id)::text as tenant_id,
       f.status as finalize_status, f.attempts, f.last_error,
       coalesce(o.n, 0) as events, o.event_id, o.unpublished,
       coalesce(rt.kinds, '{}') as realtime
from messenger.call_recordings as r
left join messenger.call_sessions as cs on r.session_kind = 'Direct' and cs.id = r.session_id
left join messenger.conference_sessions as fs
    on r.session_kind = 'Conference' and fs.id = r.session_id
left join messenger.recording_finalize_attempts as f on f.recording_id = r.id
left join lateral (
    select count(*) as n, min(x.headers ->> 'event-id') as event_id,
           count(*) filter (where x.published_at is null) as unpublished
    from recording_finalize.outbox as x
    where x.recording_id = r.id
) as o on true
left join lateral (
    select array_agg(x.kind::text order by x.kind) as kinds
    from messenger.realtime_outbox as x where x.reference_id = r.id
) as rt on true
"""


INCIDENTS_SQL = """
select id, source, extract(epoch from started_at)::float8 as started_at,
       extract(epoch from ended_at)::float8 as ended_at, reason
from recording_finalize.storage_incidents
order by id
"""


def parse_worker_log(path: Path) -> list[dict[str, Any]]:
    """The worker's JSON lines, each with ``t`` = its timestamp as epoch seconds."""
    events: list[dict[str, Any]] = []
    if not path.exists():
        return events
    for line in path.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or "event" not in event:
            continue
        ts = str(event.get("ts", "")).replace("Z", "+00:00")
        try:
            event["t"] = datetime.fromisoformat(ts).timestamp()
        except ValueError:
            event["t"] = 0.0
        events.append(event)
    return events


# ---- judging -------------------------------------------------------------------------------


def _fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f} s"


def _short(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (f" … (+{len(ids) - n})" if len(ids) > n else "")


def group_of(rec: Recording, row: dict[str, Any], sla_s: float) -> str:
    """The report group: the planned scenario, unless the outage changed what it can promise
    (a binary that reached S3 only after the SLA deadline may lose the race to the HEAD)."""
    if rec.scenario in (NEVER, BAD):
        return rec.scenario
    if row["session_ended"] is None:  # a run cut short: the session never ended
        return rec.scenario
    deadline = row["session_ended"] + sla_s
    if rec.uploaded_wall is None or rec.uploaded_wall > deadline:
        return HELD
    if rec.scenario == CRASH and not rec.crash_applied:
        return HELD
    return rec.scenario


@dataclass
class Inputs:
    """What the run left behind, gathered after the worker stopped."""

    world: World
    rows: dict[str, dict[str, Any]]  # SNAPSHOT_SQL by recording id
    outbox_total: int
    consumer: RecordingConsumer
    log_events: list[dict[str, Any]]
    worker: WorkerRun
    knobs: Knobs
    settled: bool
    outstanding: str
    incidents: list[dict[str, Any]] = field(default_factory=list)


def evaluate(inputs: Inputs) -> Evaluation:
    return _Judge(inputs).evaluate()


class _Judge:
    """Indexes the inputs once; each ``_…`` method checks one family of guarantees."""

    def __init__(self, inputs: Inputs) -> None:
        self.inp = inputs
        self.k = inputs.knobs
        self.rows = inputs.rows
        self.plan = inputs.world.plan
        self.seen = inputs.consumer.first
        self.ev = Evaluation()
        self.by_event: dict[str, list[dict[str, Any]]] = {}
        for e in inputs.log_events:
            self.by_event.setdefault(str(e["event"]), []).append(e)
        self.reconciled = self._ids("recording reconciled")
        self.republished = self._ids("recording republished")
        self.failed_log = self._ids("recording failed")
        self.deferred_log = self._ids("recording deferred by storage incident")
        self.quarantined_log = self._ids("recording quarantined")
        self.bad_ids = {str(r.id) for r in self.plan if r.scenario == BAD}
        self.group = {str(r.id): group_of(r, self.rows[str(r.id)], self.k.sla_s)
                      for r in self.plan if str(r.id) in self.rows}
        self.ev.group_of = self.group
        outage = inputs.world.outage
        self.stop_at = outage.stop_called or 0.0
        self.back_at = outage.ready or self.stop_at
        # A Failed verdict is wrong if the binary was in S3 before the failing cycle began: the
        # HEAD comes after the cycle's start, so an upload that finished later may have lost
        # the race, one that finished earlier may not.
        cycle_start = {str(e.get("jobRunId")): e["t"]
                       for e in self.by_event.get("cycle started", [])}
        failing_cycle = {str(e.get("recordingId")): cycle_start.get(str(e.get("jobRunId")))
                         for e in self.by_event.get("recording failed", [])}
        self.orphans = [r for r in self.plan if self._status(r) == "Failed"
                        and r.uploaded_wall is not None]
        self.failed_with_binary = {
            str(r.id) for r in self.orphans
            if (failing_cycle.get(str(r.id)) or float("inf")) > (r.uploaded_wall or 0.0)
        }

    def _incident_end(self, row: dict[str, Any]) -> float:
        """The latest end of a storage incident that overlaps the row's upload window (from
        its session end on), or 0.0 when none did; an open one counts as ending now."""
        ends = [i["ended_at"] if i["ended_at"] is not None else float("inf")
                for i in self.inp.incidents
                if i["ended_at"] is None or i["ended_at"] >= row["session_ended"]]
        return max(ends, default=0.0)

    def _ids(self, event: str) -> Counter[str]:
        return Counter(str(e.get("recordingId")) for e in self.by_event.get(event, []))

    def _status(self, rec: Recording) -> str | None:
        row = self.rows.get(str(rec.id))
        return None if row is None else str(row["status"])

    def evaluate(self) -> Evaluation:
        self._run_itself()
        self._scenarios()
        self._lifecycle()
        self._slo()
        self._publication()
        self._outage()
        self._operator()
        self._worker()
        return self.ev

    # -- the run itself --------------------------------------------------------------------

    def _run_itself(self) -> None:
        world = self.inp.world
        problems = list(world.errors) + world.operator.notes
        problems += [f"no row for {r.id}" for r in self.plan if str(r.id) not in self.rows]
        self.ev.check("the simulated world ran as planned", not problems,
                      "no errors in the messenger/recorder/operator simulation"
                      if not problems else _short(problems))
        self.ev.check(
            "settled before the deadline", self.inp.settled,
            "every recording terminal, every finalize row Done, outbox published, consumer "
            "caught up" if self.inp.settled
            else f"still outstanding at the deadline: {self.inp.outstanding}")

    # -- per scenario: expected vs actual ----------------------------------------------------

    def _scenarios(self) -> None:
        members: dict[str, list[Recording]] = {g: [] for g in GROUP_ORDER}
        for rec in self.plan:
            if str(rec.id) in self.group:
                members[self.group[str(rec.id)]].append(rec)
        for g in GROUP_ORDER:
            if members[g]:
                expected, actual, ok = self._scenario(g, members[g])
                self.ev.groups.append(GroupRow(g, len(members[g]), expected, actual, ok))
                self.ev.check(f"scenario: {GROUP_LABELS[g]}", ok, actual)

    def _scenario(self, g: str, recs: list[Recording]) -> tuple[str, str, bool]:
        """(expected, actual, ok) for one report group."""
        n = len(recs)
        ids = [str(r.id) for r in recs]
        rows = [self.rows[i] for i in ids]
        available = sum(1 for r in rows if r["status"] == "Available")
        counts = ", ".join(f"{v} {k}" for k, v in
                           sorted(Counter(r["status"] for r in rows).items()))
        if g == HAPPY:
            by_cb = sum(1 for r in recs if r.callback_result == "available")
            by_worker = sum(1 for i in ids if self.reconciled[i])
            late = f", {by_worker} by the worker: their callback came after the SLA"
            return ("Available, by the ingest callback",
                    f"{counts} ({by_cb} by the callback{late if by_worker else ''})",
                    available == n)
        if g == LATE:
            worker_first = sum(1 for r in recs if r.callback_result == "already_available")
            cb_first = sum(1 for r in recs if r.callback_result == "available")
            return ("Available once, by whichever comes first; the other is a no-op",
                    f"{counts}: the worker first {worker_first} (the callback then changed "
                    f"nothing), the callback first {cb_first}",
                    available == n and worker_first + cb_first == n)
        if g == LOST:
            adopted = sum(1 for i in ids if self.reconciled[i] == 1)
            return ("Available: the worker adopts the binary after the SLA",
                    f"{counts}, {adopted} reconciled by the worker",
                    available == n and adopted == n)
        if g == NEVER:
            timeouts = sum(1 for r in rows if r["status"] == "Failed"
                           and r["failure_reason"] == "Timeout"
                           and r["failed_at"] >= r["session_ended"] + self.k.sla_s - 0.01)
            held = [(i, r) for i, r in zip(ids, rows, strict=True) if self.deferred_log[i]]
            early = [i for i, r in held if (r["failed_at"] or 0.0) + 0.01
                     < self._incident_end(r) + self.k.upload_grace_s]
            note = (f"; {len(held)} held back by the storage incident, all Failed only after "
                    "its end + grace" if held and not early else "")
            if early:
                note = f"; {len(early)} Failed BEFORE the incident's end + grace"
            return ("Failed (Timeout) after the SLA (after incident end + grace if their upload "
                    "window overlapped an incident), no event",
                    f"{timeouts} Failed (Timeout) after their SLA; {counts}{note}",
                    timeouts == n and not early)
        if g == CRASH:
            rep = sum(1 for i in ids if self.republished[i] == 1)
            got = sum(1 for i in ids if i in self.seen)
            return ("the worker republishes the lost event; the consumer gets it",
                    f"{counts}, {rep} republished by the worker, {got} seen by the consumer",
                    available == rep == got == n)
        if g == BAD:
            when_q = self.inp.world.operator.status_when_quarantined
            quarantined = sum(1 for i in ids if self.quarantined_log[i] >= 1)
            untouched = sum(1 for i in ids if when_q.get(i) == "Uploading")
            requeued = sum(1 for r in recs if r.requeue_rc == 0)
            fixed = sum(1 for r, row in zip(recs, rows, strict=True)
                        if row["status"] == "Available" and row["duration_seconds"] == r.duration_s)
            return ("quarantined with the recording untouched; Available after fix + requeue",
                    f"{quarantined} quarantined ({untouched} still Uploading meanwhile), "
                    f"{requeued} requeued by the operator, {fixed} Available with the fixed "
                    "metadata", quarantined == untouched == requeued == fixed == n)
        # HELD: the outage held the upload past the SLA deadline. The worker's HEAD may come
        # before the recorder's retried upload, but the storage incident keeps that 404 from
        # failing the recording: it is re-checked after incident end + grace, and adopted.
        # The promise covers a binary that lands within RFR_UPLOAD_GRACE of the incident's end;
        # one that lands later may end Failed (and is orphaned, as the runbook says): that is
        # the simulation being slower than the grace it was given, not a lost recording.
        failed = [(i, rec, r) for i, rec, r in zip(ids, recs, rows, strict=True)
                  if r["status"] == "Failed"]
        broken = [i for i, rec, r in failed if rec.uploaded_wall is None
                  or rec.uploaded_wall <= self._incident_end(r) + self.k.upload_grace_s]
        late = len(failed) - len(broken)
        deferred = sum(1 for i in ids if self.deferred_log[i])
        note = (f" ({deferred} of them got a 404 first, deferred by the storage incident, "
                "then adopted)" if deferred else "")
        if late:
            note += (f"; {late} Failed whose upload landed after the incident's end + the "
                     f"{self.k.upload_grace_s:g} s grace (outside the promise: the machine was "
                     "slower than the grace allows)")
        if broken:
            note = (f" ({len(broken)} Failed although their upload landed within the incident's "
                    "end + grace: the worker's HEAD came first and nothing held that 404 back)")
        return ("every one whose upload landed within the incident's end + grace Available: "
                "a 404 right after the outage is not trusted",
                counts + note, not broken and available + late == n)

    # -- terminal states and how they were reached -------------------------------------------

    def _lifecycle(self) -> None:
        ev, rows = self.ev, self.rows
        statuses = Counter(row["status"] for row in rows.values())
        ev.outcomes = [
            ("Available by the ingest callback (happy path)",
             sum(1 for r in self.plan if r.callback_result == "available")),
            ("Available by the worker's reconcile (binary adopted)",
             sum(1 for i in self.reconciled if i not in self.bad_ids)),
            ("Available by the crashed service, event republished by the worker",
             len(self.republished)),
            ("Quarantined (unusable metadata), Available after requeue",
             sum(1 for i in self.bad_ids if rows.get(i, {}).get("status") == "Available")),
            ("Failed (Timeout) by the worker", len(self.failed_log)),
        ]
        unrepublished = sum(1 for r in self.plan if r.scenario == CRASH and r.crash_applied
                            and not self.republished[str(r.id)])
        if unrepublished:
            ev.outcomes.append(("Available by the crashed service, event NEVER republished",
                                unrepublished))

        total = len(self.plan)
        terminal = statuses["Available"] + statuses["Failed"]
        not_done = [i for i, r in rows.items() if r["finalize_status"] != "Done"]
        ev.check("every recording terminal, every finalize row Done",
                 terminal == total and not not_done,
                 f"{total} recordings: {statuses['Available']} Available, "
                 f"{statuses['Failed']} Failed, {total - terminal} not terminal; finalize rows "
                 f"not Done: {len(not_done)}")

        by_callback = {str(r.id) for r in self.plan if r.callback_result == "available"}
        double = [i for i, n in self.reconciled.items() if n > 1 or i in by_callback]
        versions = Counter(r["version"] for r in rows.values()
                           if r["status"] in ("Available", "Failed"))
        ev.check("no double transition", not double and set(versions) <= {3},
                 "no recording finalized twice (callback and worker, or the worker twice); "
                 f"versions {dict(versions)} (1 → Uploading → terminal)"
                 + (f"; twice: {_short(double)}" if double else ""))

        ev.check("Failed only when the binary was not there", not self.failed_with_binary,
                 f"{statuses['Failed']} Failed; none had its binary in S3 before the failing "
                 "cycle started" if not self.failed_with_binary else
                 f"binary present before the failing cycle: "
                 f"{_short(sorted(self.failed_with_binary))}")
        if self.orphans:
            late_by = [(r.uploaded_wall or 0.0) - (rows[str(r.id)]["failed_at"] or 0.0)
                       for r in self.orphans]
            ev.facts.append(
                f"{len(self.orphans)} recordings failed (Timeout) whose binary arrived around "
                f"the worker's HEAD ({min(late_by):+.1f} … {max(late_by):+.1f} s from the "
                "Failed verdict): the outage held their upload past the SLA; those binaries "
                "stay orphaned in S3 (Failed is terminal), as the runbook says")

    # -- SLO: time spent non-terminal --------------------------------------------------------

    def _slo(self) -> None:
        k = self.k
        normal_bound = k.sla_s + k.interval_s + k.allowance_s
        worst_normal = 0.0
        worst_outage, worst_outage_bound = 0.0, 0.0
        over: list[str] = []
        for rec in self.plan:
            rid = str(rec.id)
            row = self.rows.get(rid)
            if row is None or rec.scenario == BAD:
                continue  # a human is in that loop: measured in _operator, not against the SLA
            end = row["available_at"] or row["failed_at"]
            if end is None:
                continue  # not terminal: _lifecycle already failed it
            lag = end - row["session_ended"]
            deadline = row["session_ended"] + k.sla_s
            if self.inp.world.outage.stop_called is not None and (
                deadline <= self.back_at
                and deadline + k.interval_s + k.allowance_s >= self.stop_at
            ):
                # Due while S3 was down: it may wait for S3, then one more backoff and tick.
                bound = (max(deadline, self.back_at) + k.backoff_cap_s * (1 + k.backoff_jitter)
                         + k.interval_s + k.allowance_s - row["session_ended"])
                if lag > worst_outage:
                    worst_outage, worst_outage_bound = lag, bound
            else:
                bound = normal_bound
            end_i = self._incident_end(row)
            if 0.0 < end_i < float("inf") and self.deferred_log[rid]:
                # Its 404 was deferred to incident end + grace, then one more tick.
                held_bound = (end_i + k.upload_grace_s + k.interval_s + k.allowance_s
                              - row["session_ended"])
                bound = max(bound, held_bound)
                if lag > worst_outage:
                    worst_outage, worst_outage_bound = lag, bound
            elif bound == normal_bound:
                worst_normal = max(worst_normal, lag)
            if lag > bound:
                over.append(f"{rid} {lag:.1f} s > {bound:.1f} s")
        self.ev.facts.append(
            f"longest time non-terminal (session end → Available/Failed): "
            f"{max(worst_normal, worst_outage):.1f} s, against SLA + interval = "
            f"{k.sla_s + k.interval_s:g} s (+ {k.allowance_s:g} s processing allowance); "
            f"{worst_normal:.1f} s for recordings not due during the S3 outage")
        self.ev.check(
            "no recording non-terminal longer than SLA + interval (+ allowance)", not over,
            f"not due during the outage: longest {worst_normal:.1f} s ≤ {normal_bound:g} s; due "
            f"during the outage or held by its incident: longest {worst_outage:.1f} s ≤ its bound "
            f"(S3 back + backoff cap, or incident end + grace, + interval + allowance = "
            f"{worst_outage_bound:.1f} s for that row)"
            + (f"; OVER: {_short(over)}" if over else ""))

    # -- publication -------------------------------------------------------------------------

    def _publication(self) -> None:
        ev, rows, seen, k = self.ev, self.rows, self.seen, self.k
        consumer = self.inp.consumer
        available = [i for i, r in rows.items() if r["status"] == "Available"]
        unseen = [i for i in available if i not in seen]
        ev.check("every Available recording seen by the consumer",
                 not unseen and bool(available),
                 f"{len(available) - len(unseen)}/{len(available)} yes"
                 + (f"; NOT seen: {_short(unseen)}" if unseen else ""))

        not_available = [i for i in seen if rows.get(i, {}).get("status") != "Available"]
        events_off = [i for i, r in rows.items()
                      if r["events"] != (1 if r["status"] == "Available" else 0)]
        ev.check("one event per Available recording, none for the others",
                 not not_available and not events_off
                 and self.inp.outbox_total == len(available),
                 f"outbox rows {self.inp.outbox_total} for {len(available)} Available; events "
                 f"for non-Available recordings: {len(not_available)}"
                 + (f"; wrong event count: {_short(events_off)}" if events_off else ""))

        def kinds(status: str) -> list[str]:
            return {"Available": ["RecordingAvailable"],
                    "Failed": ["RecordingFailed"]}.get(status, [])

        realtime_off = [i for i, r in rows.items() if list(r["realtime"]) != kinds(r["status"])]
        ev.check("one realtime row per terminal recording, of the right kind", not realtime_off,
                 "RecordingAvailable / RecordingFailed, once each" if not realtime_off
                 else f"wrong: {_short(realtime_off)}")

        # The bound from the worker's configuration: an event enqueued between cycles waits for
        # the next tick (the interval); the relay runs when that cycle's reconcile phase ends,
        # which RFR_MAX_RUN_DURATION bounds; then the delivery and the consumer's fetch (the
        # allowance). A quiet machine stays within the interval + allowance (said below); a busy
        # one's long drain cycles take part of the max run (5.4 s against 5 s was seen).
        bound = k.interval_s + k.max_run_s + k.allowance_s
        quiet_bound = k.interval_s + k.allowance_s
        worst, measured, late = 0.0, 0, []
        within_quiet = 0
        for i in available:
            d, row = seen.get(i), rows[i]
            if d is None or row["available_at"] is None:
                continue
            measured += 1
            eligible = row["available_at"]
            if self.group.get(i) == CRASH:
                # The crashed service left the row Pending until end + SLA: that is when the
                # safety net may act. Republish needs no S3, so the outage excuses nothing.
                eligible = max(eligible, row["session_ended"] + k.sla_s)
            if self.deferred_log[i]:
                # A 404 the storage incident deferred re-timed the row to the incident's end +
                # grace: the service's own late Available waits for that (republish).
                eligible = max(eligible, self._incident_end(row) + k.upload_grace_s)
            lag = d.seen_wall - eligible
            worst = max(worst, lag)
            within_quiet += lag <= quiet_bound
            if lag > bound:
                late.append(f"{i} ({GROUP_LABELS.get(self.group.get(i, ''), '?')}) {lag:.1f} s")
        ev.check("events reach the consumer within the next cycle (interval + max run + "
                 "allowance)", not late and measured > 0,
                 f"{measured} events measured: longest {worst:.1f} s from Available (republish: "
                 f"from its SLA deadline) to the consumer, bound {bound:g} s"
                 + (f"; LATE: {_short(late)}" if late else ""))
        if measured:
            ev.facts.append(
                f"events within one polling interval + allowance ({quiet_bound:g} s): "
                f"{within_quiet} of {measured}; longest {worst:.1f} s")

        contract = list(consumer.problems)
        for i, d in seen.items():
            db = rows.get(i)
            if db is None:
                contract.append(f"{i}: event for an unknown recording")
                continue
            for field_name, column in _COMPARED.items():
                if d.payload.get(field_name) != db[column]:
                    contract.append(f"{i}: {field_name} {d.payload.get(field_name)!r} != "
                                    f"database {db[column]!r}")
            if d.headers.get("event-id") != db["event_id"]:
                contract.append(f"{i}: event-id is not the outbox row's")
        event_ids = Counter(d.headers.get("event-id") for d in seen.values())
        contract += [f"event-id {e} on {n} recordings" for e, n in event_ids.items() if n > 1]
        schema = consumer.schema_used or "no schema file: the contract's field list"
        ev.check("every payload honours the contract and equals the database", not contract,
                 f"key = sessionId, event-type and event-id headers, {schema}; fields = the "
                 "database row" + (f"; PROBLEMS: {_short(contract, 3)}" if contract else ""))

        dup_diff = [d.recording_id for d in consumer.duplicates
                    if d.raw != seen[d.recording_id].raw]
        ev.check("duplicates are harmless re-sends", not dup_diff,
                 f"duplicates delivered: {len(consumer.duplicates)} of {consumer.messages} "
                 "messages (at-least-once allows them; the consumer dedups by recordingId)"
                 + (f"; DIFFERENT payloads: {_short(dup_diff)}" if dup_diff else ""))

    # -- the S3 outage -----------------------------------------------------------------------

    def _outage(self) -> None:
        ev, rows, k = self.ev, self.rows, self.k
        outage: Outage = self.inp.world.outage
        if outage.stop_called is None or outage.ready is None:
            ev.check("S3 outage happened", False, "the outage was not carried out")
            return
        stop_at, back_at = self.stop_at, self.back_at

        def during(event: str) -> list[dict[str, Any]]:
            return [e for e in self.by_event.get(event, []) if stop_at - 1 <= e["t"] <= back_at + 1]

        # A transient verdict backs off, or, while the worker's own storage incident is open,
        # gives its attempt back (held): either way it must not burn the row's budget.
        backoffs = during("recording backoff")
        held = during("recording held by storage incident")
        unreachable = during("storage unreachable")
        backed_rows = {str(e.get("recordingId")) for e in backoffs + held}
        max_attempts = max((int(e.get("attempts") or 0) for e in backoffs + held), default=0)
        # Certainly down from the moment stop returned until start was called (after that it
        # may answer before start_service has seen it ready): no Failed verdict in between.
        down_from, down_to = outage.stopped or stop_at, outage.start_called or back_at
        failed_during = [i for i, r in rows.items() if r["failed_at"] is not None
                         and down_from <= r["failed_at"] <= down_to]
        healthy_quarantined = [i for i in self.quarantined_log if i not in self.bad_ids]
        t0 = self.inp.world.t0_wall
        ev.facts.append(
            f"S3 outage: stopped at +{stop_at - t0:.1f} s, back (ready) at +{back_at - t0:.1f} s "
            f"({back_at - stop_at:.1f} s); during it {len(backoffs)} backoff verdicts and "
            f"{len(held)} held by the worker's storage incident (attempt given back) on "
            f"{len(backed_rows)} recordings, attempts up to {max_attempts} of "
            f"{k.max_attempts}; {len(unreachable)} cycles found the storage unreachable")

        # The rows that fell due while S3 was down, by what the worker could do for them.
        republished_at = {str(e.get("recordingId")): e["t"]
                          for e in self.by_event.get("recording republished", [])}
        due_down = {g: [i for i, gg in self.group.items() if gg == g
                        and stop_at <= rows[i]["session_ended"] + k.sla_s <= back_at]
                    for g in (CRASH, LOST, NEVER)}
        rep_during = sum(1 for i in due_down[CRASH]
                         if stop_at <= republished_at.get(i, 0.0) <= back_at)
        lost_after = sum(1 for i in due_down[LOST] if (rows[i]["available_at"] or 0) > back_at)
        never_after = sum(1 for i in due_down[NEVER] if (rows[i]["failed_at"] or 0) > back_at)
        ev.facts.append(
            f"due while S3 was down: {rep_during} of {len(due_down[CRASH])} crash rows "
            "republished during the outage (republish needs no S3); "
            f"{lost_after} of {len(due_down[LOST])} lost-callback rows backed off and were "
            f"reconciled after it; {never_after} of {len(due_down[NEVER])} never-uploaded rows "
            "backed off and failed only after it")
        # The storage incident the worker recorded, and what it held back.
        t0w = self.inp.world.t0_wall
        worker_incidents = [i for i in self.inp.incidents if i["source"] == "worker"]
        covering = [i for i in worker_incidents if i["started_at"] <= back_at + 1
                    and (i["ended_at"] is None or i["ended_at"] >= stop_at)]
        ev.facts.append("storage incidents recorded by the worker: " + ("; ".join(
            f"#{i['id']} +{i['started_at'] - t0w:.1f} s → "
            + (f"+{i['ended_at'] - t0w:.1f} s ({i['ended_at'] - i['started_at']:.1f} s)"
               if i["ended_at"] is not None else "still open")
            for i in worker_incidents) or "none"))
        deferred_ids = [i for i in self.deferred_log if i in self.group]
        by_group = Counter(self.group[i] for i in deferred_ids)
        never_held = [rows[i] for i in deferred_ids if self.group[i] == NEVER
                      and rows[i]["failed_at"] is not None]
        delays = [r["failed_at"] - (r["session_ended"] + k.sla_s) for r in never_held]
        ev.facts.append(
            f"404 verdicts deferred by the incident: {sum(self.deferred_log.values())} on "
            f"{len(deferred_ids)} recordings ("
            + ", ".join(f"{n} {GROUP_LABELS[g]}" for g, n in sorted(by_group.items())) + ")"
            + (f"; the grace ({k.upload_grace_s:g} s after the incident ended) delayed the "
               f"Failed verdict of {len(never_held)} never-uploaded recordings by "
               f"{min(delays):.1f} … {max(delays):.1f} s past their SLA deadline "
               f"(mean {sum(delays) / len(delays):.1f} s)" if delays else ""))
        ev.check("S3 outage: the worker recorded a storage incident covering it",
                 bool(covering) and all(i["ended_at"] is not None for i in covering),
                 f"{len(covering)} worker incident(s) overlapping the outage, all closed once "
                 "S3 answered" if covering else "no storage incident was recorded")
        ev.check("S3 outage: rows back off or are held, none fails or is quarantined for it",
                 bool(backoffs or held) and not failed_during and not healthy_quarantined
                 and max_attempts < k.max_attempts,
                 f"{len(backoffs)} backoff and {len(held)} held verdicts on {len(backed_rows)} "
                 f"rows (attempts up to "
                 f"{max_attempts} < max {k.max_attempts}); Failed while S3 was down: "
                 f"{len(failed_during)}; healthy rows quarantined: {len(healthy_quarantined)}")

    # -- the operator's requeue --------------------------------------------------------------

    def _operator(self) -> None:
        bad = [r for r in self.plan if r.scenario == BAD]
        if not bad:
            return
        waits = [self.rows[str(r.id)]["available_at"] - r.requeued_wall for r in bad
                 if r.requeued_wall and self.rows[str(r.id)]["available_at"]]
        self.ev.facts.append(
            f"quarantine → requeue: {len(bad)} objects with duration-seconds "
            f"{sorted({r.bad_duration or '' for r in bad})} quarantined; after the fix and "
            "`recording-finalize requeue` they were Available within "
            f"{max(waits) if waits else float('nan'):.1f} s")

    # -- the worker process ------------------------------------------------------------------

    def _worker(self) -> None:
        worker = self.inp.worker
        cycles = len(self.by_event.get("cycle completed", []))
        failed_cycles = len(self.by_event.get("cycle failed", []))
        self.ev.facts.append(
            f"worker cycles: {cycles} completed, {failed_cycles} failed; "
            f"{len(self.inp.log_events)} log lines in {worker.log_path}")
        self.ev.check(
            "the worker stops on SIGTERM with exit 0 within 10 s",
            not worker.died_early and worker.exit_code == 0
            and worker.stop_seconds is not None and worker.stop_seconds <= 10,
            f"exit {worker.exit_code} after {_fmt_s(worker.stop_seconds)}"
            + ("; it DIED during the run" if worker.died_early else ""))


# ---- writing -------------------------------------------------------------------------------


def render(
    ev: Evaluation, world: World, knobs: Knobs, header: list[str], broken: str | None
) -> str:
    lines = ["# recording-finalize-retry — demo report", ""]
    lines += header
    lines += ["", "## Scenarios: expected vs actual", "",
              "| scenario | n | expected | actual | |", "|---|---:|---|---|---|"]
    for g in ev.groups:
        lines.append(f"| {GROUP_LABELS[g.group]} | {g.n} | {g.expected} | {g.actual} | "
                     f"{'ok' if g.ok else '**FAIL**'} |")
    lines += ["", "## Outcomes", "", "| how the recording ended | n |", "|---|---:|"]
    lines += [f"| {name} | {n} |" for name, n in ev.outcomes]
    lines += ["", "## Facts", ""] + [f"- {f}" for f in ev.facts]
    lines += ["", "## Guarantees", ""]
    lines += [f"- [{'PASS' if c.ok else 'FAIL'}] {c.name}: {c.detail}" for c in ev.checks]
    lines.append("")
    if broken:
        lines.append(f"(run with `--break {broken}`: a guarantee was broken on purpose)")
    failed = [c.name for c in ev.checks if not c.ok]
    lines.append(f"**verdict: {'PASS' if ev.passed else 'FAIL'}**"
                 + (f" — broken: {'; '.join(failed)}" if failed else ""))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Sample:
    t: float
    backlog: int
    due: int
    quarantined_rows: int
    publish_backlog: int
    ended: int
    available: int
    failed: int
    reconciled: float
    republished: float
    worker_failed: float
    quarantined_total: float
    consumer_seen: int
    s3_up: bool


def chart(
    samples: list[Sample], path: Path, outage: tuple[float, float] | None,
    requeue_at: float | None, title: str,
) -> None:
    """Three panels over time: the queues, the recordings' fate, the worker's outcomes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s.t for s in samples]
    fig, (queues, fate, worker) = plt.subplots(
        3, 1, figsize=(11, 9), sharex=True, gridspec_kw={"height_ratios": [1, 1, 1]})
    queues.plot(t, [s.backlog for s in samples], label="backlog (Pending finalize rows)", lw=2)
    queues.plot(t, [s.due for s in samples], label="due now", lw=1, ls="--")
    queues.plot(t, [s.publish_backlog for s in samples], label="publish backlog", lw=1.5)
    queues.plot(t, [s.quarantined_rows for s in samples], label="quarantined rows", lw=1.5)
    queues.set_ylabel("rows")
    queues.set_title(title)
    fate.plot(t, [s.ended for s in samples], label="calls ended", color="0.55", lw=1)
    fate.plot(t, [s.available for s in samples], label="Available", lw=2)
    fate.plot(t, [s.consumer_seen for s in samples], label="seen by the consumer", lw=1,
              ls="--")
    fate.plot(t, [s.failed for s in samples], label="Failed", lw=1.5)
    fate.set_ylabel("recordings (cumulative)")
    for attr, label in (("reconciled", "reconciled (binary adopted)"),
                        ("republished", "republished"),
                        ("worker_failed", "failed (Timeout)"),
                        ("quarantined_total", "quarantined")):
        worker.plot(t, [getattr(s, attr) for s in samples], label=label, lw=1.5)
    worker.set_ylabel("worker outcomes (cumulative)")
    worker.set_xlabel("seconds since the scenario started")
    for ax in (queues, fate, worker):
        if outage is not None:
            ax.axvspan(outage[0], outage[1], color="red", alpha=0.12, label="S3 down")
        if requeue_at is not None:
            ax.axvline(requeue_at, color="purple", ls=":", lw=1.2,
                       label="operator: fix + requeue")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def recordings_csv(
    path: Path, ev: Evaluation, world: World, rows: dict[str, dict[str, Any]],
    consumer: RecordingConsumer,
) -> None:
    """One line per recording, times in seconds since the scenario started: the raw facts
    behind the report, for anyone who wants to check a number."""
    t0 = world.t0_wall

    def rel(x: float | None) -> str:
        return "" if x is None else f"{x - t0:.3f}"

    cols = ("recording_id", "scenario", "group", "session_kind", "media_type", "format",
            "ended", "uploaded", "callback", "status", "failure_reason", "terminal",
            "attempts", "events", "consumed")
    out = [",".join(cols)]
    for rec in world.plan:
        row = rows.get(str(rec.id), {})
        seen = consumer.first.get(str(rec.id))
        out.append(",".join(str(v) for v in (
            rec.id, rec.scenario, ev.group_of.get(str(rec.id), ""), rec.session_kind,
            rec.media_type, rec.format, rel(row.get("session_ended")), rel(rec.uploaded_wall),
            rec.callback_result or "", row.get("status", ""), row.get("failure_reason") or "",
            rel(row.get("available_at") or row.get("failed_at")), row.get("attempts", ""),
            row.get("events", ""), rel(seen.seen_wall if seen else None),
        )))
    path.write_text("\n".join(out) + "\n")
