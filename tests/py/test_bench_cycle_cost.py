"""bench/cycle_cost.py's arithmetic: how a profile's stacks become parts, and the ratios."""

from __future__ import annotations

from pathlib import Path

from bench.cycle_cost import HEAD, START_UP, Run, report, worker_parts

MAIN = ("thread (1): MainThread;<module> (recording-finalize:8);"
        "run_cycle (recording_finalize/cycle.py:184)")


def test_worker_parts_leave_out_waits_and_the_head_call(tmp_path: Path) -> None:
    raw = tmp_path / "p.pyspy"
    raw.write_text("\n".join([
        # start-up: the main thread outside run_cycle
        "thread (1): MainThread;<module> (recording-finalize:8);_cycle_context (x.py:1) 7",
        # a log line written inside the apply: logging, not the apply
        f"{MAIN};_Reconcile.apply (recording_finalize/cycle.py:1);"
        "log (recording_finalize/logs.py:3) 5",
        f"{MAIN};apply_outcomes (recording_finalize/pipeline.py:60) 11",
        # the main thread waiting for the database's answer
        f"{MAIN};apply_outcomes (recording_finalize/pipeline.py:60);"
        "_Wire._wait (recording_finalize/pipeline.py:99) 13",
        # a check thread inside obstore's call
        "thread (2): s3-check_0;_Checks._take_rows (recording_finalize/cycle.py:1);"
        "Storage.check (recording_finalize/storage.py:288) 17",
        "thread (3): pace-sampler;Pacer._sample (recording_finalize/pacing.py:229);"
        "Connection.execute (psycopg/connection.py:302) 3",
        "not a stack line",
    ]) + "\n")
    assert worker_parts(raw) == {
        START_UP: 7, "logging": 5, "apply pipeline (params, libpq, answers)": 11,
        "waiting": 13, HEAD: 17, "pacing (contention samples)": 3,
    }


def _run(contender: str, rep: int, pg_s: float, worker_s: float) -> Run:
    return Run(contender, rep, 1000, 1.0, 1.0, pg_s, worker_s, 10.0, 0.2, 0.5, 0.05, 0.01,
               1100, 5000)


def test_report_ratios_pair_runs_of_one_repetition() -> None:
    runs = [_run("ours", 1, 1.2, 1.0), _run("floor", 1, 0.5, 0.3),
            _run("ours", 2, 1.4, 1.1), _run("floor", 2, 0.8, 0.3)]
    text = report(runs, {"postgres": "15", "cores": 2})
    # (1.2 - 0.2) / (0.5 - 0.2) = 3.33 and (1.4 - 0.2) / (0.8 - 0.2) = 2.0: median 2.67
    assert "| ours / floor | 2.67 (2.00-3.33) | - |" in text
    assert "| ours | 1.100 (1.000-1.200) |" in text

