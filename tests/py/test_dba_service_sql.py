"""What the tooling prints for a DBA whose service schema is not the reference one fits that
schema: ``service-sql recommended`` derived from the DBA's adapter (a partitioned table of quoted
PascalCase names, tests/fixtures/masstransit/; an integer status mapped with CASE,
tests/fixtures/efcore/), run as the service's owner, who holds no privilege on the product's
schemas; ``explain`` telling the service's own pending event; the runbook's SQL run as printed.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import test_foreign_schema as efcore
import test_masstransit_schema as mt
from conftest import Stack, _base_env
from recording_finalize import contract

REPO = Path(__file__).resolve().parents[2]
#: The reference schema's tables: none may be named in what is printed for a DBA's schema.
REFERENCE_NAMES = re.compile(rf"\b(?:{'|'.join(contract.TABLES)})\b")


def _psql(url: str, text: str) -> None:
    proc = subprocess.run(["psql", "--no-psqlrc", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url],
                          input=text, capture_output=True, text=True, timeout=120,
                          env=_base_env())
    assert proc.returncode == 0 and "ERROR" not in proc.stderr, (proc.stderr, text)


def _said(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}"


@pytest.fixture(scope="module")
def installed(stack: Stack) -> Iterator[tuple[mt.World, Any]]:
    """The MassTransit service installed as docs/install.md says (its schema, its grants, the
    DBA's adapter, migrate), and one recording the service made Available, its event still in
    MassTransit's outbox."""
    with mt.build_world(stack) as world:
        world.psql(mt.FIXTURES / "schema.sql", world.service)
        world.psql(mt.FIXTURES / "grants.sql", world.service, product_owner=world.owner.name)
        world.psql(mt.FIXTURES / "adapter.sql", world.owner)
        migrated = world.cli("migrate", who=world.owner)
        assert migrated.returncode == 0, _said(migrated)
        with world.connect(world.service) as conn:
            session = mt.svc.create_session(conn, started_ago=timedelta(minutes=5))
            ledger: dict[Any, Any] = {}
            rec = mt.svc.start_recording(conn, session, started_ago=timedelta(minutes=5),
                                         ledger=ledger)
            mt.svc.end_session(conn, session, stop=rec, ledger=ledger)
            mt.svc.complete_ingest(conn, rec, file_id=f"recordings/{rec.id}", size_bytes=10,
                                   duration_seconds=60, format="Webm", ledger=ledger)
        yield world, rec


def test_recommended_fits_a_partitioned_dbas_schema_run_by_the_services_owner(
        installed: tuple[mt.World, Any]) -> None:
    world, rec = installed
    # The service's owner: it owns schema messenger and its tables, and nothing of the product.
    assert world.all("select has_schema_privilege(%s, 'recording_finalize', 'USAGE')",
                     (world.service.name,)) == [(False,)]
    proc = world.cli("service-sql", "recommended", who=world.service)
    assert proc.returncode == 0, _said(proc)
    printed = proc.stdout
    assert REFERENCE_NAMES.search(printed) is None, printed
    assert all(len(line) <= 100 for line in printed.splitlines()), printed
    assert not re.search(r"^-- NOT DERIVED", printed, re.M), printed
    flat = " ".join(printed.split())
    partitions = [str(name) for (name,) in world.all(
        "select c.relname from pg_inherits as i join pg_class as c on c.oid = i.inhrelid "
        "where i.inhparent = 'messenger.\"CallRecordings\"'::regclass order by 1")]
    assert partitions, "the fixture's table has no partition"
    # Item 1: the partitioned form in full, on the table's own columns.
    assert ('create index if not exists "CallRecordings_available_at_idx" on only '
            'messenger."CallRecordings" ("AvailableAt", "Id") where "Status" = \'Available\';'
            ) in flat, printed
    for partition in partitions:
        index = f'"{partition}_available_at_idx"'
        assert (f'create index concurrently if not exists {index} on messenger."{partition}" '
                f'("AvailableAt", "Id") where "Status" = \'Available\';') in flat, printed
        assert (f'alter index messenger."CallRecordings_available_at_idx" attach partition '
                f"messenger.{index};") in flat, printed
    assert "takes the partitioned form" not in printed, printed
    # Item 2: the guard on the table's status column.
    assert 'before update of "Status" on messenger."CallRecordings"' in flat, printed
    # As printed, by the tables' owner: every index valid, and the guard refuses a move back.
    _psql(world.url(world.service), printed)
    indexes = world.all(
        "select c.relname, x.indisvalid from pg_index as x join pg_class as c "
        "on c.oid = x.indexrelid where c.relname like '%%available_at_idx' order by 1")
    assert indexes == sorted([(f"{p}_available_at_idx", True) for p in partitions]
                             + [("CallRecordings_available_at_idx", True)]), indexes
    with world.connect(world.service) as conn, pytest.raises(psycopg.Error) as refused:
        conn.execute('update messenger."CallRecordings" set "Status" = \'Uploading\' '
                     'where "Id" = %s', (rec.id,))
    assert refused.value.sqlstate == "RF008", refused.value


def test_recommended_writes_a_case_mapped_status_as_the_view_does(stack: Stack) -> None:
    with efcore.build_world(stack, "unused-bucket", "unused-topic") as world:
        world.psql(efcore.FIXTURES / "schema.sql", world.service)
        world.psql(efcore.FIXTURES / "grants.sql", world.service,
                   product_owner=world.owner.name)
        world.psql(efcore.FIXTURES / "adapter.sql", world.owner)
        printed = world.cli("service-sql", "recommended", who=world.service).stdout
        assert REFERENCE_NAMES.search(printed) is None, printed
        assert all(len(line) <= 100 for line in printed.splitlines()), printed
        flat = " ".join(printed.split())
        # The predicate is the view's own CASE, so that discovery's status = 'Available'
        # through the view matches it; never the reference schema's status::text.
        case = ("CASE status WHEN 0 THEN 'Pending'::text WHEN 1 THEN 'Recording'::text WHEN 2 "
                "THEN 'Uploading'::text WHEN 3 THEN 'Available'::text WHEN 4 THEN "
                "'Failed'::text ELSE NULL::text END")
        assert ("create index concurrently if not exists recordings_available_at_idx on "
                f"messenger.recordings (available_at, id) where ({case}) = 'Available';"
                ) in flat, printed
        assert "before update of status on messenger.recordings" in flat, printed
        # Item 3: the service's own CHECK in the costlier form.
        assert ("add constraint ck_recordings_session_kind check ( "
                "session_kind::text = any('{Direct,Conference}'::text[]) ) not valid;"
                ) in flat, printed
        _psql(world.url(world.service), printed)

        # A status the view does not compute from the row alone: said, not guessed.
        adapter = (efcore.FIXTURES / "adapter.sql").read_text(encoding="utf-8")
        view = re.search(r"create or replace view recording_finalize_adapter\.recordings as"
                         r".*?;\n", adapter, re.S)
        assert view is not None, "the fixture's adapter has no recordings view"
        _psql(world.url(world.owner), re.sub(r"case r\.status.*?end as status",
                                             "(select 'Available'::text) as status", view[0],
                                             count=1, flags=re.S))
        not_derived = world.cli("service-sql", "recommended", who=world.service).stdout
        assert REFERENCE_NAMES.search(not_derived) is None, not_derived
        assert len(re.findall(r"^-- NOT DERIVED:", not_derived, re.M)) == 2, not_derived
        assert not re.search(r"^create (?:index|or replace trigger)", not_derived, re.M), \
            not_derived


def test_explain_tells_the_services_pending_event_and_no_absent_version(
        installed: tuple[mt.World, Any]) -> None:
    world, rec = installed
    as_json = world.cli("explain", str(rec.id), "--json", who=world.operator)
    assert as_json.returncode == 0, _said(as_json)
    doc = json.loads(as_json.stdout)
    assert doc["outbox"] is None and doc["serviceEvent"]["enqueuedAt"], doc
    assert doc["serviceEvent"]["publishedAt"] is None, doc
    text = world.cli("explain", str(rec.id), who=world.operator)
    assert text.returncode == 0, _said(text)
    event = [line for line in text.stdout.splitlines() if line.startswith("event")]
    assert len(event) == 1 and "the service's own" in event[0] \
        and "not yet published" in event[0], text.stdout
    assert "none" not in event[0], text.stdout
    assert "None" not in text.stdout, text.stdout
    status = next(line for line in text.stdout.splitlines() if "status Available" in line)
    assert "version" not in status, status


def _runbook_sql() -> list[str]:
    """Every inline SQL statement of docs/runbook.md an operator is told to run (psql's -c
    included)."""
    text = (REPO / "docs" / "runbook.md").read_text(encoding="utf-8")
    spans = [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", text, re.S)]
    spans = [re.sub(r'^psql -c "(.*)"$', r"\1", s) for s in spans]
    return [s for s in spans if re.match(r"(?:select|update|insert|delete|with)\b", s, re.I)]


def test_the_runbooks_sql_names_no_reference_table_and_runs_on_a_dbas_schema(
        installed: tuple[mt.World, Any]) -> None:
    world, _rec = installed
    statements = _runbook_sql()
    assert statements, "the runbook holds no SQL"
    named = [s for s in statements if REFERENCE_NAMES.search(s)]
    assert named == [], named
    # As printed, each by the login the runbook names for it.
    ran = 0
    for statement in statements:
        who = (world.owner if "recording_finalize_adapter." in statement else world.operator)
        if "<" in statement:  # a placeholder the operator fills in
            continue
        with world.connect(who) as conn, contextlib.closing(conn.cursor()) as cur:
            cur.execute(statement.encode())
            ran += 1
    assert ran >= 2, statements


def test_recommended_derives_through_a_scalar_sub_select_of_the_select_list(
        stack: Stack) -> None:
    """A recordings view of one table whose session_id comes from a scalar sub-select on the
    sessions table (a service whose recordings reference their session by a bigint key: the
    uuid is the session's), as docs/install.md allows: recommended is still written on the one
    table of its FROM, never refused as a view of several relations."""
    with efcore.build_world(stack, "unused-bucket", "unused-topic") as world:
        world.psql(efcore.FIXTURES / "schema.sql", world.service)
        world.psql(efcore.FIXTURES / "grants.sql", world.service,
                   product_owner=world.owner.name)
        # A table whose name sorts before the recordings table's: what is printed is named
        # after the table of the FROM, never the first relation the view depends on.
        _psql(world.url(world.service), "create table messenger.calls (id uuid primary key);\n"
              f"grant select on messenger.calls to {world.owner.name};\n")
        adapter = (efcore.FIXTURES / "adapter.sql").read_text(encoding="utf-8")
        sub_select = ("coalesce((select c.id from messenger.calls as c where c.id = "
                      "r.session_id), r.session_id) as session_id,")
        adapter, replaced = re.subn(r"(recordings as\nselect\n    r\.id,\n"
                                    r"    r\.session_kind::text as session_kind,\n    )"
                                    r"r\.session_id,", rf"\g<1>{sub_select}", adapter, count=1)
        assert replaced == 1, "the fixture's recordings view changed"
        _psql(world.url(world.owner), adapter)
        printed = world.cli("service-sql", "recommended", who=world.service).stdout
        assert "relations, not one table" not in printed, printed
        assert not re.search(r"^-- NOT DERIVED", printed, re.M), printed
        flat = " ".join(printed.split())
        assert ("create index concurrently if not exists recordings_available_at_idx on "
                "messenger.recordings (available_at, id) where (CASE status WHEN 0") in flat, \
            printed
        assert "before update of status on messenger.recordings" in flat, printed
        assert "calls_" not in printed, printed
        _psql(world.url(world.service), printed)


def test_recommended_says_why_it_cannot_index_an_enum_status_cast_to_text(
        stack: Stack) -> None:
    """A service whose status is a PostgreSQL enum (Npgsql maps C# enums so), mapped in the
    view as ``initcap(r.status::text)``: an enum's ::text is only STABLE, so PostgreSQL refuses
    any index whose predicate is that expression. recommended says so and how to map it, instead
    of printing an index that fails when the DBA runs it."""
    with efcore.build_world(stack, "unused-bucket", "unused-topic") as world:
        world.psql(efcore.FIXTURES / "schema.sql", world.service)
        world.psql(efcore.FIXTURES / "grants.sql", world.service,
                   product_owner=world.owner.name)
        _psql(world.url(world.service),
              "create type messenger.recording_state as enum "
              "('pending', 'recording', 'uploading', 'available', 'failed');\n"
              "alter table messenger.recordings add column state messenger.recording_state;\n"
              f"grant select (state) on messenger.recordings to {world.owner.name};\n")
        adapter, replaced = re.subn(r"case r\.status\n.*?end as status,",
                                    "initcap(r.state::text) as status,",
                                    (efcore.FIXTURES / "adapter.sql").read_text(encoding="utf-8"),
                                    count=1, flags=re.S)
        assert replaced == 1, "the fixture's recordings view changed"
        _psql(world.url(world.owner), adapter)
        printed = world.cli("service-sql", "recommended", who=world.service).stdout
        assert not re.search(r"^create index", printed, re.M), printed
        said = " ".join(" ".join(line.removeprefix("--").split())
                        for line in printed.splitlines() if line.startswith("--"))
        assert ("NOT DERIVED: PostgreSQL refuses the index (available_at, id) where "
                "(initcap((state)::text)) = 'Available' on messenger.recordings: functions in "
                "index predicate must be marked IMMUTABLE.") in said, printed
        assert "with a CASE of the enum's labels" in said, printed
        assert all(len(line) <= 100 for line in printed.splitlines()), printed
        # What is printed still runs as printed (the terminal guard needs no IMMUTABLE).
        _psql(world.url(world.service), printed)
