"""What the commands share: the ``Command`` record ``cli.py`` builds its parser from, and their
flags, checks and output. Light on purpose: ``cli.py`` imports every command module.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from . import logs
from .config import Settings, parse_duration
from .db import connect as connect  # one autocommit connection, as every command uses

PROG = "recording-finalize"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(ValueError):
    """A bad argument, found before the configuration is read: exit 2 with this message."""


@dataclass(frozen=True)
class Command:
    """One subcommand. ``check_args`` runs before the configuration is read (raises
    ``UsageError``), ``prepare`` right after (raises ``ConfigError`` for a variable it needs)."""

    name: str
    summary: str
    description: str
    handler: Callable[[argparse.Namespace, Settings], int]
    exits: str = ""
    #: The variables the command reads (all of them are validated, whatever the command), those
    #: that must be set and those a flag may override (``config.VARIABLES`` names the flag).
    variables: Sequence[str] = ("DATABASE_URL",)
    required: tuple[str, ...] = ("DATABASE_URL",)
    flags: Sequence[str] = ()
    add_arguments: Callable[[argparse.ArgumentParser], None] = lambda cmd: None
    check_args: Callable[[argparse.Namespace], None] | None = None
    prepare: Callable[[Settings], None] | None = None
    #: One more line for the environment help.
    env_note: str = ""
    #: A variable's help as this command reads it (DATABASE_URL: whose login it is).
    variable_help: Mapping[str, str] = field(default_factory=dict)
    #: An operator's command: a permission error says which role to log in as.
    for_operators: bool = True


def fail(message: str, code: int = EXIT_FAILURE, redact: bool = True) -> int:
    """``recording-finalize: message`` on stderr, secrets masked; returns ``code``."""
    text = logs.redact(message) if redact else message
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)
    return code


def iso(value: datetime | str | None) -> str:
    """UTC ISO-8601 whatever the session's TimeZone ("-" for None; a string that is no time is
    shown as it is)."""
    if value is None:
        return "-"
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    except ValueError:
        return str(value)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def age(seconds: float) -> str:
    """``3725`` → ``1h 2m 5s``; "-" for less than a second."""
    total = int(seconds)
    if total == 0:
        return "-"
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{hours}h " if hours else "") + (f"{minutes}m " if hours or minutes else "") \
        + f"{secs}s"


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Aligned columns, two spaces apart; the last one unpadded."""
    lines = [header, *rows]
    widths = [max(len(line[k]) for line in lines) for k in range(len(header) - 1)]
    return ["  ".join([*(cell.ljust(width) for cell, width in zip(line, widths, strict=False)),
                       line[-1]]) for line in lines]


def moment(text: str) -> datetime:
    """A duration ago (20m, 2h, 1d) or an ISO-8601 time (UTC if it names no zone)."""
    text = text.strip()
    try:
        return datetime.now(UTC) - timedelta(seconds=parse_duration(text, days=True))
    except ValueError:
        pass
    at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return at if at.tzinfo else at.replace(tzinfo=UTC)


MOMENT_RULE = "an ISO-8601 time (2026-12-01T08:00:00Z) or a duration ago (20m, 2h, 1d)"


def print_json(data: Any) -> None:
    print(json.dumps(data, separators=(",", ":"), default=str), flush=True)


def show(args: argparse.Namespace, document: Mapping[str, Any], lines: Iterable[str]) -> None:
    """``document`` as one JSON object with ``--json``, else the text ``lines`` (a generator is
    not run for JSON)."""
    if args.json:
        print_json(document)
        return
    for line in lines:
        print(line)


def json_row(row: Mapping[str, Any], *columns: str, **renamed: str) -> dict[str, Any]:
    """A database row's ``columns`` (none named: all) under their camelCase names, and
    ``renamed`` (JSON name = column); times in UTC ISO-8601."""
    names = columns if columns or renamed else tuple(row)
    pairs = [(_camel(c), c) for c in names] + list(renamed.items())
    return {name: iso(row[c]) if isinstance(row[c], datetime) else row[c] for name, c in pairs}


def _camel(column: str) -> str:
    first, *rest = column.split("_")
    return first + "".join(word.capitalize() for word in rest)


def parse_flag(args: argparse.Namespace, dest: str, parse: Callable[[str], Any], rule: str
               ) -> None:
    """Replaces the flag's text, when given, by ``parse``'s value (else: it must be ``rule``)."""
    text = getattr(args, dest)
    if text is None:
        return
    try:
        setattr(args, dest, parse(text))
    except ValueError:
        raise UsageError(f"--{dest.replace('_', '-')} must be {rule}; got {text!r}") from None


def check_range(args: argparse.Namespace, dest: str) -> None:
    value = getattr(args, dest)
    if not 1 <= value <= 10000:
        raise UsageError(f"--{dest.replace('_', '-')} must be an integer in 1..10000; got {value}")


def check_reason(args: argparse.Namespace) -> None:
    if not (args.reason or "").strip():
        raise UsageError(f"{args.command}: --reason must say why (it goes to the audit trail)")


def operator(args: argparse.Namespace) -> str:
    """``--operator``, else the OS user."""
    if args.operator:
        return str(args.operator)
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def add_operator_args(cmd: argparse.ArgumentParser, reason_required: bool) -> None:
    cmd.add_argument("--reason", metavar="R", required=reason_required, default=None,
                     help="why (recorded in the audit trail)"
                     + ("; required" if reason_required else ""))
    cmd.add_argument("--operator", metavar="NAME", default=None,
                     help="who (recorded in the audit trail; default: the OS user)")


def add_json_flag(cmd: argparse.ArgumentParser, text: str = "print one JSON object instead of text"
                  ) -> None:
    cmd.add_argument("--json", action="store_true", help=text)
