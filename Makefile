# Fresh machine → working checkout: every target sets itself up from the checkout alone.
PY     ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.ddlcore-installed
PLUGINS := $(wildcard plugins/*/pyproject.toml)
GRAMMARS := $(wildcard grammars/*/*.g4)
PROTOS  := $(wildcard plugins/*/proto/*.proto)
COMMA   := ,
# DuckDB's iceberg extension for the iceberg_scan test (tests/duckdb_iceberg.py): PyPI ships it
# only for DuckDB 1.4.4, a version of its own beside the project's DuckDB
DUCKDB_ICEBERG := $(VENV)/duckdb-iceberg
DUCKDB_ICEBERG_PKGS := duckdb==1.4.4 duckdb-ext-avro==1.4.4.20260205 duckdb-ext-iceberg==1.4.4.20260205

.PHONY: venv test test-fast demo grammar bench clean

$(STAMP): pyproject.toml $(PLUGINS) $(GRAMMARS) $(PROTOS)
	@command -v java >/dev/null || { echo "ddlcore needs Java 11+ (the ANTLR tool builds the parsers; Spark runs on it): apt-get install openjdk-17-jre-headless" >&2; exit 1; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[spark,iceberg,test]' $(foreach p,$(PLUGINS),-e '$(patsubst %/,%,$(dir $(p)))[capture$(if $(findstring /mysql/,$(p)),$(COMMA)tidb)]')
	touch $@

$(DUCKDB_ICEBERG)/.installed: Makefile | $(STAMP)
	$(BIN)/python -m pip install -q --upgrade --target $(DUCKDB_ICEBERG) $(DUCKDB_ICEBERG_PKGS)
	touch $@

venv: $(STAMP) $(DUCKDB_ICEBERG)/.installed

# The whole suite.  Tests that need MariaDB start their own server (installed with apt-get
# when missing and running as root).  HYPOTHESIS_PROFILE=dev runs the longer profile.
# TEST_WORKERS pytest-xdist processes, each with its own servers and Spark session; a test
# module is one unit of work (its module fixtures are set up once), the heaviest modules first
# (tests/conftest.py).  Much of the suite waits on servers, JVMs and subprocesses, so two
# workers on two cores finish well before one.  TEST_WORKERS=0: one process, no xdist.
TEST_WORKERS ?= 2
test: $(STAMP) $(DUCKDB_ICEBERG)/.installed
	$(BIN)/python -m pytest -q --durations=15 -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# What needs no database server, broker or Spark (markers set by tests/conftest.py): a quick
# local loop.  CI runs `make test`, everything.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not (spark or mariadb or postgres or kafka)"

# The main job on the bundled example.
demo: $(STAMP)
	$(BIN)/python examples/demo.py

# Regenerate the parsers in place after editing a grammar (pip install -e does it too).
grammar: $(STAMP)
	for h in plugins/*/hatch_build.py; do $(BIN)/python $$h || exit 1; done

bench: $(STAMP)
	for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) demo-out plugins/*/src/*/_generated
