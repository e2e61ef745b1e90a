"""Schema drift and migrate's bookkeeping, and migrate behind an open writer transaction.

``run``/``run-once`` refuse (exit 2, "run `recording-finalize migrate`") a database whose applied
migrations or function definitions differ from the installed package, and say which side is
newer; ``status`` shows it; an older package's ``migrate`` never rolls a newer schema back; a
migration file changed after it was applied is refused by ``migrate``; yoyo's tables live in
their own schema (and an old deployment's are moved out of ``public``).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import shutil
import subprocess
import tarfile
import threading
import time
import uuid
from pathlib import Path

import psycopg
from conftest import (
    CLI,
    REPO,
    Db,
    Stack,
    Template,
    Worker,
    _admin,
    _base_env,
    consume,
    planted_body,
    put_binary,
    seed_stuck,
)
from kube import load_release
from recording_finalize import drift

META = "recording_finalize_migrations"


def migrate(db: Db, *, sql_dir: Path | None = None, timeout: float = 120
            ) -> subprocess.CompletedProcess[str]:
    """``recording-finalize migrate`` as the product's owner (the role that owns its schemas)."""
    env = _base_env() | {"DATABASE_URL": db.schema_owner_url}
    if sql_dir is not None:
        env["RFR_SQL_DIR"] = str(sql_dir)
    return subprocess.run([CLI, "migrate"], env=env, capture_output=True, text=True,
                          timeout=timeout)


def fingerprint(db: Db, file: str) -> str:
    row = db.one("select recording_finalize_internal.function_fingerprint(%s)", (file,))
    assert row is not None and row[0]
    return str(row[0])


def sql_copy(tmp_path: Path) -> Path:
    target = tmp_path / "sql"
    shutil.copytree(REPO / "sql", target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def assert_refused(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == "" or "claimed" not in proc.stdout  # no cycle ran
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)


def test_a_matching_schema_runs_and_status_says_it_matches(
    worker: Worker, operator: Worker, db: Db
) -> None:
    summary = worker.run_once()
    assert summary["error"] is None
    status = json.loads(operator.cli("status", "--json").stdout)["schema"]
    last = max(p.stem for p in (REPO / "sql" / "migrations").glob("*.sql"))
    assert status["matches"] is True and status["differences"] == []
    assert status["database"] == status["package"] == last
    text = operator.cli("status").stdout.splitlines()[0]
    assert text.startswith("schema version") and last in text and text.endswith("matches")


def test_an_old_function_body_planted_by_hand_is_refused_until_migrate(
    worker: Worker, operator: Worker, db: Db
) -> None:
    rid = seed_stuck(db).recording_id
    put_binary(worker.stack, worker.bucket, rid)
    # A hand "hotfix": the body of stats changes, its signature stays.
    definition = db.one("select pg_get_functiondef('recording_finalize.stats(text)'::regprocedure)"
                        )[0]
    with db.connect() as conn:
        conn.execute(planted_body(definition, "hotfix by hand"))
    proc = worker.cli("run-once")
    assert_refused(proc, "recording_finalize.stats.sql", "changed in the database",
                   "run `recording-finalize migrate`")
    # Nothing was touched before the refusal.
    assert db.one("select attempts from messenger.recording_finalize_attempts "
                  "where recording_id = %s", (rid,)) == (0,)
    status = json.loads(operator.cli("status", "--json").stdout)["schema"]
    assert status["matches"] is False and status["databaseIsNewer"] is False
    assert any("recording_finalize.stats.sql" in d for d in status["differences"])

    fixed = migrate(db)
    assert fixed.returncode == 0, fixed.stderr
    assert "function files applied: 1," in fixed.stdout  # only the drifted one
    assert worker.run_once()["reconciled"] == 1


def test_a_missing_migration_is_refused_and_migrate_applies_it(worker: Worker, db: Db) -> None:
    last = max(p.stem for p in (REPO / "sql" / "migrations").glob("*.sql"))
    # As if the package shipped one more migration than the database has: forget the last one
    # and undo what it did.
    with db.connect() as conn:
        conn.execute(f"delete from {META}._yoyo_migration where migration_id = %s", (last,))
    proc = worker.cli("run-once")
    assert_refused(proc, f"migration(s) {last} not applied",
                   "the package is newer than the database", "run `recording-finalize migrate`")


def test_a_database_newer_than_the_package_is_refused_and_never_rolled_back(
    worker: Worker, operator: Worker, db: Db
) -> None:
    # A newer package migrated this database: one more migration and a changed function.
    with db.connect() as conn:
        conn.execute(f"insert into {META}._yoyo_migration (migration_hash, migration_id, "
                     "applied_at_utc) values ('f' || md5('9999'), '9999_from_the_future', now())")
        conn.execute(f"update {META}.migrate_state set package_version = '99.0.0', "
                     "schema_version = '9999_from_the_future'")
    status = json.loads(operator.cli("status", "--json").stdout)["schema"]
    assert status["databaseIsNewer"] is True and status["migratedBy"] == "99.0.0"

    proc = worker.cli("run-once")
    assert_refused(proc, "the database is newer than this package", "9999_from_the_future",
                   "99.0.0", "upgrade the package")

    before = fingerprint(db, "recording_finalize.stats.sql")
    refused = migrate(db)
    assert refused.returncode == 2, refused.stderr
    assert "migrate refused, nothing was written" in refused.stderr
    assert "newer than this package" in refused.stderr
    assert fingerprint(db, "recording_finalize.stats.sql") == before


def test_a_newer_package_version_alone_is_refused_by_an_older_migrate(db: Db) -> None:
    # Same migrations, but a newer release (its function bodies) migrated last.
    definition = db.one("select pg_get_functiondef('recording_finalize.stats(text)'::regprocedure)"
                        )[0]
    with db.connect() as conn:
        conn.execute(planted_body(definition, "v99"))
        conn.execute(f"update {META}.file_checksums set sha256 = repeat('a', 64), definition_md5 "
                     "= recording_finalize_internal.function_fingerprint(file_name), "
                     "package_version = '99.0.0' where file_name = 'recording_finalize.stats.sql'")
        conn.execute(f"update {META}.migrate_state set package_version = '99.0.0'")
    newer_body = fingerprint(db, "recording_finalize.stats.sql")
    refused = migrate(db)
    assert refused.returncode == 2 and "99.0.0" in refused.stderr, refused.stderr
    assert fingerprint(db, "recording_finalize.stats.sql") == newer_body  # not rolled back


def test_a_database_with_the_history_before_the_reset_is_refused_with_the_way_out(
    worker: Worker, operator: Worker, db: Db
) -> None:
    """A standalone 0.1.x install: its applied migrations are those of the history before the
    0.2.0 reset (CHANGELOG.md). No migrate of this package may continue it, and every refusal
    says where the way out is instead of "upgrade the package" or "run migrate"."""
    old = ["0001_schema", "0002_worker_role", "0015_cheaper_enum_checks"]
    with db.connect() as conn:
        conn.execute(f"delete from {META}._yoyo_migration")
        for migration_id in old:
            conn.execute(f"insert into {META}._yoyo_migration (migration_hash, migration_id, "
                         "applied_at_utc) values (md5(%s), %s, now())",
                         (migration_id, migration_id))
        conn.execute(f"delete from {META}.file_checksums where kind = 'migration'")
        conn.execute(f"update {META}.migrate_state set package_version = '0.1.0', "
                     "schema_version = '0015_cheaper_enum_checks'")
    before = fingerprint(db, "recording_finalize.stats.sql")
    refused = migrate(db)
    assert_refused(refused, "a migration history that", "does not continue", "0.1.0",
                   "0001_schema", "Migration history reset")
    assert "upgrade the package" not in refused.stderr
    assert fingerprint(db, "recording_finalize.stats.sql") == before
    proc = worker.cli("run-once")
    assert_refused(proc, "does not continue", "Migration history reset")
    assert "run `recording-finalize migrate`" not in proc.stderr
    waited = worker.cli("wait-for-schema", "--timeout", "30s", timeout=20)
    assert_refused(waited, "does not continue")  # at once: waiting will not change it
    status = json.loads(operator.cli("status", "--json").stdout)["schema"]
    assert status["matches"] is False and status["databaseIsNewer"] is False


def test_migrate_refuses_an_applied_migration_whose_file_changed(db: Db, tmp_path: Path
                                                                   ) -> None:
    sql_dir = sql_copy(tmp_path)
    changed = sql_dir / "migrations" / "0001_baseline.sql"
    changed.write_text(changed.read_text() + "\n-- an edit after landing\n")
    proc = migrate(db, sql_dir=sql_dir)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "0001_baseline.sql has changed since it was applied" in proc.stderr
    assert "new migration" in proc.stderr
    # The drift check of run says the same thing.
    # (No file storage: an unreachable one is no verdict, and the drift check comes next.)
    env = _base_env() | {"DATABASE_URL": db.worker_url, "RFR_SQL_DIR": str(sql_dir),
                         "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9", "RFR_METRICS_PORT": "0",
                         "S3_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ACCESS_KEY_ID": "t",
                         "AWS_SECRET_ACCESS_KEY": "t", "AWS_DEFAULT_REGION": "us-east-1"}
    run_once = subprocess.run([CLI, "run-once"], env=env, capture_output=True, text=True,
                              timeout=60)
    assert_refused(run_once, "migration file 0001_baseline.sql differs")


def test_migrate_skips_unchanged_function_files_and_reapplies_a_changed_one(
    db: Db, tmp_path: Path
) -> None:
    again = migrate(db)
    assert again.returncode == 0, again.stderr
    files = len(list((REPO / "sql" / "functions").glob("*.sql")))
    assert "migrations applied: 0 (up to date)" in again.stdout
    assert f"function files applied: 0, unchanged: {files}" in again.stdout
    sql_dir = sql_copy(tmp_path)
    target = sql_dir / "functions" / "recording_finalize.stats.sql"
    text = target.read_text()
    assert "'The gauges: backlog" in text
    target.write_text(text.replace("'The gauges: backlog", "'The operational gauges: backlog"))
    changed = migrate(db, sql_dir=sql_dir)
    assert changed.returncode == 0, changed.stderr
    assert f"function files applied: 1, unchanged: {files - 1}" in changed.stdout
    assert db.one("select obj_description('recording_finalize.stats(text)'::regprocedure)"
                  )[0].startswith("The operational gauges")


def test_migrate_keeps_its_bookkeeping_apart_from_the_services_own_yoyo_tables(
    worker: Worker, db: Db
) -> None:
    """The service may use yoyo-migrations too, with its tables where yoyo puts them (public).
    The product's bookkeeping is in its own schema, and migrate never touches the service's:
    it neither reads them as its own nor moves them (0.1.x moved public._yoyo_* away)."""
    tables = ("_yoyo_migration", "_yoyo_log", "_yoyo_version", "yoyo_lock")
    with db.connect() as conn:  # the service's yoyo, as it leaves its tables (same shape)
        for table in tables:
            conn.execute(f"create table public.{table} (like {META}.{table} including all)")
        conn.execute("insert into public._yoyo_migration (migration_hash, migration_id, "
                     "applied_at_utc) values (md5('svc'), '0001_the_services_own', now())")
    public = ("select c.relname, c.xmin::text, c.relfilenode from pg_class c "
              "where c.relnamespace = 'public'::regnamespace order by 1")
    before = db.all(public)
    proc = migrate(db)
    assert proc.returncode == 0, proc.stderr
    assert "migrations applied: 0 (up to date)" in proc.stdout
    where = db.all("select table_schema, table_name from information_schema.tables "
                   "where table_name = any(%s) order by 1, 2", (list(tables),))
    assert {schema for schema, _ in where} == {META, "public"} and len(where) == 8
    assert db.all(public) == before
    assert db.all("select migration_id from public._yoyo_migration") == [
        ("0001_the_services_own",)]
    assert worker.run_once()["error"] is None


def released_sql(fingerprint: str, into: Path) -> Path:
    """The ``sql/`` tree a release shipped: the newest first-parent commit of this clone's
    history whose ``sql/`` has the fingerprint CHANGELOG.md records for that release."""
    release = load_release()

    def git(*args: str) -> bytes:
        proc = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    for commit in git("log", "--first-parent", "--format=%H").decode().split():
        root = into / commit[:12]
        with tarfile.open(fileobj=io.BytesIO(git("archive", "--format=tar", commit, "sql"))) as t:
            t.extractall(root, filter="data")
        if release.sql_fingerprint(root) == fingerprint:
            return root / "sql"
        shutil.rmtree(root)
    raise AssertionError(f"no commit of this history has the SQL fingerprint {fingerprint}")


def product_functions(db: Db) -> dict[str, str]:
    """Every function of the product's schemas: signature -> its definition, grants, comment."""
    rows = db.all("""
        select p.oid::regprocedure::text, md5(pg_catalog.pg_get_functiondef(p.oid)
            || coalesce(p.proacl::text, '') || coalesce(obj_description(p.oid, 'pg_proc'), ''))
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('recording_finalize'::regnamespace,
                                 'recording_finalize_internal'::regnamespace)""")
    return dict(rows)


def test_the_previous_release_upgrades_in_place_as_a_deploy_applies_it(
    stack: Stack, template_db: Template, db: Db, bucket: str, topic: str, tmp_path: Path
) -> None:
    """A database installed by the previous release's SQL (CHANGELOG.md's newest entry before
    this version with other SQL, found by its schema fingerprint), then this package's
    ``migrate``, as the deploy's migrate Job runs it: it applies, and the database then has
    exactly the functions a new install has (``db``, migrated by this package: none left over,
    none missing, every body, grant and comment the same); the worker finalizes a recording on
    it. An event the previous release enqueued into the product's own outbox and had not
    published yet is published once by this release's relay, and the service's outbox rows stay
    as they were (an upgrade from 0.2.x, which enqueued into the service's outbox, copies
    nothing: test_migrate_redeploy.py). (The previous SQL is installed by this package's migrate
    code, which records this package's version: the SQL is what is tested.)"""
    release = load_release()
    # The newest release before this tree's version (a development version has no entry) that
    # shipped other SQL (a release of driver changes only has nothing to upgrade).
    current = release.version_key(release.pyproject_version())
    previous = next(e for e in release.changelog_entries((REPO / "CHANGELOG.md").read_text())
                    if release.version_key(e.version) < current
                    and e.fingerprint != release.sql_fingerprint())
    assert previous.fingerprint, previous
    old_sql = released_sql(previous.fingerprint, tmp_path)
    name = f"rfr_t_{uuid.uuid4().hex[:12]}"
    with _admin(stack) as conn:
        conn.execute(f'create database "{name}" owner {template_db.owner_user}')
    try:
        upgraded = template_db.db(stack, name)
        env = _base_env() | {"DATABASE_URL": upgraded.schema_owner_url,
                             "RFR_SQL_DIR": str(old_sql)}
        installed = subprocess.run([CLI, "migrate", "--create-service-tables"], env=env,
                                   capture_output=True, text=True, timeout=120)
        assert installed.returncode == 0, installed.stderr
        # Before the upgrade: the previous release's happy path enqueued a recording's event
        # into messenger.integration_outbox (its relay had not published it yet), beside an
        # unpublished event of the service's own (no event-id header: not the product's).
        upgraded.set_server_topic(topic)
        pending = seed_stuck(upgraded)
        with upgraded.connect() as conn:
            assert conn.execute("select recording_finalize.recording_ingest_completed(%s, %s, "
                                "4096, 42, 'Ogg', %s)", (pending.recording_id,
                                                         f"recordings/{pending.recording_id}",
                                                         topic)).fetchone() == ("available",)
            conn.execute("insert into messenger.integration_outbox (topic, message_key, "
                         "event_type, dedupe_key, payload) values (%s, 'k', "
                         "'call-recording-available', %s, '{}')", (topic, str(uuid.uuid4())))
        service_rows = ("select id, xmin::text, topic, message_key, dedupe_key, headers, "
                        "payload, published_at from messenger.integration_outbox order by id")
        outbox_before = upgraded.all(service_rows)
        product_rows = ("select recording_id, topic, message_key, headers, payload, "
                        "published_at from recording_finalize.outbox")
        # The previous release (0.3 or later) enqueued it into the product's own outbox.
        assert [r for r in outbox_before if r[4] == str(pending.recording_id)] == []
        pending_event = upgraded.all(product_rows)
        assert [(r[0], r[5]) for r in pending_event] == [(pending.recording_id, None)]
        fresh = product_functions(db)
        before = product_functions(upgraded)
        assert before != fresh, "the previous release's SQL is this one's: nothing to upgrade"
        done = migrate(upgraded)
        assert done.returncode == 0, done.stderr
        after = product_functions(upgraded)
        assert sorted(set(after) ^ set(fresh)) == [], "functions left over or missing"
        assert sorted(f for f in fresh if after[f] != fresh[f]) == [], "functions that differ"
        # The product's unpublished event as it was; the service's outbox untouched.
        assert upgraded.all(product_rows) == pending_event
        assert upgraded.all(service_rows) == outbox_before
        rid = seed_stuck(upgraded).recording_id
        put_binary(stack, bucket, rid)
        summary = Worker(stack, upgraded, bucket, topic).run_once()
        assert (summary["reconciled"], summary["published"]) == (1, 2), summary
        # On Kafka: the pending event and the new one, once each.
        messages = consume(stack, topic, expect=2)
        assert sorted(m.value["recordingId"] for m in messages) == sorted(
            [str(pending.recording_id), str(rid)]), messages
        [pended] = [m for m in messages if m.value["recordingId"] == str(pending.recording_id)]
        assert pended.key == pending_event[0][2]
        assert upgraded.all("select recording_id from recording_finalize.outbox "
                            "where published_at is null") == []
        assert upgraded.all(service_rows) == outbox_before
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


def test_migrations_in_the_repository_are_immutable_once_committed() -> None:
    """CI's half of "applied migrations never change": sql/migrations/SHA256SUMS holds the
    sha256 of every migration (``sha256sum -c`` format) and only ever grows in this branch's
    first-parent history - with one way out, a named reset (``history_problems``)."""
    sums = REPO / "sql" / "migrations" / "SHA256SUMS"
    listed = dict(reversed(line.split("  ", 1)) for line in sums.read_text().splitlines())
    for path in sorted((REPO / "sql" / "migrations").glob("*.sql")):
        assert path.name in listed, (
            f"{path.name} has no line in {sums.name}: add `{sha256(path)}  {path.name}`")
        assert listed[path.name] == sha256(path), (
            f"{path.name} changed after its checksum was recorded: migrations are immutable; "
            "restore it and put the change in a new migration")
    assert set(listed) == {p.name for p in (REPO / "sql" / "migrations").glob("*.sql")}
    assert history_problems(sums_history(), CHANGELOG.read_text(), tags()) == []


def test_the_history_rule_refuses_an_edit_and_an_unnamed_or_patch_reset() -> None:
    """The rule can fail: each way around it, on a synthetic history."""
    old = [(f"{i:064x}", f"{i:04d}_m.sql") for i in range(1, 4)]
    new = [("b" * 64, "0001_baseline.sql")]
    named = ("## [0.3.0] - d\n\nSchema fingerprint: " + "c" * 64 + "\n\n"
             "Migration history reset: 0001_baseline.sql\n\n## [0.2.4] - d\n")
    history = [("c1", "0.2.0", old[:2]), ("c2", "0.2.3", old), ("c3", "0.2.4", new)]
    # Appending is always fine; a reset named by a new minor version is fine.
    assert history_problems(history[:2], "", set()) == []
    assert history_problems(history, named, set()) == []
    # Not named in the CHANGELOG.
    assert any("not named" in p for p in history_problems(history, named.replace(
        "Migration history reset: 0001_baseline.sql", ""), set()))
    # Named by a patch release.
    patch = named.replace("## [0.3.0]", "## [0.2.5]")
    assert any("new major or minor" in p for p in history_problems(history, patch, set()))
    # Named, but for another baseline file.
    other = named.replace("reset: 0001_baseline.sql", "reset: 0001_other.sql")
    assert any("not named" in p for p in history_problems(history, other, set()))
    # One line edited (not a reset: the rest of the history stays).
    edited = [("c1", "0.2.0", old), ("c2", "0.2.0", [old[0], ("d" * 64, old[1][1]), old[2]])]
    assert any(old[1][1] in p for p in history_problems(edited, named, set()))
    # The reset's own baseline may be amended until its version is released (tagged) ...
    amended = [*history, ("c4", "0.3.0", [("e" * 64, "0001_baseline.sql")])]
    assert history_problems(amended, named, set()) == []
    # ... never after.
    assert any("0001_baseline.sql" in p for p in history_problems(amended, named, {"v0.3.0"}))


CHANGELOG = REPO / "CHANGELOG.md"
#: ``Migration history reset: <file>`` in a CHANGELOG entry names the reset of that version.
RESET_LINE = re.compile(r"^Migration history reset: (\S+)\s*$", re.M)
ENTRY = re.compile(r"^## \[(?P<version>[^\]]+)\]", re.M)

# Lines that were replaced before their migration ever left the repository: each names the
# submission that wrote and amended it. A migration that reached any database never goes here.
AMENDED_BEFORE_RELEASE = {
    # 0014 was amended by the same (second-round) submission that added it, before it landed.
    "474061bcdef107c06ddaabb02c11e33dcb17f643525797f15cdc3c22531f2efc  "
    "0014_review_bounds_and_logins.sql",
}

Sums = list[tuple[str, str]]  # (sha256, file name), in the file's order


def sums_history() -> list[tuple[str, str, Sums]]:
    """(commit, package version, SHA256SUMS) for each first-parent commit that changed it,
    oldest first."""
    def git(*args: str) -> str:
        proc = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    out = []
    for commit in git("log", "--first-parent", "--reverse", "--format=%H", "--",
                      "sql/migrations/SHA256SUMS").split():
        version = re.findall(r'^version = "([^"]+)"$', git("show", f"{commit}:pyproject.toml"),
                             re.M)[0]
        sums = [tuple(line.split("  ", 1)) for line in
                git("show", f"{commit}:sql/migrations/SHA256SUMS").splitlines() if line]
        out.append((commit[:12], version, [(h, n) for h, n in sums]))
    return out


def tags() -> set[str]:
    proc = subprocess.run(["git", "-C", str(REPO), "tag", "--list"], capture_output=True,
                          text=True)
    return set(proc.stdout.split())


def history_problems(history: list[tuple[str, str, Sums]], changelog: str,
                     released: set[str]) -> list[str]:
    """SHA256SUMS only grows, except:

    - a **reset**: one commit replaces the whole history by a new baseline (no file name of
      before stays: yoyo knows a migration by its name, so a database that applied the old
      history could never mistake the new one for it). Allowed only when a CHANGELOG entry
      for a new major or minor version (X.Y.0, newer in X.Y than the entry below it) has the
      line ``Migration history reset: <the new history's first file>``, and each such line
      names one reset; that version's entry says why and how an existing install moves;
    - the baseline of a named reset may be amended until that version is released (a git tag
      ``v<version>``, as ``make fingerprint-record`` decides it);
    - a line listed in ``AMENDED_BEFORE_RELEASE``;
    - a line whose sha256 ``driver/drift.py``'s ``AMENDED_MIGRATIONS`` lists for that migration
      (an amendment every install accepts as the same migration).
    """
    heads = list(ENTRY.finditer(changelog))
    ends = [m.start() for m in heads[1:]] + [len(changelog)] * bool(heads)
    entries = [(m["version"], changelog[m.end():end]) for m, end in zip(heads, ends, strict=True)]
    named = [(v, f) for v, body in entries for f in RESET_LINE.findall(body)]
    problems: list[str] = []
    used: set[tuple[str, str]] = set()
    epoch: tuple[str, str] | None = None  # the named reset the current history started with
    previous: Sums = []
    for commit, _version, sums in history:
        after = set(sums)
        removed = [line for line in previous if line not in after]
        if removed and not {n for _, n in previous} & {n for _, n in sums}:
            first = min(n for _, n in sums)
            match = next(((v, f) for v, f in named if f == first and (v, f) not in used), None)
            if match is None:
                problems.append(f"{commit}: the migration history was reset to {first}, which "
                                "is not named in CHANGELOG.md: no entry has `Migration history "
                                f"reset: {first}`")
            else:
                used.add(match)
                epoch = match
                problems += _reset_version_problems(match[0], [v for v, _ in entries])
        elif removed:
            for digest, name in removed:
                line = f"{digest}  {name}"
                if line in AMENDED_BEFORE_RELEASE:
                    continue
                if digest in drift.AMENDED_MIGRATIONS.get(name.removesuffix(".sql"), {}):
                    continue  # amended, with its reason, and accepted by drift and migrate
                if epoch is not None and f"v{epoch[0]}" not in released:
                    continue  # the reset's own history, before its version is released
                problems.append(f"{commit}: the line of {name} in SHA256SUMS was changed or "
                                "removed: migrations are immutable once landed")
        previous = sums
    for version, first in named:
        if (version, first) not in used:
            problems.append(f"CHANGELOG {version} names a reset to {first} that the history "
                            "does not have")
    return problems


def _reset_version_problems(version: str, versions: list[str]) -> list[str]:
    """A reset ships as a new major or minor version: X.Y.0, newer in X.Y than the entry below."""
    parts = version.split(".")
    below = versions[versions.index(version) + 1:] if version in versions else []
    older = next((v for v in below if re.fullmatch(r"\d+\.\d+\.\d+", v)), None)
    if (len(parts) != 3 or parts[2] != "0" or (older is not None and tuple(
            map(int, older.split(".")[:2])) >= tuple(map(int, parts[:2])))):
        return [f"CHANGELOG {version} names a migration history reset: a reset needs a new "
                f"major or minor version (X.Y.0 after {older or 'nothing'})"]
    return []


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- migrate behind an open writer transaction ----------------------------------------------

# A function file that locks the table the messenger service writes, as 0.1.x's re-creation of
# its terminal-guard trigger did (SHARE ROW EXCLUSIVE on call_recordings). No file of the
# package does that now (sql/README.md), but whatever a file does, migrate's timeouts must keep
# the service's writes flowing. (The tables here are the reference schema, which migrate
# --create-service-tables made for the product's owner, so that owner may take the lock.)
LOCKING_FILE = """
create or replace function recording_finalize.zz_lock_probe()
returns integer
language sql
immutable
set search_path = ''
as $$ select 1 $$;

comment on function recording_finalize.zz_lock_probe() is 'test only: a file that locks a table';

revoke all on function recording_finalize.zz_lock_probe() from public;

lock table messenger.call_recordings in share row exclusive mode;
"""


def _migrate_behind_an_open_writer(db: Db, tmp_path: Path, hold_s: float | None,
                                   lock_probe: bool = True
                                   ) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Session 1 holds an uncommitted UPDATE on call_recordings (for ``hold_s``, or throughout);
    session 2 runs migrate with a file that needs a table lock (``lock_probe``; otherwise with
    the package's SQL as it is); session 3 is the service, writing another recording every
    50 ms. Returns migrate's result, its duration and the longest any service write waited."""
    sql_dir = sql_copy(tmp_path)
    if lock_probe:
        (sql_dir / "functions" / "recording_finalize.zz_lock_probe.sql").write_text(LOCKING_FILE)
    held, written = seed_stuck(db).recording_id, seed_stuck(db).recording_id
    holder = psycopg.connect(db.owner_url)
    # The service gives up after 10 s, so a migrate without timeouts fails this test instead
    # of hanging it.
    service = psycopg.connect(db.owner_url, autocommit=True, options="-c lock_timeout=10s")
    release = threading.Timer(hold_s or 3600.0, holder.rollback)
    try:
        holder.execute("update messenger.call_recordings set updated_at = now() where id = %s",
                       (held,))
        env = _base_env() | {"DATABASE_URL": db.schema_owner_url, "RFR_SQL_DIR": str(sql_dir)}
        t0 = time.monotonic()
        proc = subprocess.Popen([CLI, "migrate"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        release.start()
        longest = 0.0
        while proc.poll() is None and time.monotonic() - t0 < 60:
            started = time.monotonic()
            with contextlib.suppress(psycopg.errors.LockNotAvailable):
                service.execute("update messenger.call_recordings set updated_at = now() "
                                "where id = %s", (written,))
            longest = max(longest, time.monotonic() - started)
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - t0
    finally:
        release.cancel()
        holder.rollback()
        holder.close()
        service.close()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), elapsed, longest


def test_migrate_retries_behind_an_open_writer_without_queueing_the_service(
    db: Db, tmp_path: Path
) -> None:
    proc, elapsed, longest = _migrate_behind_an_open_writer(db, tmp_path, hold_s=3.0)
    print(f"writer held 3 s: migrate {elapsed:.2f} s, longest service write {longest:.3f} s")
    assert longest < 2.0, f"a service write waited {longest:.2f} s behind migrate"
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "recording_finalize.zz_lock_probe.sql: lock not granted within 1000 ms" in proc.stderr
    assert elapsed >= 3.0  # it really waited for the writer, in short tries
    assert db.one("select recording_finalize.zz_lock_probe()") == (1,)


def test_migrate_gives_up_behind_a_writer_that_never_commits(db: Db, tmp_path: Path) -> None:
    proc, elapsed, longest = _migrate_behind_an_open_writer(db, tmp_path, hold_s=None)
    print(f"writer never commits: migrate {elapsed:.2f} s, longest service write {longest:.3f} s")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert ("function file recording_finalize.zz_lock_probe.sql: a lock was not granted"
            in proc.stderr)
    assert "5 tries" in proc.stderr and "pg_stat_activity" in proc.stderr
    assert elapsed < 20, f"migrate took {elapsed:.1f} s"
    assert longest < 2.0, f"a service write waited {longest:.2f} s behind migrate"
