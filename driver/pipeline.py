"""Several ``apply_outcome`` statements in one round trip, each still its own transaction.

Why libpq directly: psycopg's ``pipeline()`` and ``executemany()`` send one Sync at the end, so
their statements run as ONE implicit transaction even in autocommit mode (a failing row would
roll back the rows before it). Pipeline mode with a Sync after every statement keeps each row
its own transaction. The statement is prepared once per connection, so the server plans the
call once, not for every row.
"""

from __future__ import annotations

import select
import time
import weakref
from collections.abc import Sequence

import psycopg
from psycopg import pq
from psycopg.errors import error_from_result

from . import queries
from .model import ClaimedRow, Verdict

Answer = queries.AppliedResult | psycopg.Error

#: The server-side name of the prepared apply_outcome call (one per connection).
PREPARED_NAME = b"rfr_apply_outcome"
#: The connections that have it prepared (a connection that is closed is forgotten).
_prepared: weakref.WeakSet[queries.Connection] = weakref.WeakSet()


class PipelineTimeout(psycopg.OperationalError):
    """A pipelined apply got no answer in time; its connection was closed."""


def apply_outcomes(conn: queries.Connection, items: Sequence[tuple[ClaimedRow, Verdict]],
                   timeout_s: float | None = None, facts: queries.StorageFacts = queries.NO_FACTS
                   ) -> list[Answer]:
    """One entry per item, in order: the row's result, or the ``psycopg.Error`` its statement
    raised (the other rows are unaffected). ``conn``: an idle autocommit connection. No answer
    within ``timeout_s`` (or a broken connection): the connection is closed and
    ``PipelineTimeout``/``OperationalError`` raised; each row was applied whole or not at all,
    and an unapplied one keeps its claim, which expires into a retry."""
    if not items:
        return []
    encoding = conn.info.encoding
    params = [[None if value is None else str(value).encode(encoding)
               for value in queries.apply_params(row, verdict, facts)] for row, verdict in items]
    with conn.lock:
        pg = conn.pgconn
        if pg.transaction_status != pq.TransactionStatus.IDLE:
            raise psycopg.ProgrammingError("apply_outcomes needs an idle autocommit connection")
        wire = _Wire(pg, timeout_s, len(items), encoding)
        nonblocking, pg.nonblocking = pg.nonblocking, 1
        pg.enter_pipeline_mode()
        try:
            if conn not in _prepared:
                pg.send_prepare(PREPARED_NAME, queries.APPLY_OUTCOME)
                pg.pipeline_sync()
                wire.flush()
                wire.answer(prepared=True)
                _prepared.add(conn)
            for values in params:
                pg.send_query_prepared(PREPARED_NAME, values)
                pg.pipeline_sync()
            wire.flush()
            out = [wire.answer() for _ in params]
        except BaseException:
            # Mid-pipeline the connection's state is unknown: close it (the pool replaces it).
            _prepared.discard(conn)
            pg.finish()
            raise
        pg.exit_pipeline_mode()
        pg.nonblocking = nonblocking
    return out


class _Wire:
    """The reading side of one pipeline on a nonblocking libpq connection, within a deadline."""

    def __init__(self, pg: pq.abc.PGconn, timeout_s: float | None, count: int,
                 encoding: str) -> None:
        self._pg, self._encoding = pg, encoding
        self._deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self._late = (f"no answer to {count} pipelined apply_outcome calls within "
                      f"{timeout_s or 0:.1f} s")

    def _wait(self, write: bool) -> None:
        pg = self._pg
        remaining = None if self._deadline is None else self._deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise PipelineTimeout(self._late)
        # Never more than a second at a time: the GIL is released while we wait.
        select.select([pg.socket], [pg.socket] if write else [], [],
                      1.0 if remaining is None else min(remaining, 1.0))
        pg.consume_input()

    def flush(self) -> None:
        while self._pg.flush():
            self._wait(write=True)

    def answer(self, prepared: bool = False) -> Answer:
        """The next statement's answer, read up to its Sync: its row, or the error it raised
        (raised at once for the statement's preparation)."""
        answer: Answer = psycopg.InternalError("apply_outcome returned no row")
        ended = False
        while True:
            while self._pg.is_busy():
                self._wait(write=False)
            res = self._pg.get_result()
            if res is None:
                if ended or self._pg.status == pq.ConnStatus.BAD:
                    raise psycopg.OperationalError("the connection broke during a pipeline")
                ended = True  # the end of this statement's results; its Sync follows
            elif res.status == pq.ExecStatus.PIPELINE_SYNC:
                return answer
            elif res.status == pq.ExecStatus.FATAL_ERROR:
                answer = error_from_result(res, encoding=self._encoding)
                if prepared:
                    raise answer
            elif res.status == pq.ExecStatus.TUPLES_OK and res.ntuples == 1:
                text = [None if v is None else v.decode(self._encoding)
                        for v in (res.get_value(0, i) for i in range(3))]
                answer = queries.AppliedResult(result=text[0] or "", detail=text[2],
                                       attempts=None if text[1] is None else int(text[1]))
