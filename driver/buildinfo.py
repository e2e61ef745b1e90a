"""Which build this is (``--version``, ``…_build_info``): the version, the git commit it was built
from and two fingerprints. 92 commits once all said 0.2.1 over 17 different SQL trees, and a
wheel built from an export said commit ``unknown``: a version now names one set of shipped files.

- The **package fingerprint** covers everything the wheel ships from the source tree: every
  ``.py`` of the driver (``driver/``, its subpackages too) and the SQL package (``sql/``: its
  ``.sql`` files, README and ``__init__.py``). CHANGELOG.md records it for each release from
  0.5.0 on; a tree whose fingerprint is not the one recorded for its version carries a
  development version (``X.Y.Z.devN``). ``scripts/release.py`` enforces that.
- The **SQL fingerprint** covers the ``*.sql`` files alone (what ``migrate`` applies or prints):
  CHANGELOG.md's ``Schema fingerprint:`` line of every release, older ones included.

The same rule hashes a checkout (``driver/`` and ``sql/``) and an installed wheel
(``recording_finalize/`` and ``recording_finalize/sql/``): each file is fed under its name in
the source tree. ``scripts/release.py`` and ``setup.py`` load this module by its path, without
the project's virtualenv: standard library only.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

#: The file ``setup.py`` writes into a built package: one line, the commit (``-dirty``).
COMMIT_FILE = "BUILD_COMMIT"
UNKNOWN = "unknown"
#: What a wheel says when neither git nor an exported commit could name its commit.
UNKNOWN_OUTSIDE_GIT = "unknown (built outside git)"
#: ``git archive`` writes the commit into this file of the repository (``.gitattributes``:
#: export-subst), so that a build from an exported tree still knows it.
ARCHIVAL_FILE = ".git_archival.txt"

#: A development version: unreleased work (PEP 440 ``.devN``).
DEV_VERSION = re.compile(r"^\d+\.\d+\.\d+\.dev\d+$")
#: The files of the SQL package the wheel ships besides its ``*.sql`` (pyproject.toml's
#: package-data).
SQL_PACKAGE_FILES = ("README.md", "__init__.py")


def is_development(version: str) -> bool:
    return DEV_VERSION.match(version) is not None


def _hash(files: list[tuple[str, Path]]) -> str:
    """The sha256 over ``files``, each fed as ``<name> NUL <size> NUL <bytes>``: no two trees
    hash alike by moving bytes from one file to the next."""
    h = hashlib.sha256()
    for name, path in sorted(files):
        data = path.read_bytes()
        h.update(name.encode() + b"\0")
        h.update(str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


def sql_files(sql_dir: Path) -> list[Path]:
    """The files the SQL fingerprint covers, in their hashing order."""
    return sorted(sql_dir.rglob("*.sql"), key=lambda p: p.relative_to(sql_dir).as_posix())


def sql_fingerprint(sql_dir: Path) -> str:
    """The sha256 over every ``*.sql`` of ``sql_dir`` (CHANGELOG.md's ``Schema fingerprint:``)."""
    return _hash([(f"sql/{p.relative_to(sql_dir).as_posix()}", p) for p in sql_files(sql_dir)])


def package_files(package_dir: Path, sql_dir: Path) -> list[tuple[str, Path]]:
    """(name in the source tree, path) of every file the package fingerprint covers."""
    def shipped(path: Path) -> bool:
        return "__pycache__" not in path.parts and path.is_file()

    driver = [(f"driver/{p.relative_to(package_dir).as_posix()}", p)
              for p in package_dir.rglob("*.py")
              if shipped(p) and not p.is_relative_to(sql_dir)]
    sql = [(f"sql/{p.relative_to(sql_dir).as_posix()}", p) for p in sql_dir.rglob("*")
           if shipped(p) and (p.suffix == ".sql" or (p.parent == sql_dir
                                                     and p.name in SQL_PACKAGE_FILES))]
    return sorted(driver + sql)


def package_fingerprint(package_dir: Path, sql_dir: Path) -> str:
    """The sha256 over what the wheel ships (CHANGELOG.md's ``Package fingerprint:``)."""
    return _hash(package_files(package_dir, sql_dir))


def git_commit(tree: Path) -> str | None:
    """The commit checked out at ``tree`` (``-dirty`` with changes), or None outside git."""
    try:  # --exclude '*': the commit itself, never a tag's name
        described = subprocess.run(["git", "-C", str(tree), "describe", "--always", "--dirty",
                                    "--abbrev=12", "--exclude=*"],
                                   capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return described.stdout.strip() if described.returncode == 0 else None


def archived_commit(root: Path) -> str | None:
    """The commit ``git archive`` wrote into ARCHIVAL_FILE of an exported tree (None in a
    checkout, whose file still holds the placeholder, or a copy without it)."""
    try:
        text = (root / ARCHIVAL_FILE).read_text()
    except OSError:
        return None
    found = re.search(r"^commit: ([0-9a-f]{40})$", text, re.M)
    return found[1][:12] if found else None


def build_commit(root: Path, given: str | None) -> str:
    """What a build from ``root`` bakes into the wheel: ``given`` (RFR_BUILD_COMMIT), else the
    one an export carries, else the checkout's commit, else UNKNOWN_OUTSIDE_GIT. The export's
    first: ``git archive`` filled its ARCHIVAL_FILE (a checkout's holds the placeholder), and an
    export unpacked inside another checkout would otherwise be named after that checkout's
    HEAD."""
    return given or archived_commit(root) or git_commit(root) or UNKNOWN_OUTSIDE_GIT


def commit() -> str:
    """This build's commit: baked into a wheel (``setup.py`` writes COMMIT_FILE), else the
    editable checkout's, else unknown."""
    here = Path(__file__).resolve().parent
    baked = here / COMMIT_FILE
    if baked.is_file():
        return baked.read_text().strip() or UNKNOWN
    return git_commit(here) or UNKNOWN
