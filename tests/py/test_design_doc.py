"""The maintainers' docs name only what exists: every file, module, function, class, constant and
SQL object that ``docs/driver-design.md``, ``docs/states.md``, ``docs/recipes.md``,
``sql/README.md`` and the contract pages put in backticks is found in the repository — a path as a
file or folder, a name as a whole word of the code (``driver/``, ``sql/``, ``tools/``,
``scripts/``, ``deploy/``, ``tests/``, the Makefile). A helper renamed or removed without its doc
fails here, naming the doc, the line and the name. The Modules table is read row by row: the
public surface of each module is that module's names. The command list of
``docs/contract/commands.md`` is checked against the CLI itself. No service needed.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest
from recording_finalize import cli

REPO = Path(__file__).resolve().parents[2]
DOCS = ("docs/driver-design.md", "docs/states.md", "docs/recipes.md", "sql/README.md",
        *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs/contract").glob("*.md")))
#: Where a name must be found.
CODE = ("driver", "sql", "tools", "scripts", "deploy", "tests")
CODE_FILES = ("Makefile", "pyproject.toml", "setup.py")
#: Where a relative path may start.
ROOTS = ("", "driver/", "sql/", "docs/", "deploy/", "tests/py/", "tests/sql/", "docs/contract/")

SPAN = re.compile(r"`([^`\n]+)`")
FILE = re.compile(r"\.(?:py|sql|md|yml|yaml|json|toml|sh|psql|png)$")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Names of other projects' APIs the docs explain the code by.
FOREIGN = frozenset({"object_store", "head_object", "S3SigV4Auth", "GenericError", "murmur2"})
#: The metrics' common prefix: the code builds their names from it.
METRIC_PREFIX = "messenger_recording_finalize_"


@cache
def corpus() -> frozenset[str]:
    words: set[str] = set()
    files = [p for folder in CODE for p in (REPO / folder).rglob("*") if p.is_file()]
    files += [REPO / name for name in CODE_FILES]
    for path in files:
        if (path.suffix in (".png", ".pyc") or "__pycache__" in path.parts
                or path == Path(__file__).resolve()):
            continue
        try:
            words.update(WORD.findall(path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
    # Modules and files are named by their stems too (`cycle`, `ops.explain`).
    words.update(p.stem for folder in CODE for p in (REPO / folder).rglob("*"))
    words.update(p.name for folder in CODE for p in (REPO / folder).rglob("*") if p.is_dir())
    return frozenset(words)


def looks_like_code(span: str) -> bool:
    """A name, a dotted name or a call, not a phrase, a value, a flag or a shell line."""
    head = span.split("(", 1)[0]
    return bool(re.fullmatch(r"\.?[A-Za-z_][A-Za-z0-9_.]*", head)) and " " not in head


def path_exists(span: str) -> bool:
    text = span.rstrip("/")
    return any((REPO / (root + text)).exists() for root in ROOTS)


def known(name: str) -> bool:
    words = corpus()
    if name.startswith(METRIC_PREFIX):
        name = name.removeprefix(METRIC_PREFIX)
        return name in words or name.removesuffix("_total") in words
    return name in words or name in FOREIGN


def findings(doc: str) -> list[str]:
    found: list[str] = []
    for number, line in enumerate((REPO / doc).read_text(encoding="utf-8").splitlines(), 1):
        for span in SPAN.findall(line):
            span = span.strip()
            head = span.split("(", 1)[0]
            if (any(c in head for c in "<>*…{} ") or span.startswith(("-", "$", "http", "/"))):
                continue  # a placeholder, a glob, an elision, a phrase, a flag, a URL, a route
            first = span.split("/", 1)[0]
            if FILE.search(span) or ("/" in span and any(
                    (REPO / root / first).is_dir() for root in ("", "driver"))):
                if not path_exists(span):
                    found.append(f"{doc}:{number}: no file {span}")
                continue
            if not looks_like_code(span.replace("/", ".")):
                continue
            missing = [n for n in NAME.findall(span.split("(", 1)[0]) if not known(n)]
            if missing:
                found.append(f"{doc}:{number}: {', '.join(missing)} (in `{span}`) is nowhere "
                             "in the code")
    return found


@pytest.mark.parametrize("doc", DOCS)
def test_every_name_in_backticks_exists(doc: str) -> None:
    assert findings(doc) == []


def test_a_name_that_is_gone_is_found(tmp_path: Path) -> None:
    """The check itself can fail: names and files that do not exist are reported."""
    doc = tmp_path / "doc.md"
    doc.write_text("Released by `_config_error_release`; see `driver/gone.py` and "
                   "`cycle._Reconcile.apply`, `sql/README.md`.\n")
    found = findings(str(doc))  # an absolute path: REPO / doc is doc
    assert any("_config_error_release" in f for f in found)
    assert any("driver/gone.py" in f for f in found)
    assert not any("apply" in f or "README" in f for f in found)


def test_the_command_list_is_the_clis() -> None:
    text = (REPO / "docs/contract/commands.md").read_text(encoding="utf-8")
    first_cells = re.findall(r"^\| (`(?:[^|\\]|\\.)*)\|", text, re.MULTILINE)
    listed = {name for cell in first_cells for name in re.findall(r"`([a-z-]+)", cell)}
    assert listed - {"--version"} == {command.name for command in cli.COMMANDS}


def test_the_api_page_names_every_api_function() -> None:
    """docs/contract/api.md is the map of schema recording_finalize: a function file added
    without its line there fails here."""
    text = (REPO / "docs/contract/api.md").read_text(encoding="utf-8")
    functions = {p.name.removeprefix("recording_finalize.").removesuffix(".sql")
                 for p in (REPO / "sql/functions").glob("recording_finalize.*.sql")}
    assert functions
    assert sorted(f for f in functions if not re.search(rf"`{f}\b", text)) == []


def _module_names(path: Path) -> tuple[set[str], set[str], str]:
    """A module's top-level names (defined or imported), every other name it defines or takes
    (methods, attributes, parameters, keywords), and its source."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    top: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.Assign):
            top |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            top |= {e.id for t in node.targets if isinstance(t, ast.Tuple) for e in t.elts
                    if isinstance(e, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            top |= {(a.asname or a.name).split(".")[0] for a in node.names}
    inner: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            inner.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            inner.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            inner.add(node.target.id)
        elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:
            inner.add(node.arg)
    return top, inner, source


def module_surface_findings(doc: str) -> list[str]:
    """Each row of the Modules table: the names its "public surface" cell puts in backticks are
    the module's own (or, named there in passing, another module's or the SQL's)."""
    driver = REPO / "driver"
    modules = {p: _module_names(p) for p in driver.rglob("*.py")}
    elsewhere = {name for top, _, _ in modules.values() for name in top}
    elsewhere |= {p.stem for p in driver.rglob("*.py")}
    elsewhere |= {p.stem.split(".", 1)[1] for p in (REPO / "sql/functions").glob("*.sql")}
    elsewhere |= {command.name for command in cli.COMMANDS}
    found = []
    text = (REPO / doc).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        row = re.match(r"^\| `([\w/]+\.py)` \|(?:[^|\\]|\\.)*\|(.*)\|$", line)
        if not row or not (driver / row.group(1)).is_file():
            continue
        top, inner, source = modules[driver / row.group(1)]
        for span in SPAN.findall(row.group(2)):
            head = span.split("(", 1)[0].strip()
            if (not re.fullmatch(r"\.?[A-Za-z_][\w.]*", head) or FILE.search(head)
                    or head.startswith("recording_finalize")):
                continue  # not a Python name, a file, or the SQL's
            name = head.lstrip(".").split(".")[0]
            if head.startswith("."):
                ok = name in inner
            else:
                ok = (name in top or name in inner or name in elsewhere
                      or f'"{span}"' in source or f"'{span}'" in source)
            if not ok:
                found.append(f"{doc}:{number}: `{span}` is not a name of {row.group(1)}")
    return found


def test_each_modules_surface_is_its_own() -> None:
    assert module_surface_findings("docs/driver-design.md") == []


def test_a_surface_name_that_is_gone_is_found(tmp_path: Path) -> None:
    doc = tmp_path / "design.md"
    doc.write_text("| `install/service_sql.py` | prints | `vanished_text(part, sql_dir)`, "
                   "`grants(role)`, `COMMAND` |\n"
                   "| `cycle.py` | one cycle | `.claim_loop`, `.vanished_method` |\n")
    found = module_surface_findings(str(doc))
    assert [f.split(": ", 1)[1] for f in found] == [
        "`vanished_text(part, sql_dir)` is not a name of install/service_sql.py",
        "`.vanished_method` is not a name of cycle.py"]
