"""Starts worker lives fast for the kill -9 storm.

``python tests/chaos/forkserver.py`` imports the driver (boto3, librdkafka, psycopg, ...) once,
then reads one JSON request per line on stdin — ``{"argv": [...], "env": {...}, "log": PATH}``
— and forks a child that runs ``recording_finalize.cli.main(argv)``, the console script's own entry
point, with that environment and stderr appended to PATH. It answers the child's pid on
stdout. Children are reaped automatically; the suite kills them with SIGKILL by pid.

A fresh ``recording-finalize run`` spends ~0.6 s importing before it does anything; forking
from a process that already imported (and holds no thread, no connection, no client) puts
every kill of the storm into the worker's real work instead of its imports.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback

import boto3  # noqa: F401 - imported once, before any fork
import botocore.session  # noqa: F401
import confluent_kafka  # noqa: F401
import psycopg  # noqa: F401
import psycopg_pool  # noqa: F401
from recording_finalize import (  # noqa: F401
    cli,
    contract,
    cycle,
    db,
    drift,
    incidents,
    maintenance,
    metrics,
    probes,
    relay,
    storage,
    worker,
)


def _child(request: dict[str, object]) -> None:
    code: int = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        log = os.open(str(request["log"]), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(log, 2)
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
        code = cli.main([str(a) for a in request["argv"]])  # type: ignore[attr-defined]
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a child must never return into the server loop
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def main() -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(pid, flush=True)


if __name__ == "__main__":
    main()
