#!/usr/bin/env python3
"""Release bookkeeping: one package version per shipped schema, recorded in CHANGELOG.md.

    python3 scripts/release.py fingerprint            # the SQL fingerprint of this tree
    python3 scripts/release.py fingerprint --record   # write it into the current version's entry
    python3 scripts/release.py set-version 0.3.0      # bump every place that carries the version
    python3 scripts/release.py check                  # what tests/py/test_release.py enforces

The **SQL fingerprint** is the sha256 over every ``*.sql`` file under ``sql/`` (migrations,
function files, the service's reference DDL: what migrate applies or ships), in the order of
their sorted paths relative to the repository root, each fed as
``<path> NUL <size in bytes, decimal> NUL <bytes>`` so that no two trees hash alike by moving
bytes from one file to the next. ``SHA256SUMS`` and ``README.md`` are not SQL and not in it.

Every version in CHANGELOG.md carries one line ``Schema fingerprint: <64 hex>``. The test fails
when the tree's fingerprint differs from the current version's line: sql/ changed, so the
package needs a new version (``set-version``). ``--record`` rewrites the current entry's line;
it is for a version not released yet (it refuses once a git tag ``v<version>`` exists).

The version lives in: pyproject.toml, driver/__init__.py (``__version__``), the image tag and
the migrate Job's name in deploy/kubernetes/base/, and the top entry of CHANGELOG.md.
``set-version`` changes all of them and opens a CHANGELOG entry with the current fingerprint.

Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PYPROJECT = "pyproject.toml"
INIT = "driver/__init__.py"
CHANGELOG = "CHANGELOG.md"
KUSTOMIZATION = "deploy/kubernetes/base/kustomization.yaml"
MIGRATE_JOB = "deploy/kubernetes/base/migrate-job.yaml"
IMAGE = "recording-finalize-retry"
JOB_PREFIX = "recording-finalize-retry-migrate-"

FINGERPRINT_LINE = re.compile(r"^Schema fingerprint: ([0-9a-f]{64})[ \t]*$", re.M)
ENTRY = re.compile(r"^## \[(?P<version>[^\]]+)\](?P<rest>.*)$", re.M)
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


def sql_files(root: Path = REPO) -> list[Path]:
    """The files the fingerprint covers, in their hashing order."""
    return sorted((root / "sql").rglob("*.sql"), key=lambda p: p.relative_to(root).as_posix())


def sql_fingerprint(root: Path = REPO) -> str:
    h = hashlib.sha256()
    for path in sql_files(root):
        data = path.read_bytes()
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class Entry:
    version: str
    fingerprint: str | None
    heading: str


def changelog_entries(text: str) -> list[Entry]:
    """The versioned entries, newest (top) first; ``[Unreleased]`` is skipped."""
    heads = list(ENTRY.finditer(text))
    out = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        if head["version"].lower() == "unreleased":
            continue
        found = FINGERPRINT_LINE.findall(text[head.end():end])
        out.append(Entry(head["version"], found[0] if len(found) == 1 else None, head[0]))
    return out


def pyproject_version(root: Path = REPO) -> str:
    return str(tomllib.loads((root / PYPROJECT).read_text())["project"]["version"])


def init_version(root: Path = REPO) -> str:
    found = re.findall(r'^__version__ = "([^"]+)"$', (root / INIT).read_text(), re.M)
    if len(found) != 1:
        raise SystemExit(f"{INIT}: expected one __version__ line, found {len(found)}")
    return found[0]


def job_suffix(version: str) -> str:
    """The migrate Job's name carries the version with dashes (a dot in a pod name ends up in
    its hostname)."""
    return version.replace(".", "-")


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def problems(root: Path = REPO) -> list[str]:
    """Everything the release rules find wrong in the tree at ``root`` (empty: consistent)."""
    out: list[str] = []
    version = pyproject_version(root)
    if not SEMVER.match(version):
        out.append(f"{PYPROJECT}: version {version!r} is not MAJOR.MINOR.PATCH")
    if init_version(root) != version:
        out.append(f"{INIT}: __version__ = {init_version(root)!r}, pyproject.toml says "
                   f"{version!r}")
    kustomization = (root / KUSTOMIZATION).read_text()
    tags = re.findall(r"^\s*newTag:\s*\"?([^\s\"]+)\"?\s*$", kustomization, re.M)
    if tags != [version]:
        out.append(f"{KUSTOMIZATION}: image tags {tags}, expected [{version!r}]")
    names = re.findall(rf"^\s*name:\s*({re.escape(JOB_PREFIX)}\S+)\s*$",
                       (root / MIGRATE_JOB).read_text(), re.M)
    if names != [JOB_PREFIX + job_suffix(version)]:
        out.append(f"{MIGRATE_JOB}: Job name {names}, expected "
                   f"{JOB_PREFIX + job_suffix(version)!r}")
    entries = changelog_entries((root / CHANGELOG).read_text())
    if not entries:
        return [*out, f"{CHANGELOG}: no versioned entry (## [X.Y.Z] - date)"]
    if entries[0].version != version:
        out.append(f"{CHANGELOG}: the top entry is {entries[0].version}, pyproject.toml says "
                   f"{version}: add a `## [{version}] - YYYY-MM-DD` entry")
    seen: dict[str, str] = {}
    for entry in entries:
        if entry.version in seen:
            out.append(f"{CHANGELOG}: version {entry.version} appears twice")
        if entry.fingerprint is None:
            out.append(f"{CHANGELOG}: entry {entry.version} needs exactly one line "
                       "`Schema fingerprint: <64 hex>`")
        elif entry.fingerprint in seen.values():
            other = next(v for v, f in seen.items() if f == entry.fingerprint)
            out.append(f"{CHANGELOG}: {entry.version} and {other} record the same schema "
                       "fingerprint: a version without a schema change needs no entry of "
                       "its own, or two entries describe one release")
        seen[entry.version] = entry.fingerprint or ""
    versions = [e.version for e in entries if SEMVER.match(e.version)]
    if versions != sorted(versions, key=version_key, reverse=True):
        out.append(f"{CHANGELOG}: entries are not newest first: {versions}")
    current = next((e for e in entries if e.version == version), None)
    fingerprint = sql_fingerprint(root)
    if current is not None and current.fingerprint not in (None, fingerprint):
        out.append(f"sql/ changed since {version}: bump the version in pyproject.toml and add "
                   f"a CHANGELOG entry with `Schema fingerprint: {fingerprint}`")
    return out


def record(root: Path = REPO) -> str:
    """Writes the tree's fingerprint into the current version's CHANGELOG entry."""
    version = pyproject_version(root)
    tags = subprocess.run(["git", "tag", "--list", f"v{version}", version], cwd=root,
                          capture_output=True, text=True, check=False).stdout.split()
    if tags:
        raise SystemExit(f"{version} is tagged ({', '.join(tags)}): released, its fingerprint "
                         "stays; `set-version` to the next version instead")
    path = root / CHANGELOG
    text = path.read_text()
    heads = [h for h in ENTRY.finditer(text) if h["version"] == version]
    if len(heads) != 1:
        raise SystemExit(f"{CHANGELOG}: no single entry ## [{version}]")
    head = heads[0]
    nxt = ENTRY.search(text, head.end())
    end = nxt.start() if nxt else len(text)
    body = text[head.end():end]
    line = f"Schema fingerprint: {sql_fingerprint(root)}"
    new_body, n = FINGERPRINT_LINE.subn(line, body)
    if n == 0:
        new_body = f"\n\n{line}" + body
    path.write_text(text[:head.end()] + new_body + text[end:])
    return line


def set_version(version: str, root: Path = REPO, today: dt.date | None = None,
                fingerprint: str | None = None) -> None:
    """Moves every place that carries the version to ``version`` and opens its CHANGELOG
    entry (with the fingerprint of the tree, or the one given)."""
    if not SEMVER.match(version):
        raise SystemExit(f"{version!r} is not MAJOR.MINOR.PATCH")
    old = pyproject_version(root)
    if version_key(version) <= version_key(old):
        raise SystemExit(f"{version} is not newer than the current {old}")
    _sub(root / PYPROJECT, r'^(version = )"[^"]+"$', rf'\g<1>"{version}"')
    _sub(root / INIT, r'^(__version__ = )"[^"]+"$', rf'\g<1>"{version}"')
    _sub(root / KUSTOMIZATION, r"^(\s*newTag:\s*)\S+$", rf"\g<1>{version}")
    _sub(root / MIGRATE_JOB, rf"^(\s*name:\s*){re.escape(JOB_PREFIX)}\S+$",
         rf"\g<1>{JOB_PREFIX}{job_suffix(version)}")
    path = root / CHANGELOG
    text = path.read_text()
    first = next((h for h in ENTRY.finditer(text) if h["version"].lower() != "unreleased"),
                 None)
    at = first.start() if first else len(text)
    day = (today or dt.datetime.now(dt.UTC).date()).isoformat()
    entry = (f"## [{version}] - {day}\n\nSchema fingerprint: "
             f"{fingerprint or sql_fingerprint(root)}\n\n### Changed\n\n- (what changed)\n\n")
    path.write_text(text[:at] + entry + text[at:])


def _sub(path: Path, pattern: str, repl: str) -> None:
    text = path.read_text()
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    if n != 1:
        raise SystemExit(f"{path}: no line matches {pattern!r}")
    path.write_text(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fp = sub.add_parser("fingerprint", help="print the SQL fingerprint of the tree")
    fp.add_argument("--record", action="store_true",
                    help="write it into the current version's CHANGELOG entry (unreleased only)")
    sv = sub.add_parser("set-version", help="bump every place that carries the version")
    sv.add_argument("version")
    sub.add_parser("check", help="list what the release rules find wrong (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.command == "fingerprint":
        if args.record:
            print(record())
        fingerprint = sql_fingerprint()
        version = pyproject_version()
        entry = next((e for e in changelog_entries((REPO / CHANGELOG).read_text())
                      if e.version == version), None)
        recorded = entry.fingerprint if entry else None
        print(fingerprint)
        state = "matches" if recorded == fingerprint else f"differs ({recorded or 'none'})"
        print(f"{len(sql_files())} files under sql/; CHANGELOG {version}: {state}",
              file=sys.stderr)
        return 0
    if args.command == "set-version":
        set_version(args.version)
        print(f"version {args.version}: {PYPROJECT}, {INIT}, {KUSTOMIZATION}, {MIGRATE_JOB}; "
              f"{CHANGELOG} has a new entry to fill in")
        return 0
    found = problems()
    for problem in found:
        print(problem)
    if not found:
        print(f"release {pyproject_version()} consistent: fingerprint {sql_fingerprint()}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
