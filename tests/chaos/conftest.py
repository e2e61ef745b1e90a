"""Fixtures of the chaos suite, and the figures table printed at the end of the run.

The stack is the one ``scripts/chaos.sh`` started (``RFR_STACK_DIR``, Kafka on S3 storage so
the topic outlives a broker restart); without it, one is started for the session. Each
scenario gets a ``World`` (harness.py) and reports its ``Figures`` through ``record``; the
table is printed in the terminal summary, written to ``out/chaos/figures.json`` and, when
``RFR_CHAOS_DOCS=1`` and every scenario ran and passed, into ``docs/reliability.md``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from harness import OUT, REPO, Figures, Stack, Template, World, drop_database, make_template
from report import render_table, update_docs

from tools import stack as stack_tool

_FIGURES: list[Figures] = []
_STARTED = time.monotonic()


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    given = os.environ.get("RFR_STACK_DIR")
    if given:
        state = stack_tool.up(stack_tool.resolve_dir(given), kafka_storage="s3", verbose=False)
        yield Stack(Path(state["dir"]), dict(state["env"]))
        return
    tmp = Path(tempfile.mkdtemp(prefix="rfr-chaos-stack-"))
    try:
        state = stack_tool.up(tmp, kafka_storage="s3", verbose=False)
        yield Stack(Path(state["dir"]), dict(state["env"]))
    finally:
        stack_tool.down(tmp, verbose=False)


@pytest.fixture(scope="session")
def template(stack: Stack) -> Iterator[Template]:
    tpl = make_template(stack)
    yield tpl
    drop_database(stack, tpl.name)


@pytest.fixture
def world(stack: Stack, template: Template,
          request: pytest.FixtureRequest) -> Iterator[Callable[[], World]]:
    made: list[World] = []

    def make() -> World:
        node = request.node.name.removeprefix("test_").replace("+", "plus").replace("-", "minus")
        name = re.sub(r"[^a-z0-9]+", "_", node.lower()).strip("_")
        w = World(stack, template, name)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()


@pytest.fixture
def record() -> Callable[[Figures], None]:
    def add(fig: Figures) -> None:
        _FIGURES.append(fig)
        print(f"\n{fig.scenario}: {json.dumps(fig.to_dict())}")

    return add


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    if not _FIGURES:
        return
    wall = time.monotonic() - _STARTED
    table = render_table(_FIGURES)
    terminalreporter.write_sep("=", "chaos figures")
    terminalreporter.write_line(table)
    terminalreporter.write_line(f"suite wall time: {wall:.0f} s")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "figures.json").write_text(json.dumps(
        {"date": datetime.now(UTC).isoformat(timespec="seconds"), "wallSeconds": round(wall),
         "scenarios": [f.to_dict() for f in _FIGURES]}, indent=2) + "\n")
    (OUT / "figures.md").write_text(table + "\n")
    stats = terminalreporter.stats
    complete = not any(stats.get(k) for k in ("failed", "error", "skipped", "deselected"))
    if os.environ.get("RFR_CHAOS_DOCS") == "1" and complete and exitstatus == 0:
        total = os.environ.get("RFR_CHAOS_TOTAL_START")
        wall_total = time.time() - float(total) if total else wall
        update_docs(REPO / "docs" / "reliability.md", table, wall_total)
        terminalreporter.write_line("figures written to docs/reliability.md")
