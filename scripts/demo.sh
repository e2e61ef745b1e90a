#!/usr/bin/env bash
# make demo: the safety net at work on a throwaway local stack, with faults, and a verdict.
#   1. start PostgreSQL 15, SeaweedFS (S3) and Tansu (Kafka) in .stack/demo (stopped on any exit),
#   2. `recording-finalize migrate --create-service-tables` as the schema owner (a new database:
#      the service's reference tables first, then the product),
#   3. a login role for the worker that is only granted recording_finalize_worker, one for the
#      operator's runbook that is only granted recording_finalize_operator, and one for the
#      messenger service's lifecycle and ingest calls that is only granted
#      recording_finalize_service,
#   4. tools/demo.py: the scenario, the real `recording-finalize run`, the report and the chart.
# Outputs in out/demo/. Exit status: tools/demo.py's (0 PASS, 1 FAIL).
# Arguments go to tools/demo.py, e.g. `bash scripts/demo.sh --break republish` or `--break incidents`
# (or RFR_DEMO_BREAK=republish make demo). BUSY=N (`make demo BUSY=2`): N stress-ng CPU hogs beside
# the whole run (scripts/busy.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
STACK_DIR=.stack/demo
OUT=out/demo
t_start=$SECONDS

say() { printf 'demo: %s\n' "$*"; }

# A stack left behind by an interrupted demo is stopped first; ours is stopped on any exit.
[ -f "$STACK_DIR/state.json" ] && "$PY" tools/stack.py down --dir "$STACK_DIR" >/dev/null 2>&1 || true
# shellcheck source=scripts/busy.sh
source scripts/busy.sh
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    busy_stop
    say "stopping the local stack"
    "$PY" tools/stack.py down --dir "$STACK_DIR" >/dev/null 2>&1 || true
    say "done in $((SECONDS - t_start)) s"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

busy_start demo
say "starting the local stack (PostgreSQL 15, SeaweedFS S3, Tansu Kafka) in $STACK_DIR"
"$PY" tools/stack.py up --dir "$STACK_DIR"
# shellcheck disable=SC1091
source "$STACK_DIR/env"

mkdir -p "$OUT"
rm -f "$OUT"/report.md "$OUT"/chart.png "$OUT"/worker.log "$OUT"/samples.csv "$OUT"/recordings.csv "$OUT"/migrate.log
say "recording-finalize migrate --create-service-tables (as the schema owner $PGUSER)"
if ! .venv/bin/recording-finalize migrate --create-service-tables 2>"$OUT/migrate.log"; then
    cat "$OUT/migrate.log" >&2
    exit 1
fi

# The worker logs in as its own role: EXECUTE on the worker API through recording_finalize_worker,
# no table privilege. The password goes through the environment, never a command line.
RFR_DEMO_WORKER_PASSWORD="$("$PY" -c 'import secrets; print(secrets.token_hex(16))')"
export RFR_DEMO_WORKER_PASSWORD
psql -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
\getenv pw RFR_DEMO_WORKER_PASSWORD
create role rfr_demo_worker login password :'pw' in role recording_finalize_worker;
SQL
export RFR_DEMO_WORKER_DATABASE_URL="postgresql://rfr_demo_worker:${RFR_DEMO_WORKER_PASSWORD}@${PGHOST}:${PGPORT}/${PGDATABASE}"
say "worker role rfr_demo_worker: granted recording_finalize_worker only"

# The operator's runbook (status, requeue) runs as a login of its own: requeue is not the worker's.
RFR_DEMO_OPERATOR_PASSWORD="$("$PY" -c 'import secrets; print(secrets.token_hex(16))')"
export RFR_DEMO_OPERATOR_PASSWORD
psql -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
\getenv pw RFR_DEMO_OPERATOR_PASSWORD
create role rfr_demo_operator login password :'pw' in role recording_finalize_operator;
SQL
export RFR_DEMO_OPERATOR_DATABASE_URL="postgresql://rfr_demo_operator:${RFR_DEMO_OPERATOR_PASSWORD}@${PGHOST}:${PGPORT}/${PGDATABASE}"
say "operator role rfr_demo_operator: granted recording_finalize_operator only"

# The messenger service calls the lifecycle and ingest functions (recording_started,
# session_ended, recording_ingest_completed) as a login granted recording_finalize_service only;
# its own writes to its own tables (a session row, the crashed ingest) stay the tables' owner's.
RFR_DEMO_SERVICE_PASSWORD="$("$PY" -c 'import secrets; print(secrets.token_hex(16))')"
export RFR_DEMO_SERVICE_PASSWORD
psql -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
\getenv pw RFR_DEMO_SERVICE_PASSWORD
create role rfr_demo_service login password :'pw' in role recording_finalize_service;
SQL
export RFR_DEMO_SERVICE_DATABASE_URL="postgresql://rfr_demo_service:${RFR_DEMO_SERVICE_PASSWORD}@${PGHOST}:${PGPORT}/${PGDATABASE}"
say "service role rfr_demo_service: granted recording_finalize_service only"

"$PY" -m tools.demo --out "$OUT" "$@"
