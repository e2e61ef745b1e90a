#!/usr/bin/env bash
# make test: start a throwaway local stack, run the suites against it, always tear it down.
# Usage: scripts/test.sh all|sql|py|alerts
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
PY=.venv/bin/python
STACK_DIR=.stack/test

failed=()
run_alerts() {
    echo "== promtool: deploy/alerts.yml"
    promtool check rules deploy/alerts.yml && promtool test rules deploy/alerts.test.yml \
        || failed+=(alerts)
}

if [ "$what" = alerts ]; then
    run_alerts
    [ ${#failed[@]} -eq 0 ] || { echo "FAILED: ${failed[*]}"; exit 1; }
    exit 0
fi

# Stacks left behind by an interrupted run are stopped first (the pytest workers' too); ours
# are stopped on any exit.
stacks_down() {
    local d
    for d in "$STACK_DIR" "$STACK_DIR"-gw*; do
        [ -f "$d/state.json" ] && "$PY" tools/stack.py down --dir "$d" >/dev/null 2>&1
    done
    true
}
stacks_down
trap stacks_down EXIT INT TERM
echo "== starting the local stack (PostgreSQL 15, SeaweedFS, Tansu)"
"$PY" tools/stack.py up --dir "$STACK_DIR"
# shellcheck disable=SC1091
source "$STACK_DIR/env"

# The schema owner as production has it: LOGIN CREATEROLE (migration 0002/0004 create the
# worker and operator roles), not a superuser. Created (or its password reset) by the stack's
# superuser; prints the owner's URL for database $1.
schema_owner_url() {
    local pw
    pw="$("$PY" -c 'import secrets; print(secrets.token_hex(16))')"
    RFR_SCHEMA_OWNER_PW="$pw" psql -q -v ON_ERROR_STOP=1 -d postgres >/dev/null <<'SQL'
\getenv pw RFR_SCHEMA_OWNER_PW
select format('%s role rfr_schema_owner login createrole nosuperuser password %L',
    case when exists (select from pg_catalog.pg_roles where rolname = 'rfr_schema_owner')
        then 'alter' else 'create' end,
    :'pw') \gexec
SQL
    echo "postgresql://rfr_schema_owner:${pw}@${PGHOST}:${PGPORT}/$1"
}

PGTAP_JOBS=2
run_sql() {
    echo "== pgTAP: tests/sql"
    local db=rfr_pgtap owner_url i
    owner_url="$(schema_owner_url "$db")"
    psql -q -v ON_ERROR_STOP=1 -d postgres -c "drop database if exists $db" \
        -c "create database $db owner rfr_schema_owner"
    # Migrated as the non-superuser owner, a new database: the reference service tables first
    # (the pgTAP suite proves the SQL semantics; tests/py/test_visitor.py installs into a
    # service schema created by another role). The extensions come from the superuser.
    DATABASE_URL="$owner_url" .venv/bin/recording-finalize migrate --create-service-tables >/dev/null
    psql -q -v ON_ERROR_STOP=1 -d "$db" \
        -c "create extension if not exists pgtap" \
        -c "create extension if not exists dblink" \
        -c "create extension if not exists plpgsql_check" \
        -f tests/sql/fixtures/fixtures.psql >/dev/null
    # The files run $PGTAP_JOBS at a time, each on a copy of its own (scripts/pgtap_psql.sh).
    for ((i = 1; i <= PGTAP_JOBS; i++)); do
        # dblink authenticates from the server side: the concurrency tests need the password.
        psql -q -v ON_ERROR_STOP=1 -d postgres -c "drop database if exists ${db}_$i" \
            -c "create database ${db}_$i template $db owner rfr_schema_owner" \
            -c "alter database ${db}_$i set rfr_tests.conninfo = \
'host=$PGHOST port=$PGPORT user=$PGUSER password=$PGPASSWORD dbname=${db}_$i'"
    done
    RFR_PGTAP_DB=$db RFR_PGTAP_JOBS=$PGTAP_JOBS RFR_PGTAP_LOCKS="$STACK_DIR" \
        pg_prove -j "$PGTAP_JOBS" --psql-bin scripts/pgtap_psql.sh --ext .sql --recurse tests/sql \
        || failed+=(pgtap)
}

run_py() {
    echo "== pytest: tests/py"
    local rc=0
    # Two workers (pytest-xdist), each on a stack of its own ($STACK_DIR-gw0, -gw1: the
    # conftest's stack fixture); a test file stays on one worker (its module fixtures are set
    # up once). PYTEST_ARGS='-n 0' runs in one process, on $STACK_DIR.
    RFR_STACK_DIR="$STACK_DIR" .venv/bin/python -m pytest -n 2 --dist loadfile ${PYTEST_ARGS:-} \
        || rc=$?
    # Exit 5 means no test ran: that is a failure here, never a pass.
    [ "$rc" -eq 0 ] || failed+=(pytest)
}

case "$what" in
    sql) run_sql ;;
    py) run_py ;;
    all) run_sql; run_py; run_alerts ;;
    *) echo "usage: scripts/test.sh all|sql|py|alerts" >&2; exit 2 ;;
esac

if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "all suites passed: $what"
