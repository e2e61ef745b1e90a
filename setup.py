"""Bakes the commit a wheel is built from into it (``recording_finalize/BUILD_COMMIT``), so that
an installed wheel, which has no .git, still says which build it is (``driver/buildinfo.py``):
``RFR_BUILD_COMMIT`` when set (a pipeline that builds from a copy), else the one ``git archive``
wrote into ``.git_archival.txt`` of an exported tree (also one unpacked inside another
checkout), else the checkout's commit, else
``unknown (built outside git)``, said by the build too. And refuses to build a release version
(X.Y.Z) whose files are not the ones CHANGELOG.md records for it: two wheels with different
code never carry the same release version. Everything else about the package is in
pyproject.toml."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _buildinfo() -> ModuleType:
    """driver/buildinfo.py by its path (standard library only; the package is not built yet)."""
    spec = importlib.util.spec_from_file_location("_rfr_buildinfo",
                                                  ROOT / "driver" / "buildinfo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_release(info: ModuleType) -> None:
    """A release version builds only from the files its CHANGELOG entry records."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    changelog = ROOT / "CHANGELOG.md"
    if info.is_development(version) or not changelog.is_file():
        return
    entry = re.search(rf"^## \[{re.escape(version)}\].*?(?=^## \[|\Z)", changelog.read_text(),
                      re.M | re.S)
    recorded = entry and re.findall(r"^Package fingerprint: ([0-9a-f]{64})\s*$", entry[0], re.M)
    tree = info.package_fingerprint(ROOT / "driver", ROOT / "sql")
    if not recorded or recorded != [tree]:
        sys.exit(f"refusing to build {version}: its files (package fingerprint {tree[:12]}) are "
                 f"not the ones CHANGELOG.md records for it ({recorded or 'none'}); unreleased "
                 "work carries a development version (make set-version VERSION=X.Y.Z.devN)")


class BuildWithCommit(build_py):
    def run(self) -> None:
        info = _buildinfo()
        _check_release(info)
        super().run()
        target = Path(self.build_lib) / "recording_finalize" / info.COMMIT_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        baked = info.build_commit(ROOT, os.environ.get("RFR_BUILD_COMMIT"))
        if baked == info.UNKNOWN_OUTSIDE_GIT:
            print(f"warning: the wheel says commit {baked}: no .git here, no commit exported "
                  "(git archive fills .git_archival.txt) and RFR_BUILD_COMMIT unset",
                  file=sys.stderr)
        target.write_text(baked + "\n")


setup(cmdclass={"build_py": BuildWithCommit})
