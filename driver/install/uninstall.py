"""``recording-finalize uninstall [--yes]``: drop what the product owns, nothing else. Group
roles are cluster-wide and the service's GRANTs are the service's: their DROP ROLE and REVOKE
statements are printed, not run."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import psycopg

from .. import adapter, cliutil, contract, logs
from ..config import Settings
from ..drift import query
from . import derive
from .migrate import OWNER_LOGIN
from .service_sql import schema_and_table_owners, sql_ident

LOCK_TIMEOUT = "1s"


@dataclass(frozen=True)
class Plan:
    """What uninstall drops (the role's own objects) and what it leaves, with why."""

    role: str
    schemas: list[str]
    table: str | None
    foreign: list[str]
    #: Others' objects that depend on the product's: uninstall refuses while there are any.
    dependents: list[str]
    database: str

    @property
    def statements(self) -> list[str]:
        """What ``--yes`` runs; the names are the product's own, plain identifiers."""
        return [*(f"drop schema {name} cascade;" for name in self.schemas),
                *([f"drop table {self.table};"] if self.table else []),
                # The baseline revoked EXECUTE from PUBLIC for this role's new functions (its
                # own default privileges in this database): that setting goes with the product.
                "alter default privileges grant execute on functions to public;"]


def plan(conn: psycopg.Connection[Any]) -> Plan:
    """Reads what exists and who owns it; writes nothing."""
    role, database = map(str, conn.execute(query("current_role_and_database")).fetchone()
                         or ("", ""))
    table = f"{contract.SCHEMA}.{contract.PRODUCT_TABLE}"
    owned = contract.owners(conn)
    mine = [name for name, owner in owned.items() if owner == role]
    foreign = [f"{'' if name == table else 'schema '}{name} belongs to {owner}, not {role}: left "
               "alone" for name, owner in owned.items() if owner != role]
    dependents = [f"{row[0]} depends on the product: uninstall would drop it; drop or change "
                  "it first" for row in conn.execute(query("dependents"), {
                      "schemas": list(contract.PRODUCT_SCHEMAS), "schema": contract.SCHEMA,
                      "table": contract.PRODUCT_TABLE})]
    return Plan(role, [name for name in mine if name != table],
                table if table in mine else None, foreign, dependents, database)


def leftovers(role: str, database: str, needs: derive.Needs | None = None,
              owners: tuple[str | None, set[str]] = (None, set())) -> list[str]:
    """What uninstall does not do, as statements for whoever may run them: each takes back
    one part of what ``service-sql grants`` printed (``needs``: derived from a DBA's
    adapter, as service-sql grants derived them; None: the reference adapter's). ``owners``:
    the owner of schema messenger and of the tables ``needs`` reaches, where they are known."""
    lines = ["-- cluster-wide group roles (other databases may use them), as a role with "
             "CREATEROLE:"]
    lines += [f"drop role if exists {name};" for name in contract.GROUP_ROLES]
    role = sql_ident(role)
    schema_owner, table_owners = owners
    if needs is not None and schema_owner is not None and not table_owners <= {schema_owner}:
        # Schema messenger created by the database's owner beside tables another role owns: a
        # REVOKE by a role that is not the grantor takes back nothing, and says only a warning.
        revokes = derive.revoke_lines(needs, role)
        mine = f"revoke all on schema {contract.SCHEMA} from {role};"
        lines += [f"-- the service's GRANTs to {role}, as the owner of schema {contract.SCHEMA} "
                  f"({sql_ident(schema_owner)}):", mine,
                  f"-- as the owner of the service's tables "
                  f"({', '.join(sorted(sql_ident(o) for o in table_owners))}):",
                  *(line for line in revokes if line != mine)]
    elif needs is not None:
        lines.append(f"-- the service's GRANTs to {role}, as the owner of schema "
                     f"{contract.SCHEMA}:")
        lines += derive.revoke_lines(needs, role)
    else:
        lines.append(f"-- the service's GRANTs to {role}, as the owner of schema "
                     f"{contract.SCHEMA}:")
        lines.append(f"revoke all on schema {contract.SCHEMA} from {role};")
        lines += [f"revoke all on {contract.SCHEMA}.{name} from {role};"
                  for name in contract.TABLES]
        # The sequences behind the service's serial keys (only this grantor's grants go).
        lines.append(f"revoke all on all sequences in schema {contract.SCHEMA} from {role};")
    return [*lines, "-- as the owner of the database:",
            f"revoke connect, create on database {sql_ident(database)} from {role};"]


def uninstall_command(args: argparse.Namespace, settings: Settings) -> int:
    with cliutil.connect(settings) as conn:
        what = plan(conn)
        # Read before anything is dropped: the adapter goes with the product's schemas.
        needs = (derive.derive(conn, what.role)
                 if adapter.state(conn) is adapter.State.DBAS else None)
        owners = (schema_and_table_owners(conn, needs) if needs is not None
                  else (None, set[str]()))
        for line in what.foreign:
            print(f"left alone: {line}")
        if what.dependents:
            for line in what.dependents:
                print(f"refused: {line}")
            return cliutil.fail("uninstall refused, nothing was dropped: other objects depend on "
                                "the product's (listed above)", cliutil.EXIT_FAILURE)
        if not what.schemas and not what.table:
            print(f"nothing of recording-finalize-retry is installed here for role {what.role}")
            return cliutil.EXIT_OK
        if needs is not None and adapter.SCHEMA in what.schemas:
            # The adapter is the DBA's own code, not the product's: said before it goes.
            print(f"note: schema {adapter.SCHEMA} holds a DBA's adapter (its views and functions "
                  "were written for this database) and is dropped with the product's schemas; "
                  f"to keep a copy first: pg_dump --schema-only --schema={adapter.SCHEMA} "
                  f"{sql_ident(what.database)}")
        if args.yes:
            with conn.transaction():  # all or nothing
                conn.execute(f"set local lock_timeout = '{LOCK_TIMEOUT}'".encode())
                for statement in what.statements:
                    conn.execute(statement.encode())
    if args.yes:
        logs.log("uninstalled", schemas=what.schemas, table=what.table)
        print("dropped: " + ", ".join([*what.schemas, *([what.table] if what.table else [])]))
    else:
        print("would run (uninstall --yes does it, in one transaction):")
        print("\n".join(f"  {statement}" for statement in what.statements))
    print("not dropped (not the product's to drop here):")
    print("\n".join(f"  {line}" for line in leftovers(what.role, what.database, needs, owners)))
    return cliutil.EXIT_OK


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--yes", action="store_true",
                     help="really drop (without it: list what would be dropped, change nothing)")


COMMAND = cliutil.Command(
    name="uninstall",
    summary="drop everything the product owns (its schemas, recording_finalize_attempts)",
    description=(
        "Without --yes: lists what would be dropped and what is left, changes nothing. With\n"
        "--yes: drops the schemas recording_finalize, recording_finalize_internal,\n"
        "recording_finalize_migrations and recording_finalize_adapter (a DBA's adapter too: it\n"
        "says so first) and the table messenger.recording_finalize_attempts, in\n"
        "one transaction, each only if it belongs to the connecting role; the messenger\n"
        "service's tables, their rows, triggers, indexes and grants are not touched. It refuses\n"
        "while another object depends on the product's. The cluster-wide group roles and the\n"
        "service's GRANTs to the product's owner are printed for whoever may drop them (with\n"
        "a DBA's adapter: derived from it, as service-sql grants derives them).\n"
        "Connect as the product's owner."
    ),
    exits="exit 1: an object of someone else depends on the product's; a database error.",
    handler=uninstall_command,
    variable_help={"DATABASE_URL": OWNER_LOGIN},
    add_arguments=_add_arguments,
    for_operators=False,
)
