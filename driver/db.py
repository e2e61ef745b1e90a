"""Database connections: a small pool for the work, a dedicated connection for the lock.

Every connection carries ``application_name=recording-finalize`` and an
``idle_in_transaction_session_timeout``. The single-runner lock is a session advisory lock, so
it lives on its own unpooled connection whose ``idle_session_timeout`` equals the lock TTL: a
paused or hung holder loses the lock on the server's side instead of holding it forever.
"""

from __future__ import annotations

import secrets
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool

from . import queries
from .config import Settings
from .errors import describe
from .logs import log

APPLICATION_NAME = "recording-finalize"
# Connections used by the cycle (and, while it drains a backlog, its pace sampler: pacing.py),
# then by the relay; a little headroom for them.
POOL_MAX_SIZE = 4
# How long a caller waits for a pooled connection (or for the server to accept one).
POOL_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 10


#: The work pool (``open_pool``), as the relay and maintenance take it.
PoolLike = ConnectionPool[psycopg.Connection[Any]]


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def conninfo(settings: Settings, *, idle_session_timeout_s: float | None = None) -> str:
    """``DATABASE_URL`` plus our session settings, appended to its options (a later ``-c`` wins)."""
    # Keepalives notice a peer that vanished from the network (not a hung one: see cycle.py).
    params: dict[str, Any] = {
        "connect_timeout": str(CONNECT_TIMEOUT_S), "keepalives": "1", "keepalives_idle": "30",
        "keepalives_interval": "10", "keepalives_count": "3",
    } | conninfo_to_dict(settings.database_url)
    timeouts = {"idle_in_transaction_session_timeout": _ms(settings.lock_ttl)}
    if idle_session_timeout_s is not None:
        timeouts["idle_session_timeout"] = _ms(idle_session_timeout_s)
    options = " ".join(f"-c {name}={value}" for name, value in timeouts.items())
    params["options"] = f"{params['options']} {options}" if params.get("options") else options
    params["application_name"] = APPLICATION_NAME
    return make_conninfo("", **params)


def connect(settings: Settings) -> psycopg.Connection[Any]:
    """One autocommit connection: every statement is its own transaction."""
    return psycopg.connect(conninfo(settings), autocommit=True)


def _lock_connection(settings: Settings) -> psycopg.Connection[Any]:
    return psycopg.connect(conninfo(settings, idle_session_timeout_s=settings.lock_ttl),
                           autocommit=True)


def open_pool(settings: Settings) -> PoolLike:
    """The work pool: autocommit connections, checked before each use, so a connection broken
    by a database restart is replaced on the next cycle without anyone stepping in."""
    return ConnectionPool(conninfo(settings), min_size=1, max_size=POOL_MAX_SIZE,
                          kwargs={"autocommit": True}, check=ConnectionPool.check_connection,
                          timeout=POOL_TIMEOUT_S, name="recording-finalize", open=True)


class LockConnectionError(Exception):
    """The lock connection cannot give the single-runner guarantee (start-up self-check)."""


def check_lock_connection(settings: Settings, second: queries.Connection) -> None:
    """The lock connection keeps a PostgreSQL session of its own (behind a transaction-pooling
    proxy two runners could both "hold" the advisory lock; ``second`` tries to share it) and the
    server took its ``idle_session_timeout``. A throw-away key leaves a running peer alone."""
    probe_key = secrets.randbits(62) + 1
    with _lock_connection(settings) as first:
        pid = queries.backend_pid(first)
        if not queries.try_lock_runner(first, probe_key):
            raise LockConnectionError(
                "a fresh advisory lock key was refused to the lock connection")
        try:
            pooled = _shared_session(first, second, pid, probe_key)
        finally:
            released = queries.unlock_runner(first, probe_key)
        if pooled is None and not released:
            pooled = "the lock connection could not release the advisory lock it took"
        if pooled is not None:
            raise LockConnectionError(
                f"{pooled}. DATABASE_URL goes through a transaction-pooling proxy (PgBouncer "
                "pool_mode=transaction?): two runners could both hold the single-runner lock. "
                "Connect the worker to PostgreSQL directly or through session pooling.")
        expected, applied = _ms(settings.lock_ttl), queries.idle_session_timeout_ms(first)
        if applied != expected:
            raise LockConnectionError(
                f"the lock connection asked for idle_session_timeout={expected}ms and the "
                f"server runs it with {applied}ms: something between the worker and "
                "PostgreSQL drops connection options, so a paused runner would keep the lock "
                "past RFR_LOCK_TTL. Connect the worker to PostgreSQL directly.")


def _shared_session(first: queries.Connection, second: queries.Connection, pid: int,
                    key: int) -> str | None:
    """What shows that ``first`` (holding ``key``) shares its server session, if anything."""
    if queries.backend_pid(first) != pid:
        return "pg_backend_pid() changed between two statements of the lock connection"
    if queries.try_lock_runner(second, key):
        queries.unlock_runner(second, key)
        return ("a second connection was granted the advisory lock the lock connection holds: "
                "both run in one server session")
    if queries.backend_pid(second) == pid:
        return "two connections run in the same server process"
    return None


class RunnerLock:
    """The single-runner lock for one cycle, on a dedicated connection (``acquired``); leaving
    the block closes it, which releases the lock even when the unlock failed (only logged)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._conn: psycopg.Connection[Any] | None = None
        self.acquired = False

    def __enter__(self) -> RunnerLock:
        self._conn = _lock_connection(self._settings)
        try:
            self.acquired = queries.try_lock_runner(self._conn, self._settings.lock_key)
        except BaseException:
            self._conn.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None and self.acquired and not conn.closed:
                queries.unlock_runner(conn, self._settings.lock_key)
        except psycopg.Error as err:
            # The server may have ended the session (idle_session_timeout): the lock is gone.
            log("runner lock connection lost", level="warning", error=describe(err))
        finally:
            if conn is not None:
                conn.close()
            self.acquired = False


# Answers of the server that waiting will not change. A connection that fails during start-up
# carries no SQLSTATE in libpq (psycopg's OperationalError.sqlstate is None there), so those
# are told by the server's FATAL message (PostgreSQL's English text, lc_messages = C/en);
# anything not listed (refused, timed out, "starting up", "too many clients") is waited out.
_AUTH_FAILED = "authentication failed: check the user and password in DATABASE_URL"
_PERMANENT_CONNECT_ANSWERS = (
    ("authentication failed", _AUTH_FAILED),
    ("no password supplied", "the server asks for a password and DATABASE_URL has none"),
    ("no pg_hba.conf entry", "the server's pg_hba.conf admits no such connection"),
    ("pg_hba.conf rejects", "the server's pg_hba.conf rejects this connection"),
    ("is not permitted to log in", "the role cannot log in (NOLOGIN)"),
    ("permission denied for database", "the role has no CONNECT privilege on the database"),
    ("does not exist", "the database or the role named in DATABASE_URL does not exist"),
)
# After connecting, errors carry their SQLSTATE: these mean "not allowed" or "not migrated".
_PERMANENT_SQLSTATES = {
    "28000": "the server refused the role",
    "28P01": _AUTH_FAILED,
    "3D000": "the database named in DATABASE_URL does not exist",
    "42501": "insufficient privilege: the login role needs the recording_finalize_worker "
             "role (GRANT recording_finalize_worker TO <login role>)",
    "3F000": "the database has no recording_finalize schema: it was never migrated (run "
             "`recording-finalize migrate` as the schema owner)",
    "42883": "the database lacks the worker API functions: it was never migrated, or by an "
             "older package (run `recording-finalize migrate` as the schema owner)",
}


#: Of those, the ones a migrate will change: ``run`` refuses them, ``wait-for-schema`` (an init
#: container that starts beside the migrate Job) waits them out.
NOT_MIGRATED_SQLSTATES = frozenset({"3F000", "42883"})


def refusal(err: psycopg.Error) -> str | None:
    """What is wrong when ``err`` is an answer that waiting will not change, else None."""
    if err.sqlstate:
        return _PERMANENT_SQLSTATES.get(err.sqlstate)
    text = str(err)
    if "FATAL:" not in text and "fe_sendauth" not in text:
        return None  # no answer from the server: unreachable, refused, timed out
    return next((meaning for marker, meaning in _PERMANENT_CONNECT_ANSWERS if marker in text),
                None)


def database_target(settings: Settings) -> str:
    """``host:port/dbname as user`` of DATABASE_URL (never its password)."""
    try:
        params = conninfo_to_dict(settings.database_url)
    except psycopg.ProgrammingError:
        return "the server of DATABASE_URL (unparsable)"
    hosts = str(params.get("host") or params.get("hostaddr") or "localhost").split(",")
    ports = str(params.get("port") or "5432").split(",")
    where = ",".join(f"{h}:{p}" for h, p in zip(
        hosts, ports * len(hosts) if len(ports) == 1 else ports, strict=False))
    db, user = params.get("dbname"), params.get("user")
    return where + (f"/{db}" if db else "") + (f" as {user}" if user else "")


def server_message(err: psycopg.Error) -> str:
    """The server's own words for ``err`` on one line (the caller redacts secrets)."""
    return " ".join(((err.diag.message_primary if err.sqlstate else None) or str(err)).split())
