#!/usr/bin/env bash
# Prepare this machine for the local stack, the tests and the demo:
#   - the Debian packages (PostgreSQL 15 + pgTAP + pg_prove + plpgsql_check, promtool),
#   - the project's virtualenv in .venv: the pinned dependencies of requirements-dev.lock
#     (hash-checked), then `pip install --no-deps -e .`.
# Idempotent and fast when everything is already there: apt is only touched when a package
# is missing, pip only runs when pyproject.toml or the lock is newer than .venv/.installed-stamp.
# Prints one line per step.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO_ROOT/.venv"
STAMP="$VENV/.installed-stamp"
PG_LIB=/usr/lib/postgresql/15/lib

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: ERROR: %s\n' "$*" >&2; exit 1; }

# --- 1. Debian packages -------------------------------------------------------------------
# prometheus is only here for `promtool`; python3-venv for `python3 -m venv` (ensurepip);
# pgbouncer and faketime for the start-up self-check test and `make chaos`.
PACKAGES=(
    postgresql-15
    postgresql-15-pgtap
    libtap-parser-sourcehandler-pgtap-perl
    postgresql-15-plpgsql-check
    prometheus
    python3-venv
    pgbouncer
    faketime
)

# make demo / make chaos with BUSY=N run N stress-ng CPU hogs beside them (scripts/busy.sh).
if [[ "${BUSY:-0}" =~ ^[1-9][0-9]*$ ]]; then
    PACKAGES+=(stress-ng)
fi

is_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true)" = "ii " ]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
    is_installed "$pkg" || missing+=("$pkg")
done

apt_install() {
    # $@: packages. Runs as root, or through sudo.
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 \
            || die "missing packages ($*) and not root and no sudo: install them as root, then rerun"
        sudo=(sudo)
    fi
    # Keep the packages' daemons (prometheus, the Debian 'main' PostgreSQL cluster) from being
    # started by the install: a policy-rc.d that says "no" (only if none is in place already).
    local policy=/usr/sbin/policy-rc.d created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
        "${sudo[@]}" chmod 755 "$policy"
        created_policy=1
    fi
    local log rc=0
    log="$(mktemp /tmp/rfr-bootstrap-apt.XXXXXX)"
    {
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q \
        && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            --no-install-recommends "$@"
    } >"$log" 2>&1 || rc=$?
    if [ "$created_policy" -eq 1 ]; then
        "${sudo[@]}" rm -f "$policy"
    fi
    if [ "$rc" -ne 0 ]; then
        tail -n 30 "$log" >&2
        die "apt-get failed (full log: $log)"
    fi
    rm -f "$log"
}

if [ "${#missing[@]}" -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    apt_install "${missing[@]}"
else
    say "Debian packages present"
fi

# pg_stat_statements is in postgresql-15 on Debian 12 (postgresql-contrib-15 is only a virtual
# name there); install a separate contrib package only where one really exists.
if [ ! -e "$PG_LIB/pg_stat_statements.so" ]; then
    if apt-cache show postgresql-contrib-15 >/dev/null 2>&1; then
        say "installing Debian package: postgresql-contrib-15"
        apt_install postgresql-contrib-15
    fi
    [ -e "$PG_LIB/pg_stat_statements.so" ] || die "pg_stat_statements not found in $PG_LIB"
fi

for tool in /usr/lib/postgresql/15/bin/initdb /usr/lib/postgresql/15/bin/pg_ctl; do
    [ -x "$tool" ] || die "$tool missing after install"
done
command -v promtool >/dev/null 2>&1 || die "promtool missing after install"
command -v pg_prove >/dev/null 2>&1 || die "pg_prove missing after install"

# kubectl (with kustomize v5) renders deploy/kubernetes for tests/py/test_deploy.py. It is not
# in PACKAGES: Debian 12 has no kubectl package (`kubernetes-client` is 1.20, whose kustomize
# v2.0.3 cannot build the tree), and this project's machine image ships kubectl 1.32 /
# kustomize v5.5. Without it only the deploy tests fail (saying so); nothing else needs it.
if kubectl_kustomize="$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: //p')" \
        && [[ "$kubectl_kustomize" == v[5-9].* ]]; then
    say "kubectl present (kustomize $kubectl_kustomize)"
else
    say "WARNING: no kubectl with kustomize v5 on PATH: tests/py/test_deploy.py will fail"
fi

# We only want promtool. If a prometheus daemon runs anyway (installed elsewhere, or a systemd
# host), it does not matter to the stack: every stack port is chosen free at start.
if pgrep -x prometheus >/dev/null 2>&1; then
    say "note: a prometheus daemon is running (pid $(pgrep -x prometheus | tr '\n' ' ')); the stack does not use it"
fi

# --- 2. Python virtualenv -----------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
    say "creating .venv"
    python3 -m venv "$VENV"
else
    say ".venv present"
fi

LOCK="$REPO_ROOT/requirements-dev.lock"
if [ ! -e "$STAMP" ] || [ "$REPO_ROOT/pyproject.toml" -nt "$STAMP" ] || [ "$LOCK" -nt "$STAMP" ]; then
    # The pinned, hash-checked dependencies first (make lock refreshes the lock), then the
    # project itself, editable, without resolving anything again.
    say "pip install --require-hashes -r requirements-dev.lock, then -e . (lock or pyproject.toml newer than the stamp)"
    piplog="$VENV/pip-install.log"
    pip_install() {
        (cd "$REPO_ROOT" \
            && "$VENV/bin/pip" install --disable-pip-version-check -q --require-hashes \
                -r requirements-dev.lock \
            && "$VENV/bin/pip" install --disable-pip-version-check -q --no-deps -e .) \
            >"$piplog" 2>&1
    }
    # Once more after a failure: a download cut short fails its hash check (seen once on CI's
    # network); a package that truly differs from the lock fails the second time too.
    if ! pip_install; then
        say "pip install failed (log: $piplog); trying once more"
        if ! pip_install; then
            tail -n 30 "$piplog" >&2
            die "pip install failed twice (full log: $piplog)"
        fi
    fi
    touch "$STAMP"
else
    say "Python dependencies up to date"
fi
