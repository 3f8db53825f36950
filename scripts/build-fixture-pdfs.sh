#!/usr/bin/env bash
# Compile fixture papers fixtures/src/<name>/main.tex to fixtures/pdf/<name>.pdf with pdflatex,
# the ground truth of the PDF parser: the same source as fixtures/html/<name>.html.
#
# Usage: scripts/build-fixture-pdfs.sh        (run by `make fixtures`)
#
#   fixtures/pdf/short.pdf            article, one column
#   fixtures/pdf/full.pdf             article, one column
#   fixtures/pdf/full-twocolumn.pdf   the same source with \PassOptionsToClass{twocolumn}{article}
#   fixtures/pdf/revtex.pdf           REVTeX 4.2 (aps, prb, reprint): headings "I.  INTRODUCTION"
#   fixtures/pdf/ieeetran.pdf         IEEEtran conference: small-caps headings "I. I NTRODUCTION"
#
# Reproducible: SOURCE_DATE_EPOCH with FORCE_SOURCE_DATE=1 fixes \today, /CreationDate,
# /ModDate and the trailer /ID; each paper is compiled in a fresh folder under a fixed job
# name, so running it twice gives byte-identical files (tests/test_fixture_pdfs.py checks).
# `full` has one deliberately undefined macro (its LaTeXML error): that is the only error
# pdflatex may report; any other fails the build.
#
# Needs pdflatex with Debian's texlive-latex-base and texlive-latex-recommended (booktabs,
# subcaption), and texlive-publishers for revtex4-2.cls and IEEEtran.cls; nothing from
# texlive-latex-extra: `full` uses \multirow, and a stand-in
# multirow.sty written into each build folder (found before TeX Live's) sets the cell's text
# in its first row instead of centring it over the rows. The PDF parser reads no cells, and
# the source stays the one LaTeXML converts. The committed PDFs were made with pdfTeX
# 3.141592653-2.6-1.40.24 (TeX Live 2022/Debian); another TeX Live gives other bytes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/fixtures/src"
OUT="${FIXTURE_PDFS_OUT:-$ROOT/fixtures/pdf}"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1767225600}"
export FORCE_SOURCE_DATE=1

die() { echo "build-fixture-pdfs: error: $*" >&2; exit 1; }
command -v pdflatex >/dev/null 2>&1 || die "pdflatex was not found (apt-get install texlive-latex-base texlive-latex-recommended)"
for class in revtex4-2.cls IEEEtran.cls; do
  kpsewhich "$class" >/dev/null 2>&1 || die "$class was not found (apt-get install texlive-publishers)"
done

mkdir -p "$OUT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/build-fixture-pdfs.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

build() {  # build <output name> <fixture> <preamble prepended to main.tex>
  local name="$1" fixture="$2" preamble="$3" dir="$WORK/$1"
  mkdir -p "$dir"
  cp -R "$SRC/$fixture/." "$dir/"
  cat >"$dir/multirow.sty" <<'STY'
\NeedsTeXFormat{LaTeX2e}
\ProvidesPackage{multirow}[2026/01/01 fixture stand-in: the text in the first row]
\newcommand{\multirow}[3]{#3}
STY
  for pass in 1 2; do  # the second pass resolves \ref and \cite
    set +e
    (cd "$dir" && pdflatex -interaction=nonstopmode -halt-on-error=0 -jobname=paper \
      "${preamble}\\input{main.tex}" >"$dir/stdout.txt" 2>&1)
    set -e
  done
  [ -s "$dir/paper.pdf" ] || { tail -n 30 "$dir/stdout.txt" >&2; die "$name: pdflatex made no PDF"; }
  local errors
  errors="$(grep -A1 '^! ' "$dir/paper.log" | grep -v -e '^! Undefined control sequence.' -e 'undefinedmacro' -e '^--$' || true)"
  [ -z "$errors" ] || { echo "$errors" >&2; die "$name: pdflatex reported errors"; }
  cp "$dir/paper.pdf" "$OUT/$name.pdf"
  printf '  %-16s %8s bytes\n' "$name" "$(wc -c <"$OUT/$name.pdf" | tr -d ' ')"
}

echo "==> compiling fixture PDFs with $(pdflatex --version | head -n 1)"
build short short ""
build full full ""
build full-twocolumn full "\\PassOptionsToClass{twocolumn}{article}"
build revtex revtex ""
build ieeetran ieeetran ""
