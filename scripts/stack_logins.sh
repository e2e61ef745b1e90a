#!/usr/bin/env bash
# make stack-up, after tools/stack.py up: migrate the stack's database (with the service's
# reference tables), then create (or reset) the three least-privilege logins a developer uses -
# never the stack's superuser - and write their environments next to the stack's:
# DIR/worker.env, DIR/operator.env and DIR/service.env (mode 600).
# Usage: scripts/stack_logins.sh STACK_DIR
set -euo pipefail
umask 077  # the env files below carry passwords
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/stack_logins.sh STACK_DIR}
# shellcheck disable=SC1091
source "$dir/env"
cli=.venv/bin/recording-finalize
# The stack's database is new: the service's reference tables (sql/service/schema.sql) are
# created first, each only if missing, so a second stack-up migrates as the first did.
"$cli" migrate --create-service-tables >/dev/null 2>"$dir/migrate.log" \
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
login rfr_dev_service recording_finalize_service "$dir/service.env"
cat <<EOF2
stack: migrated; logins for the CLI (each granted its group role only):
  worker   (recording_finalize_worker):   source $dir/worker.env    # recording-finalize run-once | run
  operator (recording_finalize_operator): source $dir/operator.env  # recording-finalize status | requeue | explain
  service  (recording_finalize_service):  source $dir/service.env   # psql: recording_finalize.recording_started | session_ended | ...
  ($dir/env is the throwaway stack's superuser: for psql and migrate only)
EOF2
