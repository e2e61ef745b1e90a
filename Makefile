# recording-finalize-retry — every entry point a newcomer, an operator or CI needs.
# `make test` and `make demo` install what they need (apt packages, .venv) and start the local
# stack (PostgreSQL 15, SeaweedFS S3, Tansu Kafka) on free loopback ports themselves.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STACK_DIR ?= .stack/dev

.PHONY: help bootstrap lock test test-sql test-py test-alerts lint check demo bench chaos \
        stack-up stack-down migrate status clean fingerprint fingerprint-record set-version release-tag \
        release-check wheel image \
        dashboard dashboard-png alerts-render schema

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 16

bootstrap:  ## install apt packages and the Python environment (idempotent)
	@bash scripts/bootstrap.sh

lock:  ## refresh requirements.lock and requirements-dev.lock from pyproject.toml (UPGRADE=1: newest)
	@[ -x $(PY) ] || bash scripts/bootstrap.sh
	@bash scripts/lock.sh

test: bootstrap  ## the whole suite on a throwaway local stack: pgTAP, pytest, promtool
	@bash scripts/test.sh all

test-sql: bootstrap  ## only the pgTAP suite
	@bash scripts/test.sh sql

test-py: bootstrap  ## only the pytest suite (PYTEST_ARGS='-k name' to filter)
	@bash scripts/test.sh py

test-alerts: bootstrap  ## only the promtool unit tests of deploy/alerts.yml
	@bash scripts/test.sh alerts

lint: bootstrap  ## sqlfluff, squawk, plpgsql_check, ruff, mypy --strict, promtool check
	@bash scripts/lint.sh

check: lint test  ## everything CI runs

demo: bootstrap  ## the safety net at work on the embedded stack, with a verdict (about 1-2 min; BUSY=N: N CPU hogs beside it)
	@bash scripts/demo.sh

bench: bootstrap  ## end-to-end throughput against peers, round trips, cost growth, whole-cycle cost (BENCH_ARGS=--only cycle)
	@bash scripts/bench.sh

chaos: bootstrap  ## fault-injection suite against the real local stack (BUSY=N: N CPU hogs beside it)
	@bash scripts/chaos.sh

stack-up: bootstrap  ## start a local stack in $(STACK_DIR), migrate it, print the worker's and operator's logins
	@$(PY) tools/stack.py up --dir $(STACK_DIR)
	@bash scripts/stack_logins.sh $(STACK_DIR)

stack-down:  ## stop every local stack this checkout started (safe to repeat)
	@for d in .stack/*/; do [ -f "$$d/state.json" ] && python3 tools/stack.py down --dir "$$d"; done; true

migrate: bootstrap  ## apply migrations and functions to $$DATABASE_URL
	@$(VENV)/bin/recording-finalize migrate

status: bootstrap  ## backlog, quarantine and publish backlog of $$DATABASE_URL
	@$(VENV)/bin/recording-finalize status

schema: bootstrap  ## regenerate sql/schema.sql from a fresh migrate ($$DATABASE_URL: a local stack's superuser)
	@$(PY) tools/schema_snapshot.py --write

# Releasing (docs/releasing.md): the tree carries X.Y.Z.devN while work goes on; a release is
#   make set-version VERSION=X.Y.Z && make release-check && git commit -am "Release X.Y.Z"
#   make release-tag && make set-version VERSION=X.Y.(Z+1).dev0 && git commit -am "Back to dev"
fingerprint:  ## the package and SQL fingerprints of the tree, and whether CHANGELOG.md records them
	@python3 scripts/release.py fingerprint

fingerprint-record:  ## write them into the current release's CHANGELOG entry (before its commit only)
	@python3 scripts/release.py fingerprint --record

set-version:  ## VERSION=X.Y.Z: cut a release (CHANGELOG entry from [Unreleased]); X.Y.Z.devN: develop
	@[ -n "$(VERSION)" ] || { echo "usage: make set-version VERSION=X.Y.Z|X.Y.Z.devN"; exit 2; }
	@python3 scripts/release.py set-version $(VERSION)

release-check:  ## what the release rules find wrong in the tree (tests/py/test_release.py too)
	@python3 scripts/release.py check

release-tag:  ## tag the release vX.Y.Z on HEAD; refuses a .dev version, [Unreleased] changes, other files
	@python3 scripts/release.py tag

wheel:  ## dist/recording_finalize_retry-<version>-py3-none-any.whl with its commit baked in
	@[ -x $(PY) ] || bash scripts/bootstrap.sh
	@rm -f dist/recording_finalize_retry-*.whl
	@$(PY) -m pip wheel --no-deps -q -w dist .
	@ls dist/recording_finalize_retry-*.whl

image: wheel  ## the image: tagged X.Y.Z for a release, X.Y.Z.devN-<commit> for unreleased work
	@eval "$$(python3 scripts/release.py image-tag)" && \
	    docker build -f deploy/Dockerfile --build-arg VERSION="$$VERSION" \
	        --build-arg COMMIT="$$COMMIT" -t recording-finalize-retry:"$$TAG" . && \
	    echo "recording-finalize-retry:$$TAG (commit $$COMMIT)"

dashboard:  ## regenerate deploy/grafana/recording-finalize.json from tools/dashboard.py
	@[ -x $(PY) ] || bash scripts/bootstrap.sh
	@$(PY) -m tools.dashboard

dashboard-png: bootstrap  ## docs/dashboard.png: the panels' data from a real Prometheus and sidecar (~3 min)
	@PYTEST_ARGS="tests/py/test_dashboard.py -k real_prometheus" RFR_DASHBOARD_PNG=docs/dashboard.png \
	    RFR_DASHBOARD_SECONDS=$${RFR_DASHBOARD_SECONDS:-150} bash scripts/test.sh py

RUNBOOK_PLACEHOLDER := https://runbooks.example.com/recording-finalize-retry/README.md
ALERTS_OUT ?= out/deploy/alerts.yml
alerts-render:  ## RUNBOOK_URL=<README.md's URL>: deploy/alerts.yml with it as runbook base, in out/
	@[ -n "$(RUNBOOK_URL)" ] || { echo "usage: make alerts-render RUNBOOK_URL=https://.../README.md"; exit 2; }
	@mkdir -p $(dir $(ALERTS_OUT))
	@sed 's|$(RUNBOOK_PLACEHOLDER)|$(RUNBOOK_URL)|g' deploy/alerts.yml > $(ALERTS_OUT)
	@promtool check rules $(ALERTS_OUT) >/dev/null
	@echo "$(ALERTS_OUT): every runbook_url is $(RUNBOOK_URL)#<section>"

clean: stack-down  ## remove the virtualenv, caches and local stack data
	rm -rf $(VENV) .stack out .pytest_cache .mypy_cache .ruff_cache
