"""What ``service-sql`` prints for a DBA fits the database ``DATABASE_URL`` reaches: the GRANTs
derived from the DBA's adapter installed there (an EF Core schema, tests/fixtures/efcore/), run
as printed by the service's owner, let migrate's check pass; uninstall's revoke lines fit it too;
``recommended`` gives a partitioned recordings table the partitioned form of its index.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import psycopg
from conftest import CLI, Stack, _admin, _base_env
from recording_finalize.install import derive
from test_foreign_schema import FIXTURES, build_world, ef

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
