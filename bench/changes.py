"""`make bench-changes`: what changed between two editions (SPEC §10), measured.

For every corpus pair (corpus/pairs: arXiv's 2024 page and ar5iv's of one paper) and every
constructed pair (tests/changes/constructed.py: scripted edits whose truth is known), the time to
compare two held editions (alignment and comparison, as a first `changes` on two cached papers
costs), the counts said against the truth, the tokens of the whole paper's `.md` of changes and of
an agent's flow (outline since, then read since of each changed section) against reading the new
edition whole. Run alone (`python -m bench.changes`); `--write` puts the tables into BENCHMARKS.md
between its markers.
"""

from __future__ import annotations

import argparse
import csv
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.changes.constructed import PAIRS

from bench.common import CORPUS, ROOT
from paperanchor import changes, editions, service
from paperanchor.compact import compact
from paperanchor.operations import dumps
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from paperanchor.render.markdown import tokens_of

RUNS = 7
STAMP = "%Y-%m-%d %H:%M UTC"
OUT = ROOT / "BENCHMARKS.md"
BEGIN, END = "<!-- changes: bench/changes.py -->", "<!-- /changes -->"
KINDS = ("sections", "paragraphs", "equations", "tables", "figures")


def _paper(page: bytes, idv: str) -> Paper:
    return Paper.open(LoadedPaper(parse_document(page, f"https://example.org/{idv}"), "p", idv))


def _pairs() -> list[tuple[str, Path, Path]]:
    found: dict[str, dict[str, Path]] = {}
    for path in sorted((CORPUS / "pairs").glob("*.html")):
        stem = re.sub(r"v\d+$", "", path.name.split(".ar")[0])
        found.setdefault(stem, {})["ar5iv" if ".ar5iv." in path.name else "arxiv"] = path
    return [(stem, p["ar5iv"], p["arxiv"]) for stem, p in sorted(found.items()) if len(p) == 2]


def _truth() -> dict[str, str]:
    """The corpus's own count of each pair's paragraphs (pairs/MANIFEST.tsv notes)."""
    with (CORPUS / "pairs" / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    said: dict[str, str] = {}
    for row in rows:
        match = re.search(
            r"identical (\d+).*near (\d+) edited (\d+) no-counterpart (\d+)", row["notes"]
        )
        if match:
            said[row["arxiv_id"]] = "{} same, {} near, {} edited, {} without".format(
                *match.groups()
            )
    return said


def _compare(old: Paper, new: Paper) -> changes.Comparison:
    return changes.compare(old, new, editions.align(old, new))


def _flow(result: changes.Comparison) -> tuple[int, int, int]:
    """Tokens of outline since + read since of each section with changed blocks of its own,
    and of reading the new edition whole (o200k tokens of the JSON and Markdown sent)."""
    outline = changes.marked_outline(service.outline(result.new), result)
    spent_outline = tokens_of(dumps(compact(outline)))  # what the MCP tool sends
    spent_reads = 0
    for section_id, (change, _changed) in result.sections.items():
        own = [p for p in result.pieces.get(section_id, []) if p.change != "same"]
        if change != "same" and own and section_id != changes.ABSTRACT:
            spent_reads += service.read_since(result, section_id, door="mcp").tokens
    return spent_outline, spent_reads, tokens_of(result.new.markdown())


def corpus_rows() -> tuple[list[str], list[float]]:
    truth = _truth()
    rows = []
    medians = []
    for stem, old_path, new_path in _pairs():
        old = _paper(old_path.read_bytes(), f"{stem}.ar5iv")
        new = _paper(new_path.read_bytes(), new_path.name.removesuffix(".html"))
        times = []
        for _ in range(RUNS):
            started = time.perf_counter()
            result = _compare(old, new)
            times.append(time.perf_counter() - started)
        median = statistics.median(times)
        medians.append(median)
        shape = changes.changes_shape(result)
        said = shape["paragraphs"]
        outline, reads, whole = _flow(result)
        md = tokens_of(changes.whole_markdown(result))
        rows.append(
            f"| {stem} | {(old_path.stat().st_size + new_path.stat().st_size) // 1024} "
            f"| {median * 1000:.0f} ({min(times) * 1000:.0f}–{max(times) * 1000:.0f}) "
            f"| {said['same']} same, {said['edited']} edited, {said['added']} added, "
            f"{said['removed']} removed, {said['moved']} moved | {truth.get(stem, '?')} "
            f"| {'/'.join(str(shape[k]['edited']) for k in ('equations', 'tables', 'figures'))} "  # type: ignore[literal-required]
            f"| {len(shape['numbers'])} | {md} | {outline} + {reads} / {whole} = "
            f"{(outline + reads) / whole:.2f} |"
        )
    return rows, medians


def edition_rows() -> list[str]:
    """fixtures/editions: one LaTeX paper, eight scripted changes, both editions converted."""
    from tests.changes.constructed import edition_truth

    from bench.anchor_truth import constructed

    rows = []
    for case in constructed():
        old, new = Paper.open(LoadedPaper(case.old, "p", "pv1")), _paper_of(case.new)
        started = time.perf_counter()
        result = _compare(old, new)
        spent = time.perf_counter() - started
        shape = changes.changes_shape(result)
        wrong = []
        scripted = 0
        for kind, truth in edition_truth(case).items():
            said = {c: shape[kind][c] for c in truth}  # type: ignore[literal-required]
            scripted += sum(truth.values())
            if said != truth:
                wrong.append(f"{kind} {said} (truth {truth})")
        rows.append(
            f"| {case.name} | {scripted} | {changes.summary(result)} "
            f"| {'all right' if not wrong else '; '.join(wrong)} | {spent * 1000:.0f} ms |"
        )
    return rows


def _paper_of(document: Any) -> Paper:
    return Paper.open(LoadedPaper(document, "p", "pv2"))


def constructed_rows() -> list[str]:
    rows = []
    for make in PAIRS:
        pair = make()
        result = _compare(_paper(pair.old, "pv1"), _paper(pair.new, "pv2"))
        shape = changes.changes_shape(result)
        wrong = []
        for kind, truth in pair.counts.items():
            said = {c: shape[kind][c] for c in truth}  # type: ignore[literal-required]
            if said != truth:
                wrong.append(f"{kind} {said} (truth {truth})")
        sections = {s: c for s, (c, _n) in result.sections.items() if c != "same"}
        if sections != pair.sections:
            wrong.append(f"sections {sections} (truth {pair.sections})")
        if shape["numbers"] != pair.numbers:
            wrong.append(f"numbers {shape['numbers']} (truth {pair.numbers})")
        edits = sum(
            v for kind, counts in pair.counts.items() if kind != "sections" for v in counts.values()
        )
        md = tokens_of(changes.whole_markdown(result))
        rows.append(
            f"| {pair.name} | {edits} | {'all right' if not wrong else '; '.join(wrong)} | {md} |"
        )
    return rows


HUGE = """
import json, sys, time
from paperanchor.render import critic
n = int(sys.argv[1])
old = " ".join(f"w{i}" for i in range(n))
new = " ".join(f"w{i}" if i % 50 else f"v{i}" for i in range(n))
start = time.perf_counter()
critic.chunk(old, new)
print(time.perf_counter() - start)
"""


def hostile_rows() -> list[str]:
    rows = []
    for words in (2_000, 8_000, 50_000, 200_000):
        answer = subprocess.run(
            [sys.executable, "-c", HUGE, str(words)], capture_output=True, text=True, check=True
        )
        rows.append(
            f"| {words:,} words a side, every 50th changed | {float(answer.stdout) * 1000:.0f} ms |"
        )
    return rows


def report() -> str:
    corpus, medians = corpus_rows()
    lines = [
        BEGIN,
        "## What changed between two editions (SPEC §10)",
        "",
        f"Made by `python -m bench.changes` on {time.strftime(STAMP, time.gmtime())}. "
        "Time: aligning and comparing two held editions (a first `changes` on two cached papers), "
        f"median (min–max) of {RUNS} runs. Paragraphs said against the corpus's own count "
        "(pairs/MANIFEST.tsv: same text, near — a few characters, mostly rendering —, edited, "
        "without counterpart): near pairs that differ only in rendering are meant to be `same`. "
        "Flow: tokens of `outline {since}` as the MCP tool sends it (compact.py) plus "
        "`read {since}` of each section with changed blocks of its own, over reading the new "
        "edition whole.",
        "",
        "| pair (ar5iv → arXiv) | KB | ms | paragraphs said | corpus's count | eq/tab/fig edited "
        "| numbers | `.md` tokens | flow tokens |",
        "|---|---|---|---|---|---|---|---|---|",
        *corpus,
        "",
        f"Median over the pairs {statistics.median(medians) * 1000:.0f} ms (target ≤ 200), the "
        f"largest pair {max(medians) * 1000:.0f} ms (target ≤ 1000).",
        "",
        "Constructed pairs (tests/changes/constructed.py; truth by construction):",
        "",
        "| pair | scripted block changes | said against the truth | `.md` tokens |",
        "|---|---|---|---|",
        *constructed_rows(),
        "",
        "The LaTeX edition pairs (fixtures/editions, truth from cases.json by "
        "tests/changes/constructed.py's edition_truth):",
        "",
        "| case | scripted block changes | said | against the truth | ms |",
        "|---|---|---|---|---|",
        *edition_rows(),
        "",
        "Hostile: the word diff of two huge paragraphs (past 64M token pairs the middle is one "
        "substitution):",
        "",
        "| paragraphs | time |",
        "|---|---|",
        *hostile_rows(),
        END,
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="put the tables into BENCHMARKS.md")
    args = parser.parse_args()
    text = report()
    print(text)
    if args.write:
        current = OUT.read_text(encoding="utf-8")
        if BEGIN in current and END in current:
            head, rest = current.split(BEGIN, 1)
            current = head + text.rstrip("\n") + rest.split(END, 1)[1]
        else:
            current = current.rstrip("\n") + "\n\n" + text
        OUT.write_text(current, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
