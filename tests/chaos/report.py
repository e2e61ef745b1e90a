"""The chaos figures as a Markdown table, and its place in docs/reliability.md."""

from __future__ import annotations

import os
import platform
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness import Figures

START = "<!-- chaos-figures:start (written by make chaos) -->"
END = "<!-- chaos-figures:end -->"
COLUMNS = ("scenario", "faults injected", "seeded", "in flight at the fault", "terminal",
           "quarantined", "lost", "double", "stuck", "torn", "wrong", "duplicates", "recover s",
           "result")


def _in_flight(counts: list[int]) -> str:
    """The work left when the fault landed; for repeated faults the least and the most."""
    if not counts:
        return "-"
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}-{high} ({len(counts)} faults)"


def render_table(figures: list[Figures]) -> str:
    rows = [COLUMNS, tuple("---" for _ in COLUMNS)]
    for f in figures:
        rows.append((
            f.scenario, f.faults, str(f.seeded), _in_flight(f.in_flight), str(f.terminal),
            str(f.quarantined), str(f.lost), str(f.double), str(f.stuck), str(f.torn), str(f.wrong),
            str(f.duplicates), "-" if f.recover_s is None else f"{f.recover_s:.1f}",
            "pass" if f.ok else "FAIL",
        ))
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def update_docs(path: Path, table: str, wall_s: float) -> None:
    text = path.read_text() if path.exists() else f"{START}\n{END}\n"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    busy = os.environ.get("BUSY", "0")
    hogs = (f" with BUSY={busy} ({busy} stress-ng CPU hogs beside it the whole run)"
            if busy not in ("", "0") else "")
    block = (
        f"{START}\n"
        f"Measured {when} on {os.cpu_count()} CPUs ({platform.machine()}, "
        f"Python {platform.python_version()}) by `make chaos`{hogs}; whole run "
        f"{wall_s:.0f} s wall time, bootstrap and stack included.\n\n"
        f"{table}\n{END}"
    )
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    path.write_text(pattern.sub(lambda _m: block, text, count=1))
