"""Secrets and URLs: the DSN password and the S3/Kafka secrets never appear in the worker's
output — logs (stderr), stdout, the /metrics text — on any path, and neither the payloads it
writes nor its logs carry a URL.

Privileges (each group role can only EXECUTE its part of the API) and the hostile
``search_path`` are proven by pgTAP: ``tests/sql/_schema/privileges.sql`` and
``tests/sql/_schema/hostile_search_path.sql``. Here their wiring: real logins of the three group
roles over real connections (no table, no other role's function, no other topic), and the
product's owner, installed as a visitor, limited to the columns the service granted.

Every scan is over everything the worker printed on a path that exercises the code that could
leak: success, the database refusing the password, the database unreachable, S3 refusing the
secret key, S3 unreachable, the broker refusing SASL, ``status``/``requeue``, and ``run`` with
/metrics scraped after a cycle.
"""

from __future__ import annotations

import re
import secrets
import signal
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest
from conftest import (
    CLI,
    Db,
    Stack,
    Worker,
    _admin,
    _base_env,
    free_port,
    put_binary,
    seed_stuck,
)
from recording_finalize.contract import PRODUCT_TABLE, SCHEMA, TABLES, privileges

# A URL: a scheme, "://", then something (the logger may keep "scheme://…" with nothing after).
URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://(?!…)[^\s\"'<>…]")


def _temporary_login(db: Db, prefix: str, group: str,
                     password: str) -> Iterator[tuple[str, str]]:
    """A LOGIN role in ``group`` for one test, dropped after it: (name, password)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with db.connect() as conn:
        conn.execute(f"create role {name} login password '{password}' in role {group}")
    yield name, password
    with db.connect() as conn:
        conn.execute(f"drop role if exists {name}")


@pytest.fixture
def secret_role(db: Db) -> Iterator[tuple[str, str]]:
    """A worker login role whose password has every character a URL must quote."""
    yield from _temporary_login(db, "rfr_sec", "recording_finalize_worker",
                                f"Pw/{secrets.token_hex(6)}:@%?#&={secrets.token_hex(6)}")


@pytest.fixture
def secret_operator(db: Db) -> Iterator[tuple[str, str]]:
    """An operator login role (status, requeue) with the same kind of password."""
    name = f"rfr_sec_op_{uuid.uuid4().hex[:8]}"
    password = f"Op/{secrets.token_hex(6)}:@%?#&={secrets.token_hex(6)}"
    with db.connect() as conn:
        conn.execute(f"create role {name} login password '{password}' "
                     "in role recording_finalize_operator")
    yield name, password
    with db.connect() as conn:
        conn.execute(f"drop role if exists {name}")


def dsn(db: Db, user: str, password: str, port: int | None = None) -> str:
    parts = urlsplit(db.owner_url)
    host = parts.netloc.rsplit("@", 1)[1] if port is None else f"127.0.0.1:{port}"
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def forms(secret: str) -> set[str]:
    """The secret as it may appear: as is, URL-quoted both ways."""
    return {secret, quote(secret, safe=""), quote(secret)}


def assert_clean(text: str, secret_values: list[str], where: str) -> None:
    for value in secret_values:
        for form in forms(value):
            assert form not in text, f"a secret leaked into {where}"
    match = URL.search(text)
    assert match is None, f"a URL in {where}: {text[max(0, match.start() - 80):match.end() + 80]}"


def test_no_secret_and_no_url_in_anything_the_worker_prints(
    worker: Worker, db: Db, secret_role: tuple[str, str], secret_operator: tuple[str, str]
) -> None:
    user, password = secret_role
    op_user, op_password = secret_operator
    operator = dsn(db, op_user, op_password)
    s3_secret = worker.stack.env["AWS_SECRET_ACCESS_KEY"]
    wrong_s3 = "Wr0ng-" + secrets.token_hex(12)
    sasl = "Sasl-" + secrets.token_hex(12)
    good = dsn(db, user, password)
    # A short lock budget keeps the relay's delivery wait (SASL refused) to seconds.
    fast = {"RFR_LOCK_TTL": "20s", "RFR_MAX_RUN_DURATION": "10s", "RFR_S3_TIMEOUT": "2s"}
    found, _lost = seed_stuck(db), seed_stuck(db)
    put_binary(worker.stack, worker.bucket, found.recording_id)
    dead = free_port()

    runs = {
        "success": worker.cli("run-once", DATABASE_URL=good),
        "status": worker.cli("status", "--json", DATABASE_URL=operator),
        "requeue of a row that is not quarantined": worker.cli(
            "requeue", str(found.recording_id), "--reason", "test", DATABASE_URL=operator),
        "requeue refused to the worker": worker.cli(
            "requeue", str(found.recording_id), "--reason", "test", DATABASE_URL=good),
        "database refuses the password": worker.cli(
            "run-once", DATABASE_URL=dsn(db, user, password + "x")),
        "database unreachable": worker.cli("run-once", DATABASE_URL=dsn(db, user, password,
                                                                        port=dead)),
        "S3 refuses the secret key": worker.cli("run-once", DATABASE_URL=good,
                                                AWS_SECRET_ACCESS_KEY=wrong_s3),
        "S3 unreachable": worker.cli("run-once", DATABASE_URL=good,
                                     S3_ENDPOINT_URL=f"http://127.0.0.1:{dead}", **fast),
        "broker refuses SASL": worker.cli(
            "run-once", DATABASE_URL=good, KAFKA_SECURITY_PROTOCOL="SASL_PLAINTEXT",
            KAFKA_SASL_MECHANISM="PLAIN", KAFKA_SASL_USERNAME="rfr", KAFKA_SASL_PASSWORD=sasl,
            timeout=90, **fast),
    }
    assert runs["success"].returncode == 0, runs["success"].stderr
    assert runs["status"].returncode == 0, runs["status"].stderr
    # An answer that waiting will not change: a start-up refusal, exit 2.
    assert runs["database refuses the password"].returncode == 2
    assert "password authentication failed" in runs["database refuses the password"].stderr
    # The storage refusing the credentials is a start-up refusal too (exit 2, no cycle).
    assert runs["S3 refuses the secret key"].returncode == 2
    for name, proc in runs.items():
        _events_or_lines(proc.stderr)
        assert_clean(proc.stdout + proc.stderr,
                     [password, op_password, s3_secret, wrong_s3, sasl], name)


def _events_or_lines(stderr: str) -> None:
    for line in stderr.splitlines():
        assert line.startswith("{") or line.startswith("recording-finalize: "), line


def test_metrics_and_run_logs_carry_no_secret(
    worker: Worker, db: Db, secret_role: tuple[str, str]
) -> None:
    user, password = secret_role
    seeded = seed_stuck(db)
    put_binary(worker.stack, worker.bucket, seeded.recording_id)
    port = free_port()
    proc = worker.spawn("run", DATABASE_URL=dsn(db, user, password),
                        RFR_METRICS_PORT=str(port), RFR_POLLING_INTERVAL="300ms")
    try:
        deadline = time.monotonic() + 20
        text = ""
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                            timeout=2) as resp:
                    text = resp.read().decode()
                if "messenger_recording_finalize_reconciled_total 1.0" in text:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert "messenger_recording_finalize_reconciled_total 1.0" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    secrets_ = [password, worker.stack.env["AWS_SECRET_ACCESS_KEY"]]
    assert_clean(text, secrets_, "/metrics")
    assert_clean(out + err, secrets_, "the run's output")
    _events_or_lines(err)


def test_payloads_and_last_errors_carry_no_url(worker: Worker, db: Db) -> None:
    found, _lost = seed_stuck(db), seed_stuck(db)
    put_binary(worker.stack, worker.bucket, found.recording_id,
               metadata={"duration-seconds": "7", "file-id": "files/abc"})
    assert worker.run_once()["reconciled"] == 1
    # An unreachable endpoint: the S3 clients' messages name its URL; nothing may repeat it.
    flaky = seed_stuck(db)
    dead = free_port()
    summary = worker.run_once(S3_ENDPOINT_URL=f"http://127.0.0.1:{dead}",
                              RFR_LOCK_TTL="20s", RFR_MAX_RUN_DURATION="10s",
                              RFR_S3_TIMEOUT="2s", expect_rc=1)  # degraded: storage out
    # The worker's own storage incident is open: the transient verdict gives its attempt back.
    assert summary["heldByIncident"] == 1, summary
    assert URL.search(summary["_stderr"]) is None
    assert f"127.0.0.1:{dead}" not in summary["_stderr"]
    # The product's own event, and both of the service's outboxes (the realtime push is the
    # product's write; the integration outbox must have nothing of the product's).
    rows = db.all("select payload::text from recording_finalize.outbox "
                  "union all select headers::text from recording_finalize.outbox "
                  "union all select payload::text from messenger.integration_outbox "
                  "union all select payload::text from messenger.realtime_outbox "
                  "union all select coalesce(last_error, '') "
                  "from messenger.recording_finalize_attempts "
                  "union all select coalesce(reason, '') from recording_finalize.storage_incidents")
    assert len(rows) >= 7
    for (text,) in rows:
        assert URL.search(text) is None, text
    error = db.one("select last_error from messenger.recording_finalize_attempts "
                   "where recording_id = %s", (flaky.recording_id,))[0]
    assert error.startswith("Transient: GenericError"), error


@pytest.fixture
def service_login(db: Db) -> Iterator[tuple[str, str]]:
    """A login granted recording_finalize_service (the messenger service's)."""
    yield from _temporary_login(db, "rfr_sec_svc", "recording_finalize_service",
                                secrets.token_hex(12))


def _tables(db: Db) -> list[tuple[str, str]]:
    """Every table of the service's and the product's schemas, with its first column."""
    return [(r[0], r[1]) for r in db.all(
        "select format('%I.%I', n.nspname, c.relname), quote_ident(a.attname) from pg_class c "
        "join pg_namespace n on n.oid = c.relnamespace "
        "join pg_attribute a on a.attrelid = c.oid and a.attnum = 1 "
        "where c.relkind in ('r', 'p', 'v') and n.nspname in ('messenger', "
        "'recording_finalize', 'recording_finalize_internal', 'recording_finalize_migrations') "
        "order by 1")]


def _refused(conn: psycopg.Connection[Any], sql: str) -> str:
    """The SQLSTATE ``sql`` fails with (in a savepoint-free autocommit connection)."""
    try:
        conn.execute(sql)
    except psycopg.Error as err:
        return err.sqlstate or ""
    return "accepted"


def test_no_group_role_reads_or_writes_any_table_even_with_its_password(
    db: Db, secret_role: tuple[str, str], secret_operator: tuple[str, str],
    service_login: tuple[str, str],
) -> None:
    """The wiring of the pgTAP privilege proof (tests/sql/_schema/privileges.sql): real logins
    granted each group role, over a real connection, on every table of both owners' schemas:
    no SELECT, INSERT, UPDATE, DELETE or TRUNCATE, and nothing of the internal schema."""
    tables = _tables(db)
    assert {"messenger.call_recordings", "messenger.integration_outbox",
            "messenger.recording_finalize_attempts", "recording_finalize.settings",
            "recording_finalize.relay_leases"} <= {t for t, _ in tables}, tables
    for user, password in (secret_role, secret_operator, service_login):
        with psycopg.connect(dsn(db, user, password), autocommit=True) as conn:
            for table, column in tables:
                for sql in (f"select 1 from {table} limit 1",
                            f"insert into {table} default values",
                            f"update {table} set {column} = default where false",
                            f"delete from {table} where false",
                            f"truncate {table}"):
                    assert _refused(conn, sql) == "42501", (user, sql)
            assert _refused(conn, "select recording_finalize_internal.iso_utc(now())") == "42501"


def test_the_worker_role_runs_only_its_own_part_and_only_for_the_servers_topic(
    worker: Worker, db: Db, secret_role: tuple[str, str], service_login: tuple[str, str],
) -> None:
    """What the worker may write it writes through its functions, for the server's topic only:
    another topic is refused (RF009) by the calls that enqueue, lease or mark events; the
    operator's and the service's functions are not executable by it, nor its by the service."""
    user, password = secret_role
    with psycopg.connect(dsn(db, user, password), autocommit=True) as conn:
        other = "pin.billing.invoice-paid.v1"
        for sql in (
            f"select * from recording_finalize.relay_claim(10, '30 seconds', 1, '{other}')",
            f"select recording_finalize.set_policy(p_topic => '{other}')",
        ):
            assert _refused(conn, sql) == "RF009", sql
        rid = uuid.uuid4()
        for sql in (
            f"select recording_finalize.requeue('{rid}', 'x')",
            "select recording_finalize.set_pause('all', true, 'x', 'x')",
            f"select recording_finalize.reschedule(array['{rid}'::uuid], 'Pending', 'x', 'x', "
            "false)",
            f"select recording_finalize.recording_ingest_completed('{rid}', 'f/1', 1, 1, 'Ogg')",
            f"select recording_finalize.recording_stopped('{rid}', '30 minutes')",
        ):
            assert _refused(conn, sql) == "42501", sql
        # Its incidents are its own source's (the login is checked, not the current role).
        assert _refused(conn, "select recording_finalize.storage_incident_open('recorders', "
                              "'x', now())") == "RF018"
    svc_user, svc_password = service_login
    with psycopg.connect(dsn(db, svc_user, svc_password), autocommit=True) as conn:
        for sql in ("select * from recording_finalize.claim_due(10)",
                    "select * from recording_finalize.relay_claim(10, '30 seconds', 1, null)",
                    "select * from recording_finalize.prune('30 days', 10, true)"):
            assert _refused(conn, sql) == "42501", sql
    assert db.one("select count(*) from messenger.integration_outbox") == (0,)
    assert db.one("select count(*) from recording_finalize.relay_leases") == (0,)


#: What the product's owner may do to each service table (docs/contract/adapter.md: its views
#: read, its functions write): (SELECT, INSERT, UPDATE) columns. The service's outbox is only
#: read, four columns of it; the realtime outbox only receives rows; nothing else of the
#: service's is granted. A change here is a change of the contract (sql/service/grants.sql).
GRANTED: dict[str, tuple[set[str], set[str], set[str]]] = {
    "call_sessions": ({"id", "chat_id", "deal_id", "tenant_id", "started_at", "ended_at"},
                      set(), set()),
    "conference_sessions": ({"id", "chat_id", "deal_id", "tenant_id", "started_at",
                             "ended_at"}, set(), set()),
    "call_recordings": (
        {"id", "session_kind", "session_id", "media_type", "trigger", "status", "file_id",
         "size_bytes", "duration_seconds", "format", "failure_reason", "started_at",
         "ended_at", "available_at", "version"},
        set(),
        {"status", "file_id", "size_bytes", "duration_seconds", "format", "failure_reason",
         "started_at", "ended_at", "available_at", "failed_at", "version", "updated_at"}),
    "integration_outbox": ({"topic", "dedupe_key", "created_at", "published_at"}, set(), set()),
    "realtime_outbox": (set(), {"kind", "session_kind", "session_id", "reference_id",
                                "payload"}, set()),
}


def test_the_contract_asks_for_exactly_the_narrow_grants() -> None:
    asked = {name: tuple(set(privileges().get(name, {}).get(p, ())) for p in (
        "select", "insert", "update")) for name in TABLES}
    assert asked == GRANTED


def test_the_products_owner_touches_the_service_tables_only_through_the_granted_columns(
    stack: Stack,
) -> None:
    """Installed as a visitor: the service's tables created by the service's own role, the
    GRANTs of `service-sql grants --to OWNER` run by it as printed, migrate by the product's
    owner (which installs the reference adapter and rehearses its writes). What the product's
    functions and its adapter can do to the service's rows is what its owner can: on each
    column of each service table exactly the SELECT, INSERT and UPDATE of GRANTED, nothing
    else - the service's outbox only read (never written, marked or deleted), no DELETE, no
    TRUNCATE, no DDL."""
    tag = uuid.uuid4().hex[:8]
    service, owner, name = f"rfr_sec_service_{tag}", f"rfr_sec_owner_{tag}", f"rfr_sec_{tag}"
    service_pw, owner_pw = secrets.token_hex(12), secrets.token_hex(12)
    with _admin(stack) as conn:
        conn.execute(f"create role {service} login password '{service_pw}'")
        conn.execute(f"create role {owner} login password '{owner_pw}'")
        conn.execute(f'create database "{name}" owner {service}')
    try:
        service_url = stack.url_for(name, service, service_pw)
        owner_url = stack.url_for(name, owner, owner_pw)
        env = _base_env() | {"DATABASE_URL": owner_url}
        schema = subprocess.run([CLI, "service-sql", "schema"], env=_base_env(),
                                capture_output=True, text=True, timeout=30, check=True).stdout
        grants = subprocess.run([CLI, "service-sql", "grants", "--to", owner], env=_base_env(),
                                capture_output=True, text=True, timeout=30, check=True).stdout
        for sql in ("create schema messenger;\n" + schema, grants):
            psql = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", service_url],
                                  input=sql, capture_output=True, text=True, timeout=60)
            assert psql.returncode == 0, psql.stderr
        migrate = subprocess.run([CLI, "migrate"], env=env, capture_output=True, text=True,
                                 timeout=180)
        assert migrate.returncode == 0, migrate.stderr
        with psycopg.connect(service_url, autocommit=True) as conn:
            columns: dict[str, list[str]] = {}
            for table, column in conn.execute(
                    "select c.relname::text, a.attname::text from pg_class as c "
                    "join pg_namespace as n on n.oid = c.relnamespace "
                    "join pg_attribute as a on a.attrelid = c.oid "
                    "where n.nspname = %s and c.relkind in ('r', 'p') and c.relname <> %s "
                    "and a.attnum > 0 and not a.attisdropped order by c.relname, a.attnum",
                    (SCHEMA, PRODUCT_TABLE)).fetchall():
                columns.setdefault(table, []).append(column)
        # Every service table is probed, and each one the contract names exists.
        assert set(GRANTED) <= set(columns), columns
        expected, seen = [], []
        with psycopg.connect(owner_url, autocommit=True) as conn:
            for table, names in columns.items():
                select, insert, update = GRANTED.get(table, (set(), set(), set()))
                qualified = f"{SCHEMA}.{table}"
                for column in names:
                    for privilege, sql, granted in (
                        ("select", f"select {column} from {qualified} limit 1",
                         column in select),
                        # No row is written: WHERE false; the privilege is checked all the same.
                        ("insert", f"insert into {qualified} ({column}) select null where false",
                         column in insert),
                        ("update", f"update {qualified} set {column} = null where false",
                         column in update),
                    ):
                        expected.append((qualified, column, privilege, granted))
                        seen.append((qualified, column, privilege,
                                     _refused(conn, sql) == "accepted"))
                for sql in (f"delete from {qualified} where false",
                            f"truncate {qualified}",
                            f"alter table {qualified} add column rfr_probe integer",
                            f"create index on {qualified} ({names[0]})",
                            f"comment on table {qualified} is 'x'"):
                    assert _refused(conn, sql) == "42501", sql
            assert seen == expected
            # Spelled out: the product never publishes, marks or deletes the service's events.
            for sql in (
                "insert into messenger.integration_outbox (topic, message_key, event_type, "
                "dedupe_key, payload) values ('t', 'k', 'e', 'd', '{}')",
                "update messenger.integration_outbox set published_at = now() where false",
                "select id, payload, headers from messenger.integration_outbox limit 1",
                "select payload from messenger.realtime_outbox limit 1",
            ):
                assert _refused(conn, sql) == "42501", sql
            # What the product does read and write it reaches through its adapter.
            assert _refused(conn, "select recording_id, enqueued_at, published_at from "
                                  "recording_finalize_adapter.service_events limit 1") == (
                "accepted")
            assert _refused(conn, "select * from recording_finalize_adapter.recordings "
                                  "limit 1") == "accepted"
    finally:
        with _admin(stack) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')
            for role in (owner, service):
                conn.execute(f"drop role if exists {role}")


def test_a_worker_login_cannot_connect_to_another_database_once_connect_is_revoked(
    db: Db, secret_role: tuple[str, str]
) -> None:
    """Roles are cluster-wide and CONNECT is granted to PUBLIC by default: a worker login made
    for one database could run another database's API. sql/README.md says: revoke connect on
    database <db> from public; grant connect on database <db> to <the worker login>. Shown here
    on two real databases of the same cluster."""
    user, password = secret_role
    other = f"rfr_other_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(db.stack.url_for("postgres"), autocommit=True) as conn:
        conn.execute(f'create database "{other}"')
    try:
        with db.connect() as conn:
            conn.execute(f'revoke connect on database "{db.name}" from public')
            conn.execute(f'grant connect on database "{db.name}" to {user}')
        with psycopg.connect(db.stack.url_for(other), autocommit=True) as conn:
            # The other service's database, locked down the same way, its own login granted.
            conn.execute(f'revoke connect on database "{other}" from public')
        # Its own database still admits the worker login (and it can run the API there)...
        with psycopg.connect(dsn(db, user, password), autocommit=True) as conn:
            assert conn.execute("select recording_finalize.server_settings() ->> 'topic'"
                                ).fetchone() is not None
        # ...the other database refuses it before any statement.
        other_dsn = urlunsplit(urlsplit(dsn(db, user, password))._replace(path=f"/{other}"))
        with pytest.raises(psycopg.OperationalError) as refused:
            psycopg.connect(other_dsn, autocommit=True, connect_timeout=10).close()
        assert "permission denied for database" in str(refused.value)
    finally:
        with db.connect() as conn:  # the role goes at teardown: its grant must go first
            conn.execute(f'revoke connect on database "{db.name}" from {user}')
        with psycopg.connect(db.stack.url_for("postgres"), autocommit=True) as conn:
            conn.execute(f'drop database if exists "{other}" with (force)')
