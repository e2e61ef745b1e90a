"""scripts/lint_refs.py: a reference to a document the repository's readers cannot open is a
finding, named by file and line; the reason itself, a link into docs/ and CHANGELOG.md are not.
No service needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "lint_refs.py"


def lint(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, paths)], capture_output=True,
                          text=True, timeout=60)


#: The cited names, built from parts like the script's patterns: this file cites nothing itself.
NAMES = {"spec": "SP" + "EC", "card": "ca" + "rd", "Card": "Ca" + "rd", "issue": "is" + "sue",
         "Issue": "Is" + "sue"}


@pytest.mark.parametrize("line", [
    "-- the race {spec} section 9 accepts",
    "# Column names fixed by the data contract ({spec} §2).",
    '"""The design {card}\'s test table, end to end."""',
    "as the {card}'s re-emit rule already asks",
    "# {issue} 29 item 3: a healthy drain",
    "{Issue} 11: S3 is down for 6 s",
    '# {Card}: "quarantined_total > 0".',
])
def test_a_reference_is_named_by_file_and_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "module.py"
    path.write_text(f"first = 1\n{line.format(**NAMES)}\n")
    proc = lint(path)
    assert proc.returncode == 1
    assert f"{path}:2: cites " in proc.stdout


def test_a_reference_broken_over_two_lines_is_found(tmp_path: Path) -> None:
    path = tmp_path / "file.sql"
    path.write_text("-- the one product table the design\n-- {card} places in schema "
                    "messenger\n".format(**NAMES))
    proc = lint(path)
    assert proc.returncode == 1
    assert f"{path}:1: cites the design {NAMES['card']}" in proc.stdout


def test_the_reason_itself_or_a_link_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "module.py"
    path.write_text("# consumers de-duplicate by RecordingId (docs/contract/README.md)\n"
                    "# a specification of the payload: docs/contract/\n"
                    "# the t{issue} 9 of the body; the discard pile\n".format(**NAMES))
    proc = lint(path)
    assert proc.returncode == 0, proc.stdout


def test_the_changelog_may_name_its_history() -> None:
    assert lint(SCRIPT.parents[1] / "CHANGELOG.md").returncode == 0
