"""The way back to the previous release is a command sequence that sends nothing twice.

From outside, with real wheels: the previous release (built from its commit) installs and
migrates a database and publishes some events, leaves others pending; this tree's wheel
upgrades it (migrate, a cycle that publishes, more pending); ``rollback --to <previous> --yes``
takes the schema back; the previous release's migrate and cycle run on it. Every recording's
event reaches the topic exactly once: nothing published is sent again, nothing pending is lost.

The old fallback (``uninstall --yes``, then the older migrate) dropped the product's outbox with
its published marks, and the older release's discovery then found every Available recording
unpublished and sent it again: ``test_the_old_fallback_sends_everything_again`` shows it, so the
main test can fail.

Until this release has migrations of its own the upgrade carries a throwaway one (``9000_...``,
newest of all, with its down step): a nullable column and a function whose result type changes,
which the previous release's migrate can only re-create once rollback dropped it.
"""

from __future__ import annotations

import collections
import hashlib
import json
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from conftest import (
    REPO,
    Db,
    InstalledPackage,
    Stack,
    Template,
    Worker,
    _admin,
    consume,
    put_binary,
    run_checked,
    seed_stuck,
)
from recording_finalize import adapter

#: The previous release and the commit it was built from (CHANGELOG.md).
PREVIOUS, PREVIOUS_COMMIT = "0.4.1", "d52d80a753512b42e0d5e4ab3cb5473c92a17df3"

PROBE = "9000_rollback_probe"
PROBE_MIGRATION = """\
-- A throwaway migration of the rollback test: what a release adds (a nullable column) and a
-- function whose result changes (a migration drops the old one first).
set lock_timeout = '1s';
alter table recording_finalize.discovery_sweep add column probe_hold_until timestamptz;
drop function if exists recording_finalize.worker_config();
"""
PROBE_DOWN = """\
set lock_timeout = '1s';
alter table recording_finalize.discovery_sweep drop column if exists probe_hold_until;
"""


def _installed_sql(venv: Path) -> Path:
    [sql] = venv.glob("lib/python*/site-packages/recording_finalize/sql")
    return sql


@pytest.fixture(scope="session")
def previous_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release's wheel, built from its commit, in a virtualenv of its own: the
    path of its console script."""
    if subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", PREVIOUS_COMMIT],
                      capture_output=True).returncode != 0:
        pytest.skip(f"the commit of {PREVIOUS} is not in this clone")
    work = tmp_path_factory.mktemp(f"release-{PREVIOUS}")
    src = work / "src"
    archive = subprocess.run(["git", "-C", str(REPO), "archive", PREVIOUS_COMMIT],
                             capture_output=True, check=True).stdout
    src.mkdir()
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    run_checked([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                 str(work / "dist"), str(src)], cwd=work, env={"RFR_BUILD_COMMIT": PREVIOUS_COMMIT})
    [wheel] = (work / "dist").glob(f"recording_finalize_retry-{PREVIOUS}-*.whl")
    venv = work / "venv"
    run_checked([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)],
                cwd=work)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    run_checked([*pip, "--require-hashes", "-r", str(src / "requirements.lock")], cwd=work)
    run_checked([*pip, "--no-index", str(wheel)], cwd=work)
    return venv / "bin" / "recording-finalize"


@dataclass
class Install:
    """One database, as the product's owner, the worker and an operator see it."""

    worker: Worker
    template: Template
    old: Path
    new: Path
    new_sql: Path

    @property
    def db(self) -> Db:
        return self.worker.db

    def run(self, which: Path, *args: str, login: str = "worker", expect: int = 0,
            **env: str) -> subprocess.CompletedProcess[str]:
        url = {"worker": self.db.worker_url, "operator": self.db.operator_url,
               "owner": self.db.schema_owner_url}[login]
        extra = {"RFR_SQL_DIR": str(self.new_sql)} if which == self.new else {}
        proc = subprocess.run([str(which), *args], capture_output=True, text=True, timeout=180,
                              env=self.worker.environ(DATABASE_URL=url, **extra, **env))
        assert proc.returncode == expect, (which, args, proc.returncode, proc.stdout,
                                           proc.stderr[-3000:])
        return proc

    def cycle(self, which: Path) -> dict[str, object]:
        proc = self.run(which, "run-once")
        summary: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
        return summary

    def stuck(self, n: int) -> list[uuid.UUID]:
        """n recordings stuck in Uploading past the SLA, their binaries in the bucket."""
        ids = []
        for _ in range(n):
            rid = uuid.uuid4()
            put_binary(self.worker.stack, self.worker.bucket, rid)
            seed_stuck(self.db, recording_id=rid)
            ids.append(rid)
        return ids

    def events(self) -> tuple[int, int]:
        row = self.db.one("select count(*), count(published_at) from recording_finalize.outbox")
        return int(row[0]), int(row[1])


@pytest.fixture
def install(stack: Stack, template_db: Template, bucket: str, topic: str,
            previous_release: Path, installed_package: InstalledPackage,
            tmp_path: Path) -> Iterator[Install]:
    name = f"rfr_rb_{uuid.uuid4().hex[:12]}"
    with _admin(stack) as conn:
        conn.execute(f'create database "{name}" owner {template_db.owner_user}')
    # This tree's SQL with the throwaway migration, its down step and the changed function.
    new_sql = tmp_path / "sql"
    shutil.copytree(_installed_sql(installed_package.venv), new_sql)
    (new_sql / "migrations" / f"{PROBE}.sql").write_text(PROBE_MIGRATION)
    (new_sql / "migrations" / "rollback" / f"{PROBE}.sql").write_text(PROBE_DOWN)
    function = new_sql / "functions" / "recording_finalize.worker_config.sql"
    text = function.read_text()
    changed = text.replace("    reported_at timestamptz\n)", "    reported_at timestamptz,\n"
                           "    probe text\n)").replace("w.login_role, w.reported_at\n",
                                                    "w.login_role, w.reported_at, null::text\n")
    assert changed.count("probe text") == 1 and "null::text" in changed, "worker_config changed"
    function.write_text(changed)
    try:
        db = template_db.db(stack, name)
        yield Install(Worker(stack, db, bucket, topic), template_db, previous_release,
                      Path(installed_package.cli), new_sql)
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


def _upgrade_and_come_back(at: Install) -> list[uuid.UUID]:
    """The previous release, this one, and back; returns every recording that got an event."""
    old, new = at.old, at.new
    at.run(old, "migrate", "--create-service-tables", login="owner")
    at.db.set_server_topic(at.worker.topic)
    published_before = at.stuck(4)
    assert at.cycle(old)["reconciled"] == 4
    at.run(old, "pause", "relay", "--reason", "rollback test", login="operator")
    pending_before = at.stuck(3)
    at.cycle(old)
    assert at.events() == (7, 4)

    # A migration amended after it landed (a comment): the newer migrate takes it for the same
    # one and records its own text, as it does for an amended migration; the rollback must put
    # the previous release's text back in the record, or that release's migrate refuses.
    amended = at.new_sql / "migrations" / "0002_own_outbox.sql"
    amended.write_text(amended.read_text() + "\n-- amended after it landed: a comment\n")
    at.db.one("update recording_finalize_migrations.file_checksums set sha256 = %s "
              "where kind = 'migration' and file_name = '0002_own_outbox' returning 1",
              (hashlib.sha256(amended.read_bytes()).hexdigest(),))
    # The upgrade: migrate, a cycle that publishes what waited and its own; then more pending.
    # The reference adapter's statements are the previous release's (only its comments
    # changed): it stays as that release installed it.
    upgraded = at.run(new, "migrate", login="owner")
    assert "(recording_finalize_adapter): unchanged" in upgraded.stdout, upgraded.stdout
    at.run(new, "resume", "relay", "--reason", "upgraded", login="operator")
    published_after = at.stuck(2)
    at.cycle(new)
    assert at.events() == (9, 9)
    at.run(new, "pause", "relay", "--reason", "rollback test", login="operator")
    pending_after = at.stuck(2)
    at.cycle(new)
    assert at.events() == (11, 9)

    # The previous release refuses the newer database ...
    refused = at.run(old, "migrate", login="owner", expect=2)
    assert PROBE in refused.stderr
    # ... until rollback took it back: first the plan (nothing written), then --yes.
    dry = at.run(new, "rollback", "--to", PREVIOUS, login="owner")
    assert "would roll back" in dry.stdout and PROBE in dry.stdout, dry.stdout
    at.run(old, "migrate", login="owner", expect=2)
    done = at.run(new, "rollback", "--to", PREVIOUS, "--yes", login="owner")
    assert f"rolled back to recording-finalize {PREVIOUS}" in done.stdout, done.stdout
    assert "11 events, 9 of them published" in done.stdout, done.stdout
    # 0001 and 0002 are amended in this tree too (comments, a removed copy step): every one is
    # put back to the text the target recorded.
    [restored] = [line for line in done.stdout.splitlines()
                  if f"migration records back to {PREVIOUS}'s text: " in line]
    assert "0002_own_outbox" in restored, done.stdout
    # So is the reference adapter's record (its comments changed since).
    assert "the reference adapter kept" in done.stdout, done.stdout
    assert at.db.one("select count(*) from information_schema.columns where column_name = "
                     "'probe_hold_until'")[0] == 0

    # The previous release again: its migrate re-creates its functions (and finds its own
    # adapter), its cycles publish what waited, and nothing else.
    again = at.run(old, "migrate", login="owner")
    assert "(recording_finalize_adapter): unchanged" in again.stdout, again.stdout
    at.run(old, "resume", "relay", "--reason", "rolled back", login="operator")
    at.cycle(old)
    at.cycle(old)
    assert at.events() == (11, 11)
    return published_before + pending_before + published_after + pending_after


def test_rollback_to_the_previous_release_sends_nothing_twice(install: Install) -> None:
    every = _upgrade_and_come_back(install)
    messages = consume(install.worker.stack, install.worker.topic, expect=len(every),
                       idle_s=2.0, timeout_s=30.0)
    per_recording = collections.Counter(m.value["recordingId"] for m in messages)
    assert {str(r) for r in every} == set(per_recording), "a recording's event never came"
    assert [r for r, n in per_recording.items() if n > 1] == [], "sent twice"
    assert len(messages) == len(every)
    status = install.run(install.old, "status", "--json", login="operator")
    assert json.loads(status.stdout)["schema"]["matches"] is True


class ServiceCallbacks(threading.Thread):
    """The service at work while the product changes under it: each round one recording's whole
    life through the callbacks (started, stopped, its session ended, the ingest callback), as a
    service calls them, each in its own transaction. Records every call that fails."""

    def __init__(self, db: Db) -> None:
        super().__init__(daemon=True)
        self.db, self.rounds, self.failures = db, 0, list[str]()
        self.stop = threading.Event()

    def run(self) -> None:
        with self.db.connect() as conn:
            while not self.stop.is_set():
                rid, sid = uuid.uuid4(), uuid.uuid4()
                try:
                    conn.execute("insert into messenger.call_sessions (id, started_at) "
                                 "values (%s, now())", (sid,))
                    conn.execute("select recording_finalize.recording_started(%s, 'Direct', %s, "
                                 "'Audio', 'Auto')", (rid, sid))
                    conn.execute("select recording_finalize.recording_stopped(%s)", (rid,))
                    conn.execute("update messenger.call_sessions set ended_at = now() "
                                 "where id = %s", (sid,))
                    conn.execute("select recording_finalize.session_ended('Direct', %s)", (sid,))
                    conn.execute("select recording_finalize.recording_ingest_completed(%s, %s, "
                                 "10, 3, 'Ogg')", (rid, f"files/{rid}"))
                except psycopg.Error as err:
                    self.failures.append(f"{err.sqlstate}: {err}".splitlines()[0])
                self.rounds += 1


@contextmanager
def service_calling(db: Db) -> Iterator[ServiceCallbacks]:
    """The service calling throughout the block (three rounds done before it begins), stopped
    after it."""
    service = ServiceCallbacks(db)
    service.start()
    try:
        while service.rounds < 3:
            time.sleep(0.05)
        yield service
    finally:
        service.stop.set()
        service.join(timeout=30)


def test_the_services_callbacks_never_fail_while_the_upgrade_migrates(install: Install) -> None:
    """The service keeps calling the product's callbacks while this release's migrate upgrades
    a database of the previous release: no call may fail (a function dropped by a migration and
    created again by its file later would fail every call in between, 42883)."""
    at = install
    at.run(at.old, "migrate", "--create-service-tables", login="owner")
    at.db.set_server_topic(at.worker.topic)
    with service_calling(at.db) as service:
        before = service.rounds
        at.run(at.new, "migrate", login="owner")
        during = service.rounds - before
    assert service.failures == [], service.failures[:5]
    assert during >= 3, f"only {during} rounds of callbacks while migrate ran"
    events = at.db.one("select count(*) from recording_finalize.outbox")[0]
    assert events == service.rounds, "a completed recording without its event"


def test_rollback_with_the_targets_sql_keeps_the_services_calls_working(install: Install) -> None:
    """With --target-sql (the previous release's own SQL tree), rollback creates that release's
    functions in its one transaction: the service's calls find them from its commit on, and the
    previous release's worker runs on the database without its migrate. A call in flight at
    the commit (begun under this release's functions, its next statement planned after them)
    may fail: at most one per service connection, here one. Without --target-sql every call
    fails until the previous release's migrate has run."""
    at = install
    at.run(at.old, "migrate", "--create-service-tables", login="owner")
    at.db.set_server_topic(at.worker.topic)
    at.stuck(2)
    # Install step 6: CREATE on the database taken back after the first migrate.
    owner = at.template.owner_user
    with at.db.connect() as conn:
        conn.execute(f'revoke create on database "{at.db.name}" from {owner}')
    at.run(at.new, "migrate", login="owner")
    assert at.cycle(at.new)["reconciled"] == 2
    with service_calling(at.db) as service:
        before = service.rounds
        done = at.run(at.new, "rollback", "--to", PREVIOUS, "--yes", "--target-sql",
                      str(_installed_sql(at.old.parents[1])), login="owner")
        # The previous release's worker at once, its migrate not run.
        assert at.cycle(at.old)["error"] is None
        during = service.rounds - before
    assert len(service.failures) <= 1, service.failures[:5]
    assert all(f.startswith("42883") for f in service.failures), service.failures
    assert during >= 3, f"only {during} rounds of callbacks while rollback ran"
    assert "function files created (from --target-sql" in done.stdout, done.stdout
    status = at.run(at.old, "status", "--json", login="operator")
    assert json.loads(status.stdout)["schema"]["matches"] is True
    # What its migrate would do is done: the previous release's migrate applies no function.
    # But it asks for CREATE on the database on every run (install step 6 took it back): it
    # fails without it, and rollback says so, with the grant for that run.
    assert (f'grant create on database {at.db.name} to {owner};' in done.stdout
            and f'revoke create on database {at.db.name} from {owner};' in done.stdout), \
        done.stdout
    failed = at.run(at.old, "migrate", login="owner", expect=1)
    assert "permission denied for database" in failed.stderr, failed.stderr
    with at.db.connect() as conn:
        conn.execute(f'grant create on database "{at.db.name}" to {owner}')
    again = at.run(at.old, "migrate", login="owner")
    assert "function files applied: 0" in again.stdout, again.stdout


def test_rollback_refuses_what_it_cannot_reach(install: Install) -> None:
    """Exit 2, nothing written: a version it has no record of, a database never migrated, a
    migration without a down step, a worker still connected."""
    at = install
    unknown = at.run(at.new, "rollback", "--to", "0.3.0", "--yes", login="owner", expect=2)
    assert f"it can roll back to {PREVIOUS}" in unknown.stderr, unknown.stderr
    empty = at.run(at.new, "rollback", "--to", PREVIOUS, "--yes", login="owner", expect=2)
    assert "nothing to roll back" in empty.stderr, empty.stderr
    at.run(at.new, "migrate", "--create-service-tables", login="owner")
    (at.new_sql / "migrations" / "rollback" / f"{PROBE}.sql").unlink()
    missing = at.run(at.new, "rollback", "--to", PREVIOUS, "--yes", login="owner", expect=2)
    assert f"migration {PROBE} has no down step" in missing.stderr, missing.stderr
    (at.new_sql / "migrations" / "rollback" / f"{PROBE}.sql").write_text(PROBE_DOWN)
    applied = "select count(*) from recording_finalize_migrations._yoyo_migration"
    before = at.db.one(applied)
    with psycopg.connect(at.db.worker_url):
        busy = at.run(at.new, "rollback", "--to", PREVIOUS, "--yes", login="owner", expect=2)
        assert "the worker is still connected" in busy.stderr, busy.stderr
    assert at.db.one(applied) == before, "a refused rollback wrote"
    at.run(at.new, "rollback", "--to", PREVIOUS, "--yes", login="owner")


def test_the_plan_cautions_that_the_previous_release_never_holds(install: Install) -> None:
    """The outbox's published marks keep the product's own events from going out twice, not the
    service's: the release before the republish hold republishes every Available recording of
    its window that service_events does not show, and an outbox that forgot what it delivered
    (CAP keeps a day) then gets a second event for each. The plan says so before --yes."""
    at = install
    at.run(at.new, "migrate", "--create-service-tables", login="owner")
    planned = at.run(at.new, "rollback", "--to", PREVIOUS, login="owner")
    said = " ".join(planned.stdout.split())
    assert (f"caution: {PREVIOUS} never holds republishing and does not know how far "
            "service_events remembers") in said, planned.stdout
    assert "RFR_REPUBLISH_WINDOW below the retention minus the SLA" in said, planned.stdout


def test_the_old_fallback_sends_everything_again(install: Install) -> None:
    """The documented fallback before rollback existed: uninstall, then the older migrate. The
    product's outbox goes with its published marks, and the older release republishes every
    Available recording it finds in its window: what the rollback test would catch."""
    at = install
    at.run(at.old, "migrate", "--create-service-tables", login="owner")
    at.db.set_server_topic(at.worker.topic)
    first = at.stuck(3)
    at.cycle(at.old)
    # Discovery looks back from an SLA ago: these became Available "long ago" for it.
    at.db.one("update messenger.call_recordings set available_at = now() - interval '2 hours' "
              "returning 1")
    at.run(at.new, "uninstall", "--yes", login="owner")
    at.run(at.old, "migrate", login="owner")
    at.db.set_server_topic(at.worker.topic)
    at.cycle(at.old)
    at.cycle(at.old)
    messages = consume(at.worker.stack, at.worker.topic, expect=2 * len(first), idle_s=2.0,
                       timeout_s=30.0)
    per_recording = collections.Counter(m.value["recordingId"] for m in messages)
    assert {str(r): 2 for r in first} == dict(per_recording)



def test_every_migration_newer_than_the_previous_release_has_its_down_step() -> None:
    """The convention of sql/README.md ("The way back"): a migration the previous release does
    not ship comes with sql/migrations/rollback/<its name>.sql, and the release record names
    what the previous release shipped."""
    sql = REPO / "sql"
    record = sql / "migrations" / "rollback" / f"{PREVIOUS}.sha256"
    shipped = {line.split()[1] for line in record.read_text().splitlines() if line.strip()}
    newer = [p.stem for p in sorted((sql / "migrations").glob("*.sql"))
             if f"migrations/{p.name}" not in shipped]
    lacking = [name for name in newer
               if not (sql / "migrations" / "rollback" / f"{name}.sql").is_file()]
    assert lacking == [], f"migrations without a down step in sql/migrations/rollback: {lacking}"
    # No down step without its migration (a renamed migration left its old one behind).
    orphans = [p.name for p in (sql / "migrations" / "rollback").glob("*.sql")
               if p.stem not in newer]
    assert orphans == [], orphans


def test_an_earlier_reference_text_is_listed_with_its_statements() -> None:
    """The previous release's reference adapter, when this tree's differs from it in comments
    only, is listed in driver/adapter.py with the sha256 of its statements: what lets migrate
    keep it and rollback reach it."""
    if subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", PREVIOUS_COMMIT],
                      capture_output=True).returncode != 0:
        pytest.skip(f"the commit of {PREVIOUS} is not in this clone")
    then = subprocess.run(["git", "-C", str(REPO), "show",
                           f"{PREVIOUS_COMMIT}:sql/adapter/reference.sql"],
                          capture_output=True, check=True).stdout.decode()
    now = (REPO / "sql" / "adapter" / "reference.sql").read_text(encoding="utf-8")
    sha = hashlib.sha256(then.encode()).hexdigest()
    assert adapter.EARLIER_REFERENCE_TEXTS.get(sha) == adapter.statements_sha256(then)
    assert adapter.same_reference(sha, hashlib.sha256(now.encode()).hexdigest(), now)
    # A statement changed is another adapter: migrate upgrades it, rollback refuses.
    edited = now.replace("create or replace view", "create or replace view ", 1)
    assert not adapter.same_reference(sha, hashlib.sha256(edited.encode()).hexdigest(), edited)


def test_the_release_record_is_what_the_previous_release_shipped() -> None:
    """sql/migrations/rollback/<previous>.sha256 = sha256sum of its commit's SQL files."""
    if subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", PREVIOUS_COMMIT],
                      capture_output=True).returncode != 0:
        pytest.skip(f"the commit of {PREVIOUS} is not in this clone")
    names = subprocess.run(["git", "-C", str(REPO), "ls-tree", "-r", "--name-only",
                            PREVIOUS_COMMIT, "sql/"], capture_output=True, text=True,
                           check=True).stdout.split()
    wanted = sorted(n.removeprefix("sql/") for n in names
                    if n == "sql/adapter/reference.sql"
                    or (n.startswith(("sql/migrations/", "sql/functions/"))
                        and n.endswith(".sql") and n.count("/") == 2))
    expected = {name: hashlib.sha256(subprocess.run(
        ["git", "-C", str(REPO), "show", f"{PREVIOUS_COMMIT}:sql/{name}"],
        capture_output=True, check=True).stdout).hexdigest() for name in wanted}
    record = REPO / "sql" / "migrations" / "rollback" / f"{PREVIOUS}.sha256"
    listed = {line.split()[1]: line.split()[0] for line in record.read_text().splitlines()
              if line.strip()}
    assert listed == expected
