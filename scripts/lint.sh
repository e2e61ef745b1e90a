#!/usr/bin/env bash
# make lint: static checks that need no running service. plpgsql_check needs a database, so it
# runs inside the pgTAP suite (tests/sql/_schema/plpgsql_check.sql) as part of make test.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
failed=()
step() { local name=$1; shift; echo "== $name"; "$@" || failed+=("$name"); }

step sqlfluff "$bin/sqlfluff" lint sql
step squawk "$bin/squawk" sql/migrations/*.sql
py_dirs=(); for d in driver tests tools bench scripts; do [ -d "$d" ] && py_dirs+=("$d"); done
step ruff "$bin/ruff" check "${py_dirs[@]}" setup.py
step mypy "$bin/mypy" --strict driver
step promtool promtool check rules deploy/alerts.yml
# No reference to a document the repository's readers cannot open (runnable alone:
# python3 scripts/lint_refs.py).
step refs python3 scripts/lint_refs.py

if [ ${#failed[@]} -gt 0 ]; then
    echo "lint FAILED: ${failed[*]}"
    exit 1
fi
echo "lint clean"
