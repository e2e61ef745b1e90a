#!/usr/bin/env bash
# make lock: refresh the lock files from pyproject.toml's ranges, with every file's hash.
#   requirements.lock      the application's dependencies (what a deployment installs:
#                          pip install --require-hashes -r requirements.lock, then the wheel)
#   requirements-dev.lock  the same pins plus the dev extra (what make test, make lint and CI
#                          install through scripts/bootstrap.sh)
# uv pip compile resolves for every platform (--universal) and keeps the pins already in a lock
# file unless pyproject.toml's ranges exclude them; UPGRADE=1 moves every pin to the newest
# allowed version. After adding a dependency to pyproject.toml: make lock, commit both files.
set -euo pipefail
cd "$(dirname "$0")/.."
uv=.venv/bin/uv
if [ ! -x "$uv" ]; then
    echo "lock: installing uv into .venv"
    .venv/bin/pip install --disable-pip-version-check -q 'uv>=0.5'
fi
upgrade=()
[ "${UPGRADE:-0}" = 1 ] && upgrade=(--upgrade)
common=(--generate-hashes --universal --python-version 3.11 --quiet "${upgrade[@]}")
"$uv" pip compile pyproject.toml "${common[@]}" -o requirements.lock
"$uv" pip compile pyproject.toml --extra dev "${common[@]}" -c requirements.lock \
    -o requirements-dev.lock
echo "lock: requirements.lock ($(grep -c '==' requirements.lock) pins)," \
    "requirements-dev.lock ($(grep -c '==' requirements-dev.lock) pins)"
