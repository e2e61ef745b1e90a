"""The product as an operator installs it (issue 10 item 2): a wheel built from this checkout,
installed (not editable) into a fresh virtualenv in a temporary directory, run from outside the
clone against the test stack: migrate twice, run-once over seeded stuck recordings, status.

The virtualenv gets the application's pinned dependencies from requirements.lock (hash-checked,
served from pip's cache the checkout's install filled), then the wheel with ``--no-index``: a
dependency the wheel declares but the lock lacks fails the install. No site-packages of the
checkout is visible to it; the test asserts the import resolves into the new virtualenv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import (
    REPO,
    WORKER_ROLE,
    Db,
    Worker,
    _base_env,
    put_binary,
    seed_available_unpublished,
    seed_stuck,
)


@dataclass(frozen=True)
class Installed:
    venv: Path
    cwd: Path
    wheel: Path

    @property
    def cli(self) -> str:
        return str(self.venv / "bin" / "recording-finalize")


def _run(args: list[str], cwd: Path, timeout: float = 300) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=_base_env() | {"PIP_DISABLE_PIP_VERSION_CHECK": "1",
                                             "HOME": os.environ.get("HOME", "/root")})
    assert proc.returncode == 0, (args, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    work = tmp_path_factory.mktemp("installed-wheel")
    # The wheel is built from a copy of the checkout's files (tracked or not ignored), so the
    # build leaves nothing in the clone and sees nothing that is not part of the source.
    listing = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
    src = work / "src"
    for rel in filter(None, listing.decode().split("\0")):
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"),
          str(src)], cwd=work)
    [wheel] = (work / "dist").glob("recording_finalize_retry-*.whl")
    venv = work / "venv"
    _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], cwd=work)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    _run([*pip, "--require-hashes", "-r", str(src / "requirements.lock")], cwd=work)
    _run([*pip, "--no-index", str(wheel)], cwd=work)
    cwd = work / "elsewhere"
    cwd.mkdir()
    yield Installed(venv, cwd, wheel)


def test_the_wheel_carries_the_sql_and_installs_one_package(installed: Installed) -> None:
    out = _run([str(installed.venv / "bin" / "python"), "-c",
                "import importlib.util, recording_finalize, recording_finalize.sql as s; "
                "print(recording_finalize.__file__); print(s.__path__[0]); "
                "print(importlib.util.find_spec('driver'))"], cwd=installed.cwd)
    package_file, sql_dir, driver = out.splitlines()
    site = installed.venv / "lib"
    assert Path(package_file).is_relative_to(site), package_file  # not the checkout's
    assert Path(sql_dir).is_relative_to(site)
    assert not Path(package_file).is_relative_to(REPO)
    assert driver == "None"  # no top-level package called driver
    shipped = sorted(p.name for p in (Path(sql_dir) / "migrations").glob("*.sql"))
    assert shipped == sorted(p.name for p in (REPO / "sql" / "migrations").glob("*.sql"))


def test_migrate_run_once_and_status_from_the_installed_package(
    installed: Installed, worker: Worker, db: Db
) -> None:
    def cli(*args: str, url: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([installed.cli, *args], cwd=installed.cwd, capture_output=True,
                              text=True, timeout=120,
                              env=worker.environ(DATABASE_URL=url))
        assert proc.returncode == expect, (args, proc.stdout, proc.stderr)
        return proc

    version = cli("--version", url=db.owner_url).stdout
    last = max(p.stem for p in (REPO / "sql" / "migrations").glob("*.sql"))
    assert version.startswith("recording-finalize ") and f"schema {last}" in version

    # A fresh database, migrated by the installed package as the owner: twice (idempotent).
    with db.connect() as conn:
        conn.execute("drop schema messenger, recording_finalize, recording_finalize_migrations "
                     "cascade")
    first = cli("migrate", url=db.owner_url).stdout
    migrations = len(list((REPO / "sql" / "migrations").glob("*.sql")))
    assert f"migrations applied: {migrations}" in first
    second = cli("migrate", url=db.owner_url).stdout
    assert "migrations applied: 0 (up to date)" in second
    assert "function files applied: 0, unchanged:" in second
    with db.connect() as conn:
        conn.execute(f"grant recording_finalize_worker to {WORKER_ROLE}")
    db.set_server_topic(worker.topic)  # the topic lives on the server (migration 0004)

    found = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, found.recording_id)
    missing = seed_stuck(db)
    republish = seed_available_unpublished(db)
    summary = json.loads(cli("run-once", url=db.worker_url).stdout)
    assert (summary["claimed"], summary["reconciled"], summary["failed"],
            summary["republished"], summary["published"]) == (3, 1, 1, 1, 2), summary
    assert summary["error"] is None

    status = json.loads(cli("status", "--json", url=db.operator_url).stdout)
    assert status["backlog"] == 0 and status["publishBacklog"] == 0
    assert status["schema"]["matches"] is True and status["schema"]["database"] == last
    statuses = dict(db.all("select id, status from messenger.call_recordings where id = any(%s)",
                           ([found.recording_id, missing.recording_id,
                             republish.recording_id],)))
    assert statuses == {found.recording_id: "Available", missing.recording_id: "Failed",
                        republish.recording_id: "Available"}
