"""``recording-finalize service-sql schema|grants --to ROLE|recommended``: SQL for the DBA.

Nothing here connects to a database: it prints what the package ships, so a DBA can read it,
review it and run it as the owner of the service's objects.

- ``schema``: the reference DDL of the contract tables (sql/service/schema.sql), what
  ``migrate --create-service-tables`` creates in a new database;
- ``grants --to ROLE``: the GRANTs that let ROLE (the product's owner) install and run, column by
  column (driver/install/contract.py);
- ``recommended``: optional service-side objects, each with what it buys and what it costs
  (sql/service/recommended.sql); migrate never applies them.
"""

from __future__ import annotations

from pathlib import Path

from . import contract

PARTS = ("schema", "grants", "recommended")


def text(part: str, sql_dir: Path, role: str | None = None) -> str:
    """The SQL of ``part``; ``grants`` needs ``role``. ValueError names what is wrong."""
    if part == "schema":
        return (sql_dir / "service" / "schema.sql").read_text(encoding="utf-8")
    if part == "recommended":
        return (sql_dir / "service" / "recommended.sql").read_text(encoding="utf-8")
    if part == "grants":
        if not role or not role.strip():
            raise ValueError("service-sql grants needs --to ROLE: the role that will own the "
                             "product (the one that runs recording-finalize migrate)")
        return contract.grants_sql(role.strip())
    raise ValueError(f"the part must be one of {', '.join(PARTS)}; got {part!r}")
