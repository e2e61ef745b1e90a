"""``recording-finalize wait-for-schema``: wait until the database matches this package (a
Kubernetes init container: what ``run`` asks at start, the drift check and the contract).
"""

from __future__ import annotations

import argparse
import time

import psycopg

from .. import cliutil, contract, db, logs
from ..config import Settings, parse_duration
from ..drift import schema_drift, shipped
from ..errors import describe

WAIT_POLL_S = 5.0


def wait_for_schema_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        timeout = parse_duration(args.timeout, days=True)
    except ValueError:
        return cliutil.fail(f"--timeout must be a duration (90, 5m, 1h); got {args.timeout!r}",
                            cliutil.EXIT_USAGE)
    package = shipped(settings.sql_dir)
    target = db.database_target(settings)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with cliutil.connect(settings) as conn:
                drift = schema_drift(conn, package)
                if drift.migrate_refuses:  # no migrate of this package will change it
                    return cliutil.fail(f"wait-for-schema: {drift.message()}",
                                        cliutil.EXIT_USAGE)
                if drift.matches:  # then schema_state() exists, and the product's owner
                    problems = contract.check(conn, contract.product_owner(conn) or "")
                    if problems:
                        return cliutil.fail("wait-for-schema: the schema matches, but the "
                                            "contract with the service's tables does not hold:\n"
                                            f"{problems.message()}", cliutil.EXIT_USAGE)
                    print(f"schema {package.schema_version} matches recording-finalize "
                          f"{package.version}")
                    return cliutil.EXIT_OK
                why = drift.message()
        except psycopg.Error as err:
            meaning = db.refusal(err)
            if meaning is not None and err.sqlstate not in db.NOT_MIGRATED_SQLSTATES:
                # A wrong password, a missing grant or database: no wait mends it, and a pod
                # held in Init:0/1 says nothing of why; run refuses them the same way.
                logs.log("wait-for-schema refused", level="error", error=describe(err),
                         database=target, message=meaning)
                return cliutil.fail(f"wait-for-schema: the database at {target} refused the "
                                    f"login: {meaning}. The server said: "
                                    f"{db.server_message(err)}", cliutil.EXIT_USAGE)
            why = meaning or (f"the database at {target} cannot be reached: "
                              f"{db.server_message(err)}")
        if time.monotonic() + WAIT_POLL_S > deadline:
            return cliutil.fail(f"wait-for-schema: gave up after {args.timeout}: {why}")
        logs.log("waiting for schema", reason=why)
        time.sleep(WAIT_POLL_S)


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--timeout", default="15m", metavar="DURATION",
                     help="give up after this long (default 15m)")


COMMAND = cliutil.Command(
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
