#!/usr/bin/env python3
"""Release bookkeeping: one version, one build; a release is a git tag.

    python3 scripts/release.py fingerprint            # the SQL fingerprint of this tree
    python3 scripts/release.py fingerprint --record   # write it into the current version's entry
    python3 scripts/release.py set-version 0.3.0      # bump every place that carries the version
    python3 scripts/release.py check                  # what tests/py/test_release.py enforces
    python3 scripts/release.py tag                    # release the current version: tag vX.Y.Z

The **SQL fingerprint** is the sha256 over every ``*.sql`` file under ``sql/`` (migrations,
function files, the service's reference DDL, schema.sql: what migrate applies or ships); the
rule is ``driver/buildinfo.py``'s (``recording-finalize --version`` prints the same figure),
loaded here by its path. ``SHA256SUMS`` and ``README.md`` are not SQL and not in it.

Every version in CHANGELOG.md carries one line ``Schema fingerprint: <64 hex>``. The check fails
when the tree's fingerprint differs from the current version's line: sql/ changed, so the
package needs a new version (``set-version``). ``--record`` rewrites the current entry's line;
it is for a version not released yet.

**A release is a git tag** ``v<version>`` (``tag`` makes it, from a clean tree whose release is
consistent). Once a version is tagged its fingerprint is the tag's tree's, for good: the check
fails when the CHANGELOG entry of a tagged version records another one, or when sql/ differs
from the tag's while the package still says that version (a re-cut is a new version). A clone
without tags (CI's may have none) checks the rest.

The version lives in: pyproject.toml, driver/__init__.py (``__version__``), the image tag, the
migrate Job's name and its spec ConfigMap's name in deploy/kubernetes/base/, and the top entry
of CHANGELOG.md. ``set-version`` changes all of them and opens a CHANGELOG entry with the
current fingerprint.

Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

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


def _buildinfo() -> ModuleType:
    """driver/buildinfo.py (standard library only), by its path: the fingerprint's one rule."""
    spec = importlib.util.spec_from_file_location("_rfr_buildinfo",
                                                  REPO / "driver" / "buildinfo.py")
    if spec is None or spec.loader is None:
        raise SystemExit("driver/buildinfo.py not found")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILDINFO = _buildinfo()


def sql_files(root: Path = REPO) -> list[Path]:
    """The files the fingerprint covers, in their hashing order."""
    return list(BUILDINFO.sql_files(root / "sql"))


def sql_fingerprint(root: Path = REPO) -> str:
    return str(BUILDINFO.sql_fingerprint(root / "sql"))


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False,
                          timeout=60)


def release_tags(root: Path = REPO) -> dict[str, str]:
    """Version → tag of every release tag ``vX.Y.Z`` (none outside git, or in a clone without
    tags)."""
    try:
        listed = _git(root, "tag", "--list", "v*")
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if listed.returncode != 0:
        return {}
    tags = listed.stdout.decode().split()
    return {t[1:]: t for t in tags if SEMVER.match(t[1:])}


def tag_fingerprint(tag: str, root: Path = REPO) -> str:
    """The SQL fingerprint of the tree a tag names (its sql/, read with git archive)."""
    archive = _git(root, "archive", "--format=tar", tag, "sql")
    if archive.returncode != 0:
        raise SystemExit(f"git archive {tag} sql: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryDirectory(prefix="rfr-release-") as tmp:
        tar_path = Path(tmp) / "sql.tar"
        tar_path.write_bytes(archive.stdout)
        with tarfile.open(tar_path) as tar:
            tar.extractall(Path(tmp) / "tree", filter="data")
        return sql_fingerprint(Path(tmp) / "tree")


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
    for path in (MIGRATE_JOB, KUSTOMIZATION):
        # The Job, and the ConfigMap of its spec whose name the rendered Job takes.
        names = re.findall(rf"^\s*-?\s*name:\s*({re.escape(JOB_PREFIX)}\S+)\s*$",
                           (root / path).read_text(), re.M)
        if names != [JOB_PREFIX + job_suffix(version)]:
            out.append(f"{path}: migrate name {names}, expected "
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
    return out + released_problems(root, version, fingerprint, entries)


def released_problems(root: Path, version: str, fingerprint: str,
                      entries: list[Entry]) -> list[str]:
    """What the release tags forbid: a tagged version's fingerprint is the tag's, for good."""
    out: list[str] = []
    recorded = {e.version: e.fingerprint for e in entries}
    for tagged, tag in sorted(release_tags(root).items(), key=lambda t: version_key(t[0])):
        released = tag_fingerprint(tag, root)
        if tagged == version and fingerprint != released:
            out.append(f"sql/ differs from the release {tag} (fingerprint {released[:12]}, the "
                       f"tree's {fingerprint[:12]}) while pyproject.toml still says {version}: "
                       "a re-cut is a new version: `make set-version VERSION=<next>`")
        if tagged in recorded and recorded[tagged] not in (None, released):
            out.append(f"{CHANGELOG}: {tagged} is released ({tag}) with the schema fingerprint "
                       f"{released}; its entry records another: a released version's "
                       "fingerprint never changes")
    return out


def tag(root: Path = REPO) -> str:
    """Tags the current version as released: ``v<version>`` on HEAD, annotated with its
    fingerprint. Refuses a tree the checks find wrong, changes not committed, or a version
    that is tagged already."""
    version = pyproject_version(root)
    name = f"v{version}"
    found = problems(root)
    if found:
        raise SystemExit("not tagged: " + "; ".join(found))
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    if status.returncode != 0 or status.stdout.strip():
        raise SystemExit(f"not tagged: commit first (git status: "
                         f"{status.stdout.decode().strip() or status.stderr.decode().strip()})")
    if name in release_tags(root).values():
        raise SystemExit(f"not tagged: {name} exists: a re-cut is a new version "
                         "(`make set-version VERSION=<next>`)")
    fingerprint = sql_fingerprint(root)
    made = _git(root, "tag", "-a", name, "-m",
                f"recording-finalize-retry {version}\n\nSchema fingerprint: {fingerprint}")
    if made.returncode != 0:
        raise SystemExit(f"git tag {name}: {made.stderr.decode().strip()}")
    return name


def record(root: Path = REPO) -> str:
    """Writes the tree's fingerprint into the current version's CHANGELOG entry."""
    version = pyproject_version(root)
    tags = [t for v, t in release_tags(root).items() if v == version]
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
    for path in (MIGRATE_JOB, KUSTOMIZATION):
        _sub(root / path, rf"^(\s*-?\s*name:\s*){re.escape(JOB_PREFIX)}\S+$",
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
    sub.add_parser("tag", help="release the current version: tag v<version> on HEAD")
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
    if args.command == "tag":
        print(f"tagged {tag()}: push it with the commit (git push origin <branch> --tags)")
        return 0
    found = problems()
    for problem in found:
        print(problem)
    if not found:
        print(f"release {pyproject_version()} consistent: fingerprint {sql_fingerprint()}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
