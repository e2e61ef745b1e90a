"""The metrics endpoint as a scraper and a kubelet see it: the standard
``process_*`` series are exposed, and only ``/metrics``, ``/livez`` and ``/readyz`` answer;
every other path, ``/`` included, is 404."""

from __future__ import annotations

import contextlib
import os
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from conftest import free_port
from recording_finalize.metrics import LIVEZ, METRICS, READYZ, Metrics
from recording_finalize.probes import Health


@contextlib.contextmanager
def serving(health: Health | None = None) -> Iterator[str]:
    m = Metrics()
    port = m.start_server(free_port(), addr="127.0.0.1", health=health or Health(stale_after_s=60))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        m.stop_server()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def value(body: str, name: str) -> float:
    [line] = [x for x in body.splitlines() if x.startswith(name + " ")]
    return float(line.split()[-1])


def test_process_metrics_describe_this_process() -> None:
    with serving() as base:
        status, body = get(base + METRICS)
    assert status == 200
    # The collector reads /proc/self: the numbers are this process's, not made up.
    rss = value(body, "process_resident_memory_bytes")
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    assert abs(rss - pages * os.sysconf("SC_PAGE_SIZE")) < 64 * 2**20
    assert value(body, "process_cpu_seconds_total") > 0
    assert value(body, "process_open_fds") >= 3
    assert value(body, "process_start_time_seconds") > 1.6e9


@pytest.mark.parametrize("path", ["/", "/metricz", "/metrics/", "/favicon.ico", "/livez/x",
                                  "/READYZ"])
def test_unknown_paths_are_404(path: str) -> None:
    health = Health(stale_after_s=60)
    with serving(health) as base:
        status, body = get(base + path)
        assert (status, body.strip()) == (
            404, "not found: this endpoint serves /metrics, /livez and /readyz")
        # The known paths still answer as before.
        assert get(base + METRICS)[0] == 200
        assert get(base + LIVEZ)[0] == 200
        assert get(base + READYZ)[0] == 503  # the database was never checked


def test_a_query_string_does_not_change_the_path() -> None:
    with serving() as base:
        status, body = get(base + METRICS + "?name[]=messenger_recording_finalize_backlog")
    assert status == 200
    assert "messenger_recording_finalize_backlog 0.0" in body and "process_" not in body
