#!/usr/bin/env bash
# make chaos: the fault-injection suite (tests/chaos) against its own local stack in .stack/chaos,
# torn down on any exit. Prints the figures table; on a full passing run it also writes the
# table into docs/reliability.md. Bounded: every scenario has its own timeouts, and the whole
# run is stopped after RFR_CHAOS_TIMEOUT seconds (default 570; with BUSY=N hogs, 570 x (1 + N/2)).
# BUSY=N (`make chaos BUSY=2`): N stress-ng CPU hogs beside the whole run (scripts/busy.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
STACK_DIR=.stack/chaos
export RFR_CHAOS_TOTAL_START=${RFR_CHAOS_TOTAL_START:-$(date +%s)}

# A stack an interrupted run left behind is stopped first; ours is stopped on any exit.
[ -f "$STACK_DIR/state.json" ] && "$PY" tools/stack.py down --dir "$STACK_DIR" >/dev/null 2>&1 || true
# shellcheck source=scripts/busy.sh
source scripts/busy.sh
trap 'busy_stop; "$PY" tools/stack.py down --dir "$STACK_DIR" >/dev/null 2>&1 || true' EXIT INT TERM
busy_start chaos
echo "== starting the chaos stack (PostgreSQL 15, SeaweedFS, Tansu on S3 storage)"
"$PY" tools/stack.py up --dir "$STACK_DIR" --kafka-storage s3

echo "== chaos scenarios (tests/chaos)"
rc=0
RFR_STACK_DIR="$STACK_DIR" RFR_CHAOS_DOCS=${RFR_CHAOS_DOCS:-1} \
    timeout --kill-after=10 "${RFR_CHAOS_TIMEOUT:-$((570 * (2 + BUSY) / 2))}" \
    "$PY" -m pytest tests/chaos -p no:cacheprovider -q -s -o addopts="" ${PYTEST_ARGS:-} \
    || rc=$?
# Exit 5 means no test ran: a failure here, never a pass.
if [ "$rc" -ne 0 ]; then
    echo "chaos FAILED (exit $rc)"
    exit 1
fi
echo "chaos passed in $(( $(date +%s) - RFR_CHAOS_TOTAL_START )) s"
