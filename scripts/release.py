#!/usr/bin/env python3
"""Release bookkeeping: one version, one build; the release record is CHANGELOG.md.

    python3 scripts/release.py fingerprint            # the tree's fingerprints, and the record's
    python3 scripts/release.py set-version 0.5.0      # cut a release: version + CHANGELOG entry
    python3 scripts/release.py set-version 0.5.1.dev0 # back to development after it
    python3 scripts/release.py check                  # what tests/py/test_release.py enforces
    python3 scripts/release.py tag                    # tag the release vX.Y.Z (refuses the rest)
    python3 scripts/release.py image-tag              # the image tag of a build of this tree
    python3 scripts/release.py fingerprint --record   # rewrite the fingerprints of a release
                                                      # entry not committed yet

**Two fingerprints** (the rule is ``driver/buildinfo.py``'s, loaded here by its path; the
package's ``--version`` and ``build_info`` print the same figures):
``Package fingerprint`` covers everything the wheel ships (the driver's Python files and the SQL
package); ``Schema fingerprint`` covers the ``*.sql`` files alone (what ``migrate`` applies).

**The record lives in the repository** (tags do not travel with it): each release's CHANGELOG
entry ``## [X.Y.Z] - date`` carries ``Schema fingerprint:`` and, from 0.5.0 on, ``Package
fingerprint:``. A version is either

- a **release** ``X.Y.Z``: the top entry of CHANGELOG.md is ``[X.Y.Z]``, its fingerprints are
  the tree's, and ``[Unreleased]`` lists nothing; or
- a **development version** ``X.Y.Z.devN`` (unreleased work, any tree), newer than every
  release CHANGELOG.md records; its changes are listed under ``[Unreleased]``.

So a tree whose files differ from the ones recorded for its version fails the check: two builds
with different code never carry the same release version, and a development build says so
(``--version``, ``build_info``'s ``development`` label). In a git clone the check also reads
history: a release's fingerprints are the ones its entry had when it was first committed, for
good (a re-cut is a new version).

The version lives in: pyproject.toml, driver/__init__.py (``__version__``), the image tag, the
migrate Job's name and its spec ConfigMap's name in deploy/kubernetes/base/, the ``--version``
sample of docs/install.md and, for a release, the top entry of CHANGELOG.md. ``set-version``
changes all of them; to a release it moves ``[Unreleased]`` into the new entry with the tree's
fingerprints. The steps of a release: docs/releasing.md.

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
INSTALL_GUIDE = "docs/install.md"
IMAGE = "recording-finalize-retry"
JOB_PREFIX = "recording-finalize-retry-migrate-"

FINGERPRINT_LINE = re.compile(r"^Schema fingerprint: ([0-9a-f]{64})[ \t]*$", re.M)
PACKAGE_LINE = re.compile(r"^Package fingerprint: ([0-9a-f]{64})[ \t]*$", re.M)
ENTRY = re.compile(r"^## \[(?P<version>[^\]]+)\](?P<rest>.*)$", re.M)
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
VERSION = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.dev(0|[1-9]\d*))?$")
#: The first release whose entry records the package fingerprint (older ones predate it).
PACKAGE_FINGERPRINT_SINCE = (0, 5, 0)
SAMPLE = re.compile(r"^(recording-finalize --version\s+# recording-finalize )(\S+)", re.M)


def _buildinfo() -> ModuleType:
    """driver/buildinfo.py (standard library only), by its path: the fingerprints' one rule."""
    spec = importlib.util.spec_from_file_location("_rfr_buildinfo",
                                                  REPO / "driver" / "buildinfo.py")
    if spec is None or spec.loader is None:
        raise SystemExit("driver/buildinfo.py not found")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILDINFO = _buildinfo()


def sql_files(root: Path = REPO) -> list[Path]:
    """The files the schema fingerprint covers, in their hashing order."""
    return list(BUILDINFO.sql_files(root / "sql"))


def sql_fingerprint(root: Path = REPO) -> str:
    return str(BUILDINFO.sql_fingerprint(root / "sql"))


def package_files(root: Path = REPO) -> list[str]:
    """The names of the files the package fingerprint covers."""
    return [name for name, _ in BUILDINFO.package_files(root / "driver", root / "sql")]


def package_fingerprint(root: Path = REPO) -> str:
    return str(BUILDINFO.package_fingerprint(root / "driver", root / "sql"))


def is_development(version: str) -> bool:
    return bool(BUILDINFO.is_development(version))


def release_of(version: str) -> str:
    """``0.5.0.dev1`` → ``0.5.0``."""
    return version.split(".dev")[0]


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False,
                          timeout=60)


def _in_git(root: Path) -> bool:
    """Whether ``root`` is the top of a git work tree (not a folder inside another one)."""
    try:
        top = _git(root, "rev-parse", "--show-toplevel")
    except (OSError, subprocess.TimeoutExpired):
        return False
    return top.returncode == 0 and Path(top.stdout.decode().strip()).resolve() == root.resolve()


def release_tags(root: Path = REPO) -> dict[str, str]:
    """Version → tag of every release tag ``vX.Y.Z`` (none outside git, or in a clone without
    tags)."""
    if not _in_git(root):
        return {}
    listed = _git(root, "tag", "--list", "v*")
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
    package: str | None = None


def _single(pattern: re.Pattern[str], body: str) -> str | None:
    found = pattern.findall(body)
    return found[0] if len(found) == 1 else None


def changelog_entries(text: str) -> list[Entry]:
    """The versioned entries, newest (top) first; ``[Unreleased]`` is skipped."""
    heads = list(ENTRY.finditer(text))
    out = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        if head["version"].lower() == "unreleased":
            continue
        body = text[head.end():end]
        out.append(Entry(head["version"], _single(FINGERPRINT_LINE, body), head[0],
                         _single(PACKAGE_LINE, body)))
    return out


def unreleased(text: str) -> str:
    """The text of the ``[Unreleased]`` section (empty when there is none)."""
    heads = list(ENTRY.finditer(text))
    for i, head in enumerate(heads):
        if head["version"].lower() == "unreleased":
            end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
            return text[head.end():end].strip()
    return ""


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
    """Release order: ``0.5.0.dev0`` < ``0.5.0.dev1`` < ``0.5.0`` < ``0.5.1.dev0``."""
    match = VERSION.match(version)
    if match is None:
        raise SystemExit(f"{version!r} is not X.Y.Z or X.Y.Z.devN")
    major, minor, patch, dev = match.groups()
    return (int(major), int(minor), int(patch), *((0, int(dev)) if dev is not None else (1, 0)))


def _next_dev(version: str) -> str:
    major, minor, patch = release_of(version).split(".")
    return f"{major}.{minor}.{int(patch) + 1}.dev0"


def problems(root: Path = REPO) -> list[str]:
    """Everything the release rules find wrong in the tree at ``root`` (empty: consistent)."""
    out: list[str] = []
    version = pyproject_version(root)
    if not VERSION.match(version):
        return [f"{PYPROJECT}: version {version!r} is not X.Y.Z (a release) or X.Y.Z.devN (a "
                "development version)"]
    out += _version_places(root, version)
    text = (root / CHANGELOG).read_text()
    entries = changelog_entries(text)
    if not entries:
        return [*out, f"{CHANGELOG}: no versioned entry (## [X.Y.Z] - date)"]
    out += _entry_rules(entries)
    if is_development(version):
        newest = max(entries, key=lambda e: version_key(e.version)
                     if VERSION.match(e.version) else (0,))
        if VERSION.match(newest.version) and version_key(newest.version) >= version_key(version):
            out.append(f"{version} is a development version of a release {CHANGELOG} already "
                       f"records ({newest.version}): develop {_next_dev(newest.version)} or "
                       f"later (make set-version VERSION={_next_dev(newest.version)})")
        return out + released_problems(root, version, sql_fingerprint(root), entries)
    if entries[0].version != version:
        out.append(f"{CHANGELOG}: the top entry is {entries[0].version}, pyproject.toml says "
                   f"{version}: a release has its entry (make set-version VERSION={version} "
                   "writes it); unreleased work carries a development version X.Y.Z.devN")
    if unreleased(text):
        out.append(f"{CHANGELOG}: [Unreleased] lists changes while the tree says it is the "
                   f"release {version}: they are in no release; set a development version "
                   f"(make set-version VERSION={_next_dev(version)})")
    current = next((e for e in entries if e.version == version), None)
    fingerprint, package = sql_fingerprint(root), package_fingerprint(root)
    if current is not None:
        if current.fingerprint not in (None, fingerprint):
            out.append(f"sql/ differs from the release {version} ({CHANGELOG} records schema "
                       f"fingerprint {current.fingerprint[:12]}, the tree's is "
                       f"{fingerprint[:12]}): unreleased work carries a development version "
                       f"(make set-version VERSION={_next_dev(version)})")
        if current.package not in (None, package):
            out.append(f"the tree differs from the release {version} ({CHANGELOG} records "
                       f"package fingerprint {current.package[:12]}, the tree's is "
                       f"{package[:12]}): unreleased work carries a development version "
                       f"(make set-version VERSION={_next_dev(version)})")
    return out + released_problems(root, version, fingerprint, entries)


def _version_places(root: Path, version: str) -> list[str]:
    out: list[str] = []
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
    if (root / INSTALL_GUIDE).is_file():
        samples = SAMPLE.findall((root / INSTALL_GUIDE).read_text())
        if [v for _, v in samples] != [version]:
            out.append(f"{INSTALL_GUIDE}: the --version sample says "
                       f"{[v for _, v in samples]}, expected [{version!r}]")
    return out


def _entry_rules(entries: list[Entry]) -> list[str]:
    out: list[str] = []
    seen: dict[str, str] = {}
    for entry in entries:
        if entry.version in seen:
            out.append(f"{CHANGELOG}: version {entry.version} appears twice")
        if not SEMVER.match(entry.version):
            out.append(f"{CHANGELOG}: entry {entry.version} is not a release X.Y.Z (a "
                       "development version has no entry: its changes are [Unreleased])")
            continue
        if entry.fingerprint is None:
            out.append(f"{CHANGELOG}: entry {entry.version} needs exactly one line "
                       "`Schema fingerprint: <64 hex>`")
        if version_key(entry.version) >= (*PACKAGE_FINGERPRINT_SINCE, 1, 0):
            if entry.package is None:
                out.append(f"{CHANGELOG}: entry {entry.version} needs exactly one line "
                           "`Package fingerprint: <64 hex>`")
            elif entry.package in seen.values():
                other = next(v for v, f in seen.items() if f == entry.package)
                out.append(f"{CHANGELOG}: {entry.version} and {other} record the same package "
                           "fingerprint: two entries describe one build")
        seen[entry.version] = entry.package or ""
    versions = [e.version for e in entries if SEMVER.match(e.version)]
    if versions != sorted(versions, key=version_key, reverse=True):
        out.append(f"{CHANGELOG}: entries are not newest first: {versions}")
    return out


def released_problems(root: Path, version: str, fingerprint: str,
                      entries: list[Entry]) -> list[str]:
    """What history forbids: a release's record never changes once committed (the first commit
    of its entry decides), and a tagged version's SQL is the tag's."""
    out: list[str] = []
    recorded = {e.version: e for e in entries}
    for released, first in first_records(root).items():
        now = recorded.get(released)
        if now is None:
            out.append(f"{CHANGELOG}: the entry of the release {released} is gone (committed "
                       f"in {first[0][:12]})")
            continue
        for what, then, current in (("schema", first[1], now.fingerprint),
                                    ("package", first[2], now.package)):
            if then is not None and current != then:
                out.append(f"{CHANGELOG}: {released} was recorded with the {what} fingerprint "
                           f"{then[:12]} (commit {first[0][:12]}); its entry now says "
                           f"{(current or 'none')[:12]}: a released version's fingerprint "
                           "never changes (a re-cut is a new version)")
    for tagged, tag in sorted(release_tags(root).items(), key=lambda t: version_key(t[0])):
        tree = tag_fingerprint(tag, root)
        if tagged == version and fingerprint != tree:
            out.append(f"sql/ differs from the release {tag} (fingerprint {tree[:12]}, the "
                       f"tree's {fingerprint[:12]}) while pyproject.toml still says {version}: "
                       f"a re-cut is a new version: `make set-version VERSION="
                       f"{_next_dev(version)}`")
        entry = recorded.get(tagged)
        if entry is not None and entry.fingerprint not in (None, tree):
            out.append(f"{CHANGELOG}: {tagged} is released ({tag}) with the schema fingerprint "
                       f"{tree}; its entry records another: a released version's "
                       "fingerprint never changes")
    return out


def first_records(root: Path = REPO) -> dict[str, tuple[str, str | None, str | None]]:
    """Release → (the commit that first recorded it, its schema and package fingerprints
    there), from the committed history of CHANGELOG.md (none outside git). The releases before
    PACKAGE_FINGERPRINT_SINCE are left out: their lines were rewritten before this rule."""
    if not _in_git(root):
        return {}
    log = _git(root, "log", "--reverse", "--format=%H", "--", CHANGELOG)
    if log.returncode != 0:
        return {}
    commits = log.stdout.decode().split()
    # Every version of the file in one process: `git cat-file --batch` prints each blob as
    # "<sha> blob <size>" LF <bytes> LF.
    blobs = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"],
                           input="".join(f"{c}:{CHANGELOG}\n" for c in commits).encode(),
                           capture_output=True, check=False, timeout=120).stdout
    first: dict[str, tuple[str, str | None, str | None]] = {}
    at = 0
    for commit in commits:
        header_end = blobs.index(b"\n", at)
        header = blobs[at:header_end].split()
        if len(header) < 3 or header[1] != b"blob":
            at = header_end + 1
            continue
        size = int(header[2])
        text = blobs[header_end + 1:header_end + 1 + size].decode()
        at = header_end + 1 + size + 1
        for entry in changelog_entries(text):
            if (entry.version not in first and SEMVER.match(entry.version)
                    and version_key(entry.version) >= (*PACKAGE_FINGERPRINT_SINCE, 1, 0)):
                first[entry.version] = (commit, entry.fingerprint, entry.package)
    return first


def tag(root: Path = REPO) -> str:
    """Tags the current release: ``v<version>`` on HEAD, annotated with its fingerprints.
    Refuses a development version, a tree the checks find wrong (changes listed under
    [Unreleased], fingerprints not the ones recorded), changes not committed, or a version
    that is tagged already."""
    version = pyproject_version(root)
    name = f"v{version}"
    if is_development(version):
        raise SystemExit(f"not tagged: {version} is a development version (unreleased work); "
                         f"cut the release first: make set-version VERSION="
                         f"{release_of(version)}, commit, then make release-tag")
    found = problems(root)
    if found:
        raise SystemExit("not tagged: " + "; ".join(found))
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    if status.returncode != 0 or status.stdout.strip():
        raise SystemExit(f"not tagged: commit first (git status: "
                         f"{status.stdout.decode().strip() or status.stderr.decode().strip()})")
    if name in release_tags(root).values():
        raise SystemExit(f"not tagged: {name} exists: a re-cut is a new version "
                         f"(`make set-version VERSION={_next_dev(version)}`)")
    made = _git(root, "tag", "-a", name, "-m",
                f"recording-finalize-retry {version}\n\n"
                f"Schema fingerprint: {sql_fingerprint(root)}\n"
                f"Package fingerprint: {package_fingerprint(root)}")
    if made.returncode != 0:
        raise SystemExit(f"git tag {name}: {made.stderr.decode().strip()}")
    return name


def record(root: Path = REPO) -> str:
    """Rewrites the fingerprints of the current release's entry to the tree's: between
    ``set-version`` and the commit of the release only (a committed record never changes)."""
    version = pyproject_version(root)
    if is_development(version):
        raise SystemExit(f"{version} is a development version: it has no entry to record "
                         "(its changes are listed under [Unreleased])")
    tags = [t for v, t in release_tags(root).items() if v == version]
    if tags:
        raise SystemExit(f"{version} is tagged ({', '.join(tags)}): released, its fingerprint "
                         f"stays; `set-version {_next_dev(version)}` instead")
    committed = first_records(root).get(version)
    if committed is not None:
        raise SystemExit(f"{version} is recorded in commit {committed[0][:12]}: released, its "
                         f"fingerprints stay; `set-version {_next_dev(version)}` instead")
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
    package = f"Package fingerprint: {package_fingerprint(root)}"
    body, n = FINGERPRINT_LINE.subn(line, body)
    if n == 0:
        body = f"\n\n{line}" + body
    body, n = PACKAGE_LINE.subn(package, body)
    if n == 0:
        body = body.replace(line, f"{line}\n{package}", 1)
    path.write_text(text[:head.end()] + body + text[end:])
    return f"{line}\n{package}"


def set_version(version: str, root: Path = REPO, today: dt.date | None = None,
                fingerprint: str | None = None) -> None:
    """Moves every place that carries the version to ``version``. To a release it also writes
    its CHANGELOG entry: what ``[Unreleased]`` lists, under the tree's fingerprints (the SQL's
    may be given), with an empty ``[Unreleased]`` above it."""
    if not VERSION.match(version):
        raise SystemExit(f"{version!r} is not X.Y.Z (a release) or X.Y.Z.devN (a development "
                         "version)")
    old = pyproject_version(root)
    if version_key(version) <= version_key(old):
        raise SystemExit(f"{version} is not newer than the current {old}")
    text = (root / CHANGELOG).read_text()
    if any(e.version == version for e in changelog_entries(text)):
        raise SystemExit(f"{CHANGELOG} has an entry {version} already: released")
    _sub(root / PYPROJECT, r'^(version = )"[^"]+"$', rf'\g<1>"{version}"')
    _sub(root / INIT, r'^(__version__ = )"[^"]+"$', rf'\g<1>"{version}"')
    _sub(root / KUSTOMIZATION, r"^(\s*newTag:\s*)\S+$", rf"\g<1>{version}")
    for path in (MIGRATE_JOB, KUSTOMIZATION):
        _sub(root / path, rf"^(\s*-?\s*name:\s*){re.escape(JOB_PREFIX)}\S+$",
             rf"\g<1>{JOB_PREFIX}{job_suffix(version)}")
    if (root / INSTALL_GUIDE).is_file():
        _sub(root / INSTALL_GUIDE, SAMPLE.pattern, rf"\g<1>{version}")
    if is_development(version):
        return
    day = (today or dt.datetime.now(dt.UTC).date()).isoformat()
    changes = unreleased(text) or "### Changed\n\n- (what changed)"
    entry = (f"## [{version}] - {day}\n\nSchema fingerprint: "
             f"{fingerprint or sql_fingerprint(root)}\nPackage fingerprint: "
             f"{package_fingerprint(root)}\n\n{changes}\n\n")
    heads = list(ENTRY.finditer(text))
    mark = next((i for i, h in enumerate(heads) if h["version"].lower() == "unreleased"), None)
    if mark is not None:
        end = heads[mark + 1].start() if mark + 1 < len(heads) else len(text)
        text = text[:heads[mark].end()] + "\n\n" + entry + text[end:]
    else:
        first = heads[0].start() if heads else len(text)
        text = text[:first] + "## [Unreleased]\n\n" + entry + text[first:]
    (root / CHANGELOG).write_text(text)


def image_tag(root: Path = REPO) -> tuple[str, str, str]:
    """(version, commit, image tag) of a build of ``root``: a release's image is tagged with its
    version, a development build's with its version and commit (``0.5.0.dev0-4ed541f6404d``),
    so that two images of unreleased work never share a tag."""
    version = pyproject_version(root)
    commit = BUILDINFO.git_commit(root) or BUILDINFO.archived_commit(root)
    if is_development(version):
        if commit is None:
            raise SystemExit(f"{version} is a development version: its image tag carries the "
                             "commit, and this tree has none (no .git, not a git archive)")
        return version, commit, f"{version}-{commit}"
    return version, commit or BUILDINFO.UNKNOWN_OUTSIDE_GIT, version


def _sub(path: Path, pattern: str, repl: str) -> None:
    text = path.read_text()
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    if n != 1:
        raise SystemExit(f"{path}: no line matches {pattern!r}")
    path.write_text(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fp = sub.add_parser("fingerprint", help="print the tree's package and SQL fingerprints")
    fp.add_argument("--record", action="store_true",
                    help="write them into the current release's CHANGELOG entry (before the "
                    "release is committed only)")
    sv = sub.add_parser("set-version", help="X.Y.Z: cut a release; X.Y.Z.devN: develop")
    sv.add_argument("version")
    sub.add_parser("check", help="list what the release rules find wrong (exit 1 if any)")
    sub.add_parser("tag", help="tag the release v<version> on HEAD (a release only)")
    sub.add_parser("image-tag", help="print VERSION=, COMMIT= and TAG= of an image of this tree "
                   "(shell syntax: make image reads it)")
    args = parser.parse_args(argv)
    if args.command == "fingerprint":
        if args.record:
            print(record())
        version = pyproject_version()
        entry = next((e for e in changelog_entries((REPO / CHANGELOG).read_text())
                      if e.version == version), None)
        package, sql = package_fingerprint(), sql_fingerprint()
        print(f"package fingerprint: {package}\nsql fingerprint: {sql}")
        if is_development(version):
            state = "a development version: no release record"
        elif entry is None:
            state = "no CHANGELOG entry"
        else:
            state = ("matches its CHANGELOG entry" if (entry.package, entry.fingerprint)
                     == (package, sql) else "differs from its CHANGELOG entry "
                     f"(package {entry.package or 'none'}, sql {entry.fingerprint or 'none'})")
        print(f"{len(package_files())} files shipped, {len(sql_files())} of them *.sql; "
              f"{version}: {state}", file=sys.stderr)
        return 0
    if args.command == "set-version":
        set_version(args.version)
        what = ("a development version: list the changes under [Unreleased]"
                if is_development(args.version) else
                f"{CHANGELOG} has the entry {args.version} ([Unreleased] moved into it): "
                "review it, commit, then make release-tag")
        print(f"version {args.version}: {PYPROJECT}, {INIT}, {KUSTOMIZATION}, {MIGRATE_JOB}, "
              f"{INSTALL_GUIDE}; {what}")
        return 0
    if args.command == "tag":
        print(f"tagged {tag()}: push it with the commit (git push origin <branch> --tags)")
        return 0
    if args.command == "image-tag":
        version, commit, image = image_tag()
        print(f"VERSION={version}\nCOMMIT='{commit}'\nTAG={image}")
        return 0
    found = problems()
    for problem in found:
        print(problem)
    if not found:
        version = pyproject_version()
        kind = "development version" if is_development(version) else "release"
        print(f"{kind} {version} consistent: package fingerprint {package_fingerprint()}, "
              f"sql fingerprint {sql_fingerprint()}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
