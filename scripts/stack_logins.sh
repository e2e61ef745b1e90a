#!/usr/bin/env bash
# make stack-up, after tools/stack.py up: migrate the stack's database, then create (or reset)
# the two least-privilege logins a developer uses - never the stack's superuser - and write
# their environments next to the stack's: DIR/worker.env and DIR/operator.env (mode 600).
# Usage: scripts/stack_logins.sh STACK_DIR
set -euo pipefail
umask 077  # the env files below carry passwords
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/stack_logins.sh STACK_DIR}
# shellcheck disable=SC1091
source "$dir/env"
cli=.venv/bin/recording-finalize
# A fresh database has no service tables; once migrate can create them it needs the flag.
flags=()
"$cli" migrate --help 2>/dev/null | grep -q -- --create-service-tables && flags=(--create-service-tables)
"$cli" migrate "${flags[@]}" >/dev/null 2>"$dir/migrate.log" \
    || { cat "$dir/migrate.log" >&2; exit 1; }

login() {  # $1 role, $2 group role, $3 env file; the password goes through the environment
    local pw
    pw="$(.venv/bin/python -c 'import secrets; print(secrets.token_hex(16))')"
    RFR_LOGIN="$1" RFR_GROUP="$2" RFR_PW="$pw" psql -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
\getenv login RFR_LOGIN
\getenv grp RFR_GROUP
\getenv pw RFR_PW
set client_min_messages = warning;
select format('%s role %I login password %L',
    case when exists (select from pg_catalog.pg_roles where rolname = :'login')
        then 'alter' else 'create' end, :'login', :'pw') \gexec
select format('grant %I to %I', :'grp', :'login') \gexec
SQL
    rm -f "$3"
    (
      grep -v -e '^export DATABASE_URL=' -e '^export PG' "$dir/env"
      echo "export DATABASE_URL='postgresql://$1:$pw@$PGHOST:$PGPORT/$PGDATABASE'" ) >"$3"
}
login rfr_dev_worker recording_finalize_worker "$dir/worker.env"
login rfr_dev_operator recording_finalize_operator "$dir/operator.env"
cat <<EOF2
stack: migrated; logins for the CLI (each granted its group role only):
  worker   (recording_finalize_worker):   source $dir/worker.env    # recording-finalize run-once | run
  operator (recording_finalize_operator): source $dir/operator.env  # recording-finalize status | requeue | explain
  ($dir/env is the throwaway stack's superuser: for psql and migrate only)
EOF2
