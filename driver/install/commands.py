"""The install tooling's commands: service-sql, uninstall, wait-for-schema (migrate is in cli).

Registered by ``cli.build_parser`` like the operator toolkit's: summary, description and exit
codes per command, its flags, the variables it reads, and its handler.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import psycopg

from .. import logs
from ..config import Settings, parse_duration
from ..errors import describe

PROG = "recording-finalize"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
#: How often wait-for-schema looks again.
WAIT_POLL_S = 5.0

COMMANDS: dict[str, tuple[str, str, str]] = {
    "service-sql": (
        "print SQL for the messenger service's DBA: schema, grants --to ROLE, recommended",
        "Prints, without connecting anywhere:\n"
        "  schema       the reference DDL of the service tables the product works on (what\n"
        "               migrate --create-service-tables creates in a new database)\n"
        "  grants       the GRANTs that let --to ROLE (the product's owner, the role that runs\n"
        "               migrate) install and run, column by column, to be run as the owner of\n"
        "               the service's schema and tables; the database-level CONNECT/CREATE come\n"
        "               last, granted when run by the database's owner, else named\n"
        "  recommended  optional objects on the service's tables (an index on unpublished\n"
        "               events, a terminal-status guard, cheaper CHECKs), each with what it\n"
        "               buys and what it costs the service; migrate never applies them",
        "exit 2: an unknown part, or grants without --to.",
    ),
    "uninstall": (
        "drop everything the product owns (its schemas, recording_finalize_attempts)",
        "Without --yes: lists what would be dropped and what is left, changes nothing. With\n"
        "--yes: drops the schemas recording_finalize, recording_finalize_internal and\n"
        "recording_finalize_migrations and the table messenger.recording_finalize_attempts, in\n"
        "one transaction, each only if it belongs to the connecting role; the messenger\n"
        "service's tables, their rows, triggers, indexes and grants are not touched. It refuses\n"
        "when another object depends on the product's. The cluster-wide group roles and the\n"
        "service's GRANTs to the product's owner are printed for whoever may drop them.\n"
        "Connect as the product's owner.",
        "exit 1: an object of someone else depends on the product's; a database error.",
    ),
    "wait-for-schema": (
        "wait until the database's schema matches this package (an init container)",
        "Connects every few seconds and compares the database with the installed package (the\n"
        "drift check of run, and the contract with the service's tables): exits 0 as soon as\n"
        "they match, so that a new sidecar starts only after the migrate of its version ran.\n"
        "Connect as the worker's login.",
        "exit 1: --timeout passed while the schema still differs (the message says how).\n"
        "exit 2: the database is newer than this package, or the contract with the service's\n"
        "        tables does not hold (waiting will not change either): the message says why.",
    ),
}

COMMAND_VARIABLES: dict[str, list[str]] = {
    "service-sql": ["RFR_SQL_DIR"],
    "uninstall": ["DATABASE_URL"],
    "wait-for-schema": ["DATABASE_URL", "RFR_SQL_DIR"],
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "service-sql": (),
    "uninstall": ("DATABASE_URL",),
    "wait-for-schema": ("DATABASE_URL",),
}
COMMAND_FLAGS: dict[str, list[str]] = {name: [] for name in COMMANDS}


def add_arguments(name: str, cmd: argparse.ArgumentParser) -> None:
    if name == "service-sql":
        cmd.add_argument("part", metavar="PART", help="schema, grants or recommended")
        cmd.add_argument("--to", metavar="ROLE", default=None,
                         help="grants: the role that owns the product (runs migrate)")
    if name == "uninstall":
        cmd.add_argument("--yes", action="store_true",
                         help="really drop (without it: list what would be dropped)")
    if name == "wait-for-schema":
        cmd.add_argument("--timeout", default="15m", metavar="DURATION",
                         help="give up after this long (default 15m)")


def _fail(message: str, code: int = EXIT_FAILURE) -> int:
    print(f"{PROG}: {logs.redact(message)}", file=sys.stderr, flush=True)
    return code


def service_sql_command(args: argparse.Namespace, settings: Settings) -> int:
    from . import service_sql

    try:
        sys.stdout.write(service_sql.text(args.part, settings.sql_dir, args.to))
    except ValueError as err:
        return _fail(str(err), EXIT_USAGE)
    return EXIT_OK


def uninstall_command(args: argparse.Namespace, settings: Settings) -> int:
    from ..db import connect
    from . import uninstall

    with connect(settings) as conn:
        what = uninstall.plan(conn)
        for line in what.foreign:
            print(f"left alone: {line}")
        if what.dependents:
            for line in what.dependents:
                print(f"refused: {line}", file=sys.stderr)
            return _fail("uninstall refused, nothing was dropped: other objects depend on the "
                         "product's (listed above)")
        if not what.schemas and not what.table:
            print("nothing of recording-finalize-retry is installed here for role "
                  f"{what.role}")
            return EXIT_OK
        if not args.yes:
            print("would run (uninstall --yes does it, in one transaction):")
            for statement in what.statements:
                print(f"  {statement}")
            _print_leftovers(what.role)
            return EXIT_OK
        uninstall.run(conn, what)
    logs.log("uninstalled", schemas=what.schemas, table=what.table)
    print("dropped: " + ", ".join([*what.schemas, *([what.table] if what.table else [])]))
    _print_leftovers(what.role)
    return EXIT_OK


def _print_leftovers(role: str) -> None:
    from . import uninstall

    print("not dropped (not the product's to drop here):")
    for line in uninstall.leftovers(role):
        print(f"  {line}")


def wait_for_schema_command(args: argparse.Namespace, settings: Settings) -> int:
    from ..db import connect
    from ..schema import check, shipped
    from . import contract

    try:
        timeout = parse_duration(args.timeout, days=True)
    except ValueError:
        return _fail(f"--timeout must be a duration (90, 5m, 1h); got {args.timeout!r}",
                     EXIT_USAGE)
    package = shipped(settings.sql_dir)
    deadline = time.monotonic() + timeout
    why = "not checked yet"
    while True:
        try:
            with connect(settings) as conn:
                drift = check(conn, package)
                if drift.database_is_newer:
                    return _fail(f"wait-for-schema: {drift.message()}", EXIT_USAGE)
                if drift.matches:
                    problems = _contract(conn, contract)
                    if problems:
                        return _fail("wait-for-schema: the schema matches, but the contract "
                                     f"with the service's tables does not hold:\n{problems}",
                                     EXIT_USAGE)
                    print(f"schema {package.schema_version} matches recording-finalize "
                          f"{package.version}")
                    return EXIT_OK
                why = drift.message()
        except psycopg.Error as err:
            why = f"the database cannot be reached or refused: {describe(err)}"
        if time.monotonic() + WAIT_POLL_S > deadline:
            return _fail(f"wait-for-schema: gave up after {args.timeout}: {why}")
        logs.log("waiting for schema", reason=why)
        time.sleep(WAIT_POLL_S)


def _contract(conn: psycopg.Connection[Any], contract: Any) -> str:
    owner = contract.product_owner(conn)
    if owner is None:
        return "  - schema recording_finalize does not exist"
    problems = contract.check(conn, owner)
    return problems.message() if problems else ""


HANDLERS = {
    "service-sql": service_sql_command,
    "uninstall": uninstall_command,
    "wait-for-schema": wait_for_schema_command,
}
