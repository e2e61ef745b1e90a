"""The schema drift check: does the database hold the SQL this package ships?

``migrate`` records the sha256 of every file it applied and a fingerprint of the live functions;
``compare`` tells a matching schema from an older or hand-edited one (run ``migrate``) and a
newer one (upgrade the package). A core module: ``run``, ``status`` and ``/readyz`` ask it too.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from . import __version__, queries
from .config import packaged_sql_dir


def package_version() -> str:
    try:
        return metadata.version("recording-finalize-retry")
    except metadata.PackageNotFoundError:
        return __version__


def version_key(version: str | None) -> tuple[int, ...]:
    """``"0.10.2"`` → ``(0, 10, 2)``, for "which package is newer". Anything after the numbers
    (pre-release, local tags) is ignored; no version sorts first."""
    match = re.match(r"\s*v?([0-9]+(?:\.[0-9]+)*)", version or "")
    numbers = [int(n) for n in match.group(1).split(".")] if match else []
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def package_sql(path: str) -> str:
    """A file of this package's SQL tree, whatever RFR_SQL_DIR says: the driver's own queries and
    the grant script its contract check reads."""
    sql_dir = packaged_sql_dir()
    if sql_dir is None:
        raise RuntimeError("the installed package ships no sql/ directory")
    return (sql_dir / path).read_text(encoding="utf-8")


@functools.cache
def _queries() -> dict[str, bytes]:
    text = package_sql("service/queries.sql")
    return {m[1]: m[2].encode() for m in re.finditer(
        r"^-- name: (\w+)\n(.*?)(?=^-- name: |\Z)", text, re.M | re.S)}


def query(name: str) -> bytes:
    """A query of sql/service/queries.sql (bytes: psycopg's type for a query read at run time)."""
    return _queries()[name]


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: Migrations amended after they landed: migration id -> {a sha256 an earlier text of the file
#: had: why it changed}. A database that applied that earlier text matches the file as it is
#: (``same_migration``), and migrate records the file's sha256 in place of the earlier one. Only
#: for a change that leaves every install right as it is: comments, or a step taken out that an
#: install must not run again (it never runs twice: yoyo knows a migration by its id). Anything
#: else goes into a new migration.
AMENDED_MIGRATIONS: dict[str, dict[str, str]] = {
    "0001_baseline": {
        "980bc87fa81cbe02623d8836f1e84b9bade1ebd015935738a5526114c4ec9d86":
            "comments only: they cited documents the repository does not ship",
    },
    "0002_own_outbox": {
        "5ba8309575854eaaa0c45e8ce40f1a738f3b691818aaa629157305a3d2b17cc2":
            "the copy of a 0.2.x install's pending events out of the service's outbox is gone: "
            "it read the service's table under the reference schema's columns (a service whose "
            "own outbox had that table's name and other columns failed with 42703), and "
            "each copied event stayed pending in both outboxes (a rollback published it "
            "twice); comments that cited documents the repository does not ship",
    },
    "0004_republish_hold": {
        "ac7394a33507a9c063a76598e65a6054bcf15e5d90baf3e1a629cc33ca8f9847":
            "the drop of enqueue_available's previous signature moved into its function file, "
            "into the transaction that creates the new one: the service's ingest callback no "
            "longer finds no function while migrate runs",
    },
}


def same_migration(migration_id: str, recorded: str, shipped_sha: str) -> bool:
    """Whether a migration applied with sha256 ``recorded`` is the file shipped now."""
    return recorded == shipped_sha or recorded in AMENDED_MIGRATIONS.get(migration_id, {})


@dataclass(frozen=True)
class Shipped:
    """The SQL of the package: migration id → sha256, function file name → sha256."""

    sql_dir: Path
    version: str
    migrations: dict[str, str]
    functions: dict[str, str]
    schema_version: str


def shipped_schema_version(sql_dir: Path) -> str:
    """The id of the last migration under ``sql_dir`` ("-" when there is none)."""
    return max((p.stem for p in (sql_dir / "migrations").glob("*.sql")), default="-")


def shipped(sql_dir: Path) -> Shipped:
    migrations = {p.stem: sha256_file(p) for p in sorted((sql_dir / "migrations").glob("*.sql"))}
    functions = {p.name: sha256_file(p) for p in sorted((sql_dir / "functions").glob("*.sql"))}
    return Shipped(sql_dir, package_version(), migrations, functions,
                   max(migrations, default="-"))


@dataclass(frozen=True)
class DbState:
    """What ``migrate`` left in a database (``recording_finalize.schema_state()``)."""

    migrations: dict[str, str | None]
    functions: dict[str, queries.SchemaStateRow] = field(default_factory=dict)
    schema_version: str | None = None
    package_version: str | None = None
    #: The sha256 of the reference adapter's file that migrate installed (None: a DBA's).
    adapter_sha256: str | None = None


def read_state(conn: queries.Connection) -> DbState | None:
    """None without ``recording_finalize.schema_state()``: never migrated, or by a package that
    did not record its schema."""
    if not queries.has_schema_state(conn):
        return None
    rows = queries.schema_state(conn)
    last = {r.kind: r for r in rows if r.kind in ("migrate", "adapter")}
    migrate, adapter = last.get("migrate"), last.get("adapter")
    return DbState({r.name: r.sha256 for r in rows if r.kind == "migration"},
                   {r.name: r for r in rows if r.kind == "function"},
                   None if migrate is None else migrate.name,
                   None if migrate is None else migrate.package_version,
                   None if adapter is None else adapter.sha256)


@dataclass(frozen=True)
class SchemaDrift:
    """The comparison of a database with the package. ``newer`` is the side that is ahead
    ("database" or "package") when one is, or "history": the database holds a migration history
    this package does not continue (the history before a baseline reset, CHANGELOG.md)."""

    package: Shipped
    database_schema_version: str | None
    database_package_version: str | None
    differences: list[str]
    newer: str | None = None

    @property
    def matches(self) -> bool:
        return not self.differences

    @property
    def database_is_newer(self) -> bool:
        return self.newer == "database"

    @property
    def older_history(self) -> bool:
        return self.newer == "history"

    @property
    def migrate_refuses(self) -> bool:
        """No migrate of this package may touch the database."""
        return self.newer in ("database", "history")

    def message(self, limit: int = 5) -> str:
        """One line: what differs and what to do."""
        ours = f"recording-finalize {self.package.version} (schema {self.package.schema_version})"
        if self.matches:
            return f"the database schema matches {ours}"
        shown = "; ".join(self.differences[:limit])
        if len(self.differences) > limit:
            shown += f"; and {len(self.differences) - limit} more"
        theirs = (f"recording-finalize {self.database_package_version or '?'} (schema "
                  f"{self.database_schema_version or '?'})")
        if self.database_is_newer:
            return (f"the database is newer than this package: it was migrated by {theirs}, "
                    f"this is {ours}: {shown}; an old pod of a rollout: the new release "
                    "replaces it; else upgrade the package (the way back is the newer "
                    "package's `recording-finalize rollback`)")
        if self.older_history:
            return (f"the database holds a migration history that {ours} does not continue: "
                    f"it was migrated by {theirs}, and the package's history was reset to a new "
                    f"baseline since: {shown}; migrate cannot move it forward: move the install "
                    "as CHANGELOG.md says at the version that reset the history (`Migration "
                    "history reset`)")
        side = " (the package is newer than the database)" if self.newer == "package" else ""
        return (f"the database schema does not match {ours}{side}: {shown}; "
                "run `recording-finalize migrate`")


def _names(items: Iterable[str]) -> str:
    return ", ".join(sorted(items))


def compare(package: Shipped, state: DbState) -> SchemaDrift:
    newer, differences = _migration_differences(package, state)
    differences += [difference for file, sha in sorted(package.functions.items())
                    if (difference := function_difference(file, sha, state.functions.get(file)))]
    if unknown := set(state.functions) - set(package.functions):
        differences.append(f"it has function file(s) {_names(unknown)} that this package "
                           "does not ship")
    return SchemaDrift(package, state.schema_version, state.package_version, differences, newer)


def _migration_differences(package: Shipped, state: DbState) -> tuple[str | None, list[str]]:
    """Which side is newer (or "history"), and how the migrations differ."""
    differences: list[str] = []
    newer: str | None = None
    extra = set(state.migrations) - set(package.migrations)
    if extra and not set(state.migrations) & set(package.migrations) and package.migrations \
            and version_key(state.package_version) < version_key(package.version):
        # Nothing in common, applied by an older package: the history before a reset.
        newer = "history"
        differences.append(f"it has the migration(s) {_names(extra)} of an older history, "
                           "none of which this package ships")
    elif extra:
        newer = "database"
        differences.append(f"it has migration(s) {_names(extra)} that this package does not "
                           "ship")
    if version_key(state.package_version) > version_key(package.version):
        newer = "database"
        differences.append(f"it was last migrated by the newer recording-finalize "
                           f"{state.package_version}")
    missing = set(package.migrations) - set(state.migrations)
    if missing:
        newer = newer or "package"
        differences.append(f"migration(s) {_names(missing)} not applied")
    for migration_id in sorted(set(package.migrations) & set(state.migrations)):
        recorded = state.migrations[migration_id]
        if recorded is None:
            differences.append(f"migration {migration_id} has no recorded checksum")
        elif not same_migration(migration_id, recorded, package.migrations[migration_id]):
            differences.append(f"migration file {migration_id}.sql differs from the one "
                               "that was applied")
    return newer, differences


def function_difference(file: str, sha: str, record: queries.SchemaStateRow | None
                        ) -> str | None:
    """How function file ``file`` differs from what migrate recorded; None: it does not (then
    migrate leaves it alone)."""
    if record is None:
        return f"function file {file} was never applied"
    if record.sha256 != sha:
        return (f"function file {file} differs from the one migrate applied"
                + (f" (by recording-finalize {record.package_version})"
                   if record.package_version else ""))
    if record.live_md5 is None:
        return f"the function of {file} is missing from the database"
    if record.live_md5 != record.recorded_md5:
        return f"the function of {file} was changed in the database after migrate applied it"
    return None


def schema_drift(conn: queries.Connection, package: Shipped) -> SchemaDrift:
    state = read_state(conn)
    if state is None:
        return SchemaDrift(package, None, None, [
            "it has no recording_finalize.schema_state(): it was never migrated, or by a "
            "package older than this one"], newer="package")
    return compare(package, state)

