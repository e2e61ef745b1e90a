"""``recording-finalize service-sql schema|adapter|grants --to ROLE|recommended``: SQL for the DBA
of the service's objects to review and run; connects to nothing."""

from __future__ import annotations

import argparse
import re
import sys
import textwrap

from .. import adapter, cliutil, contract
from ..config import Settings
from ..drift import package_sql

PARTS = ("schema", "adapter", "grants", "recommended")
FILES = {"schema": "service/schema.sql", "adapter": adapter.REFERENCE_FILE,
         "recommended": "service/recommended.sql"}

_PLACEHOLDER = re.compile(r"\{\{ (\w+) \}\}")
# Besides the placeholders, what names the role in a line of its own length: the opening
# paragraph and each column grant, wrapped again once the role is in.
_PIECES = re.compile(_PLACEHOLDER.pattern + r"|\A.*?(?=\n\n)|^grant (?:select|insert|update) "
                     r"\(.*?;$", re.M | re.S)


def grants(role: str, lifecycle: bool) -> str:
    """The grant script (with ``lifecycle``, the lifecycle one too) filled in for ``role``."""
    literal = "'" + role.replace("'", "''") + "'"
    values = {"role": sql_ident(role), "role_literal": literal, "role_in_literal": literal[1:-1]}
    template = package_sql(contract.GRANTS_FILE).replace("{{ lifecycle }}", (
        "\n" + package_sql(contract.LIFECYCLE_GRANTS_FILE) if lifecycle else ""))

    def fill(match: re.Match[str]) -> str:
        if match[1]:
            return values[match[1]]
        words = " ".join(match[0].replace("\n--", " ").split())
        if words.startswith("--"):
            return "\n".join(textwrap.wrap(
                _PLACEHOLDER.sub(fill, words[3:]), width=97, initial_indent="-- ",
                subsequent_indent="-- "))
        words = words.replace("( ", "(").replace(" )", ")")
        return "\n".join(textwrap.wrap(_PLACEHOLDER.sub(fill, words), width=100,
                                       subsequent_indent="    ", break_on_hyphens=False))

    return _PIECES.sub(fill, template)


def sql_ident(name: str) -> str:
    """A role name as an SQL identifier (quoted only when it must be)."""
    if name.isidentifier() and name == name.lower() and name.isascii():
        return name
    return '"' + name.replace('"', '""') + '"'


def service_sql_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.part in FILES:
        sys.stdout.write((settings.sql_dir / FILES[args.part]).read_text(encoding="utf-8"))
    elif args.part != "grants":
        return cliutil.fail(f"the part must be one of {', '.join(PARTS)}; got {args.part!r}",
                            cliutil.EXIT_USAGE)
    elif not (args.to or "").strip():
        return cliutil.fail("service-sql grants needs --to ROLE: the role that will own the "
                            "product (the one that runs recording-finalize migrate)",
                            cliutil.EXIT_USAGE)
    else:
        sys.stdout.write(grants(args.to.strip(), args.lifecycle))
    return cliutil.EXIT_OK


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("part", metavar="PART", help="schema, adapter, grants or recommended")
    cmd.add_argument("--lifecycle", action="store_true",
                     help="grants: also what the optional lifecycle functions (recording_started, "
                     "recording_stopped, session_ended) write on the reference schema")
    cmd.add_argument("--to", metavar="ROLE", default=None,
                     help="grants: the role that owns the product (the one that runs migrate)")


COMMAND = cliutil.Command(
    name="service-sql",
    summary="print SQL for the messenger service's DBA: schema, adapter, grants --to ROLE, "
            "recommended",
    description=(
        "Prints, without connecting anywhere:\n"
        "  schema       the reference DDL of the service tables the product works on (what\n"
        "               migrate --create-service-tables creates in a new database)\n"
        "  adapter      the reference adapter: the views and functions of schema\n"
        "               recording_finalize_adapter through which the product reads and writes\n"
        "               the service's data; a DBA whose schema differs edits it and creates it\n"
        "               as the product's owner before migrate, which then keeps it\n"
        "  grants       the GRANTs that let --to ROLE (the product's owner, the role that runs\n"
        "               migrate) install and run, column by column, to be run as the owner of\n"
        "               the service's schema and tables; the database-level CONNECT/CREATE come\n"
        "               last, granted when run by the database's owner, else named, with the\n"
        "               statement that takes CREATE back once migrate has run; --lifecycle\n"
        "               adds what the optional lifecycle functions write\n"
        "  recommended  optional objects on the service's tables (an index on unpublished\n"
        "               events, a terminal-status guard, cheaper CHECKs), each with what it\n"
        "               buys and what it costs the service; migrate never applies them"
    ),
    exits="exit 2: an unknown part, or grants without --to.",
    handler=service_sql_command,
    variables=("RFR_SQL_DIR",),
    required=(),
    add_arguments=_add_arguments,
    for_operators=False,
)
