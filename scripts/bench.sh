#!/usr/bin/env bash
# make bench: our worker against Procrastinate and PgQueuer on one throwaway local stack, plus the
# cost-growth figures and the whole-cycle cost (the installed wheel's run-once beside the floor and
# the previous release: bench/cycle_cost.py, `--only cycle`). Bounded (every figure has a fixed
# size; see bench/run.py), prints the table and writes it (report.md), its chart and the raw
# results to out/bench/, which git ignores (docs/benchmarks.md quotes the current figures). Exit
# status 1 only when the work itself went wrong (a recording not finalized, an event missing in
# Kafka), never because of a time.
# Arguments go to `python -m bench` (e.g. `bash scripts/bench.sh --quick`, `--n 5000 --repeat 1`);
# BENCH_ARGS does the same through make: `make bench BENCH_ARGS=--quick`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
STACK_DIR=.stack/bench
t_start=$SECONDS

say() { printf 'bench: %s\n' "$*"; }

# The peers are bench-only dependencies: the [bench] extra, installed here when missing.
STAMP=.venv/.bench-installed-stamp
if [ ! -e "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
    say "pip install -e '.[bench]' (Procrastinate, PgQueuer, asyncpg)"
    if ! .venv/bin/pip install --disable-pip-version-check -q -e '.[bench]' >.venv/pip-bench.log 2>&1; then
        tail -n 30 .venv/pip-bench.log >&2
        exit 1
    fi
    touch "$STAMP"
fi

# A stack left behind by an interrupted run is stopped first; ours is stopped on any exit.
[ -f "$STACK_DIR/state.json" ] && "$PY" tools/stack.py down --dir "$STACK_DIR" >/dev/null 2>&1 || true
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    "$PY" tools/stack.py down --dir "$STACK_DIR" >/dev/null 2>&1 || true
    say "done in $((SECONDS - t_start)) s (exit $rc)"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "starting the local stack (PostgreSQL 15, SeaweedFS S3, Tansu Kafka) in $STACK_DIR"
"$PY" tools/stack.py up --dir "$STACK_DIR"

# shellcheck disable=SC2086
BENCH_COMMAND="make bench${BENCH_ARGS:+ BENCH_ARGS='$BENCH_ARGS'}${*:+ (scripts/bench.sh $*)}" \
    "$PY" -m bench --stack-dir "$STACK_DIR" ${BENCH_ARGS:-} "$@"
