"""``recording-finalize rollback --to VERSION [--yes]``: take the product's schema back to what an
earlier release's ``migrate`` expects, keeping the data.

The way back is a command, not a restore: with the worker stopped, each migration newer than the
target is undone by its down step (``sql/migrations/rollback/<id>.sql``, shipped beside it), its
record removed, and every function the target does not ship as it is here is dropped; the
target's own ``migrate`` then creates its functions again. The product's outbox keeps its
events and their published marks, so the older release neither sends them again nor discovers
their recordings as unpublished. What the target ships is read from
``sql/migrations/rollback/<version>.sha256``: a target without that file cannot be reached.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from .. import adapter, cliutil, drift, logs
from ..config import DEFAULT_LOCK_KEY, Settings
from ..drift import query
from .migrate import INTERNAL_PREFIX, MIGRATE_LOCK_KEY, OWNER_LOGIN

ROLLBACK_DIR = Path("migrations") / "rollback"
#: The functions the drift check of every release reads (``schema_state()`` and the
#: fingerprints it calls): kept in place, so the older ``migrate`` still tells the reference
#: adapter from a DBA's. A target whose copies differ cannot be reached by dropping them.
BOOKKEEPING = ("recording_finalize.schema_state.sql",
               "recording_finalize_internal.function_fingerprint.sql",
               "recording_finalize_internal.adapter_fingerprint.sql")
#: ``--to previous``: the release before this one (the newest record), for a manifest that does
#: not name versions.
PREVIOUS = "previous"
#: Releases whose migrate asks for CREATE on the database on every run, even with nothing to
#: create (later releases look for what they would create first, install step 6).
MIGRATE_NEEDS_CREATE_ON_DATABASE = frozenset({"0.4.1"})
#: The migration that brought the republish hold and, with it, the time from which
#: service_events remembers (service_events_remembered_from): a release before it republishes
#: every Available recording of its window that service_events does not show.
REPUBLISH_HOLD_MIGRATION = "0004_republish_hold"
LOCK_TIMEOUT_MS = 1000
STATEMENT_TIMEOUT_MS = 60_000
LOCK_TRIES = 5


class Refused(RuntimeError):
    """Nothing was written; the message says why and what to do."""


class NotReached(RuntimeError):
    """The transaction was rolled back: the target's drift check would still refuse."""


@dataclass(frozen=True)
class Release:
    """What an earlier release ships (``<version>.sha256``): file → sha256, by kind."""

    version: str
    migrations: dict[str, str]
    functions: dict[str, str]
    adapter: str | None

    @property
    def schema_version(self) -> str:
        return max(self.migrations, default="-")


def known_targets(sql_dir: Path) -> list[str]:
    return sorted((p.name.removesuffix(".sha256") for p in (sql_dir / ROLLBACK_DIR).glob(
        "*.sha256")), key=drift.version_key)


def release(sql_dir: Path, version: str) -> Release:
    """The record of ``version``, or of the newest release this package can reach for
    ``previous``."""
    known = known_targets(sql_dir)
    if version == PREVIOUS and known:
        version = known[-1]
    path = sql_dir / ROLLBACK_DIR / f"{version}.sha256"
    if not path.is_file():
        raise Refused(f"this package does not know how to reach recording-finalize {version}: "
                      f"it can roll back to {', '.join(known) or 'none'}. Roll back to one of "
                      "those, with this package; a version it does not list needs its own way "
                      "back")
    files: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            sha, name = line.split(maxsplit=1)
            files[name.strip()] = sha
    return Release(
        version,
        {Path(n).stem: s for n, s in files.items() if n.startswith("migrations/")},
        {Path(n).name: s for n, s in files.items() if n.startswith("functions/")},
        files.get("adapter/reference.sql"))


@dataclass
class Plan:
    """What ``--yes`` does, in one transaction."""

    target: Release
    #: Newest first: (migration id, its down step's text).
    undo: list[tuple[str, str]] = field(default_factory=list)
    #: DROP FUNCTION names (regprocedure), and the function files whose records go.
    drop: list[str] = field(default_factory=list)
    forget: list[str] = field(default_factory=list)
    #: (migration id, the target's sha256): a migration both ship, recorded with this package's
    #: amended text; its record goes back to the target's.
    restore: list[tuple[str, str]] = field(default_factory=list)
    #: The reference adapter, recorded with this package's text of the same statements: its
    #: record goes back to the target's text (None: nothing to restore).
    restore_adapter: str | None = None
    #: With the target's SQL (--target-sql): (function file, its text) created after the down
    #: steps and recorded as the target's migrate records them, internal helpers first.
    create: list[tuple[str, str]] = field(default_factory=list)


def plan(conn: psycopg.Connection[Any], sql_dir: Path, target: Release,
         target_sql: Path | None = None) -> Plan:
    """Reads what migrate left and decides; writes nothing. Refused: the target is not
    reachable from this database with this package. ``target_sql``: the target release's SQL
    tree, whose function files (checked against the record) are created in the same
    transaction, so that no caller of the product's functions ever finds one missing."""
    state = drift.read_state(conn)
    if state is None:
        raise Refused("this database holds no recording_finalize.schema_state(): nothing of "
                      "the product was migrated here, there is nothing to roll back")
    problems: list[str] = []
    missing = sorted(set(target.migrations) - set(state.migrations))
    if missing:
        problems.append(f"the database lacks migration(s) {', '.join(missing)} of "
                        f"{target.version}: it is older than the target, run its migrate instead")
    result = Plan(target)
    ours = drift.shipped(sql_dir).migrations
    for name in sorted(set(target.migrations) & set(state.migrations)):
        applied, theirs = state.migrations[name], target.migrations[name]
        if applied in (None, theirs):
            continue
        if applied == ours.get(name):
            # This package's text of a migration the target applied in another (a comment or a
            # step amended after it landed, which this package's migrate took for the same
            # migration and recorded): the target's migrate must find its own text recorded.
            result.restore.append((name, theirs))
        else:
            problems.append(f"migration {name} was applied from another file than "
                            f"{target.version}'s: this database's history is not the target's")
    for name in sorted(set(state.migrations) - set(target.migrations), reverse=True):
        down = sql_dir / ROLLBACK_DIR / f"{name}.sql"
        if not down.is_file():
            problems.append(f"migration {name} has no down step in this package "
                            f"({ROLLBACK_DIR / (name + '.sql')}): it was applied by a package "
                            "newer than this one, or its down step was never written; roll "
                            "back with the package that applied it")
            continue
        result.undo.append((name, down.read_text(encoding="utf-8")))
    if target.adapter is not None and state.adapter_sha256 not in (None, target.adapter):
        shipped = sql_dir / adapter.REFERENCE_FILE
        if shipped.is_file() and adapter.same_reference(
                state.adapter_sha256, target.adapter, shipped.read_text(encoding="utf-8")):
            result.restore_adapter = target.adapter
        else:
            problems.append(f"the reference adapter was upgraded since {target.version} and "
                            "rollback does not take an adapter back")
    # A function file applied here from other text than the target's (or not at all).
    recorded = {file: record.sha256 for file, record in state.functions.items()}
    changed = {file for file in {*recorded, *target.functions}
               if target.functions.get(file) != recorded.get(file)}
    for identity, file in conn.execute(query("rollback_product_functions")):
        if file not in target.functions or file in changed:
            result.drop.append(str(identity))
    if target_sql is not None:
        result.create = _target_functions(target_sql, target, sorted(changed & set(
            target.functions)), problems)
    # A file created here gets the target's record instead.
    result.forget = sorted(changed & set(recorded) - {file for file, _ in result.create})
    if kept := sorted(set(BOOKKEEPING) & changed & set(recorded)):
        problems.append(f"{', '.join(kept)} changed since {target.version}: the drift check's "
                        "own functions cannot be dropped, so this rollback cannot reach it")
    if problems:
        raise Refused("rollback refused, nothing was written:\n"
                      + "\n".join(f"  - {p}" for p in problems))
    return result


def _target_functions(target_sql: Path, target: Release, files: list[str],
                      problems: list[str]) -> list[tuple[str, str]]:
    """The target's text of each function file, as its release shipped it (sha256 as in this
    package's record of it), internal helpers first (migrate's order)."""
    texts: list[tuple[str, str]] = []
    for file in sorted(files, key=lambda f: (not f.startswith(INTERNAL_PREFIX), f)):
        path = target_sql / "functions" / file
        if not path.is_file():
            problems.append(f"--target-sql {target_sql} has no functions/{file}: not the SQL "
                            f"tree of recording-finalize {target.version}")
        elif drift.sha256_file(path) != target.functions[file]:
            problems.append(f"--target-sql {target_sql}: functions/{file} is not the file "
                            f"recording-finalize {target.version} shipped (sha256 differs)")
        else:
            texts.append((file, path.read_text(encoding="utf-8")))
    return texts


def apply(conn: psycopg.Connection[Any], what: Plan) -> None:
    """One transaction: the functions, the down steps newest first with their records, the
    version.
    Retried when a lock is not granted (a service transaction holding a table a down step
    alters), as migrate retries."""
    for attempt in range(1, LOCK_TRIES + 1):
        try:
            with conn.transaction():
                conn.execute(query("migrate_timeouts"),
                             (f"{LOCK_TIMEOUT_MS}ms", f"{STATEMENT_TIMEOUT_MS}ms"))
                # The functions first: a function may depend on what a down step drops (a
                # SQL-standard body, a column's type), never the other way round.
                for identity in what.drop:
                    conn.execute(f"drop function {identity}".encode())
                conn.execute(query("rollback_forget_functions"), (what.forget,))
                for name, text in what.undo:
                    # No parameters: the simple protocol, which takes many statements.
                    conn.execute(text.encode())
                    conn.execute(query("rollback_forget_migration"), {"id": name})
                for name, sha in what.restore:
                    conn.execute(query("rollback_restore_checksum"), (sha, name))
                if what.restore_adapter is not None:
                    conn.execute(query("rollback_restore_adapter"), (what.restore_adapter,))
                for file, text in what.create:
                    conn.execute(text.encode())
                    conn.execute(query("record_function"), {
                        "file": file, "sha256": what.target.functions[file],
                        "version": what.target.version})
                conn.execute(query("rollback_record_state"),
                             (what.target.schema_version, what.target.version))
                _check_reached(conn, what.target)
            return
        except (pg_errors.LockNotAvailable, pg_errors.DeadlockDetected):
            if attempt == LOCK_TRIES:
                raise
            time.sleep(0.25 * 2 ** (attempt - 1))


def _check_reached(conn: psycopg.Connection[Any], target: Release) -> None:
    """Before the commit: the target's drift check would let its migrate in."""
    package = drift.Shipped(Path("."), target.version, target.migrations, target.functions,
                            target.schema_version)
    comparison = drift.compare(package, drift.read_state(conn) or drift.DbState({}))
    if comparison.migrate_refuses:
        raise NotReached(f"rollback would not reach {target.version}, so it wrote nothing: "
                         f"{comparison.message()}")


def _hold_locks(conn: psycopg.Connection[Any]) -> None:
    """migrate's lock and the worker's runner lock, held for the whole run; a worker session
    still connected is refused."""
    if conn.execute(query("try_migrate_lock"), (MIGRATE_LOCK_KEY,)).fetchone() != (True,):
        raise Refused("rollback refused, nothing was written: a migrate is running; wait for it")
    if conn.execute(query("rollback_try_runner_lock"), (DEFAULT_LOCK_KEY,)).fetchone() != (True,):
        raise Refused("rollback refused, nothing was written: a worker's cycle is running. "
                      "Stop the worker first (kubectl scale deployment/recording-finalize-retry "
                      "--replicas=0)")
    sessions = conn.execute(query("rollback_worker_sessions")).fetchall()
    if sessions:
        raise Refused("rollback refused, nothing was written: the worker is still connected "
                      "(stop it first: kubectl scale deployment/recording-finalize-retry "
                      "--replicas=0):\n" + "\n".join(
                          f"  - pid {pid}, login {user}, {app or 'no application_name'}, "
                          f"from {addr or 'a local socket (or an address this login may not see)'}"
                          for pid, user, app, addr in sessions))


def rollback_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        target = release(settings.sql_dir, args.to)
    except Refused as err:
        return cliutil.fail(str(err), cliutil.EXIT_USAGE, redact=False)
    with cliutil.connect(settings) as conn:
        try:
            _hold_locks(conn)
            what = plan(conn, settings.sql_dir, target, args.target_sql)
            if args.yes:
                apply(conn, what)
            events, published, rows = conn.execute(query("rollback_kept")).fetchone() or (
                0, 0, 0)
            database, owner, may_create = conn.execute(
                query("rollback_may_create_database")).fetchone() or ("", "", True)
        except Refused as err:
            return cliutil.fail(str(err), cliutil.EXIT_USAGE, redact=False)
        except NotReached as err:
            return cliutil.fail(str(err), cliutil.EXIT_FAILURE, redact=False)
        except pg_errors.InsufficientPrivilege as err:
            # Its one transaction rolled back: a login other than the product's owner.
            return cliutil.fail(f"rollback refused, nothing was written: "
                                f"{err.diag.message_primary or err}: connect as the product's "
                                "owner (the role migrate runs as)", cliutil.EXIT_USAGE)
        finally:
            conn.execute(query("migrate_unlock"), (MIGRATE_LOCK_KEY,))
            conn.execute(query("rollback_runner_unlock"), (DEFAULT_LOCK_KEY,))
    undone = [name for name, _ in what.undo]
    if args.yes:
        logs.log("rolled back", target=target.version, migrations=undone,
                 functionsDropped=len(what.drop))
    print(("rolled back to" if args.yes else "would roll back to (rollback --yes does it, in one "
           "transaction):") + f" recording-finalize {target.version} (schema "
          f"{target.schema_version})")
    print("  migrations undone (down steps, newest first): "
          + (", ".join(undone) if undone else "none"))
    print(f"  functions dropped: {len(what.drop)}"
          + (f" ({', '.join(what.drop)})" if what.drop else ""))
    if what.create:
        print(f"  {target.version}'s function files created (from --target-sql, checked against "
              f"their sha256): {len(what.create)}")
    elif what.forget:
        print(f"  {target.version}'s functions: not created (no --target-sql); until its migrate "
              "creates them, the service's calls of the product's functions fail")
    if what.restore:
        print(f"  migration records back to {target.version}'s text: "
              + ", ".join(name for name, _ in what.restore))
    if what.restore_adapter is not None:
        print(f"  the reference adapter kept: its record back to {target.version}'s text of the "
              "same statements")
    print(f"  kept: the product's outbox ({events} events, {published} of them published, "
          f"marks kept) and {rows} finalize rows")
    if REPUBLISH_HOLD_MIGRATION in undone:
        # The marks keep the product's own events from going out twice, not the service's: an
        # outbox that deletes what it delivered (or keeps it for a retention) shows the older
        # release Available recordings without an event, and it neither holds nor stops at
        # what service_events forgot.
        print(f"  caution: {target.version} never holds republishing and does not know how far "
              "service_events remembers: every recording its window reaches that service_events "
              "does not show gets an event, a second one where the service's outbox forgot what "
              "it delivered. Where it keeps it for a retention (CAP's day), run that release's "
              "worker with RFR_REPUBLISH_WINDOW below the retention minus the SLA; where it "
              "shows pending events only (published_at the constant NULL), no window of that "
              "release avoids it (it refuses 0)")
    if args.yes:
        print(f"next: deploy recording-finalize {target.version} (its migrate first, then the "
              "worker); until then no worker may run"
              + (f" ({target.version}'s migrate finds nothing left to do)" if what.create
                 else ""))
        if not may_create and target.version in MIGRATE_NEEDS_CREATE_ON_DATABASE:
            # Its migrate asks for CREATE on the database whatever it finds to do, and exits 1
            # with a raw "permission denied for database" without it (install step 6 took it).
            print(f"  {target.version}'s migrate needs CREATE on the database even with "
                  "nothing to create, and this login has none (install step 6 took it back): "
                  f"as the database's owner, `grant create on database {database} to {owner};` "
                  f"for that run and `revoke create on database {database} from {owner};` "
                  "after it; without it that migrate exits 1 (permission denied for database)")
    return cliutil.EXIT_OK


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--to", required=True, metavar="VERSION",
                     help="the earlier release to go back to, or `previous` (the release before "
                     "this one); this package lists the ones it can reach when asked for another")
    cmd.add_argument("--yes", action="store_true",
                     help="really roll back (without it: print what it would do, change nothing)")
    cmd.add_argument("--target-sql", type=Path, metavar="DIR",
                     help="the target release's SQL tree (the recording_finalize/sql folder its "
                     "wheel or image installs): its function files, checked against their "
                     "sha256, are created in the same transaction, so the service's calls of "
                     "the product's functions never fail and the target's migrate has nothing "
                     "left to do; without it they fail from here until that migrate has run")


COMMAND = cliutil.Command(
    name="rollback",
    summary="take the product's schema back to an earlier release's, keeping its data",
    description=(
        "The way back to the previous release, with the worker stopped (scaled to 0):\n"
        "  1. recording-finalize rollback --to VERSION          (this release: prints the plan)\n"
        "  2. recording-finalize rollback --to VERSION --yes    (this release: does it)\n"
        "  3. deploy VERSION: its migrate (re-creates its functions), then its worker.\n"
        "With --target-sql DIR (VERSION's own SQL tree), step 2 creates VERSION's functions\n"
        "too: the service's calls never fail, and VERSION's migrate finds nothing to do.\n"
        "In one transaction, under migrate's lock and the worker's runner lock: drops every\n"
        "function of the product that VERSION does not ship as it is here, runs the down step\n"
        "of each migration newer than VERSION (sql/migrations/rollback/<id>.sql, newest first)\n"
        "and removes its record, and records VERSION's schema version, so that VERSION's\n"
        "migrate and drift check accept the database. Keeps the data: the product's outbox\n"
        "with its published marks (nothing published is sent again, and no recording is\n"
        "discovered as unpublished), the finalize rows, incidents, the audit. Never touches\n"
        "the service's tables or the adapter. Connect as the product's owner (migrate's role)."
    ),
    exits=(
        "exit 2: refused, nothing written: VERSION is not one this package can reach (it lists\n"
        "        those it can), a migration has no down step here, the database's history is not\n"
        "        VERSION's, a worker is connected or running, or a migrate runs.\n"
        "exit 1: a down step failed (a lock not granted in 5 tries, an object of someone else\n"
        "        that depends on a dropped function): rolled back, nothing written."
    ),
    handler=rollback_command,
    variable_help={"DATABASE_URL": OWNER_LOGIN},
    variables=("DATABASE_URL", "RFR_SQL_DIR"),
    flags=("RFR_SQL_DIR",),
    add_arguments=_add_arguments,
    for_operators=False,
)
