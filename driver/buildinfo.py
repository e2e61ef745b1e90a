"""Which build this is: the git commit it was built from and the fingerprint of the SQL it ships
(``--version``, ``…_build_info``): three different SQL trees were once all recorded as 0.2.1.

The fingerprint is the one CHANGELOG.md records per version; ``scripts/release.py`` loads this
module to compute it (so the rule is written once), without the project's virtualenv: standard
library only.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

#: The file ``setup.py`` writes into a built package: one line, the commit (``-dirty``).
COMMIT_FILE = "BUILD_COMMIT"
UNKNOWN = "unknown"


def sql_files(sql_dir: Path) -> list[Path]:
    """The files the fingerprint covers, in their hashing order."""
    return sorted(sql_dir.rglob("*.sql"), key=lambda p: p.relative_to(sql_dir).as_posix())


def sql_fingerprint(sql_dir: Path) -> str:
    """The sha256 over every ``*.sql`` of ``sql_dir``, each fed as ``sql/<path> NUL <size> NUL
    <bytes>``: no two trees hash alike by moving bytes from one file to the next."""
    h = hashlib.sha256()
    for path in sql_files(sql_dir):
        data = path.read_bytes()
        h.update(f"sql/{path.relative_to(sql_dir).as_posix()}".encode() + b"\0")
        h.update(str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


def git_commit(tree: Path) -> str | None:
    """The commit checked out at ``tree`` (``-dirty`` with changes), or None outside git."""
    try:  # --exclude '*': the commit itself, never a tag's name
        described = subprocess.run(["git", "-C", str(tree), "describe", "--always", "--dirty",
                                    "--abbrev=12", "--exclude=*"],
                                   capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return described.stdout.strip() if described.returncode == 0 else None


def commit() -> str:
    """This build's commit: baked into a wheel (``setup.py`` writes COMMIT_FILE), else the
    editable checkout's, else unknown."""
    here = Path(__file__).resolve().parent
    baked = here / COMMIT_FILE
    if baked.is_file():
        return baked.read_text().strip() or UNKNOWN
    return git_commit(here) or UNKNOWN
