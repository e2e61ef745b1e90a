"""``recording-finalize wait-for-schema``: wait until the database matches this package.

For a Kubernetes init container: the new version's sidecar starts only once the migrate Job of
its version has run. It asks what ``run`` asks at start (the drift check, then the contract with
the service's tables) and exits 0 as soon as both hold.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import psycopg

from .. import contract, logs
from ..cliutil import EXIT_OK, EXIT_USAGE, Command, connect, fail
from ..config import Settings, parse_duration
from ..drift import schema_drift, shipped
from ..errors import describe

#: How often it looks again.
WAIT_POLL_S = 5.0


def wait_for_schema_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        timeout = parse_duration(args.timeout, days=True)
    except ValueError:
        return fail(f"--timeout must be a duration (90, 5m, 1h); got {args.timeout!r}",
                     EXIT_USAGE)
    package = shipped(settings.sql_dir)
    deadline = time.monotonic() + timeout
    why = "not checked yet"
    while True:
        try:
            with connect(settings) as conn:
                drift = schema_drift(conn, package)
                if drift.migrate_refuses:  # no migrate of this package will change it
                    return fail(f"wait-for-schema: {drift.message()}", EXIT_USAGE)
                if drift.matches:
                    problems = _contract(conn)
                    if problems:
                        return fail("wait-for-schema: the schema matches, but the contract "
                                     f"with the service's tables does not hold:\n{problems}",
                                     EXIT_USAGE)
                    print(f"schema {package.schema_version} matches recording-finalize "
                          f"{package.version}")
                    return EXIT_OK
                why = drift.message()
        except psycopg.Error as err:
            why = f"the database cannot be reached or refused: {describe(err)}"
        if time.monotonic() + WAIT_POLL_S > deadline:
            return fail(f"wait-for-schema: gave up after {args.timeout}: {why}")
        logs.log("waiting for schema", reason=why)
        time.sleep(WAIT_POLL_S)


def _contract(conn: psycopg.Connection[Any]) -> str:
    owner = contract.product_owner(conn)
    if owner is None:
        return "  - schema recording_finalize does not exist"
    problems = contract.check(conn, owner)
    return problems.message() if problems else ""


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--timeout", default="15m", metavar="DURATION",
                     help="give up after this long (default 15m)")


COMMAND = Command(
    name="wait-for-schema",
    summary="wait until the database's schema matches this package (an init container)",
    description=(
        "Connects every few seconds and compares the database with the installed package (the\n"
        "drift check of run, then the contract with the service's tables): exits 0 as soon as\n"
        "both hold, so that a new sidecar starts only after the migrate of its version ran.\n"
        "Connect as the worker's login."
    ),
    exits=(
        "exit 1: --timeout passed while the schema still differs (the message says how).\n"
        "exit 2: the database is newer than this package, or the contract with the service's\n"
        "        tables does not hold (waiting will not change either): the message says why."
    ),
    handler=wait_for_schema_command,
    variables=("DATABASE_URL", "RFR_SQL_DIR"),
    add_arguments=_add_arguments,
    for_operators=False,
)
