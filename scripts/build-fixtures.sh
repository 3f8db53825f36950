#!/usr/bin/env bash
# Convert the LaTeX fixtures fixtures/src/<name>/main.tex into arXiv-like HTML
# fixtures/html/<name>.html with Debian's LaTeXML (latexmlc 0.8.7).
#
# Usage: scripts/build-fixtures.sh [NAME ...]     (default: every fixture)
#        make fixtures
#
# Output layout:
#   fixtures/html/<name>.html          the page
#   fixtures/html/<name>/<file>.png    its images; the page refers to them as
#                                      src="<name>/<file>.png" (relative)
#   fixtures/logs/<name>.latexml.log   LaTeXML log (git-ignored)
#
# The options follow arXiv's conversion service as far as 0.8.7 allows (see
# fixtures/README.md): the ar5iv bindings and ar5iv.sty are not available.
#
# A fixture may declare the worst LaTeXML status it is expected to end with in
# a comment line of its main.tex:  % latexml-expected-status: 2
# The default is 1 (warnings). Status 3 (fatal) always fails the build, and so
# does any status above the declared one.
#
# Reproducibility: the "Generated on <date>" stamp is fixed (--timestamp plus
# a sed safety net), SOURCE_DATE_EPOCH fixes \today, LaTeXML's image cache is
# discarded after each run, and absolute paths are stripped from the HTML, so
# re-running gives byte-identical HTML and image files.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FIX="$ROOT/fixtures"
# FIXTURES_SRC converts another folder of sources (fixtures/editions/src: make bench-anchors).
SRC="${FIXTURES_SRC:-$FIX/src}"
# FIXTURES_OUT / FIXTURES_LOGS build elsewhere (tests/test_fixtures.py rebuilds into a
# temporary folder and compares with the committed pages).
OUT="${FIXTURES_OUT:-$FIX/html}"
LOGS="${FIXTURES_LOGS:-$FIX/logs}"
PYTHON="${PYTHON:-python3}"
# Outer wall-clock guard (seconds) in case LaTeXML's own --timeout does not
# fire, e.g. an expl3 loop (see fixtures/README.md).
HARD_TIMEOUT="${FIXTURE_HARD_TIMEOUT:-900}"
EXPECTED_VERSION="0.8.7"

# 2026-01-01 00:00:00 UTC; a fixed date keeps the output reproducible.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1767225600}"
STAMP="$(LC_ALL=C date -u -d "@$SOURCE_DATE_EPOCH" '+%a %b %e %H:%M:%S %Y')"

die() { echo "build-fixtures: error: $*" >&2; exit 1; }

if ! command -v latexmlc >/dev/null 2>&1; then
  cat >&2 <<'EOF'
build-fixtures: latexmlc (LaTeXML) was not found on PATH.
Install Debian's LaTeXML, e.g. as root:
    apt-get update && apt-get install -y latexml
The fixtures were made with LaTeXML 0.8.7 (Debian 12 package latexml 0.8.7-2).
EOF
  exit 127
fi

VERSION_LINE="$(latexmlc --VERSION 2>&1 | head -n 1 || true)"
case "$VERSION_LINE" in
  *"version $EXPECTED_VERSION"*) ;;
  *) echo "build-fixtures: warning: expected LaTeXML $EXPECTED_VERSION, found: $VERSION_LINE" >&2
     echo "build-fixtures: warning: the HTML will differ from the committed fixtures" >&2 ;;
esac

# The PNG figures are committed; regenerate any that are missing.
"$PYTHON" "$FIX/make_images.py"

if [ "$#" -gt 0 ]; then
  NAMES=("$@")
else
  NAMES=()
  for tex in "$SRC"/*/main.tex; do
    [ -e "$tex" ] || die "no fixtures found under $SRC"
    NAMES+=("$(basename "$(dirname "$tex")")")
  done
fi

mkdir -p "$OUT" "$LOGS"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/build-fixtures.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

SUMMARY=()
for name in "${NAMES[@]}"; do
  dir="$SRC/$name"
  [ -f "$dir/main.tex" ] || die "$dir/main.tex does not exist"
  expected="$(sed -n 's/^%[[:space:]]*latexml-expected-status:[[:space:]]*\([0-3]\).*/\1/p' "$dir/main.tex" | head -n 1)"
  expected="${expected:-1}"

  tmp="$WORK/$name"
  mkdir -p "$tmp"
  log="$tmp/$name.latexml.log"
  echo "==> $name: converting fixtures/src/$name/main.tex"
  start="$(date +%s.%N)"
  set +e
  # --sourcedirectory=.. makes image paths relative to fixtures/src, so
  # LaTeXML copies fig-a.png to <dest dir>/<name>/fig-a.png and writes
  # src="<name>/fig-a.png": every page keeps its images in its own folder.
  (
    cd "$dir"
    timeout --kill-after=30 "$HARD_TIMEOUT" latexmlc \
      "--preload=[nobibtex,ids,localrawstyles,mathlexemes,nobreakuntex,magnify=1.8,zoomout=1.8]latexml.sty" \
      --format=html5 --pmml --cmml --mathtex --navigationtoc=context \
      --timeout=600 --nodefaultresources \
      --css=https://arxiv.org/static/browse/0.3.4/css/ar5iv.0.7.9.min.css \
      --css=https://arxiv.org/static/browse/0.3.4/css/latexml_styles.css \
      "--timestamp=$STAMP" \
      --sourcedirectory=.. \
      --source=main.tex --dest="$tmp/$name.html" --log="$log"
  ) >"$tmp/stderr.txt" 2>&1
  rc=$?
  set -e
  end="$(date +%s.%N)"
  secs="$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"

  status="$(sed -n 's/^Status:conversion:\([0-9]\).*/\1/p' "$log" "$tmp/stderr.txt" 2>/dev/null | tail -n 1)"
  cp "$log" "$LOGS/$name.latexml.log" 2>/dev/null || cp "$tmp/stderr.txt" "$LOGS/$name.latexml.log"

  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    tail -n 20 "$tmp/stderr.txt" >&2
    die "$name: latexmlc was killed after ${HARD_TIMEOUT}s (a package loading expl3? see fixtures/README.md)"
  fi
  if [ "$rc" -ne 0 ] || [ -z "$status" ] || [ "$status" -ge 3 ] || [ ! -s "$tmp/$name.html" ]; then
    tail -n 30 "$tmp/stderr.txt" >&2
    die "$name: latexmlc failed (exit code $rc, LaTeXML status ${status:-unknown}); log: fixtures/logs/$name.latexml.log"
  fi
  if [ "$status" -gt "$expected" ]; then
    grep -E '^(Error|Fatal):' "$log" | head -n 20 >&2 || true
    die "$name: LaTeXML status $status is worse than the expected $expected; log: fixtures/logs/$name.latexml.log"
  fi

  # Normalise: fixed generation date (also in the footer, "Generated  on"),
  # and no absolute paths of this machine.
  html="$tmp/$name.html"
  sed -i -E \
    -e "s/(Generated +on) [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}/\\1 $STAMP/g" \
    -e "s#(file://)?$dir/##g" -e "s#(file://)?$SRC/##g" -e "s#(file://)?$tmp/##g" \
    -e "s#(file://)?$ROOT/##g" \
    "$html"
  if grep -q -e "$ROOT" -e "$WORK" -e "$HOME/" "$html"; then
    die "$name: absolute path left in the HTML"
  fi

  # Install: page, its image folder, and anything else LaTeXML generated
  # (e.g. x1.png for transformed images; none at present).
  rm -rf "${OUT:?}/$name" "$OUT/$name.html"
  mv "$html" "$OUT/$name.html"
  [ -d "$tmp/$name" ] && mv "$tmp/$name" "$OUT/$name"
  rm -f "$log" "$tmp/stderr.txt" "$tmp/LaTeXML.cache"
  extra="$(cd "$tmp" && find . -type f | sed 's#^\./##')"
  if [ -n "$extra" ]; then
    echo "build-fixtures: warning: $name: LaTeXML wrote extra files, copied to fixtures/html/: $extra" >&2
    (cd "$tmp" && cp -R . "$OUT/")
  fi
  rm -rf "$tmp"

  bytes="$(wc -c <"$OUT/$name.html" | tr -d ' ')"
  case "$status" in 0) word=ok ;; 1) word=warnings ;; 2) word=errors ;; *) word=? ;; esac
  line="$(printf '%-12s %6s s  status %s (%s, expected <= %s)  %8s bytes' "$name" "$secs" "$status" "$word" "$expected" "$bytes")"
  echo "    $line"
  SUMMARY+=("$line")
done

echo
echo "Converted ${#SUMMARY[@]} fixture(s) with $VERSION_LINE:"
printf '  %s\n' "${SUMMARY[@]}"

# Structural checks need lxml; the project venv has it.
CHECK_PY="${CHECK_PYTHON:-$ROOT/.venv/bin/python}"
if [ "$#" -eq 0 ] && [ -x "$CHECK_PY" ] && "$CHECK_PY" -c 'import lxml' 2>/dev/null; then
  echo
  echo "==> checking fixtures/html with fixtures/check_fixtures.py"
  if ! "$CHECK_PY" "$FIX/check_fixtures.py" "$OUT" >"$WORK/check.txt" 2>&1; then
    grep -v '^  \[ok\]' "$WORK/check.txt" >&2
    die "fixture checks failed (details: $CHECK_PY fixtures/check_fixtures.py)"
  fi
  tail -n 1 "$WORK/check.txt"
elif [ "$#" -eq 0 ]; then
  echo "build-fixtures: note: lxml not available, skipped fixtures/check_fixtures.py" >&2
fi
