"""``recording-finalize wait-for-schema``: wait until the database matches this package (a
Kubernetes init container: what ``run`` asks at start, the drift check and the contract).
"""

from __future__ import annotations

import argparse
import time

import psycopg

from .. import contract, logs
from ..cliutil import EXIT_OK, EXIT_USAGE, Command, connect, fail
from ..config import Settings, parse_duration
from ..db import NOT_MIGRATED_SQLSTATES, database_target, refusal, server_message
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
    target = database_target(settings)
    deadline = time.monotonic() + timeout
    why = "not checked yet"
    while True:
        try:
            with connect(settings) as conn:
                drift = schema_drift(conn, package)
                if drift.migrate_refuses:  # no migrate of this package will change it
                    return fail(f"wait-for-schema: {drift.message()}", EXIT_USAGE)
                if drift.matches:  # then schema_state() exists, and the product's owner
                    problems = contract.check(conn, contract.product_owner(conn) or "")
                    if problems:
                        return fail("wait-for-schema: the schema matches, but the contract "
                                    "with the service's tables does not hold:\n"
                                    f"{problems.message()}", EXIT_USAGE)
                    print(f"schema {package.schema_version} matches recording-finalize "
                          f"{package.version}")
                    return EXIT_OK
                why = drift.message()
        except psycopg.Error as err:
            meaning = refusal(err)
            if meaning is not None and err.sqlstate not in NOT_MIGRATED_SQLSTATES:
                # A wrong password, a missing grant or database: no wait mends it, and a pod
                # held in Init:0/1 says nothing of why; run refuses them the same way.
                logs.log("wait-for-schema refused", level="error", error=describe(err),
                         database=target, message=meaning)
                return fail(f"wait-for-schema: the database at {target} refused the login: "
                            f"{meaning}. The server said: {server_message(err)}", EXIT_USAGE)
            why = meaning or (f"the database at {target} cannot be reached: "
                              f"{server_message(err)}")
        if time.monotonic() + WAIT_POLL_S > deadline:
            return fail(f"wait-for-schema: gave up after {args.timeout}: {why}")
        logs.log("waiting for schema", reason=why)
        time.sleep(WAIT_POLL_S)


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
        "exit 1: --timeout passed while the database could not be reached or its schema still\n"
        "        differs (the message says how).\n"
        "exit 2: at once, for what waiting will not change: a wrong password, a login without\n"
        "        the recording_finalize_worker grant, a database that does not exist, a database\n"
        "        newer than this package, or a broken contract with the service's tables; the\n"
        "        message names the cause and the fix."
    ),
    handler=wait_for_schema_command,
    variables=("DATABASE_URL", "RFR_SQL_DIR"),
    add_arguments=_add_arguments,
    for_operators=False,
)
