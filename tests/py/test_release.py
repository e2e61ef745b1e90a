"""One version, one build. A version names one set of shipped files: the package fingerprint
covers the driver's Python and the SQL; a release X.Y.Z is recorded in CHANGELOG.md with its
fingerprints and the tree's must be those, anything else carries a development version
X.Y.Z.devN; the package, ``recording-finalize --version``, ``build_info``, the image tag and the
migrate Job name the same version; ``make release-tag`` refuses unreleased work; a wheel names
its commit, also when built from an export without .git. (92 commits once said 0.2.1 over 17
SQL trees; v0.4.1 was tagged on a tree whose CHANGELOG listed unreleased driver changes; a
wheel built from an export said commit ``unknown``.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest
from conftest import CLI, REPO
from kube import KUSTOMIZATIONS, containers, load_release, one, pod_specs, render
from recording_finalize import __version__
from recording_finalize.metrics import Metrics

release = load_release()


def _changelog(root: Path = REPO) -> str:
    return (root / "CHANGELOG.md").read_text()


def test_the_tree_is_its_recorded_release_or_carries_a_development_version() -> None:
    """Released ⇔ the tree's fingerprints are the ones CHANGELOG.md records for its version;
    otherwise the version must be X.Y.Z.devN, newer than every recorded release."""
    version = release.pyproject_version()
    assert release.problems() == []
    entries = {e.version: e for e in release.changelog_entries(_changelog())}
    tree = (release.package_fingerprint(), release.sql_fingerprint())
    if version in entries:
        assert (entries[version].package, entries[version].fingerprint) == tree, (
            f"the tree differs from the release {version}: make set-version "
            f"VERSION={release._next_dev(version)}")
        assert release.unreleased(_changelog()) == ""
    else:
        assert release.is_development(version), version
        assert all(release.version_key(v) < release.version_key(version) for v in entries)
        # The recorded releases name other builds: no entry records this tree.
        assert tree[0] not in {e.package for e in entries.values()}


def test_one_version_everywhere() -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert __version__ == version
    out = subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.startswith(f"recording-finalize {version} "), (
        out.stdout, "reinstall: make bootstrap")
    [info] = [line for line in Metrics().render().decode().splitlines()
              if line.startswith("messenger_recording_finalize_build_info{")]
    assert f'version="{version}"' in info
    for kustomization in KUSTOMIZATIONS:
        docs = render(kustomization)
        tags = {c["image"].rsplit(":", 1)[1] for _, spec in pod_specs(docs)
                for c in containers(spec)}
        assert tags == {version}, (kustomization, tags)
        assert f"-migrate-{version.replace('.', '-')}-" in one(docs, "Job")["metadata"]["name"]
    top = release.changelog_entries(_changelog())[0]
    assert top.version == version or release.is_development(version)
    assert release.problems() == []


def test_changelog_versions_are_unique_and_each_release_names_one_build() -> None:
    entries = release.changelog_entries(_changelog())
    versions = [e.version for e in entries]
    assert len(set(versions)) == len(versions), versions
    assert None not in [e.fingerprint for e in entries], "every entry: `Schema fingerprint:`"
    packages = [e.package for e in entries
                if release.version_key(e.version) >= (*release.PACKAGE_FINGERPRINT_SINCE, 1, 0)]
    assert None not in packages, "from 0.5.0 on every entry: `Package fingerprint:`"
    assert len(set(packages)) == len(packages), packages
    assert all(release.SEMVER.match(v) for v in versions), versions


# --- the rules on copies of the tree ----------------------------------------------------------


def _tree(tmp_path: Path, version: str | None = None) -> Path:
    """A copy of what the release rules and the build read (the version files, CHANGELOG,
    deploy/kubernetes, driver/ and sql/, setup.py), at ``version`` if given (a release gets its
    CHANGELOG entry)."""
    root = tmp_path / "tree"
    for rel in ("pyproject.toml", "setup.py", "README.md", "CHANGELOG.md", "docs/install.md",
                ".git_archival.txt", ".gitattributes"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, root / rel)
    shutil.copytree(REPO / "deploy" / "kubernetes", root / "deploy" / "kubernetes")
    for part in ("driver", "sql"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__",
                                                                                 "BUILD_COMMIT"))
    if version is not None:
        release.set_version(version, root=root)
    assert release.problems(root) == []
    return root


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t",
                           *args], check=True, capture_output=True, text=True).stdout


def _repo(root: Path) -> Path:
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "tree")
    return root


def _touch_driver(root: Path) -> None:
    f = root / "driver" / "relay.py"
    f.write_text(f.read_text() + "\n# another build\n")


def test_a_driver_change_changes_the_package_fingerprint_and_only_shipped_files_count(
        tmp_path: Path) -> None:
    root = _tree(tmp_path)
    base, sql = release.package_fingerprint(root), release.sql_fingerprint(root)
    names = release.package_files(root)
    assert {"driver/relay.py", "driver/ops/status.py", "sql/__init__.py", "sql/README.md"} \
        <= set(names)
    assert any(n.startswith("sql/migrations/") for n in names)
    assert any(n.startswith("sql/functions/") for n in names)
    # Not shipped: the checksum list, caches.
    (root / "sql" / "migrations" / "SHA256SUMS").write_text("changed")
    (root / "driver" / "__pycache__").mkdir(exist_ok=True)
    (root / "driver" / "__pycache__" / "x.pyc").write_bytes(b"x")
    assert release.package_fingerprint(root) == base
    _touch_driver(root)
    assert release.package_fingerprint(root) != base
    assert release.sql_fingerprint(root) == sql  # the schema is the same


def test_a_release_whose_driver_changed_fails_the_check_and_is_not_built(tmp_path: Path) -> None:
    """Two builds with different driver code never carry the same release version: the check
    fails and setup.py refuses to build it; the way out is a development version, which builds
    and says so."""
    root = _tree(tmp_path, "9.0.0")
    recorded = release.changelog_entries(_changelog(root))[0]
    assert (recorded.version, recorded.package) == ("9.0.0", release.package_fingerprint(root))
    _touch_driver(root)
    assert release.problems(root) == [
        f"the tree differs from the release 9.0.0 (CHANGELOG.md records package fingerprint "
        f"{recorded.package[:12]}, the tree's is {release.package_fingerprint(root)[:12]}): "
        "unreleased work carries a development version (make set-version VERSION=9.0.1.dev0)"]
    built = _build_py(root, tmp_path / "lib")
    assert built.returncode != 0 and "refusing to build 9.0.0" in built.stderr, built.stderr
    release.set_version("9.0.1.dev0", root=root)
    assert release.problems(root) == []
    assert _build_py(root, tmp_path / "lib").returncode == 0


def test_a_migration_added_under_a_release_version_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path, "9.0.0")
    (root / "sql" / "migrations" / "9999_new.sql").write_text("select 1;\n")
    found = release.problems(root)
    assert any(p.startswith("sql/ differs from the release 9.0.0") for p in found), found
    assert any(p.startswith("the tree differs from the release 9.0.0") for p in found), found
    release.set_version("9.1.0", root=root)  # or a .dev version; a release records the tree
    assert release.problems(root) == []
    top = release.changelog_entries(_changelog(root))[0]
    assert (top.version, top.fingerprint) == ("9.1.0", release.sql_fingerprint(root))


def test_cutting_a_release_moves_unreleased_into_its_entry(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    text = _changelog(root)
    listed = release.unreleased(text)
    release.set_version("9.0.0", root=root)
    after = _changelog(root)
    assert release.unreleased(after) == ""
    assert after.index("## [Unreleased]") < after.index("## [9.0.0]")
    entry = after[after.index("## [9.0.0]"):]
    assert f"Package fingerprint: {release.package_fingerprint(root)}" in entry
    assert f"Schema fingerprint: {release.sql_fingerprint(root)}" in entry
    if listed:
        assert listed in entry
    assert release.problems(root) == []
    # Back to development: the version files move, CHANGELOG stays.
    release.set_version("9.0.1.dev0", root=root)
    assert _changelog(root) == after and release.problems(root) == []
    with pytest.raises(SystemExit, match="not newer"):
        release.set_version("9.0.0", root=root)


@pytest.mark.parametrize(("version", "text", "problem"), [
    ("9.1.0", "## [9.1.0] - d\n\nSchema fingerprint: {a}\nPackage fingerprint: {a}\n\n"
     "## [9.1.0] - d\n\nSchema fingerprint: {b}\nPackage fingerprint: {b}\n",
     "version 9.1.0 appears twice"),
    ("9.1.0", "## [9.1.0] - d\n\nSchema fingerprint: {a}\nPackage fingerprint: {a}\n\n"
     "## [9.0.0] - d\n\nSchema fingerprint: {a}\nPackage fingerprint: {a}\n",
     "record the same package fingerprint"),
    ("9.1.0", "## [9.0.0] - d\n\nSchema fingerprint: {a}\nPackage fingerprint: {a}\n\n"
     "## [9.1.0] - d\n\nSchema fingerprint: {b}\nPackage fingerprint: {b}\n",
     "not newest first"),
    ("9.1.0", "## [9.1.0] - d\n\nno line\n", "needs exactly one line `Schema"),
    ("9.1.0", "## [9.1.0] - d\n\nSchema fingerprint: {a}\n", "needs exactly one line `Package"),
    ("9.1.0", "## [9.1.0] - d\n\nSchema fingerprint: {a}\nPackage fingerprint: {b}\n",
     "the tree differs from the release 9.1.0"),
    ("9.1.0.dev0", "## [9.1.0] - d\n\nSchema fingerprint: {a}\nPackage fingerprint: {b}\n",
     "a development version of a release CHANGELOG.md already records"),
    ("9.1.0.dev0", "## [9.1.0.dev0] - d\n\nSchema fingerprint: {a}\n",
     "is not a release X.Y.Z"),
])
def test_the_changelog_rules_catch_what_they_are_for(tmp_path: Path, version: str, text: str,
                                                     problem: str) -> None:
    root = _tree(tmp_path, version)
    (root / "CHANGELOG.md").write_text(
        "# Changelog\n\n## [Unreleased]\n\n" + text.format(a="a" * 64, b="b" * 64)
        + "\n## [0.1.0] - d\n\nSchema fingerprint: " + "c" * 64 + "\n")
    found = release.problems(root)
    assert any(problem in p for p in found), found


def test_a_release_with_unreleased_changes_listed_is_refused_and_not_tagged(
        tmp_path: Path) -> None:
    """v0.4.1 was tagged on a tree whose CHANGELOG's top entry was [Unreleased] with new driver
    code: a release tree lists nothing under [Unreleased], and tag refuses it."""
    root = _tree(tmp_path, "9.0.0")
    text = _changelog(root)
    (root / "CHANGELOG.md").write_text(text.replace(
        "## [Unreleased]\n", "## [Unreleased]\n\n### Changed\n\n- new driver code\n", 1))
    found = release.problems(root)
    assert any("[Unreleased] lists changes while the tree says it is the release 9.0.0" in p
               for p in found), found
    _repo(root)
    with pytest.raises(SystemExit, match=r"not tagged: .*\[Unreleased\] lists changes"):
        release.tag(root)


def test_tag_refuses_a_development_version_a_changed_tree_and_a_tagged_version(
        tmp_path: Path) -> None:
    root = _repo(_tree(tmp_path, "9.0.0.dev0"))
    with pytest.raises(SystemExit, match=re.escape("9.0.0.dev0 is a development version")):
        release.tag(root)
    release.set_version("9.0.0", root=root)
    _git(root, "add", "-A")  # staged, not committed
    with pytest.raises(SystemExit, match="commit first"):
        release.tag(root)
    _git(root, "commit", "-q", "-m", "9.0.0")
    _touch_driver(root)
    _git(root, "commit", "-q", "-am", "more driver code under 9.0.0")
    with pytest.raises(SystemExit, match=re.escape("the tree differs from the release 9.0.0")):
        release.tag(root)
    _git(root, "revert", "--no-edit", "HEAD")
    assert release.tag(root) == "v9.0.0"
    with pytest.raises(SystemExit, match="exists: a re-cut is a new version"):
        release.tag(root)
    assert set(release.release_tags(root)) == {"9.0.0"}


def test_a_committed_release_record_never_changes(tmp_path: Path) -> None:
    """Without tags (they do not travel with the repository) the history of CHANGELOG.md is the
    record: rewriting a release's fingerprints to match a changed tree is refused, and so is
    ``fingerprint --record`` once the release is committed."""
    root = _repo(_tree(tmp_path))
    release.set_version("9.0.0", root=root)
    _git(root, "commit", "-q", "-am", "release 9.0.0")
    old = release.package_fingerprint(root)
    _touch_driver(root)
    with pytest.raises(SystemExit, match="is recorded in commit"):
        release.record(root)
    (root / "CHANGELOG.md").write_text(_changelog(root).replace(
        old, release.package_fingerprint(root)))
    assert release.problems(root) != []
    assert any("9.0.0 was recorded with the package fingerprint" in p and "never changes" in p
               for p in release.problems(root))
    _git(root, "commit", "-q", "-am", "a re-cut under the same version")
    assert any("never changes" in p for p in release.problems(root))


def test_record_rewrites_an_uncommitted_release_entry_only(tmp_path: Path) -> None:
    root = _repo(_tree(tmp_path))
    with pytest.raises(SystemExit, match="is a development version"):
        release.record(root)
    release.set_version("9.0.0", root=root)
    before = _changelog(root)
    _touch_driver(root)  # a last fix before the release commit
    lines = release.record(root)
    assert lines == (f"Schema fingerprint: {release.sql_fingerprint(root)}\n"
                     f"Package fingerprint: {release.package_fingerprint(root)}")
    [old] = [e.package for e in release.changelog_entries(before) if e.version == "9.0.0"]
    assert _changelog(root) == before.replace(old, release.package_fingerprint(root))
    assert release.problems(root) == []


# --- what a build says about itself -----------------------------------------------------------


def _build_py(root: Path, lib: Path) -> subprocess.CompletedProcess[str]:
    """setup.py's build of the package files (what a wheel holds), with this venv's
    setuptools; no RFR_BUILD_COMMIT."""
    shutil.rmtree(lib, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "RFR_BUILD_COMMIT"}
    return subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib",
                           str(lib)], cwd=root, capture_output=True, text=True, timeout=120,
                          env=env)


def test_a_build_from_an_export_names_its_commit_or_says_it_cannot(tmp_path: Path) -> None:
    """An export (``git archive``: no .git) names the commit it came from; a plain copy says
    explicitly that its commit is unknown, and so does the build's output."""
    repo = _repo(_tree(tmp_path))
    head = _git(repo, "rev-parse", "HEAD").strip()
    exported = tmp_path / "export"
    archive = tmp_path / "export.tar"
    archive.write_bytes(subprocess.run(["git", "-C", str(repo), "archive", "--format=tar",
                                        "HEAD"], check=True, capture_output=True).stdout)
    with tarfile.open(archive) as tar:
        tar.extractall(exported, filter="data")
    assert not (exported / ".git").exists()
    built = _build_py(exported, tmp_path / "lib")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "lib" / "recording_finalize" / "BUILD_COMMIT").read_text() == \
        head[:12] + "\n"
    # A copy that is neither a checkout nor an export.
    copied = _tree(tmp_path / "copy")
    built = _build_py(copied, tmp_path / "lib")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "lib" / "recording_finalize" / "BUILD_COMMIT").read_text() == \
        "unknown (built outside git)\n"
    assert "commit unknown (built outside git)" in built.stderr


def test_an_export_unpacked_inside_another_checkout_names_its_own_commit(
        tmp_path: Path) -> None:
    """An export of an earlier commit (the previous release, for a rollback or a benchmark)
    unpacked in a folder of a checkout of a later one: its wheel names the exported commit
    (its .git_archival.txt), not the enclosing checkout's HEAD. (The 0.4.1 wheel built this
    way inside a 0.5.0.dev0 worktree said the worktree's commit in --version and build_info.)"""
    repo = _repo(_tree(tmp_path))
    exported_commit = _git(repo, "rev-parse", "HEAD").strip()
    _touch_driver(repo)
    _git(repo, "commit", "-q", "-am", "later work")
    later = _git(repo, "rev-parse", "HEAD").strip()
    assert later != exported_commit
    exported = repo / "out" / "previous"
    (repo / ".git" / "info" / "exclude").write_text("out/\n")  # as a git-ignored scratch folder
    archive = tmp_path / "previous.tar"
    archive.write_bytes(subprocess.run(["git", "-C", str(repo), "archive", "--format=tar",
                                        exported_commit], check=True,
                                       capture_output=True).stdout)
    with tarfile.open(archive) as tar:
        tar.extractall(exported, filter="data")
    built = _build_py(exported, tmp_path / "lib")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "lib" / "recording_finalize" / "BUILD_COMMIT").read_text() == \
        exported_commit[:12] + "\n"


def test_an_image_of_unreleased_work_is_tagged_with_its_version_and_commit(
        tmp_path: Path) -> None:
    root = _tree(tmp_path, "9.0.0.dev0")
    with pytest.raises(SystemExit, match="carries the commit, and this tree has none"):
        release.image_tag(root)
    _repo(root)
    head = _git(root, "rev-parse", "HEAD").strip()[:12]
    assert release.image_tag(root) == ("9.0.0.dev0", head, f"9.0.0.dev0-{head}")
    _touch_driver(root)
    assert release.image_tag(root)[2] == f"9.0.0.dev0-{head}-dirty"
    _git(root, "commit", "-q", "-am", "more")
    assert release.image_tag(root)[2] != f"9.0.0.dev0-{head}"
    release.set_version("9.0.0", root=root)
    assert release.image_tag(root)[2] == "9.0.0"


def test_version_names_the_build_the_commit_and_the_fingerprints() -> None:
    """`--version` and build_info tell two builds of one version apart; a development build
    says so; an installed wheel's commit is baked in at build time
    (tests/py/test_installed_wheel.py)."""
    out = subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    package, sql = release.package_fingerprint(), release.sql_fingerprint()
    assert f"\npackage fingerprint: {package}\nsql fingerprint: {sql}" in out.stdout, out.stdout
    development = release.is_development(__version__)
    assert ("\ndevelopment build: unreleased work, not a release\n" in out.stdout) is development
    [commit] = re.findall(r"^commit: (\S+)$", out.stdout, re.M)
    assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?", commit), commit
    [info] = [line for line in Metrics().render().decode().splitlines()
              if line.startswith("messenger_recording_finalize_build_info{")]
    assert f'sql_fingerprint="{sql}"' in info and f'commit="{commit}"' in info, info
    assert f'package_fingerprint="{package}"' in info, info
    assert f'development="{str(development).lower()}"' in info, info
