"""Schema drift and migrate's bookkeeping (issue 10 item 3, issue 9 finding 4).

``run``/``run-once`` refuse (exit 2, "run `recording-finalize migrate`") a database whose applied
migrations or function definitions differ from the installed package, and say which side is
newer; ``status`` shows it; an older package's ``migrate`` never rolls a newer schema back; a
migration file changed after it was applied is refused by ``migrate``; yoyo's tables live in
their own schema (and an old deployment's are moved out of ``public``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
import threading
import time
from pathlib import Path

import psycopg
from conftest import (
    CLI,
    REPO,
    Db,
    Worker,
    _base_env,
    planted_body,
    put_binary,
    seed_stuck,
)

META = "recording_finalize_migrations"


def migrate(db: Db, *, sql_dir: Path | None = None, timeout: float = 120
            ) -> subprocess.CompletedProcess[str]:
    env = _base_env() | {"DATABASE_URL": db.owner_url}
    if sql_dir is not None:
        env["RFR_SQL_DIR"] = str(sql_dir)
    return subprocess.run([CLI, "migrate"], env=env, capture_output=True, text=True,
                          timeout=timeout)


def fingerprint(db: Db, file: str) -> str:
    row = db.one("select recording_finalize.function_fingerprint(%s)", (file,))
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
    assert "migrate refused, nothing was changed" in refused.stderr
    assert "newer than this package" in refused.stderr
    assert fingerprint(db, "recording_finalize.stats.sql") == before


def test_a_newer_package_version_alone_is_refused_by_an_older_migrate(db: Db) -> None:
    # Same migrations, but a newer release (its function bodies) migrated last.
    definition = db.one("select pg_get_functiondef('recording_finalize.stats(text)'::regprocedure)"
                        )[0]
    with db.connect() as conn:
        conn.execute(planted_body(definition, "v99"))
        conn.execute(f"update {META}.file_checksums set sha256 = repeat('a', 64), "
                     "definition_md5 = recording_finalize.function_fingerprint(file_name), "
                     "package_version = '99.0.0' where file_name = 'recording_finalize.stats.sql'")
        conn.execute(f"update {META}.migrate_state set package_version = '99.0.0'")
    newer_body = fingerprint(db, "recording_finalize.stats.sql")
    refused = migrate(db)
    assert refused.returncode == 2 and "99.0.0" in refused.stderr, refused.stderr
    assert fingerprint(db, "recording_finalize.stats.sql") == newer_body  # not rolled back


def test_migrate_refuses_an_applied_migration_whose_file_changed(db: Db, tmp_path: Path
                                                                   ) -> None:
    sql_dir = sql_copy(tmp_path)
    changed = sql_dir / "migrations" / "0003_outbox_fillfactor.sql"
    changed.write_text(changed.read_text() + "\n-- an edit after landing\n")
    proc = migrate(db, sql_dir=sql_dir)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "0003_outbox_fillfactor.sql has changed since it was applied" in proc.stderr
    assert "new migration" in proc.stderr
    # The drift check of run says the same thing.
    env = _base_env() | {"DATABASE_URL": db.worker_url, "RFR_SQL_DIR": str(sql_dir),
                         "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9", "RFR_METRICS_PORT": "0"}
    run_once = subprocess.run([CLI, "run-once"], env=env, capture_output=True, text=True,
                              timeout=60)
    assert_refused(run_once, "migration file 0003_outbox_fillfactor.sql differs")


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
    target.write_text(target.read_text().replace("Operational gauges", "The operational gauges"))
    changed = migrate(db, sql_dir=sql_dir)
    assert changed.returncode == 0, changed.stderr
    assert f"function files applied: 1, unchanged: {files - 1}" in changed.stdout
    assert db.one("select obj_description('recording_finalize.stats(text)'::regprocedure)"
                  )[0].startswith("The operational gauges")


def test_yoyo_tables_of_an_old_deployment_move_out_of_public(worker: Worker, db: Db) -> None:
    tables = ("_yoyo_migration", "_yoyo_log", "_yoyo_version", "yoyo_lock")
    with db.connect() as conn:
        for table in tables:  # where a version before this one left them
            conn.execute(f"alter table {META}.{table} set schema public")
    proc = migrate(db)
    assert proc.returncode == 0, proc.stderr
    assert "moved yoyo's tables from public" in proc.stdout
    assert "migrations applied: 0 (up to date)" in proc.stdout
    where = db.all("select table_schema, table_name from information_schema.tables "
                   "where table_name = any(%s) order by 2", (list(tables),))
    assert {schema for schema, _ in where} == {META} and len(where) == 4
    assert worker.run_once()["error"] is None


def test_migrations_in_the_repository_are_immutable_once_committed() -> None:
    """CI's half of "applied migrations never change": sql/migrations/SHA256SUMS holds the
    sha256 of every migration (``sha256sum -c`` format) and is append-only: no line of it was
    ever changed or removed in this branch's first-parent history."""
    sums = REPO / "sql" / "migrations" / "SHA256SUMS"
    listed = dict(reversed(line.split("  ", 1)) for line in sums.read_text().splitlines())
    for path in sorted((REPO / "sql" / "migrations").glob("*.sql")):
        assert path.name in listed, (
            f"{path.name} has no line in {sums.name}: add `{sha256(path)}  {path.name}`")
        assert listed[path.name] == sha256(path), (
            f"{path.name} changed after its checksum was recorded: migrations are immutable; "
            "restore it and put the change in a new migration")
    log = subprocess.run(["git", "-C", str(REPO), "log", "--first-parent", "--format=",
                          "--unified=0", "-p", "--", "sql/migrations/SHA256SUMS"],
                         capture_output=True, text=True)
    assert log.returncode == 0, log.stderr
    removed = [line[1:] for line in log.stdout.splitlines()
               if line.startswith("-") and not line.startswith("---")]
    removed = [line for line in removed if line not in AMENDED_BEFORE_RELEASE]
    assert removed == [], f"lines of SHA256SUMS were changed or removed: {removed}"


# Lines that were replaced before their migration ever left the repository: each names the
# submission that wrote and amended it. A migration that reached any database never goes here.
AMENDED_BEFORE_RELEASE = {
    # 0014 was amended by the same (second-round) submission that added it, before it landed.
    "474061bcdef107c06ddaabb02c11e33dcb17f643525797f15cdc3c22531f2efc  "
    "0014_review_bounds_and_logins.sql",
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- migrate behind an open writer transaction (issue 9 finding 4) -------------------------

# A function file whose DDL locks the table the messenger service writes, as re-creating the
# terminal-guard trigger did (SHARE ROW EXCLUSIVE on call_recordings): whatever a function file
# does, migrate's timeouts must keep the service's writes flowing.
LOCKING_FILE = """
create or replace function messenger.zz_lock_probe()
returns integer
language sql
immutable
set search_path = ''
as $$ select 1 $$;

comment on function messenger.zz_lock_probe() is 'test only: a file that locks a table';

revoke all on function messenger.zz_lock_probe() from public;

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
        (sql_dir / "functions" / "messenger.zz_lock_probe.sql").write_text(LOCKING_FILE)
    held, written = seed_stuck(db).recording_id, seed_stuck(db).recording_id
    holder = psycopg.connect(db.owner_url)
    # The service gives up after 10 s, so a migrate without timeouts fails this test instead
    # of hanging it.
    service = psycopg.connect(db.owner_url, autocommit=True, options="-c lock_timeout=10s")
    release = threading.Timer(hold_s or 3600.0, holder.rollback)
    try:
        holder.execute("update messenger.call_recordings set updated_at = now() where id = %s",
                       (held,))
        env = _base_env() | {"DATABASE_URL": db.owner_url, "RFR_SQL_DIR": str(sql_dir)}
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
    assert "messenger.zz_lock_probe.sql: lock not granted within 1000 ms" in proc.stderr
    assert elapsed >= 3.0  # it really waited for the writer, in short tries
    assert db.one("select messenger.zz_lock_probe()") == (1,)


def test_migrate_gives_up_behind_a_writer_that_never_commits(db: Db, tmp_path: Path) -> None:
    proc, elapsed, longest = _migrate_behind_an_open_writer(db, tmp_path, hold_s=None)
    print(f"writer never commits: migrate {elapsed:.2f} s, longest service write {longest:.3f} s")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "function file messenger.zz_lock_probe.sql: a lock was not granted" in proc.stderr
    assert "5 tries" in proc.stderr and "pg_stat_activity" in proc.stderr
    assert elapsed < 20, f"migrate took {elapsed:.1f} s"
    assert longest < 2.0, f"a service write waited {longest:.2f} s behind migrate"


def test_migration_0015_rewrites_the_checks_behind_an_open_writer_without_queueing_the_service(
    db: Db, tmp_path: Path
) -> None:
    # The database as migration 0014 left it: the enumeration CHECKs in their old form (the
    # bench's "SQL before" file states them) and 0015 not recorded as applied.
    migration = "0015_cheaper_enum_checks"
    with db.connect() as conn:
        conn.execute((REPO / "bench" / "sql_before" / "03_enum_checks.sql").read_text())
        conn.execute(f"delete from {META}._yoyo_migration where migration_id = %s", (migration,))
    old_form = "select count(*) from pg_constraint where contype = 'c' " \
        "and pg_get_constraintdef(oid) like '%%ARRAY[%%' and conrelid in " \
        "('messenger.call_recordings'::regclass, 'messenger.realtime_outbox'::regclass, " \
        "'messenger.recording_finalize_attempts'::regclass)"
    assert db.one(old_form) == (11,)

    proc, elapsed, longest = _migrate_behind_an_open_writer(db, tmp_path, hold_s=3.0,
                                                            lock_probe=False)
    print(f"0015 behind a writer held 3 s: migrate {elapsed:.2f} s, "
          f"longest service write {longest:.3f} s")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert longest < 2.0, f"a service write waited {longest:.2f} s behind migration 0015"
    assert f"migration {migration}: lock not granted within 1000 ms" in proc.stderr
    assert elapsed >= 3.0  # it really waited for the writer, in short tries
    assert db.one(old_form) == (0,)
    # Validated again, except the one 0010 added NOT VALID.
    assert db.all("select conname from pg_constraint where contype = 'c' and not convalidated "
                  "and connamespace = 'messenger'::regnamespace") == [
        ("recording_finalize_attempts_quarantine_reason_ck",)]
