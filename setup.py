"""Bakes the commit a wheel is built from into it (``recording_finalize/BUILD_COMMIT``), so that
an installed wheel, which has no .git, still says which build it is (``driver/buildinfo.py``):
``RFR_BUILD_COMMIT`` when set (a pipeline that builds from an export), else the checkout's
commit, else "unknown". Everything else about the package is in pyproject.toml."""

from __future__ import annotations

import importlib.util
import os
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


class BuildWithCommit(build_py):
    def run(self) -> None:
        super().run()
        info = _buildinfo()
        target = Path(self.build_lib) / "recording_finalize" / info.COMMIT_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        baked = os.environ.get("RFR_BUILD_COMMIT") or info.git_commit(ROOT) or info.UNKNOWN
        target.write_text(baked + "\n")


setup(cmdclass={"build_py": BuildWithCommit})
