"""Several ``apply_outcome`` statements in one round trip, each still its own transaction.

Why libpq directly: psycopg's ``pipeline()`` and ``executemany()`` send one Sync at the end, so
their statements run as ONE implicit transaction even in autocommit mode (a failing row would
roll back the rows before it). Pipeline mode with a Sync after every statement keeps each row
its own transaction. The statement (``queries.APPLY_OUTCOME_PIPELINED``) is prepared once per
connection, so the server plans the call once, not for every row.
"""

from __future__ import annotations

import select
import time
import weakref
from collections.abc import Sequence

import psycopg
from psycopg import pq
from psycopg.errors import error_from_result

from .model import ClaimedRow, Verdict
from .queries import (
    APPLY_OUTCOME_PIPELINED,
    NO_FACTS,
    AppliedResult,
    Connection,
    StorageFacts,
    apply_params,
)

Answer = AppliedResult | psycopg.Error

#: The server-side name of the prepared apply_outcome call (one per connection).
PREPARED_NAME = b"rfr_apply_outcome"
#: The connections that have it prepared (a connection that is closed is forgotten).
_prepared: weakref.WeakSet[Connection] = weakref.WeakSet()


class PipelineTimeout(psycopg.OperationalError):
    """A pipelined apply got no answer in time; its connection was closed."""


def apply_outcomes(conn: Connection, items: Sequence[tuple[ClaimedRow, Verdict]],
                   timeout_s: float | None = None, facts: StorageFacts = NO_FACTS
                   ) -> list[Answer]:
    """One entry per item, in order: the row's result, or the ``psycopg.Error`` its statement
    raised (the other rows are unaffected); ``facts`` go with every verdict. ``conn``: an idle
    autocommit connection. No answer within ``timeout_s`` (or a broken connection): the
    connection is closed and ``PipelineTimeout``/``OperationalError`` raised; each row was then
    applied whole or not at all, and an unapplied one keeps its claim, which expires into a
    retry."""
    if not items:
        return []
    encoding = conn.info.encoding
    params = [[None if value is None else str(value).encode(encoding)
               for value in apply_params(row, verdict, facts)] for row, verdict in items]
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    wire = _Wire(conn.pgconn, deadline, len(items), timeout_s, encoding)
    with conn.lock:
        pg = conn.pgconn
        if pg.transaction_status != pq.TransactionStatus.IDLE:
            raise psycopg.ProgrammingError("apply_outcomes needs an idle autocommit connection")
        blocking = not pg.nonblocking
        if blocking:
            pg.nonblocking = 1
        pg.enter_pipeline_mode()
        try:
            if conn not in _prepared:
                wire.prepare()
                _prepared.add(conn)
            wire.send(params)
            out = [wire.answer() for _ in params]
        except BaseException:
            # Mid-pipeline the connection's state is unknown: close it (the pool replaces it).
            _prepared.discard(conn)
            pg.finish()
            raise
        pg.exit_pipeline_mode()
        if blocking:
            pg.nonblocking = 0
    return out


class _Wire:
    """One pipeline on a nonblocking libpq connection, bounded by ``deadline``."""

    def __init__(self, pg: pq.abc.PGconn, deadline: float | None, count: int,
                 timeout_s: float | None, encoding: str = "utf-8") -> None:
        self._pg = pg
        self._encoding = encoding
        self._deadline = deadline
        self._count = count
        self._timeout_s = timeout_s

    def _wait(self, write: bool) -> None:
        pg = self._pg
        remaining = None if self._deadline is None else self._deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise PipelineTimeout(f"no answer to {self._count} pipelined apply_outcome calls "
                                  f"within {self._timeout_s:.1f} s")
        # Never more than a second at a time: the GIL is released while we wait.
        select.select([pg.socket], [pg.socket] if write else [], [],
                      1.0 if remaining is None else min(remaining, 1.0))
        pg.consume_input()

    def _flush(self) -> None:
        while self._pg.flush():
            self._wait(write=True)

    def _results_to_sync(self) -> list[pq.abc.PGresult]:
        """The next statement's results, read up to its Sync."""
        results: list[pq.abc.PGresult] = []
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
                return results
            else:
                results.append(res)

    def prepare(self) -> None:
        """Prepares the statement on this connection (its own Sync), and reads the answer."""
        self._pg.send_prepare(PREPARED_NAME, APPLY_OUTCOME_PIPELINED)
        self._pg.pipeline_sync()
        self._flush()
        for res in self._results_to_sync():
            if res.status == pq.ExecStatus.FATAL_ERROR:
                raise error_from_result(res, encoding=self._encoding)

    def send(self, params: list[list[bytes | None]]) -> None:
        """Every statement, each followed by its Sync, then flushed."""
        for values in params:
            self._pg.send_query_prepared(PREPARED_NAME, values)
            self._pg.pipeline_sync()
        self._flush()

    def answer(self) -> Answer:
        """The next statement's answer: its row, or the error it raised."""
        answer: Answer = psycopg.InternalError("apply_outcome returned no row")
        for res in self._results_to_sync():
            if res.status == pq.ExecStatus.TUPLES_OK and res.ntuples == 1:
                text = [None if v is None else v.decode(self._encoding)
                        for v in (res.get_value(0, i) for i in range(4))]
                answer = AppliedResult(result=text[0] or "", finalize_status=text[1],
                                       attempts=None if text[2] is None else int(text[2]),
                                       detail=text[3])
            elif res.status == pq.ExecStatus.FATAL_ERROR:
                answer = error_from_result(res, encoding=self._encoding)
        return answer
