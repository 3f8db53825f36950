#!/usr/bin/env bash
# Convert the constructed edition pairs (fixtures/editions/src/<case>-{old,new}/main.tex,
# written by scripts/edition_fixtures.py) with Debian's latexml, as scripts/build-fixtures.sh
# converts the fixtures: fixtures/editions/html/<case>-{old,new}.html.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
names=()
for tex in "$ROOT"/fixtures/editions/src/*/main.tex; do
  names+=("$(basename "$(dirname "$tex")")")
done
FIXTURES_SRC="$ROOT/fixtures/editions/src" FIXTURES_OUT="$ROOT/fixtures/editions/html" \
  FIXTURES_LOGS="$ROOT/fixtures/logs" bash "$ROOT/scripts/build-fixtures.sh" "${names[@]}"
