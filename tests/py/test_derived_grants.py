"""What ``service-sql`` prints for a DBA fits the database ``DATABASE_URL`` reaches: the GRANTs
derived from the DBA's adapter installed there (an EF Core schema, tests/fixtures/efcore/), run
as printed by the service's owner, let migrate's check pass; uninstall's revoke lines fit it too;
``recommended`` gives a partitioned recordings table the partitioned form of its index. Over the
install's life: UPDATE only for what the lock through the recordings view reaches, no CREATE
once installed, printed by the service's owner too, schema messenger created where it is
missing.
"""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import CLI, Db, Stack, _admin, _base_env
from recording_finalize.install import derive
from test_foreign_schema import FIXTURES, Login, World, build_world, ef

REPO = Path(__file__).resolve().parents[2]


def _psql(url: str, text: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["psql", "--no-psqlrc", "-X", "-v", "ON_ERROR_STOP=1", "-d", url],
                          input=text, capture_output=True, text=True, timeout=120,
                          env=_base_env())
    assert proc.returncode == 0 and "ERROR" not in proc.stderr, (proc.stderr, text)
    return proc


def test_the_printed_grants_fit_a_dbas_adapter_and_migrates_check_passes(stack: Stack) -> None:
    with build_world(stack, "unused-bucket", "unused-topic") as world:
        world.psql(FIXTURES / "schema.sql", world.service)
        owner = world.owner.name
        # Before the adapter: what lets its creator in (CONNECT, USAGE, the install's CREATE),
        # nothing of the reference schema's columns.
        first = world.cli("service-sql", "grants", "--to", owner, who=world.service).stdout
        assert "call_recordings" not in first, first
        assert "grant usage, create on schema messenger" in first, first
        _psql(world.url(world.service), first)
        world.psql(FIXTURES / "adapter.sql", world.owner)
        # An active recording, so that the check rehearses every write the worker makes.
        with world.connect(world.service) as conn:
            ef.start_recording(conn, ef.create_session(conn))
        printed = world.cli("service-sql", "grants", "--to", owner, who=world.owner).stdout
        assert all(len(line) <= 100 for line in printed.splitlines()), printed
        flat = " ".join(printed.split())
        assert "media_type" not in printed.split("messenger.recordings")[0], printed
        assert "messenger.call_recordings" not in printed, printed
        # What the views read, the functions and the status-history trigger write, and the
        # policy that row-level security needs.
        for line in (f"grant insert (changed_at, changed_by, from_status, id, recording_id, "
                     f"to_status) on messenger.recording_status_history to {owner};",
                     "on messenger.outbox_messages to",
                     "create policy recording_finalize_all_rows on messenger.recordings"):
            assert line in flat, (line, printed)
        assert "grant update (available_at, duration, ended_at, failed_at, failure_reason, " \
               "file_id, format, row_version, size_bytes, started_at, status, updated_at) on " \
               f"messenger.recordings to {owner};" in flat, printed
        assert "NOT DERIVED" not in printed, printed
        _psql(world.url(world.service), printed)
        done = world.cli("migrate", who=world.owner)
        assert "not rehearsed" not in done.stdout, done.stdout
        # A table under the DBA's adapter that the role may no longer read: exit 2, named.
        _psql(world.url(world.service),
              f"revoke select on messenger.outbox_messages from {owner};")
        refused = world.cli("migrate", who=world.owner, expect=2)
        assert "service_events" in refused.stderr, refused.stderr
        assert "database error" not in refused.stderr, refused.stderr
        _psql(world.url(world.service), printed)
        world.cli("migrate", who=world.owner)
        # uninstall's revoke lines take them back, as printed, on this schema.
        listed = world.cli("uninstall", who=world.owner).stdout
        revokes = [line.strip() for line in listed.splitlines()
                   if line.strip().startswith(("revoke ", "drop policy"))]
        assert f"revoke all on messenger.recording_status_history from {owner};" in revokes
        assert not any("call_recordings" in line for line in revokes), revokes
        world.cli("uninstall", "--yes", who=world.owner)
        _psql(world.url(world.service), "\n".join(revokes))
        assert world.all(
            "select c.relname from pg_class as c where c.relnamespace = 'messenger'::regnamespace"
            " and c.relacl::text like %s", (f"%{owner}%",)) == []


def test_the_body_reader_finds_writes_and_reads() -> None:
    body = '''
        -- update messenger.not_this (a comment)
        with moved as (
            update messenger.recordings as r
            set status = 3, "Note" = 'x, y', duration = make_interval(secs => p_d),
                row_version = r.row_version + 1
            where r.id = p_id and not r.is_deleted
            returning 1
        )
        insert into messenger."Audit" (id, "Kind") select gen_random_uuid(), s.kind
        from messenger.sessions as s where s.id = p_session;
    '''
    found, dynamic = derive.statements(body)
    by_verb = {(s.verb, s.relation): s for s in found}
    assert not dynamic
    assert by_verb[("update", "messenger.recordings")].columns == [
        "status", "Note", "duration", "row_version"]
    assert by_verb[("insert", 'messenger."Audit"')].columns == ["id", "Kind"]
    assert ("select", "messenger.sessions") in by_verb
    assert all(s.relation != "messenger.not_this" for s in found)


def test_recommended_prints_the_partitioned_form_on_a_partitioned_recordings_table(
        stack: Stack) -> None:
    name = f"rfr_part_{uuid.uuid4().hex[:10]}"
    with _admin(stack) as conn:
        conn.execute(f'create database "{name}"')
    try:
        with psycopg.connect(stack.url_for(name), autocommit=True) as conn:
            conn.execute("create schema messenger")
            conn.execute("""
                create table messenger.call_recordings (
                    id uuid not null, session_kind text not null, session_id uuid not null,
                    status varchar(16) not null, available_at timestamptz,
                    created_at timestamptz not null, primary key (id, created_at)
                ) partition by range (created_at)""")
            conn.execute("create table messenger.call_recordings_2026_11 partition of "
                         "messenger.call_recordings for values from ('2026-11-01') to "
                         "('2026-12-01')")
            conn.execute("create table messenger.call_recordings_2026_12 partition of "
                         "messenger.call_recordings for values from ('2026-12-01') to "
                         "('2027-01-01')")
        env = _base_env() | {"DATABASE_URL": stack.url_for(name)}
        plain = subprocess.run([CLI, "service-sql", "recommended"], env=_base_env(),
                               capture_output=True, text=True, timeout=60)
        assert plain.returncode == 0 and "on only" not in plain.stdout
        proc = subprocess.run([CLI, "service-sql", "recommended"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        # Item 1 only (the others change the service's CHECKs and triggers).
        first = proc.stdout.split("-- 2. A guard")[0]
        assert "on only messenger.call_recordings (available_at, id)" in first, first
        assert "create index concurrently if not exists call_recordings_2026_12_available_at_idx"\
            in first, first
        _psql(stack.url_for(name), first)
        rows = psycopg.connect(stack.url_for(name), autocommit=True).execute(
            "select c.relname, x.indisvalid from pg_index as x "
            "join pg_class as c on c.oid = x.indexrelid "
            "where c.relname like '%available_at_idx' order by 1").fetchall()
        assert rows == [("call_recordings_2026_11_available_at_idx", True),
                        ("call_recordings_2026_12_available_at_idx", True),
                        ("call_recordings_available_at_idx", True)], rows
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


# ------------------------------------------------------------------------------------------
# service-sql grants over an install's life, on a DBA's schema: before the first migrate, after
# it (step 6 took CREATE back), printed by the service's owner; and on a database without a
# schema messenger.

#: The EF Core adapter's recordings view, its started_at also read from the session in a scalar
#: subquery of its select list: a table the view reads there is not locked through it.
_SUBSELECT_STARTED_AT = ("coalesce(r.started_at, (select s.started_at from messenger.sessions "
                         "as s where s.id = r.session_id)) as started_at,")


def _comment_of(printed: str, table: str) -> str:
    """The comment that heads ``table``'s GRANTs (its lines joined)."""
    flat = " ".join(printed.split())
    start = flat.index(f"-- {table}: ")
    return flat[start:flat.index(";", start)]


@pytest.fixture(scope="module")
def ef_installed(stack: Stack) -> Iterator[tuple[World, str]]:
    """The EF Core service as docs/install.md installs it: step 2's GRANTs as printed, the
    DBA's adapter (its recordings view reading the sessions in a scalar subquery), step 4's
    GRANTs as printed (kept, as printed before the first migrate), migrate, then step 6
    (CREATE taken back)."""
    with build_world(stack, "unused-bucket", "unused-topic") as world:
        world.psql(FIXTURES / "schema.sql", world.service)
        owner = world.owner.name
        first = world.cli("service-sql", "grants", "--to", owner, who=world.service).stdout
        _psql(world.url(world.service), first)
        adapter = (FIXTURES / "adapter.sql").read_text(encoding="utf-8")
        assert adapter.count("\n    r.started_at,\n") == 1, "the fixture's recordings view changed"
        _psql(world.url(world.owner),
              adapter.replace("\n    r.started_at,\n", f"\n    {_SUBSELECT_STARTED_AT}\n"))
        with world.connect(world.service) as conn:
            ef.start_recording(conn, ef.create_session(conn))
        before = world.cli("service-sql", "grants", "--to", owner, who=world.owner).stdout
        _psql(world.url(world.service), before)
        world.cli("migrate", who=world.owner)
        _psql(world.url(world.service),
              f'revoke create on database "{world.name}" from {owner};\n'
              f"revoke create on schema messenger from {owner};")
        yield world, before


def test_a_table_read_only_in_a_sub_select_of_the_recordings_view_is_not_locked(
        ef_installed: tuple[World, str]) -> None:
    world, before = ef_installed
    assert "NOT DERIVED" not in before, before
    # Locked: the table of the view's FROM; read in its select list's subquery: SELECT only.
    assert "locked through view recordings" in _comment_of(before, "messenger.recordings")
    sessions = _comment_of(before, "messenger.sessions")
    assert "read by view recording_finalize_adapter.recordings" in sessions, before
    assert "locked" not in sessions, before
    assert not re.search(r"^grant update .* on messenger\.sessions ", before, re.M), before
    # As granted: the product's lock through the view takes no privilege on the sessions.
    with world.connect(world.owner) as conn:
        locked = conn.execute("select id from recording_finalize_adapter.recordings "
                              "for no key update skip locked").fetchall()
    assert locked, "no recording to lock"
    assert world.all("select has_table_privilege(%s, 'messenger.sessions', 'UPDATE')",
                     (world.owner.name,)) == [(False,)]


def test_once_installed_the_grants_leave_create_out_and_do_not_undo_step_6(
        ef_installed: tuple[World, str]) -> None:
    world, _before = ef_installed
    owner = world.owner.name
    # As docs/install.md says after an edit of the adapter: printed as the product's owner,
    # run as printed by the service's owner (here also the database's).
    printed = world.cli("service-sql", "grants", "--to", owner, who=world.owner).stdout
    statements = [line for line in printed.splitlines() if not line.startswith("--")]
    assert not any("create on" in line or "connect, create" in line for line in statements), \
        printed
    assert f"grant usage on schema messenger to {owner};" in printed, printed
    assert "'grant connect on database %I to %I'" in printed, printed
    flat = " ".join(printed.split())
    assert "needed only to install" in flat and "step 6" in flat, printed
    # The exact statements a release that must create something needs, as comments.
    assert f"-- grant create on database {world.name} to {owner};" in printed, printed
    assert f"-- grant create on schema messenger to {owner};" in printed, printed
    _psql(world.url(world.service), printed)
    assert world.all("select has_database_privilege(%s, current_database(), 'CREATE'), "
                     "has_schema_privilege(%s, 'messenger', 'CREATE'), "
                     "has_database_privilege(%s, current_database(), 'CONNECT')",
                     (owner, owner, owner)) == [(False, False, True)]
    world.cli("migrate", who=world.owner)


def test_the_services_owner_prints_the_grants_of_a_dbas_adapter_once_installed(
        ef_installed: tuple[World, str]) -> None:
    world, _before = ef_installed
    # The service's owner: it owns the service's tables and nothing of the product's.
    assert world.all("select has_schema_privilege(%s, 'recording_finalize', 'USAGE')",
                     (world.service.name,)) == [(False,)]
    by_service = world.cli("service-sql", "grants", "--to", world.owner.name,
                           who=world.service)
    by_owner = world.cli("service-sql", "grants", "--to", world.owner.name, who=world.owner)
    assert by_service.stdout == by_owner.stdout, (by_service.stdout, by_owner.stdout)


def test_on_the_reference_schema_installed_the_services_owner_is_told_whose_login_it_needs(
        stack: Stack, db: Db) -> None:
    owner = psycopg.conninfo.conninfo_to_dict(db.schema_owner_url)["user"]
    login, password = f"rfr_svc_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    with _admin(stack) as conn:
        conn.execute(f"create role {login} login password '{password}'")
    try:
        env = _base_env() | {"DATABASE_URL": stack.url_for(db.name, login, password)}
        refused = subprocess.run([CLI, "service-sql", "grants", "--to", str(owner)], env=env,
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2, (refused.stdout, refused.stderr)
        said = " ".join(refused.stderr.split())
        assert "permission denied" not in said, said
        for words in (f"login {login} may not call recording_finalize.schema_state()",
                      "migrate's record", "the product's owner",
                      "recording_finalize_operator", "as the service's owner"):
            assert words in said, (words, said)
        # The product's owner prints the reference GRANTs, without the install's CREATE.
        env = _base_env() | {"DATABASE_URL": db.schema_owner_url}
        printed = subprocess.run([CLI, "service-sql", "grants", "--to", str(owner)], env=env,
                                 capture_output=True, text=True, timeout=60)
        assert printed.returncode == 0, printed.stderr
        assert f"grant usage on schema messenger to {owner};" in printed.stdout, printed.stdout
        assert "on messenger.call_recordings" in printed.stdout, printed.stdout
        assert "'grant connect on database %I to %I'" in printed.stdout, printed.stdout
    finally:
        with _admin(stack) as conn:
            conn.execute(f"drop role if exists {login}")


def test_without_schema_messenger_the_grants_create_it_first_and_migrate_passes(
        stack: Stack) -> None:
    """A Django-like service: its tables in schema public, no schema messenger (the EF Core
    fixture moved to public)."""
    def in_public(text: str) -> str:
        return (text.replace("messenger.", "public.").replace("'messenger'", "'public'")
                .replace("SCHEMA messenger;", "SCHEMA public;"))

    with build_world(stack, "unused-bucket", "unused-topic") as world:
        _psql(world.url(world.service),
              in_public((FIXTURES / "schema.sql").read_text(encoding="utf-8")))
        assert world.all("select count(*) from pg_namespace where nspname = 'messenger'") \
            == [(0,)]
        owner = world.owner.name
        first = world.cli("service-sql", "grants", "--to", owner, who=world.service).stdout
        create = f"create schema if not exists messenger authorization {world.service.name};"
        assert create in first, first
        assert first.index(create) < first.index("on schema messenger to"), first
        assert "not the reference one" not in first, first
        # Why, said just before it: the product's table there.
        comment = " ".join(first[first.index("$$;\n"):first.index(create)].split())
        assert "messenger.recording_finalize_attempts" in comment, first
        _psql(world.url(world.service), first)
        assert world.all("select pg_get_userbyid(nspowner) from pg_namespace "
                         "where nspname = 'messenger'") == [(world.service.name,)]
        _psql(world.url(world.owner),
              in_public((FIXTURES / "adapter.sql").read_text(encoding="utf-8")))
        printed = world.cli("service-sql", "grants", "--to", owner, who=world.owner).stdout
        assert "create schema" not in printed, printed
        assert f"grant usage on schema public to {owner};" in printed, printed
        _psql(world.url(world.service), printed)
        world.cli("migrate", who=world.owner)
        assert world.all("select pg_get_userbyid(c.relowner) from pg_class as c "
                         "where c.oid = 'messenger.recording_finalize_attempts'::regclass") \
            == [(owner,)]


def test_schema_messenger_of_the_databases_owner_beside_tables_another_role_owns(
        stack: Stack) -> None:
    """A .NET service: the database belongs to its DBA, the tables (in schema public) to the
    role that runs its migrations. Schema messenger, created by the database's owner as the
    first GRANTs print, is not the tables' owner's: the derived GRANTs, run as printed by the
    tables' owner, must not stop at the schema's grant (before any of the tables'), and
    uninstall's revoke lines name who takes back which."""
    def in_public(text: str) -> str:
        return (text.replace("messenger.", "public.").replace("'messenger'", "'public'")
                .replace("SCHEMA messenger;", "SCHEMA public;"))

    with build_world(stack, "unused-bucket", "unused-topic") as world:
        tables = Login(f"efcore_tables_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex)
        with _admin(stack) as conn:
            conn.execute(f"create role {tables.name} login password '{tables.password}'")
        try:
            with _admin(stack, world.name) as conn:
                conn.execute(f"grant create on schema public to {tables.name}")
            _psql(world.url(tables),
                  in_public((FIXTURES / "schema.sql").read_text(encoding="utf-8")))
            owner = world.owner.name
            first = world.cli("service-sql", "grants", "--to", owner, who=world.service).stdout
            _psql(world.url(world.service), first)
            _psql(world.url(world.owner),
                  in_public((FIXTURES / "adapter.sql").read_text(encoding="utf-8")))
            printed = world.cli("service-sql", "grants", "--to", owner, who=tables).stdout
            assert all(len(line) <= 100 for line in printed.splitlines()), printed
            ran = _psql(world.url(tables), printed)
            said = " ".join(ran.stderr.split())
            assert (f"the owner of schema messenger ({world.service.name}) must run: grant "
                    f"usage, create on schema messenger to {owner}") in said, said
            world.cli("migrate", who=world.owner)
            listed = world.cli("uninstall", who=world.owner).stdout
            flat = " ".join(listed.split())
            assert (f"as the owner of schema messenger ({world.service.name}): revoke all on "
                    f"schema messenger from {owner}; -- as the owner of the service's tables "
                    f"({tables.name}): ") in flat, listed
        finally:
            with _admin(stack) as conn:
                conn.execute(f'drop database if exists "{world.name}" with (force)')
                conn.execute(f"drop role if exists {tables.name}")
