"""`make bench-anchors`: re-anchoring across editions, ours against three baselines, into
BENCHMARKS.md (its section between the bench-anchors markers).

Every block of one edition (paragraphs, equations, figures, tables, references: the targets)
is looked for in the other edition, in both directions, by four resolvers:

- **ours**: `cite {paper, anchor, from}` (service.reanchor over editions.align, computed once
  per pair and kept with the paper, as the service does);
- **id only**: the same id in the other edition, if it has one (what a bare permalink does);
- **exact text**: the first passage of the other edition holding the target's text exactly,
  case-blind (what a browser's text fragment does: it matches exact text only);
- **Hypothesis**: its anchoring as the client does it (src/annotator/anchoring/html.ts and
  match-quote.ts of github:hypothesis/client): the stored range when the text there is still
  the quote, else the stored text position when the text there is still the quote, else
  `matchQuote` over the page's text: every exact occurrence, or else approximate matches
  with at most min(256, len/2) errors, each scored 50·quote + 20·prefix + 20·suffix +
  2·position (prefix and suffix the 32 characters around the quote, the position hint the
  old offset) and the best taken, with no minimum score. Approximate search is edlib's
  (infix mode, one search per passage, so that every passage offers its best match as a
  candidate, as approx-string-match reports every end position within the error bound).

Truth: bench/anchor_truth.py. Metrics per direction: correct anchor on targets whose text
survives (same or moved), correct anchor on edited targets, false anchors on deleted targets
(any answer that is not not-found), status accuracy (same / moved / edited / not-found), and
the expected calibration error of the answers' confidence (ten bins).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import edlib

from bench.anchor_truth import Case, Target, constructed, real
from paperanchor import editions, service
from paperanchor.errors import NotFound
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.tree import Document, Inline, Paragraph, Section, Text

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "BENCHMARKS.md"
BEGIN, END = "<!-- bench-anchors -->", "<!-- /bench-anchors -->"
RESOLVERS = ("ours", "id only", "exact text", "Hypothesis")


@dataclass(frozen=True, slots=True)
class Answer:
    anchor: str | None
    status: str
    """same, moved, edited or deleted (not-found)"""
    confidence: float


@dataclass
class Tally:
    survive: list[bool] = field(default_factory=list)
    edited: list[bool] = field(default_factory=list)
    deleted: list[bool] = field(default_factory=list)
    status: list[bool] = field(default_factory=list)
    calibration: list[tuple[float, bool]] = field(default_factory=list)

    def add(self, target: Target, answer: Answer) -> None:
        right = answer.anchor is not None and answer.anchor in target.truth
        if target.status in ("same", "moved"):
            self.survive.append(right)
        elif target.status == "edited":
            self.edited.append(right)
        else:
            self.deleted.append(answer.anchor is not None)
        self.status.append(answer.status == target.status)
        if answer.anchor is not None:
            self.calibration.append((answer.confidence, right))

    def row(self) -> dict[str, float]:
        return {
            "survive": _share(self.survive),
            "edited": _share(self.edited),
            "false": _share(self.deleted),
            "status": _share(self.status),
            "ece": ece(self.calibration),
            "n_survive": len(self.survive),
            "n_edited": len(self.edited),
            "n_deleted": len(self.deleted),
        }


def _share(values: list[bool]) -> float:
    return sum(values) / len(values) if values else float("nan")


def ece(pairs: list[tuple[float, bool]], bins: int = 10) -> float:
    """Expected calibration error: the answers' mean |accuracy - confidence| over ten bins."""
    if not pairs:
        return float("nan")
    total = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [(c, r) for c, r in pairs if low <= c < high or (b == bins - 1 and c == 1.0)]
        if inside:
            accuracy = sum(r for _c, r in inside) / len(inside)
            confidence = sum(c for c, _r in inside) / len(inside)
            total += len(inside) / len(pairs) * abs(accuracy - confidence)
    return total


# -- the editions as papers -------------------------------------------------------------------


def _paper(document: Document, name: str) -> Paper:
    return Paper.open(LoadedPaper(document, f"local/{name}", f"local/{name}"))


@dataclass
class Side:
    """One edition as the baselines see it: its blocks, its page text and where each starts."""

    paper: Paper
    units: list[editions.Unit]
    text: str
    starts: list[int]
    by_id: dict[str, editions.Unit]

    @classmethod
    def of(cls, paper: Paper) -> Side:
        units = editions.block_units(paper.document)
        starts, at = [], 0
        for unit in units:
            starts.append(at)
            at += len(unit.text) + 1
        text = "\n".join(unit.text for unit in units)
        return cls(paper, units, text, starts, {u.id: u for u in units})

    def unit_at(self, offset: int) -> editions.Unit:
        import bisect

        return self.units[max(0, bisect.bisect_right(self.starts, offset) - 1)]


def _status_of(old: editions.Unit, new: editions.Unit) -> str:
    if old.text != new.text:
        return "edited"
    return "same" if old.id == new.id else "moved"


# -- the resolvers ---------------------------------------------------------------------------


def ours(old: Side, new: Side, alignment: editions.Alignment, target: Target) -> Answer:
    try:
        cited = service.reanchor(new.paper, old.paper, alignment, target.anchor, "")
    except NotFound:
        return Answer(None, "deleted", 1.0)
    return Answer(cited["anchor"], cited.get("status", "same"), cited.get("confidence", 1.0))


def id_only(old: Side, new: Side, _alignment: editions.Alignment, target: Target) -> Answer:
    unit = new.by_id.get(target.anchor)
    if unit is None:
        return Answer(None, "deleted", 1.0)
    return Answer(unit.id, "same", 1.0)


def exact_text(old: Side, new: Side, _alignment: editions.Alignment, target: Target) -> Answer:
    quote = old.by_id[target.anchor].text
    if not quote:
        return Answer(None, "deleted", 1.0)
    at = new.text.find(quote)
    if at < 0:
        return Answer(None, "deleted", 1.0)
    unit = new.unit_at(at)
    return Answer(unit.id, _status_of(old.by_id[target.anchor], unit), 1.0)


def hypothesis(old: Side, new: Side, _alignment: editions.Alignment, target: Target) -> Answer:
    unit = old.by_id[target.anchor]
    index = unit.order
    start = old.starts[index]
    quote = unit.text
    if not quote:
        return Answer(None, "deleted", 1.0)
    # 1. the stored range (an XPath to the element): the element at the same place, when its
    #    text is still the quote
    if index < len(new.units) and new.units[index].text == quote:
        hit = new.units[index]
        return Answer(hit.id, _status_of(unit, hit), 1.0)
    # 2. the stored text position, when the text there is still the quote
    if new.text[start : start + len(quote)] == quote:
        hit = new.unit_at(start)
        return Answer(hit.id, _status_of(unit, hit), 1.0)
    # 3. matchQuote
    prefix = old.text[max(0, start - 32) : start]
    suffix = old.text[start + len(quote) : start + len(quote) + 32]
    match = match_quote(new, quote, prefix, suffix, start)
    if match is None:
        return Answer(None, "deleted", 1.0)
    begin, _end, score = match
    hit = new.unit_at(begin)
    return Answer(hit.id, _status_of(unit, hit), score)


def _errors(text: str, pattern: str, limit: int) -> tuple[int, int, int] | None:
    """The least edit distance of `pattern` inside `text` (infix), with a match's span."""
    if not text or not pattern:
        return None
    found = edlib.align(pattern, text, mode="HW", task="locations", k=limit)
    distance = found["editDistance"]
    if distance < 0:
        return None
    begin, end = found["locations"][0]
    return distance, begin, end + 1


def _text_match_score(text: str, pattern: str) -> float:
    if not pattern or not text:
        return 0.0
    found = _errors(text, pattern, len(pattern))
    return 1 - found[0] / len(pattern) if found is not None else 0.0


def match_quote(
    page: Side, quote: str, prefix: str, suffix: str, hint: int
) -> tuple[int, int, float] | None:
    """Hypothesis' matchQuote over the page's text: the best-scored candidate, no minimum."""
    candidates: list[tuple[int, int, int]] = []
    at = page.text.find(quote)
    while at >= 0:
        candidates.append((at, at + len(quote), 0))
        at = page.text.find(quote, at + 1)
    if not candidates:
        limit = int(min(256, len(quote) / 2))
        for unit, offset in zip(page.units, page.starts, strict=True):
            found = _errors(unit.text, quote, limit)
            if found is not None:
                candidates.append((offset + found[1], offset + found[2], found[0]))
    if not candidates:
        return None
    length = max(1, len(page.text))

    def score(candidate: tuple[int, int, int]) -> float:
        begin, end, errors = candidate
        quote_score = 1 - errors / len(quote)
        prefix_score = (
            _text_match_score(page.text[max(0, begin - len(prefix)) : begin], prefix)
            if prefix
            else 1.0
        )
        suffix_score = (
            _text_match_score(page.text[end : end + len(suffix)], suffix) if suffix else 1.0
        )
        position = 1.0 - abs(begin - hint) / length
        raw = 50 * quote_score + 20 * prefix_score + 20 * suffix_score + 2 * position
        return raw / 92

    best = max(candidates, key=score)
    return best[0], best[1], score(best)


BASELINES: dict[str, Callable[[Side, Side, editions.Alignment, Target], Answer]] = {
    "ours": ours,
    "id only": id_only,
    "exact text": exact_text,
    "Hypothesis": hypothesis,
}


# -- running ---------------------------------------------------------------------------------


@dataclass
class Costs:
    align_ms: list[float] = field(default_factory=list)
    reanchor_ms: list[float] = field(default_factory=list)


def run_case(case: Case, tallies: dict[tuple[str, str, str], Tally], costs: Costs) -> None:
    old_paper, new_paper = (
        _paper(case.old, f"{case.name}-old"),
        _paper(case.new, f"{case.name}-new"),
    )
    for direction, (a, b, targets) in {
        "forward": (old_paper, new_paper, case.forward),
        "backward": (new_paper, old_paper, case.backward),
    }.items():
        started = time.perf_counter()
        alignment = b.aligned(editions.edition_key(a), lambda a=a, b=b: editions.align(a, b))
        costs.align_ms.append((time.perf_counter() - started) * 1000)
        old, new = Side.of(a), Side.of(b)
        label = "old → new" if case.group == "constructed" else "ar5iv → arXiv"
        if direction == "backward":
            label = "new → old" if case.group == "constructed" else "arXiv → ar5iv"
        for name, resolver in BASELINES.items():
            tally = tallies.setdefault((case.group, label, name), Tally())
            for target in targets:
                started = time.perf_counter()
                answer = resolver(old, new, alignment, target)
                if name == "ours":
                    costs.reanchor_ms.append((time.perf_counter() - started) * 1000)
                tally.add(target, answer)


def kind_failures(cases: list[Case]) -> dict[str, list[str]]:
    """Per change kind (constructed) and pair (real): the targets ours gets wrong."""
    found: dict[str, list[str]] = {}
    for case in cases:
        old_paper = _paper(case.old, f"{case.name}-old")
        new_paper = _paper(case.new, f"{case.name}-new")
        for a, b, targets in (
            (old_paper, new_paper, case.forward),
            (new_paper, old_paper, case.backward),
        ):
            alignment = b.aligned(editions.edition_key(a), lambda a=a, b=b: editions.align(a, b))
            old, new = Side.of(a), Side.of(b)
            for target in targets:
                answer = ours(old, new, alignment, target)
                right = (answer.anchor in target.truth) if target.truth else answer.anchor is None
                if not right or answer.status != target.status:
                    found.setdefault(case.name, []).append(
                        f"{target.anchor} ({target.status}) -> {answer.anchor} ({answer.status})"
                    )
    return found


def synthetic(paragraphs: int, seed: int = 3) -> tuple[Document, Document]:
    """Two editions of `paragraphs` paragraphs each: the second with every tenth edited, a
    section inserted at the front and a few paragraphs moved (the 300-paragraph timing)."""
    import random

    r = random.Random(seed)
    words = [f"w{n}" for n in range(3000)]

    def text() -> str:
        return " ".join(r.choice(words) for _ in range(r.randint(40, 120)))

    texts = [text() for _ in range(paragraphs)]

    def document(items: list[str], extra: bool) -> Document:
        sections: list[Section] = []
        per = 10
        offset = 1 if extra else 0
        if extra:
            sections.append(_section("S1", [text() for _ in range(5)]))
        for k in range(0, len(items), per):
            sections.append(_section(f"S{k // per + 1 + offset}", items[k : k + per]))
        return Document(Inline("t", "t"), (), None, None, tuple(sections))

    edited = list(texts)
    for k in range(0, paragraphs, 10):
        edited[k] = edited[k].replace(edited[k].split()[3], "changed", 1)
    edited.insert(50, edited.pop(200))
    return document(texts, False), document(edited, True)


def _section(section_id: str, items: list[str]) -> Section:
    blocks = tuple(
        Paragraph(f"{section_id}.p{n + 1}", (Text(f"{section_id}.p{n + 1}.1", Inline(t, t)),))
        for n, t in enumerate(items)
    )
    return Section(
        section_id,
        "section",
        section_id[1:],
        section_id[1:],
        Inline(section_id, section_id),
        1,
        blocks,
    )


def _fmt(value: float, percent: bool = True) -> str:
    if value != value:
        return "–"
    return f"{100 * value:.1f}%" if percent else f"{value:.3f}"


def table(tallies: dict[tuple[str, str, str], Tally]) -> list[str]:
    lines = [
        "| pairs | direction | resolver | correct, text survives | correct, edited | "
        "false anchors, deleted | status accuracy | ECE |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (group, label, name), tally in tallies.items():
        row = tally.row()
        lines.append(
            f"| {group} | {label} | {name} | {_fmt(row['survive'])} ({int(row['n_survive'])}) | "
            f"{_fmt(row['edited'])} ({int(row['n_edited'])}) | {_fmt(row['false'])} "
            f"({int(row['n_deleted'])}) | {_fmt(row['status'])} | {_fmt(row['ece'], False)} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--no-write", action="store_true", help="print, do not rewrite BENCHMARKS.md"
    )
    parser.add_argument("--failures", action="store_true", help="list the targets ours gets wrong")
    args = parser.parse_args()
    cases = constructed() + real()
    if args.failures:
        for name, wrong in kind_failures(cases).items():
            print(f"{name}: {len(wrong)}")
            for line in wrong[:40]:
                print("   ", line)
        return
    tallies: dict[tuple[str, str, str], Tally] = {}
    costs = Costs()
    for case in cases:
        run_case(case, tallies, costs)
    old, new = synthetic(300)
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        editions.align_documents(old, new)
        timings.append(time.perf_counter() - started)
    old_p, new_p = _paper(old, "s-old"), _paper(new, "s-new")
    alignment = new_p.aligned("s", lambda: editions.align(old_p, new_p))
    cached = []
    for unit in editions.block_units(old)[:200]:
        started = time.perf_counter()
        with contextlib.suppress(NotFound):
            service.reanchor(new_p, old_p, alignment, unit.id, "")
        cached.append((time.perf_counter() - started) * 1000)
    lines = table(tallies)
    wrong = kind_failures(cases)
    per_case = ", ".join(
        f"{case.name} {len(wrong.get(case.name, []))}/{len(case.forward) + len(case.backward)}"
        for case in cases
    )
    lines += ["", f"Ours, targets wrong (anchor or status) per pair, both directions: {per_case}."]
    lines += [
        "",
        f"Costs: aligning two 300-paragraph editions {1000 * statistics.median(timings):.0f} ms "
        f"(median of 5; min {1000 * min(timings):.0f}, max {1000 * max(timings):.0f}); "
        f"the {len(costs.align_ms)} alignments of the benchmark's pairs (both directions) median "
        f"{statistics.median(costs.align_ms):.0f} ms, "
        f"max {max(costs.align_ms):.0f} ms; one re-anchoring on a cached pair median "
        f"{statistics.median(cached):.2f} ms, p99 {sorted(cached)[int(0.99 * len(cached))]:.2f} ms "
        f"(300 paragraphs; over the benchmark's pairs median "
        f"{statistics.median(costs.reanchor_ms):.2f} ms, max {max(costs.reanchor_ms):.1f} ms).",
    ]
    print("\n".join(lines))
    if not args.no_write:
        write(lines)


def write(lines: list[str]) -> None:
    """Replace the section between the markers in BENCHMARKS.md (append it the first time)."""
    text = OUT.read_text() if OUT.exists() else ""
    section = "\n".join([BEGIN, *SECTION_HEAD, *lines, END])
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        _old, after = rest.split(END, 1)
        text = before + section + after
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    OUT.write_text(text)


SECTION_HEAD = [
    "## Anchors across editions (`make bench-anchors`)",
    "",
    "Every block of one edition (paragraphs, equations, figures, tables, references) looked",
    "for in the other, both directions: the nine constructed pairs of fixtures/editions (truth",
    "by construction) and the ten real pairs of the corpus (ar5iv and arXiv renderings, gold in",
    "bench/anchor_gold.json). Baselines in the same run, as bench/anchors.py describes them.",
    "Counts of targets in parentheses; ECE over the answers given.",
    "",
]


if __name__ == "__main__":
    main()
