"""Two editions of one paper matched block by block and section by section (contract §10).

An *edition* is one version in one rendering (arXiv HTML, ar5iv, a PDF, a local file). Ids are
LaTeXML's positional ids, so a new version that inserts a section, or another LaTeXML that
splits a paragraph differently, puts the same text under another id. `align` matches every
citable block (paragraph, equation, figure, table, theorem-like block, list, reference) and
every section of two editions once:

1. exact text (after NFKC, case folding, whitespace squashing), unique on both sides;
2. the blocks between two matched neighbours: a block standing between the same two anchors
   in both editions is likelier the same one than any block elsewhere;
3. near text (rapidfuzz), among candidates that share rare words, scored with its neighbours'
   alignment, so twin paragraphs that differ in a few words go each to its own place;
4. containment, for a paragraph split in two or two merged into one;
5. one for one: the one block left unmatched in a section that kept its title, for the one
   left in its old self (a section rewritten throughout has no neighbours to vouch).

Each kind of block is matched only with its kind: equations by their TeX, floats by their
caption and cells, references by their text. The cost is bounded whatever the pages hold:
identical blocks are paired in order in linear time, a word shared by many blocks is no
candidate source, and the fuzzy comparisons of one alignment stop at MAX_COMPARISONS.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rapidfuzz import fuzz

from paperanchor.errors import BadRequest
from paperanchor.quotes import comparable
from paperanchor.refs import PaperRef, parse_ref, shown
from paperanchor.render.text import plain_text
from paperanchor.tree import (
    Document,
    Equation,
    EquationGroup,
    Figure,
    ListBlock,
    Paragraph,
    Reference,
    Section,
    Table,
    Text,
    Theorem,
    walk,
)

if TYPE_CHECKING:
    from paperanchor.paper import Paper

Status = Literal["same", "moved", "edited", "added", "removed"]
Kind = Literal["text", "theorem", "list", "equation", "group", "float", "reference", "section"]

# Near text: the least similarity (0..1) a pair needs. Below EDIT_FLOOR no context saves a
# match; between it and NEAR a match needs its neighbours' agreement.
EDIT_FLOOR = 0.5
NEAR = 0.72
# A piece of a split paragraph, or a paragraph merged into another, is contained in the other
# at this partial similarity (0..100) or more.
CONTAINED = 92.0
# The least similarity of the one block left on each side of a section that kept its title.
ONE_FOR_ONE = 0.55
# Candidates of one block for near matching: the blocks between its matched neighbours, and
# those sharing the most of its rare words (a word in more than RARE_DF blocks is no evidence).
GAP_CANDIDATES = 24
WORD_CANDIDATES = 12
RARE_DF = 24
# The fuzzy comparisons of one alignment (about 20 µs each on 1,000 characters): a hostile pair
# of pages costs at most this, and two 300-paragraph editions use a few thousand.
MAX_COMPARISONS = 60_000
# What one comparison sees of a block: the cost of a comparison is the product of the lengths.
COMPARED_CHARS = 3_000
# Identical texts this many times or more are paired in order without looking at context.
CROWD = 64
_WORD = re.compile(r"\w{3,}")


@dataclass(frozen=True, slots=True)
class Pair:
    """One node matched across two editions (old = `since`/`from`, new = `paper`)."""

    old: str | None
    """node id in the old edition; None when added"""
    new: str | None
    """node id in the new edition; None when removed"""
    status: Status
    score: float
    """text similarity 0..1 of the two nodes' plain text"""
    confidence: float
    """calibrated probability that the match is right (1.0 for added/removed)"""


@dataclass(slots=True)
class Unit:
    """A citable block (or a section) of one edition, as it is compared."""

    id: str
    kind: Kind
    order: int
    text: str
    """comparable text (quotes.comparable); a float's caption without its printed label"""
    section: str
    words: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.words = frozenset(_WORD.findall(self.text[:COMPARED_CHARS]))


@dataclass
class Alignment:
    """Every citable block and every section of both editions, matched once."""

    blocks: tuple[Pair, ...]
    """in the new edition's reading order, removed ones where they stood"""
    sections: tuple[Pair, ...]
    _old: dict[str, Pair] = field(default_factory=dict, repr=False)
    _new: dict[str, Pair] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for pair in (*self.blocks, *self.sections):
            if pair.old is not None:
                self._old.setdefault(pair.old, pair)
            if pair.new is not None:
                self._new.setdefault(pair.new, pair)

    def of_old(self, node_id: str) -> Pair | None:
        """The pair of a node of the old edition (its first, for a split paragraph)."""
        return self._old.get(node_id)

    def of_new(self, node_id: str) -> Pair | None:
        """The pair of a node of the new edition."""
        return self._new.get(node_id)


# -- the units of one edition -----------------------------------------------------------------


def block_units(document: Document) -> list[Unit]:
    """The citable blocks of a document in reading order (contract §11's citable blocks, and the
    bibliography's entries), each with its comparable text."""
    found: list[Unit] = []
    for visit in walk(document.roots()):
        node = visit.node
        section = visit.section.id if visit.section is not None else ""
        kind: Kind | None = None
        text = ""
        if isinstance(node, Paragraph | Text) and visit.paragraph is None:
            if isinstance(node, Text) and isinstance(visit.parent, Paragraph):
                continue
            kind, text = "text", plain_text(node)
        elif isinstance(node, Theorem):
            kind, text = "theorem", plain_text(node)
        elif isinstance(node, ListBlock) and visit.paragraph is None:
            kind, text = "list", plain_text(node)
        elif isinstance(node, Equation):
            kind, text = "equation", node.latex if node.latex is not None else node.text
        elif isinstance(node, EquationGroup):
            kind, text = "group", " ".join(row.latex or row.text for row in node.rows)
        elif isinstance(node, Figure | Table) and not isinstance(visit.parent, Figure | Table):
            # the caption without its printed label, and a table's cells: renumbering a table
            # changes neither
            cells = (
                " ".join(" | ".join(row) for row in node.rows) if isinstance(node, Table) else ""
            )
            kind, text = "float", f"{node.caption.text} {cells}"
        elif isinstance(node, Reference):
            kind, text = "reference", node.text
        if kind is not None:
            found.append(Unit(node.id, kind, len(found), comparable(text), section))
    return found


def section_units(document: Document) -> list[Unit]:
    """The sections of a document in reading order, compared by their titles."""
    found: list[Unit] = []
    for visit in walk(document.blocks):
        node = visit.node
        if isinstance(node, Section):
            parent = visit.parent.id if isinstance(visit.parent, Section) else ""
            found.append(Unit(node.id, "section", len(found), comparable(node.title.text), parent))
    return found


# -- alignment ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Match:
    old: int
    new: int
    score: float
    confidence: float
    contained: bool = False


@dataclass(slots=True)
class _Budget:
    left: int = MAX_COMPARISONS

    def ratio(self, a: str, b: str) -> float:
        self.left -= 1
        return fuzz.ratio(a[:COMPARED_CHARS], b[:COMPARED_CHARS]) / 100.0

    def partial(self, short: str, long: str) -> float:
        self.left -= 1
        return fuzz.partial_ratio(short[:COMPARED_CHARS], long[: 4 * COMPARED_CHARS])


def align(old: Paper, new: Paper) -> Alignment:
    """Pure; the caller keeps it with the newer Paper (one owner per paper), keyed by the old
    idv+source."""
    return align_documents(old.document, new.document)


def align_documents(old: Document, new: Document) -> Alignment:
    """`align` over two trees."""
    budget = _Budget()
    olds, news = block_units(old), block_units(new)
    old_sections, new_sections = section_units(old), section_units(new)
    matches = _align_units(olds, news, budget, _same_titles(old_sections, new_sections))
    blocks = _pairs(olds, news, matches)
    section_matches = _align_sections(old_sections, new_sections, olds, news, matches, budget)
    sections = _pairs(old_sections, new_sections, section_matches)
    return Alignment(tuple(blocks), tuple(sections))


def _same_titles(olds: list[Unit], news: list[Unit]) -> dict[str, str]:
    """Old section id -> the new section of the same title, where each edition has one."""

    def unique(units: list[Unit]) -> dict[str, str]:
        seen: dict[str, str | None] = {}
        for unit in units:
            seen[unit.text] = None if unit.text in seen else unit.id
        return {text: i for text, i in seen.items() if i is not None and text}

    theirs = unique(news)
    return {i: theirs[text] for text, i in unique(olds).items() if text in theirs}


def _align_units(
    olds: list[Unit], news: list[Unit], budget: _Budget, sections: dict[str, str]
) -> list[_Match]:
    """Matches of each kind, found within the kind."""
    found: list[_Match] = []
    kinds = dict.fromkeys(unit.kind for unit in (*olds, *news))
    for kind in kinds:
        old_ix = [u.order for u in olds if u.kind == kind]
        new_ix = [u.order for u in news if u.kind == kind]
        found.extend(_align_kind(olds, news, old_ix, new_ix, budget, sections))
    return found


def _align_kind(
    olds: list[Unit],
    news: list[Unit],
    old_ix: list[int],
    new_ix: list[int],
    budget: _Budget,
    sections: dict[str, str],
) -> list[_Match]:
    new_of: dict[int, _Match] = {}  # old order -> match
    taken: dict[int, int] = {}  # new order -> old order (full matches)
    by_text: dict[str, list[int]] = {}
    for n in new_ix:
        by_text.setdefault(news[n].text, []).append(n)
    old_by_text: dict[str, list[int]] = {}
    for o in old_ix:
        old_by_text.setdefault(olds[o].text, []).append(o)
    twins: list[tuple[list[int], list[int]]] = []
    # 1. exact text: unique on both sides, or a crowd paired in order
    for text, os_ in old_by_text.items():
        ns = by_text.get(text)
        if not ns or not text:
            continue
        if len(os_) == 1 and len(ns) == 1:
            _take(new_of, taken, _Match(os_[0], ns[0], 1.0, 0.0))
        elif len(os_) >= CROWD or len(ns) >= CROWD:
            for o, n in zip(os_, ns, strict=False):
                _take(new_of, taken, _Match(o, n, 1.0, 0.0))
        else:
            twins.append((os_, ns))
    # identical twins go where their neighbours say, after the unique ones anchor them
    for os_, ns in twins:
        _place_twins(os_, ns, olds, news, new_of, taken, old_ix, new_ix)
    # 2-3. near text, candidates from the gaps between anchors and from rare words
    for _round in range(2):
        if budget.left <= 0:
            break
        _near(olds, news, old_ix, new_ix, new_of, taken, budget)
    # 4. containment: split and merged paragraphs
    if budget.left > 0:
        _contained(olds, news, old_ix, new_ix, new_of, taken, budget)
    # 5. the one block left in a section that kept its title, for the one left in its old self
    if budget.left > 0:
        _one_for_one(olds, news, old_ix, new_ix, new_of, taken, budget, sections)
    matches = list(new_of.values())
    _calibrate(matches, olds, news, new_of, old_ix, new_ix)
    extra = _split_pieces(olds, news, new_ix, new_of, taken, budget)
    return matches + extra


def _take(new_of: dict[int, _Match], taken: dict[int, int], match: _Match) -> None:
    new_of[match.old] = match
    if not match.contained:
        taken[match.new] = match.old


def _neighbours(
    o: int, old_ix: list[int], new_of: dict[int, _Match]
) -> tuple[int | None, int | None]:
    """The new positions of the nearest matched old blocks before and after `o` (within the
    kind's list `old_ix`)."""
    at = bisect.bisect_left(old_ix, o)
    before = after = None
    for k in range(at - 1, max(-1, at - 40), -1):
        m = new_of.get(old_ix[k])
        if m is not None and not m.contained:
            before = m.new
            break
    for k in range(at + 1, min(len(old_ix), at + 40)):
        m = new_of.get(old_ix[k])
        if m is not None and not m.contained:
            after = m.new
            break
    return before, after


@dataclass(frozen=True, slots=True)
class _Gap:
    """Where an old block's matched neighbours went: the new blocks (of its kind) between
    them are `new_ix[lo:hi]`."""

    lo: int
    hi: int
    before: int | None
    after: int | None

    def holds(self, n: int, new_ix: list[int]) -> bool:
        """Whether the new block `n` stands in the gap."""
        at = bisect.bisect_left(new_ix, n)
        return self.lo <= at < self.hi

    def free(self, new_ix: list[int], taken: dict[int, int], limit: int) -> list[int]:
        """The first `limit` unmatched blocks of the gap, scanning at most 4×limit of them:
        a gap of 50,000 blocks costs what one of 100 does."""
        found: list[int] = []
        for n in new_ix[self.lo : min(self.hi, self.lo + 4 * limit)]:
            if n not in taken:
                found.append(n)
                if len(found) == limit:
                    break
        return found


def _gap(o: int, old_ix: list[int], new_ix: list[int], new_of: dict[int, _Match]) -> _Gap:
    """The gap between where `o`'s nearest matched neighbours (of its kind) went."""
    before, after = _neighbours(o, old_ix, new_of)
    lo = bisect.bisect_right(new_ix, before) if before is not None else 0
    hi = bisect.bisect_left(new_ix, after) if after is not None else len(new_ix)
    if hi < lo:  # crossed neighbours (a move): no gap to speak of
        hi = lo
    return _Gap(lo, hi, before, after)


def _place_twins(
    os_: list[int],
    ns: list[int],
    olds: list[Unit],
    news: list[Unit],
    new_of: dict[int, _Match],
    taken: dict[int, int],
    old_ix: list[int],
    new_ix: list[int],
) -> None:
    """Identical texts: each old one to the free new one inside its gap, else in order."""
    free = [n for n in ns if n not in taken]
    for o in os_:
        if not free:
            return
        gap = _gap(o, old_ix, new_ix, new_of)
        pick = next((n for n in free if gap.holds(n, new_ix)), None)
        if pick is None:
            # nearest in relative position
            rel = o / max(1, len(olds))
            pick = min(free, key=lambda n: abs(n / max(1, len(news)) - rel))
        _take(new_of, taken, _Match(o, pick, 1.0, 0.0))
        free.remove(pick)


class _WordIndex:
    """The new blocks of a kind by their rare words."""

    def __init__(self, units: list[Unit], ix: list[int]) -> None:
        postings: dict[str, list[int]] = {}
        for n in ix:
            for word in units[n].words:
                postings.setdefault(word, []).append(n)
        self.postings = {w: p for w, p in postings.items() if len(p) <= RARE_DF}

    def candidates(self, unit: Unit, limit: int) -> list[int]:
        counts: dict[int, int] = {}
        for word in unit.words:
            for n in self.postings.get(word, ()):
                counts[n] = counts.get(n, 0) + 1
        return [n for n, _c in sorted(counts.items(), key=lambda kv: -kv[1])[:limit]]


def _near(
    olds: list[Unit],
    news: list[Unit],
    old_ix: list[int],
    new_ix: list[int],
    new_of: dict[int, _Match],
    taken: dict[int, int],
    budget: _Budget,
) -> None:
    free_new = [n for n in new_ix if n not in taken]
    if not free_new:
        return
    index = _WordIndex(news, free_new)
    edges: list[tuple[float, float, int, int]] = []
    for o in old_ix:
        if o in new_of or budget.left <= 0:
            continue
        unit = olds[o]
        gap = _gap(o, old_ix, new_ix, new_of)
        candidates = gap.free(new_ix, taken, GAP_CANDIDATES)
        for n in index.candidates(unit, WORD_CANDIDATES):
            if n not in taken and n not in candidates:
                candidates.append(n)
        for n in candidates:
            score = budget.ratio(unit.text, news[n].text)
            if score < EDIT_FLOOR:
                continue
            context = _context(n, gap, new_ix)
            edges.append((score + 0.12 * context, score, o, n))
    edges.sort(reverse=True)
    for combined, score, o, n in edges:
        if o in new_of or n in taken:
            continue
        if combined < NEAR:
            continue
        _take(new_of, taken, _Match(o, n, score, 0.0))


def _context(n: int, gap: _Gap, new_ix: list[int]) -> float:
    """0..2: whether the candidate sits in its old neighbours' gap, and right next to them."""
    at = bisect.bisect_left(new_ix, n)
    value = 1.0 if gap.lo <= at < gap.hi else 0.0
    prev_new = new_ix[at - 1] if at > 0 else None
    next_new = new_ix[at + 1] if at + 1 < len(new_ix) else None
    if gap.before is not None and prev_new == gap.before:
        value += 0.5
    if gap.after is not None and next_new == gap.after:
        value += 0.5
    return value


def _contained(
    olds: list[Unit],
    news: list[Unit],
    old_ix: list[int],
    new_ix: list[int],
    new_of: dict[int, _Match],
    taken: dict[int, int],
    budget: _Budget,
) -> None:
    """An old block whose text is now part of a longer block (merged), or most of which a
    shorter block holds (the first piece of a split one)."""
    for o in old_ix:
        if o in new_of or budget.left <= 0:
            continue
        unit = olds[o]
        if len(unit.text) < 40:
            continue
        gap = _gap(o, old_ix, new_ix, new_of)
        candidates = [gap.before] if gap.before is not None else []
        candidates += new_ix[gap.lo : min(gap.hi, gap.lo + GAP_CANDIDATES)]
        if gap.after is not None:
            candidates.append(gap.after)
        best: tuple[float, int] | None = None
        for n in candidates:
            other = news[n].text
            if len(other) < 40:
                continue
            short, long = (unit.text, other) if len(unit.text) <= len(other) else (other, unit.text)
            if len(short) > 0.85 * len(long):
                continue
            score = budget.partial(short, long)
            if score >= CONTAINED and (best is None or score > best[0]):
                best = (score, n)
        if best is None:
            continue
        n = best[1]
        merged = len(unit.text) <= len(news[n].text)
        if not merged and n in taken:
            continue
        share = min(len(unit.text), len(news[n].text)) / max(len(unit.text), len(news[n].text))
        _take(new_of, taken, _Match(o, n, share, 0.0, contained=merged))


def _one_for_one(
    olds: list[Unit],
    news: list[Unit],
    old_ix: list[int],
    new_ix: list[int],
    new_of: dict[int, _Match],
    taken: dict[int, int],
    budget: _Budget,
    sections: dict[str, str],
) -> None:
    """A section rewritten throughout has no matched neighbours to anchor a near match: when
    it kept its title and one block of the kind is left unmatched on each side, and their texts
    are at least ONE_FOR_ONE alike, that is one block revised (the sectionPath selector)."""
    left_old: dict[str, list[int]] = {}
    for o in old_ix:
        if o not in new_of:
            left_old.setdefault(olds[o].section, []).append(o)
    left_new: dict[str, list[int]] = {}
    for n in new_ix:
        if n not in taken:
            left_new.setdefault(news[n].section, []).append(n)
    for section, os_ in left_old.items():
        ns = left_new.get(sections.get(section, ""), [])
        if len(os_) != 1 or len(ns) != 1 or budget.left <= 0:
            continue
        score = budget.ratio(olds[os_[0]].text, news[ns[0]].text)
        if score >= ONE_FOR_ONE:
            _take(new_of, taken, _Match(os_[0], ns[0], score, 0.0))


def _split_pieces(
    olds: list[Unit],
    news: list[Unit],
    new_ix: list[int],
    new_of: dict[int, _Match],
    taken: dict[int, int],
    budget: _Budget,
) -> list[_Match]:
    """The later pieces of a split block: a free new block right after a block matched by
    containment whose old text holds it."""
    extra: list[_Match] = []
    by_new = {m.new: m for m in new_of.values()}
    for k, n in enumerate(new_ix):
        if n in taken or k == 0 or budget.left <= 0:
            continue
        prev = by_new.get(new_ix[k - 1])
        if prev is None or prev.score >= 0.85:
            continue
        old_text = olds[prev.old].text
        if len(news[n].text) >= len(old_text) or len(news[n].text) < 20:
            continue
        if budget.partial(news[n].text, old_text) >= CONTAINED:
            piece = _Match(prev.old, n, prev.score, prev.confidence, contained=True)
            extra.append(piece)
            by_new[n] = piece
    return extra


def _calibrate(
    matches: list[_Match],
    olds: list[Unit],
    news: list[Unit],
    new_of: dict[int, _Match],
    old_ix: list[int],
    new_ix: list[int],
) -> None:
    """Each match's probability of being right, from its evidence (the table in
    docs/editions.md, fitted on the benchmark's pairs)."""
    for m in matches:
        before, after = _neighbours(m.old, old_ix, new_of)
        at = bisect.bisect_left(new_ix, m.new)
        agree = 0
        if before is not None and at > 0 and new_ix[at - 1] == before:
            agree += 1
        if after is not None and at + 1 < len(new_ix) and new_ix[at + 1] == after:
            agree += 1
        m.confidence = confidence_of(
            m.score, agree, m.contained, olds[m.old].text == news[m.new].text
        )


def confidence_of(score: float, agree: int, contained: bool, exact: bool) -> float:
    """The calibrated probability that a match is right, from its text similarity, how many of
    its two neighbours agree, and how it was found."""
    if exact:
        return 0.999 if agree else 0.99
    if contained:
        return 0.9 if agree else 0.8
    if score >= 0.9:
        return 0.98 if agree else 0.95
    if score >= NEAR:
        return 0.95 if agree else 0.85
    return 0.85 if agree == 2 else 0.7


def _pairs(olds: list[Unit], news: list[Unit], matches: Iterable[_Match]) -> list[Pair]:
    """The pairs in the new edition's reading order, removed ones where they stood."""
    rows: list[tuple[float, int, Pair]] = []
    matched_old: set[int] = set()
    new_place: dict[int, float] = {}
    for m in matches:
        o, n = olds[m.old], news[m.new]
        if o.text == n.text:
            status: Status = "same" if o.id == n.id else "moved"
        else:
            status = "edited"
        rows.append((n.order, 0, Pair(o.id, n.id, status, round(m.score, 4), m.confidence)))
        matched_old.add(m.old)
        new_place.setdefault(m.old, n.order)
    matched_new = {m.new for m in matches}
    for n in news:
        if n.order not in matched_new:
            rows.append((n.order, 0, Pair(None, n.id, "added", 0.0, 1.0)))
    # a removed block stands after the new place of the nearest matched old block before it
    last = -1.0
    for o in olds:
        if o.order in new_place:
            last = new_place[o.order]
        elif o.order not in matched_old:
            rows.append((last + 0.5, 1, Pair(o.id, None, "removed", 0.0, 1.0)))
    rows.sort(key=lambda row: (row[0], row[1]))
    return [row[2] for row in rows]


def _align_sections(
    olds: list[Unit],
    news: list[Unit],
    old_blocks: list[Unit],
    new_blocks: list[Unit],
    block_matches: Sequence[_Match],
    budget: _Budget,
) -> list[_Match]:
    """Sections by title and by where their blocks went: an old section goes to the new one
    that received most of its blocks, when their titles agree or most blocks say so."""
    votes: dict[str, dict[str, int]] = {}
    sizes: dict[str, int] = {}
    for unit in old_blocks:
        sizes[unit.section] = sizes.get(unit.section, 0) + 1
    for m in block_matches:
        if m.contained:
            continue
        a, b = old_blocks[m.old].section, new_blocks[m.new].section
        votes.setdefault(a, {})
        votes[a][b] = votes[a].get(b, 0) + 1
    new_by_id = {u.id: u for u in news}
    found: list[_Match] = []
    taken: set[int] = set()
    edges: list[tuple[float, float, int, int]] = []
    by_title: dict[str, list[int]] = {}
    for unit in news:
        by_title.setdefault(unit.text, []).append(unit.order)
    for section in olds:
        tally = votes.get(section.id, {})
        total = max(1, sizes.get(section.id, 0))
        candidates = {new_by_id[s].order for s in tally if s in new_by_id}
        candidates.update(by_title.get(section.text, [])[:4])
        for n in candidates:
            theirs = news[n].text
            title = 1.0 if theirs == section.text else budget.ratio(section.text, theirs)
            share = tally.get(news[n].id, 0) / total
            if title < 0.6 and share < 0.5:
                continue
            edges.append((title + share, title, section.order, n))
    edges.sort(reverse=True)
    done: set[int] = set()
    for _combined, title, o, n in edges:
        if o in done or n in taken:
            continue
        done.add(o)
        taken.add(n)
        found.append(_Match(o, n, title, 0.99 if title == 1.0 else 0.9))
    return found


# -- naming an edition ------------------------------------------------------------------------

SOURCES = ("arxiv", "ar5iv", "pdf")
_VERSION = re.compile(r"^v([1-9]\d{0,3})$")


def edition_of(paper: PaperRef, edition: str) -> tuple[PaperRef, str | None]:
    """The reference and the one source (None: any) an edition names (contract §10): any reference
    of the same paper, `local/<name>`, or relative to `paper`: `vN`, `arxiv`, `ar5iv`, `pdf`.
    An arXiv URL names its source too. A reference to another paper is `bad-request`."""
    if not isinstance(edition, str):
        raise BadRequest("an edition must be text: vN, arxiv, ar5iv, pdf or a paper reference")
    text = edition.strip()
    lowered = text.lower()
    if lowered in SOURCES:
        if paper.is_local:
            raise BadRequest(f"{paper.paper} is a local document: it has no {lowered} edition")
        return paper, lowered
    version = _VERSION.match(lowered)
    if version:
        if paper.is_local:
            raise BadRequest(f"{paper.paper} is a local document: it has no versions")
        return paper.with_version(int(version[1])), None
    ref = parse_ref(text)
    if ref.is_local:
        return ref, None
    if paper.is_local or ref.paper != paper.paper:
        raise BadRequest(
            f'The edition "{shown(text)}" is another paper than {paper.paper}: give vN, arxiv, '
            "ar5iv, pdf or a reference of the same paper"
        )
    source: str | None = None
    if "ar5iv" in lowered:
        source = "ar5iv"
    elif "/pdf/" in lowered:
        source = "pdf"
    elif "arxiv.org/html" in lowered:
        source = "arxiv"
    return ref, source


def edition_key(paper: Paper) -> str:
    """What names an edition among a paper's alignments: its idv and source."""
    return f"{paper.meta.idv}@{paper.meta.source}"
