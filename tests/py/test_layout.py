"""The driver's layout, read from its source (``ast``; nothing of it is imported or run here,
except by the last test, which runs one in a subprocess):

- every module of ``driver/`` belongs to one layer: the **core** (the worker itself), the
  **tooling** (``ops/``, ``install/`` and the CLI helpers they share) or a **composition root**
  (``worker.py``, ``cli.py``); a new module fails here until it is given one;
- a layer imports only what it may: the core nothing but the core; ``ops/`` and ``install/``
  the core, ``cliutil`` and themselves, not each other; nothing imports ``cli``;
- no import cycle anywhere in ``driver/``, counting every import (lazy ones inside functions and
  the ``TYPE_CHECKING`` ones too: a cycle is a design knot even when Python can run it);
- no function in the core is longer than ``MAX_FUNCTION_LINES``.

No service needed.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

DRIVER = Path(__file__).resolve().parents[2] / "driver"
PACKAGE = "recording_finalize"

#: The worker: what runs in the sidecar (the job itself, and keeping the sidecar healthy).
CORE = frozenset({
    "__init__", "config", "errors", "logs", "model", "db", "queries", "pipeline", "storage",
    "cycle", "relay", "incidents", "maintenance", "metrics", "tracing", "probes",
    "drift", "contract", "adapter", "pacing", "buildinfo",
})
#: What the commands share; they import it, the core does not.
CLI_HELPERS = frozenset({"cliutil"})
#: They wire everything together and may import every layer.
ROOTS = frozenset({"worker", "cli"})

MAX_FUNCTION_LINES = 60
#: Longer core functions that are allowed, each with its reason; an entry no longer needed fails.
LONG_FUNCTIONS: dict[str, str] = {}


def layer(module: str) -> str:
    if module in CORE:
        return "core"
    if module in CLI_HELPERS:
        return "cliutil"
    if module in ROOTS:
        return module
    top = module.split(".")[0]
    if top in ("ops", "install"):
        return top
    return "unclassified"


#: layer → the layers it may import.
ALLOWED = {
    "core": {"core"},
    "cliutil": {"core"},
    "ops": {"core", "cliutil", "ops"},
    "install": {"core", "cliutil", "install"},
    "worker": {"core", "cliutil", "ops", "install"},
    "cli": {"core", "cliutil", "ops", "install", "worker"},
}


@dataclass(frozen=True)
class Source:
    module: str  # dotted, relative to the package: "cycle", "ops.explain", "ops" (its __init__)
    path: Path
    tree: ast.Module

    @property
    def package(self) -> list[str]:
        """The package this module's relative imports start from."""
        parts = self.module.split(".")
        if self.path.name == "__init__.py":
            return [] if self.module == "__init__" else parts
        return parts[:-1]


def sources(root: Path = DRIVER) -> dict[str, Source]:
    found: dict[str, Source] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        module = ".".join(parts)
        found[module] = Source(module, path, ast.parse(path.read_text(), str(path)))
    return found


def imports(src: Source, known: set[str]) -> set[str]:
    """The modules of the package ``src`` imports, anywhere in the file."""
    out: set[str] = set()

    def add(dotted: list[str]) -> None:
        # The longest known prefix: "ops.queries.Connection" → "ops.queries".
        for end in range(len(dotted), 0, -1):
            name = ".".join(dotted[:end])
            if name in known:
                out.add(name)
                return
        if not dotted:
            out.add("__init__")

    for node in ast.walk(src.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == PACKAGE:
                    add(parts[1:])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] != PACKAGE:
                    continue
                base = parts[1:]
            else:
                up = node.level - 1
                if up > len(src.package):
                    raise AssertionError(f"{src.path}: relative import beyond the package")
                base = src.package[: len(src.package) - up]
                base += node.module.split(".") if node.module else []
            for alias in node.names:
                # "from . import queries" names a module; "from .queries import stats" does not.
                candidate = [*base, alias.name]
                if ".".join(candidate) in known:
                    out.add(".".join(candidate))
                else:
                    add(base)
    out.discard(src.module)
    return out


def graph(root: Path = DRIVER) -> dict[str, set[str]]:
    found = sources(root)
    known = set(found)
    return {name: imports(src, known) for name, src in found.items()}


def layer_violations(edges: dict[str, set[str]]) -> list[str]:
    out = []
    for module, targets in sorted(edges.items()):
        mine = layer(module)
        if mine == "unclassified":
            out.append(f"{module}: belongs to no layer (add it to CORE, CLI_HELPERS or ROOTS, "
                       "or put it in ops/ or install/)")
            continue
        for target in sorted(targets):
            theirs = layer(target)
            if theirs not in ALLOWED[mine]:
                out.append(f"{module} ({mine}) imports {target} ({theirs})")
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle, as a path that ends where it starts (one per strongly connected
    component; Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(_path_through(sorted(component), edges))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _path_through(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """The shortest cycle inside ``component`` through its first member, for the message."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(edges[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no cycle through {start} in {component}")


def long_functions(root: Path = DRIVER) -> dict[str, int]:
    """``module:Qualified.name`` → lines, for every function of the core over the limit."""
    out: dict[str, int] = {}
    for module, src in sources(root).items():
        if layer(module) == "core":
            _walk(src.tree, f"{module}:", out)
    return out


def _walk(node: ast.AST, prefix: str, out: dict[str, int]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{child.name}"
            assert child.end_lineno is not None
            lines = child.end_lineno - child.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                out[name] = lines
            _walk(child, f"{name}.", out)
        elif isinstance(child, ast.ClassDef):
            _walk(child, f"{prefix}{child.name}.", out)


# ------------------------------------------------------------------------------------------


def test_every_module_has_a_layer_and_imports_only_what_its_layer_may() -> None:
    edges = graph()
    assert {"cycle", "ops.explain", "install.migrate", "worker", "cli"} <= set(edges)
    assert layer_violations(edges) == []


def test_the_core_imports_nothing_of_the_tooling() -> None:
    edges = graph()
    reached = {target for module, targets in edges.items() if layer(module) == "core"
               for target in targets}
    assert {layer(target) for target in reached} == {"core"}


def test_there_is_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_no_core_function_is_longer_than_the_limit() -> None:
    found = long_functions()
    unexplained = {name: lines for name, lines in found.items() if name not in LONG_FUNCTIONS}
    assert unexplained == {}, f"core functions over {MAX_FUNCTION_LINES} lines: {unexplained}"
    stale = set(LONG_FUNCTIONS) - set(found)
    assert not stale, f"no longer over the limit, drop from LONG_FUNCTIONS: {sorted(stale)}"


# The checks themselves, on a made-up package: each rule must be able to fail.


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_checks_see_a_core_module_import_the_tooling(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "cycle.py": "def f():\n    from .ops import explain\n",
        "ops/__init__.py": "", "ops/explain.py": "from .. import cycle\n",
    })
    edges = graph(root)
    assert edges["cycle"] == {"ops.explain"}
    assert layer_violations(edges) == ["cycle (core) imports ops.explain (ops)"]
    assert cycles(edges) == [["cycle", "ops.explain", "cycle"]]


def test_the_checks_see_a_cycle_through_type_checking_imports(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "queries.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from .pipeline import Answer\n",
        "pipeline.py": "from .queries import Connection\n",
        "model.py": "from recording_finalize import queries\n",
    })
    edges = graph(root)
    assert edges == {"queries": {"pipeline"}, "pipeline": {"queries"}, "model": {"queries"}}
    assert cycles(edges) == [["pipeline", "queries", "pipeline"]]
    longer = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(longer) == [["a", "b", "c", "a"]]


def test_the_checks_see_an_unclassified_module_and_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    root = _tree(tmp_path, {"helpers.py": "", "relay.py": f"def drain():\n{body}\n"})
    assert layer_violations(graph(root))[0].startswith("helpers: belongs to no layer")
    assert long_functions(root) == {"relay:drain": MAX_FUNCTION_LINES + 1}


def test_building_the_parser_loads_none_of_the_heavy_libraries() -> None:
    """``--help`` and a configuration error answer at once: the command modules import boto3,
    obstore, librdkafka, yoyo and the OpenTelemetry SDK only inside the commands that use
    them. (Runs the import in a fresh interpreter: the one place this file executes code.)"""
    heavy = ("boto3", "botocore", "obstore", "confluent_kafka", "yoyo", "opentelemetry.sdk")
    code = ("import sys\nfrom recording_finalize import cli\ncli.build_parser()\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module", sorted(CORE))
def test_every_core_module_exists(module: str) -> None:
    path = DRIVER / f"{module}.py"
    assert path.is_file(), f"CORE names {module}, which is not a module of driver/"
