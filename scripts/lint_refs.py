#!/usr/bin/env python3
"""No reference to a document the repository's readers cannot open.

A comment, docstring, test or doc that cites the specification by section, the original design
document, or a tracker item by number sends the reader to a text that is not in the repository.
Write the reason itself in one sentence, or link to the page of docs/ that gives it. CHANGELOG.md
is history and may name what it likes.

Usage: python3 scripts/lint_refs.py [PATH ...]   (default: every file git tracks)
Exit 0 when clean, 1 with one "file:line: ..." per finding.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Files that may name them: the project's history.
ALLOWED = frozenset({"CHANGELOG.md"})

#: What is cited, and the pattern that finds it. Built from parts, so that no line of this file
#: reads as a finding if it is ever linted itself.
_DESIGN_DOC = "the design " + "ca" + "rd"
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the specification", re.compile(r"\b" + "SP" + r"EC\b")),
    (_DESIGN_DOC, re.compile(r"\b(?:design|the) " + "ca" + r"rd\b", re.IGNORECASE)),
    # A comment quoting it by its name and a colon.
    (_DESIGN_DOC, re.compile(r"\b" + "Ca" + r"rd:")),
    ("an issue number", re.compile(r"\b" + "iss" + r"ues? #?\d+", re.IGNORECASE)),
)


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    return [name for name in out.stdout.decode().split("\0") if name]


#: A name broken over two lines ("... the design\n-- card places ..."): the last word of a line
#: and the first word of the next (after any comment marker) are read together too.
_LAST_WORD = re.compile(r"(\w+)\W*$")
_FIRST_WORD = re.compile(r"^[\s#/*\"'-]*(\w+)")


def findings(relative: str, text: str) -> list[str]:
    found = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        following = _FIRST_WORD.match(lines[number]) if number < len(lines) else None
        last = _LAST_WORD.search(line)
        joined = f"{last.group(1)} {following.group(1)}" if last and following else ""
        for what, pattern in PATTERNS:
            match = pattern.search(line) or (pattern.search(joined) if joined else None)
            if match:
                found.append(f"{relative}:{number}: cites {what} ({match.group(0)!r}), which the "
                             "repository's readers cannot open: write the reason itself, or link "
                             "to docs/")
    return found


def main(argv: list[str]) -> int:
    names = argv or tracked()
    problems: list[str] = []
    for name in names:
        path = Path(name) if Path(name).is_absolute() else REPO / name
        relative = path.resolve().relative_to(REPO).as_posix() if path.resolve().is_relative_to(
            REPO) else name
        if relative in ALLOWED or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary (images) or unreadable: nothing a reader is sent away by
        problems += findings(relative, text)
    for problem in problems:
        print(problem)
    if problems:
        files = len({p.split(":", 1)[0] for p in problems})
        print(f"lint_refs: {len(problems)} reference(s) in {files} file(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
