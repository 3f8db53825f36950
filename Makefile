# The few entry points a newcomer needs. CI calls `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PAPERANCHOR_CORPUS ?= $(abspath ../shared/corpus)

.PHONY: run test tools lint fixtures golden install wheel bundle soak soak-hypothesis soak-atheris soak-reliability bench bench-anchors bench-changes edition-fixtures

# What serving needs (make run), then the dev extras too (tests, lint): one stamp each.
$(VENV)/.serve: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(BIN)/paperanchor: $(VENV)/.serve
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/paperanchor

## run: serve the bundled sample papers (fixtures/html) offline; installs only what serving needs
run: $(VENV)/.serve
	$(BIN)/paperanchor serve --samples --port $(PORT)

# the @anthropic-ai/mcpb tool (bundle, tests/packaging): defined before the rules that need it,
# since make expands a rule's prerequisites where it reads the rule
MCPB_VERSION ?= 2.1.2
MCPB := build/npm/node_modules/.bin/mcpb

## test: the whole test suite; first installs the programs its tests need (scripts/ensure-tools.sh)
test: tools install $(MCPB)
	$(BIN)/pytest -q

## wheel: dist/paperanchor-<version>-py3-none-any.whl, what `uvx --from` and `pipx install` take
VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' src/paperanchor/__init__.py)
WHEEL := dist/paperanchor-$(VERSION)-py3-none-any.whl
wheel: install
	$(BIN)/uv build --wheel --out-dir dist .

## bundle: dist/paperanchor-<version>.mcpb for Claude Desktop, checked by `mcpb validate`
## (the @anthropic-ai/mcpb tool is installed with npm into build/npm, never globally)
$(MCPB):
	npm install --prefix build/npm --no-save --no-audit --no-fund --loglevel=error \
		@anthropic-ai/mcpb@$(MCPB_VERSION)

bundle: wheel $(MCPB)
	$(BIN)/python scripts/build_bundle.py $(WHEEL) build/bundle
	$(MCPB) validate build/bundle/manifest.json
	$(MCPB) pack build/bundle dist/paperanchor-$(VERSION).mcpb

## tools: install what the tests need with apt-get when root on Debian, else print the command
tools:
	@bash scripts/ensure-tools.sh

lint: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

## fixtures: convert fixtures/src/*/main.tex to fixtures/html/*.html with Debian's latexml,
## and compile the PDF parser's ground-truth papers to fixtures/pdf/*.pdf with pdflatex
fixtures:
	bash scripts/build-fixtures.sh
	bash scripts/build-fixture-pdfs.sh

## golden: rewrite the golden dumps of the fixtures after a deliberate parser change
golden: install
	$(BIN)/python -m tests.golden

## bench-changes: what changed between two editions, measured; its tables into BENCHMARKS.md
bench-changes: install
	$(BIN)/python -m bench.changes --write

## bench: run the benchmarks (bench/) and rewrite BENCHMARKS.md; wrk is used when installed
bench: install
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.run

## bench-anchors: re-anchoring across editions, ours against id-only, exact-text and Hypothesis
## baselines, on the constructed pairs (fixtures/editions) and the corpus pairs; its table into
## BENCHMARKS.md (a minute)
bench-anchors: install
	$(BIN)/pip install --quiet -e '.[anchors]'
	$(BIN)/python -m bench.anchors

## edition-fixtures: write and convert the constructed edition pairs (fixtures/editions)
edition-fixtures:
	$(PYTHON) scripts/edition_fixtures.py
	bash scripts/build-edition-fixtures.sh

## soak: the long reliability runs of docs/reliability.md (about 25 minutes): 120,000 parser
## fuzz cases (hypothesis) beside 10 minutes of atheris, then 60 s of faults under load, ten
## crashes and a larger schemathesis run; the figures end up in $(SOAK)/ and on the screen
SOAK ?= test-artifacts/soak
ATHERIS_S ?= 600
FUZZ_EXAMPLES ?= 100000
soak: install
	$(BIN)/pip install --quiet -e '.[dev,fuzz]'
	rm -rf $(SOAK) && mkdir -p $(SOAK)
	$(MAKE) -j2 soak-hypothesis soak-atheris
	$(MAKE) soak-reliability
	$(BIN)/python -m tests.reliability.summary $(SOAK)

soak-hypothesis:
	PAPERANCHOR_FUZZ_PAGES=small PAPERANCHOR_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
	PAPERANCHOR_FUZZ_REPORT=$(SOAK)/hypothesis.json \
		$(BIN)/pytest -q -p no:cacheprovider --hypothesis-show-statistics tests/parse/test_fuzz.py \
		> $(SOAK)/hypothesis.log 2>&1 || (tail -50 $(SOAK)/hypothesis.log; exit 1)

soak-atheris:
	$(BIN)/python fuzz/parse_fuzz.py -max_total_time=$(ATHERIS_S) -print_final_stats=1 \
		-artifact_prefix=$(SOAK)/ > $(SOAK)/atheris.log 2>&1 || (tail -50 $(SOAK)/atheris.log; exit 1)

soak-reliability:
	PAPERANCHOR_SOAK=1 PAPERANCHOR_SOAK_REPORT=$(SOAK)/reliability.jsonl \
		$(BIN)/pytest -q -s -p no:cacheprovider tests/reliability
