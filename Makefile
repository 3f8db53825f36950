# The few entry points a newcomer needs. CI calls `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PAPERANCHOR_CORPUS ?= $(abspath ../shared/corpus)

.PHONY: run test lint fixtures golden install bench

$(BIN)/paperanchor: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/paperanchor

## run: serve the bundled sample papers (fixtures/html) offline
run: install
	PAPERANCHOR_LOCAL_DIR=$(abspath fixtures/html) PAPERANCHOR_OFFLINE=1 $(BIN)/paperanchor serve

## test: the whole test suite
test: install
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

## fixtures: convert fixtures/src/*/main.tex to fixtures/html/*.html with Debian's latexml
fixtures:
	bash scripts/build-fixtures.sh

## golden: rewrite the golden dumps of the fixtures after a deliberate parser change
golden: install
	$(BIN)/python -m tests.golden

## bench: run the benchmarks (bench/) and rewrite BENCHMARKS.md; wrk is used when installed
bench: install
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.run
