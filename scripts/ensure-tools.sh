#!/usr/bin/env bash
# The programs `make test` needs, installed with apt-get when they are missing and this is root
# on Debian; otherwise the one command to run is printed, and the tests needing them skip with
# it as their reason (they fail under CI=true: tests/conftest.py require_program).
#
# Usage: scripts/ensure-tools.sh            install what is missing (one line, then quiet)
#        scripts/ensure-tools.sh --dry-run  say what would be done, change nothing
#        scripts/ensure-tools.sh --command  print only the command that installs what is missing
#
# `make test` runs it first; .ci/run runs it before `make lint` (make itself may be missing).
set -euo pipefail

mode=${1:-install}
case "$mode" in install | --dry-run | --command) ;; *)
  echo "usage: $0 [--dry-run | --command]" >&2
  exit 2
  ;;
esac

programs=()
packages=()

# need PROGRAM[|OTHER NAME] PACKAGE...: PACKAGE... unless one of the names is on PATH
need() {
  local names=$1
  shift
  local name
  for name in ${names//|/ }; do
    command -v "$name" >/dev/null 2>&1 && return 0
  done
  programs+=("${names%%|*}")
  packages+=("$@")
}

need make make                          # the README's commands
need python3 python3                    # Python 3.11+ (Debian 12's python3)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  programs+=("python3 -m venv")         # make install creates .venv
  packages+=(python3-venv)
fi
need redis-server redis-server          # tests/test_redis*.py start their own on a loopback port
need "chromium|chromium-browser" chromium # tests/api/test_pages.py, test_xss.py (Playwright)
need latexmlc latexml                   # tests/test_fixtures.py rebuilds the sample papers
need pdflatex texlive-latex-base texlive-latex-recommended texlive-fonts-recommended
need bibtex texlive-bibtex-extra        # the PDF and BibTeX tests compile LaTeX for real
need pdftotext poppler-utils            # the PDF source's tests read back what they made
# the fixtures' LaTeX packages (booktabs, natbib, hyperref): pdflatex alone may come with latexml
if command -v kpsewhich >/dev/null 2>&1 && ! kpsewhich booktabs.sty natbib.sty >/dev/null 2>&1; then
  programs+=("booktabs.sty")
  packages+=(texlive-latex-recommended)
fi
# REVTeX and IEEEtran, the classes of two PDF fixtures (tests/test_fixture_pdfs.py): looked for
# with TeX's kpsewhich; on a machine without TeX they come with it, in the same install (else a
# first `make test` on a fresh machine would find them only on its second run)
if ! command -v pdflatex >/dev/null 2>&1; then
  packages+=(texlive-publishers)
elif command -v kpsewhich >/dev/null 2>&1 && ! kpsewhich revtex4-2.cls IEEEtran.cls >/dev/null 2>&1; then
  programs+=("revtex4-2.cls")
  packages+=(texlive-publishers)
fi
need npx nodejs npm                     # tests/api/test_inspector.py runs the MCP Inspector

[ ${#programs[@]} -eq 0 ] && exit 0
# one of each, in the order first needed
declare -A seen=()
list=""
for package in "${packages[@]}"; do
  [ -n "${seen[$package]:-}" ] && continue
  seen[$package]=1
  list+="$package "
done
list=${list% }

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  case "$mode" in
  --command) echo "apt-get install -y $list" ;;
  --dry-run) echo "would run: apt-get update -qq && apt-get install -y -qq $list" ;;
  install)
    echo "ensure-tools: installing $list (missing: ${programs[*]})" >&2
    log=$(mktemp)
    # shellcheck disable=SC2086 # the list is meant to split
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $list; } \
      >"$log" 2>&1; then
      tail -n 30 "$log" >&2
      rm -f "$log"
      echo "ensure-tools: apt-get install $list failed" >&2
      exit 1
    fi
    rm -f "$log"
    ;;
  esac
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  command="sudo apt-get install -y $list"
else
  command="install ${programs[*]} with this system's package manager (Debian: apt-get install -y $list)"
fi
if [ "$mode" = --command ]; then
  echo "$command"
else
  {
    echo "ensure-tools: some tests need programs that are missing: ${programs[*]}"
    echo "  run: $command"
    echo "  (until then those tests are skipped, and fail under CI=true)"
  } >&2
fi
