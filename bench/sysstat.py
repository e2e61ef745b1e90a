"""What the machine did during a measurement: load, steal, and CPU seconds per component.

This machine has 2 cores and other people's test runs may share it, so every figure is recorded
with the load average, the share of CPU time stolen by the hypervisor, the share the whole
machine was busy, and the CPU seconds each part of the stack spent (PostgreSQL — every backend,
the exited ones included through the postmaster's children times —, SeaweedFS, Tansu, the
contender's own processes). What the machine spent beyond those parts is "others".
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

_TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    return data.rsplit(")", 1)[1].split()


def process_cpu(pid: int, children: bool = False) -> float:
    """utime + stime of ``pid`` (plus its waited-for children's with ``children``), seconds."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    # After the ")" : state is [0], utime [11], stime [12], cutime [13], cstime [14].
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / _TICK


def _children_of(ppid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None and int(fields[1]) == ppid:
                kids.append(int(entry))
    return kids


def postgres_cpu(postmaster: int) -> float:
    """The whole cluster: postmaster, live backends, and exited ones (children times)."""
    return process_cpu(postmaster, children=True) + sum(
        process_cpu(kid) for kid in _children_of(postmaster))


def _proc_stat() -> tuple[int, int, int]:
    """(total, idle incl. iowait, steal) jiffies of all CPUs."""
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (parts + [0] * 8)[:8]
    total = user + nice + system + idle + iowait + irq + softirq + steal
    return total, idle + iowait, steal


def peak_rss_kb(pid: int | str = "self") -> int:
    """The peak resident memory of ``pid``'s own address space (VmHWM), in kB.

    Not ``ru_maxrss``: Linux carries the high-water mark of the address space a process had
    before ``exec`` into it, and a child spawned by a big parent (fork or vfork) starts out
    in the parent's — the bench's own memory would be counted as the worker's."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def loadavg() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


@dataclass
class Snapshot:
    total: int
    idle: int
    steal: int
    load: float
    cpu: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Usage:
    """Between two snapshots: seconds of CPU per component, machine busy/steal shares."""

    wall_s: float
    load_start: float
    load_end: float
    busy_share: float   # of all cores
    steal_share: float  # of all cores
    cpu_s: dict[str, float]
    cores: int

    @property
    def others_s(self) -> float:
        busy_s = self.busy_share * self.cores * self.wall_s
        return max(0.0, busy_s - sum(self.cpu_s.values()))


class Meter:
    """Snapshots of the stack's processes; ``extra`` adds a contender's pids per measurement."""

    def __init__(self, postmaster: int, weed: int, tansu: int) -> None:
        self._pids = {"postgres": postmaster, "s3": weed, "kafka": tansu}

    def snapshot(self, extra: Mapping[str, Iterable[int]] | None = None) -> Snapshot:
        total, idle, steal = _proc_stat()
        snap = Snapshot(total, idle, steal, loadavg())
        snap.cpu["postgres"] = postgres_cpu(self._pids["postgres"])
        snap.cpu["s3"] = process_cpu(self._pids["s3"], children=True)
        snap.cpu["kafka"] = process_cpu(self._pids["kafka"], children=True)
        for name, pids in (extra or {}).items():
            snap.cpu[name] = sum(process_cpu(p) for p in pids)
        return snap

    @staticmethod
    def usage(a: Snapshot, b: Snapshot, wall_s: float,
              final: Mapping[str, float] | None = None) -> Usage:
        """``final`` overrides a component's CPU seconds measured otherwise (a contender's
        processes that exited: their own rusage)."""
        total = max(1, b.total - a.total)
        cpu = {k: b.cpu.get(k, 0.0) - a.cpu.get(k, 0.0) for k in b.cpu}
        cpu.update(final or {})
        return Usage(
            wall_s=wall_s,
            load_start=a.load,
            load_end=b.load,
            busy_share=1.0 - (b.idle - a.idle) / total - (b.steal - a.steal) / total,
            steal_share=(b.steal - a.steal) / total,
            cpu_s=cpu,
            cores=os.cpu_count() or 1,
        )


def thread_cpu_ns(pid: int) -> int | None:
    """The CPU time ``pid`` has run, in nanoseconds (``/proc/<pid>/schedstat``: the
    scheduler's own count, not rounded to clock ticks); None once it has exited."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


class BackendCpu:
    """The CPU of each PostgreSQL backend of one role while a contender runs, as a user would
    read it from outside: the role's backends found in ``pg_stat_activity`` (asked twice a
    second, so that the sampling itself costs the server next to nothing), their CPU read from
    ``/proc`` every 50 ms. A backend that exits keeps its last reading (the work it did before
    its last 50 ms). A backend there at the start counts from then; one that starts later,
    from its birth."""

    def __init__(self, list_pids: Callable[[], list[int]]) -> None:
        self._list_pids = list_pids
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._first: dict[int, int] = {}
        self._last: dict[int, int] = {}
        self._thread = threading.Thread(target=self._run, name="bench-backend-cpu", daemon=True)

    def __enter__(self) -> BackendCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        pids: list[int] = []
        next_listing = 0.0
        started = False
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_listing:
                pids = self._list_pids()
                next_listing = now + 0.5
            for pid in pids:
                ns = thread_cpu_ns(pid)
                if ns is None:
                    continue
                with self._lock:
                    self._first.setdefault(pid, ns if not started else 0)
                    self._last[pid] = ns
            started = True
            self._stop.wait(0.05)

    def seconds(self) -> list[float]:
        """Each backend's CPU seconds since it was first seen, the busiest first."""
        with self._lock:
            return sorted(((self._last[p] - self._first[p]) / 1e9 for p in self._last),
                          reverse=True)
