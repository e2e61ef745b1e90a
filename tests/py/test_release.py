"""One version per release (issue 21 item 1): the package, ``recording-finalize --version``,
``build_info``, the image tag and the top CHANGELOG entry name the same version, and that
version's entry records the fingerprint of the SQL the tree ships - so a change under sql/
without a new version fails here."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import CLI, REPO
from kube import KUSTOMIZATIONS, containers, load_release, one, pod_specs, render
from recording_finalize import __version__
from recording_finalize.metrics import Metrics

release = load_release()


def test_the_sql_has_not_changed_since_the_current_version_was_recorded() -> None:
    version = release.pyproject_version()
    entries = {e.version: e for e in release.changelog_entries(
        (REPO / "CHANGELOG.md").read_text())}
    assert version in entries, f"CHANGELOG.md has no entry for {version}"
    new = release.sql_fingerprint()
    assert entries[version].fingerprint == new, (
        f"sql/ changed since {version}: bump the version in pyproject.toml and add a CHANGELOG "
        f"entry with `Schema fingerprint: {new}`")


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
    top = release.changelog_entries((REPO / "CHANGELOG.md").read_text())[0]
    assert top.version == version
    assert release.problems() == []


def test_changelog_versions_are_unique_and_record_distinct_fingerprints() -> None:
    entries = release.changelog_entries((REPO / "CHANGELOG.md").read_text())
    versions = [e.version for e in entries]
    fingerprints = [e.fingerprint for e in entries]
    assert len(set(versions)) == len(versions), versions
    assert None not in fingerprints, "every entry needs one `Schema fingerprint:` line"
    assert len(set(fingerprints)) == len(fingerprints), fingerprints
    assert all(release.SEMVER.match(v) for v in versions), versions


def _tree(tmp_path: Path) -> Path:
    """A copy of what the release rules read: the version files, CHANGELOG, deploy/kubernetes
    and sql/."""
    for rel in ("pyproject.toml", "driver/__init__.py", "CHANGELOG.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    shutil.copytree(REPO / "deploy" / "kubernetes", tmp_path / "deploy" / "kubernetes")
    shutil.copytree(REPO / "sql", tmp_path / "sql", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_a_migration_added_without_a_version_bump_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert release.problems(root) == []
    (root / "sql" / "migrations" / "9999_new.sql").write_text("select 1;\n")
    new = release.sql_fingerprint(root)
    assert release.problems(root) == [
        f"sql/ changed since {__version__}: bump the version in pyproject.toml and add a "
        f"CHANGELOG entry with `Schema fingerprint: {new}`"]
    # The way out: a new version, everywhere at once.
    release.set_version("9.0.0", root=root)
    assert release.problems(root) == []
    assert release.changelog_entries((root / "CHANGELOG.md").read_text())[0].fingerprint == new


def test_the_fingerprint_covers_every_sql_byte_and_only_sql(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    base = release.sql_fingerprint(root)
    files = release.sql_files(root)
    assert {p.parent.name for p in files} >= {"migrations", "functions"}
    assert all(p.suffix == ".sql" for p in files)
    # Documentation and the checksum list are not the schema.
    (root / "sql" / "README.md").write_text("changed")
    (root / "sql" / "migrations" / "SHA256SUMS").write_text("changed")
    assert release.sql_fingerprint(root) == base
    # One byte of a function file.
    f = sorted((root / "sql" / "functions").glob("*.sql"))[-1]
    f.write_bytes(f.read_bytes() + b" ")
    changed = release.sql_fingerprint(root)
    assert changed != base
    # The same bytes moved from one file to the next hash differently.
    a, b = sorted((root / "sql" / "functions").glob("*.sql"))[:2]
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_a + data_b[:1])
    b.write_bytes(data_b[1:])
    assert release.sql_fingerprint(root) not in (base, changed)
    a.write_bytes(data_a)
    b.write_bytes(data_b)
    assert release.sql_fingerprint(root) == changed
    # The service's reference DDL (sql/service/) counts once it exists.
    (root / "sql" / "service").mkdir(exist_ok=True)
    (root / "sql" / "service" / "zz_new_table.sql").write_text("create table t ();\n")
    assert release.sql_fingerprint(root) != changed


@pytest.mark.parametrize(("text", "problem"), [
    ("## [9.1.0] - d\n\nSchema fingerprint: {a}\n\n## [9.1.0] - d\n\nSchema fingerprint: {b}\n",
     "version 9.1.0 appears twice"),
    ("## [9.1.0] - d\n\nSchema fingerprint: {a}\n\n## [9.0.0] - d\n\nSchema fingerprint: {a}\n",
     "record the same schema fingerprint"),
    ("## [9.0.0] - d\n\nSchema fingerprint: {a}\n\n## [9.1.0] - d\n\nSchema fingerprint: {b}\n",
     "not newest first"),
    ("## [9.1.0] - d\n\nno line\n", "needs exactly one line"),
])
def test_the_changelog_rules_catch_what_they_are_for(tmp_path: Path, text: str,
                                                     problem: str) -> None:
    root = _tree(tmp_path)
    # A version newer than any this tree will reach.
    release.set_version("9.1.0", root=root)
    (root / "CHANGELOG.md").write_text(
        "# Changelog\n\n## [Unreleased]\n\n" + text.format(a="a" * 64, b="b" * 64))
    found = release.problems(root)
    assert any(problem in p for p in found), found


def test_record_refreshes_the_current_entry_and_refuses_a_released_version(
        tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "sql" / "functions" / "zz.sql").write_text("select 2;\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    before = (root / "CHANGELOG.md").read_text()
    [old] = [e.fingerprint for e in release.changelog_entries(before) if e.version == __version__]
    line = release.record(root)
    assert re.fullmatch(r"Schema fingerprint: [0-9a-f]{64}", line)
    # Only the line changes: the text around it (blank lines included) stays as it was.
    assert (root / "CHANGELOG.md").read_text() == before.replace(
        f"Schema fingerprint: {old}", line)
    assert release.problems(root) == []
    subprocess.run(["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t",
                    "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    subprocess.run(["git", "-C", str(root), "tag", f"v{__version__}"], check=True)
    with pytest.raises(SystemExit, match="is tagged"):
        release.record(root)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t",
                    *args], check=True, capture_output=True)


def _released_clone(tmp_path: Path) -> Path:
    """A git repository of the release tree, committed, with the current version tagged."""
    root = _tree(tmp_path)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "release")
    assert release.tag(root) == f"v{__version__}"
    return root


def test_without_a_tag_only_the_changelog_rules_apply(tmp_path: Path) -> None:
    """CI's clean clone may have no tags: the release checks pass on a consistent tree."""
    root = _tree(tmp_path)
    _git(root, "init", "-q")
    assert release.release_tags(root) == {}
    assert release.problems(root) == []


def test_changing_sql_after_the_release_tag_without_a_version_bump_fails(tmp_path: Path
                                                                         ) -> None:
    """Issue 29 item 4: a tag vX.Y.Z is the release; sql/ that differs from the tag's while
    pyproject still says X.Y.Z is refused, even when CHANGELOG's line is rewritten to match the
    new tree (a re-cut under the same version), and the way out is a new version."""
    root = _released_clone(tmp_path)
    assert release.problems(root) == []
    released = release.sql_fingerprint(root)
    f = root / "sql" / "functions" / "recording_finalize.stats.sql"
    f.write_text(f.read_text() + "\n-- a re-cut\n")
    assert any(f"differs from the release v{__version__}" in p for p in release.problems(root))
    # Recording the new fingerprint under the released version is refused, and so is writing
    # it by hand: the tag's tree decides.
    with pytest.raises(SystemExit, match="is tagged"):
        release.record(root)
    changelog = root / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace(released,
                                                       release.sql_fingerprint(root)))
    found = release.problems(root)
    assert any("is released" in p and "never changes" in p for p in found), found
    assert any("a re-cut is a new version" in p for p in found), found
    # The way out: the released entry as it was, and a new version for the new SQL.
    changelog.write_text(changelog.read_text().replace(release.sql_fingerprint(root),
                                                       released))
    release.set_version("9.0.0", root=root)
    assert release.problems(root) == []


def test_tag_refuses_uncommitted_changes_and_a_version_tagged_already(tmp_path: Path) -> None:
    root = _released_clone(tmp_path)
    with pytest.raises(SystemExit, match="exists: a re-cut is a new version"):
        release.tag(root)
    (root / "sql" / "functions" / "zz.sql").write_text("select 2;\n")
    release.set_version("9.0.0", root=root)
    _git(root, "add", "-A")  # staged, not committed
    with pytest.raises(SystemExit, match="commit first"):
        release.tag(root)
    _git(root, "commit", "-q", "-am", "9.0.0")
    assert release.tag(root) == "v9.0.0"
    assert set(release.release_tags(root)) == {__version__, "9.0.0"}


def test_version_names_the_commit_and_the_sql_fingerprint() -> None:
    """`--version` and build_info tell two builds of one version apart (issue 29 item 4); an
    installed wheel's commit is baked in at build time (tests/py/test_installed_wheel.py)."""
    out = subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    fingerprint = release.sql_fingerprint()
    assert f"\nsql fingerprint: {fingerprint}" in out.stdout, out.stdout
    [commit] = re.findall(r"^commit: (\S+)$", out.stdout, re.M)
    assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?", commit), commit
    [info] = [line for line in Metrics().render().decode().splitlines()
              if line.startswith("messenger_recording_finalize_build_info{")]
    assert f'sql_fingerprint="{fingerprint}"' in info and f'commit="{commit}"' in info, info
