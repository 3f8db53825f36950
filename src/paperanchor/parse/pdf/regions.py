"""Where a page's figures and tables sit, from its pictures and rules: the text inside them is
not running text and is left out of the paragraphs.

PDFium gives the page's objects besides text (`Graphic`): pictures (an included PDF figure is
a form, a photograph an image), paths and their boxes. Three kinds of region come out:

- a picture: a form or an image; the labels drawn over a plot or a diagram are inside it;
- a drawing: touching paths (a TikZ or pgfplots figure, a ruled grid);
- a table: horizontal rules of one width stacked down the page (booktabs' top, middle and
  bottom rules, `\\hline`), taken only when a caption (`Table 2:`, `Figure 3.`) sits right
  above or below them, since two rules of one width can also frame running text.

A region that holds prose (lines of six words and more across most of its width: a framed
box, a prompt template set in a figure) keeps its text. Captions always stay: the float is
made from them. What is dropped is said in docs/pdf.md: a table's cells and a figure's labels.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace

from paperanchor.parse.pdf.extract import Graphic, Line, Page

CAPTION = re.compile(
    r"^(?P<kind>Figure|Fig\.|FIGURE|FIG\.|Table|TABLE|Tab\.)\s*"
    r"(?P<num>\d{1,3}|[A-Z]\.?\d{1,3}|[IVX]{1,5})\s*(?P<sep>[:.|]|$)\s*(?P<rest>.*)$"
)
# A rule is at most this thick (booktabs' \toprule measures 1.6 pt with its caps) and this
# long at least, in points.
_THIN = 2.0
_RULE_LENGTH = 30.0
# A picture or a drawing is this wide and high at least; a form or image that covers most of
# the page is its background (a browser-printed page is one form), not a figure.
_PICTURE = 20.0
_BACKGROUND = 0.8
# Regions of each kind kept per page, the largest first (the corpus has at most 6 on a page),
# rules stacked into tables, and captions looked at (the corpus: at most 4 on a page).
_MOST_REGIONS = 24
_MOST_RULES = 100
_CAPTIONS = 32
# Paths closer than this (points) belong to one drawing; a drawing has this many paths.
_TOUCH = 3.0
_DRAWING_PATHS = 5
# Path pairs compared per paper: clustering is quadratic in a page's paths (at most 400 kept
# by the reader), so a paper of a thousand such pages stops clustering after twelve of them
# and keeps the rest's drawings' text (measured: 0.25 s for the 2,000,000 pairs of twelve
# pages of 400 overlapping paths on this machine).
_PAIR_BUDGET = 2_000_000
# Rules of one table are at most this share of the page apart. A caption's first line is at
# most this many body sizes above the table's first rule (a caption of four lines) or below
# its last one.
_RULE_SPAN = 0.5
_CAPTION_ABOVE = 6.0
_CAPTION_BELOW = 3.0
# Prose: this many lines of this many words across this share of their region's width.
_PROSE_WORDS = 6
_PROSE_WIDTH = 0.5
_PROSE_LINES = 3
# A word of prose has two letters together: a row of a table's numbers is no prose.
_WORD = re.compile(r"[^\W\d_]{2}")


@dataclass(frozen=True, slots=True)
class Region:
    """A box on a page whose text is a float's content."""

    kind: str
    x0: float
    y0: float
    x1: float
    y1: float

    def holds(self, line: Line) -> bool:
        middle_x = (line.x0 + line.x1) / 2
        middle_y = (line.y0 + line.y1) / 2
        return (
            self.x0 - 2 <= middle_x <= self.x1 + 2
            and self.y0 - 1 <= middle_y <= self.y1 + 1
            and line.x0 >= self.x0 - _PICTURE
            and line.x1 <= self.x1 + _PICTURE
        )


class _Budget:
    def __init__(self, pairs: int) -> None:
        self.pairs = pairs


class _Index:
    """A page's lines sorted by height, so a region looks only at the lines level with it."""

    def __init__(self, lines: tuple[Line, ...]) -> None:
        self.lines = sorted(lines, key=lambda line: (line.y0 + line.y1) / 2)
        self.middles = [(line.y0 + line.y1) / 2 for line in self.lines]
        self.captions = [line for line in lines if CAPTION.match(line.text.strip())][:_CAPTIONS]

    def inside(self, region: Region) -> list[Line]:
        start = bisect.bisect_left(self.middles, region.y0 - 1)
        end = bisect.bisect_right(self.middles, region.y1 + 1)
        return [line for line in self.lines[start:end] if region.holds(line)]


def drop_float_contents(pages: tuple[Page, ...], size: float) -> tuple[Page, ...]:
    """Pages without the lines inside their figures and tables (captions stay)."""
    budget = _Budget(_PAIR_BUDGET)
    out = []
    for page in pages:
        index = _Index(page.lines)
        regions = float_regions(page, size, budget, index)
        if not regions:
            out.append(page)
            continue
        captions = {id(line) for line in index.captions}
        dropped = {id(line) for r in regions for line in index.inside(r)} - captions
        out.append(replace(page, lines=tuple(ln for ln in page.lines if id(ln) not in dropped)))
    return tuple(out)


def float_regions(
    page: Page, size: float, budget: _Budget | None = None, index: _Index | None = None
) -> list[Region]:
    """The page's figure and table regions whose text is not prose."""
    budget = budget or _Budget(_PAIR_BUDGET)
    index = index or _Index(page.lines)
    area = max(page.width * page.height, 1.0)
    pictures = [
        _on_page(Region("picture", g.x0, g.y0, g.x1, g.y1), page)
        for g in page.graphics
        if g.kind in ("i", "f")
    ]
    candidates = [
        r
        for r in pictures
        if r.x1 - r.x0 >= _PICTURE
        and r.y1 - r.y0 >= _PICTURE
        and (r.x1 - r.x0) * (r.y1 - r.y0) < _BACKGROUND * area
    ]
    paths = [g for g in page.graphics if g.kind == "p"]
    candidates.extend(_on_page(r, page) for r in _drawings(paths, area, budget))
    # the largest first, and few: each is tested against the lines level with it
    candidates.sort(key=lambda r: -(r.x1 - r.x0) * (r.y1 - r.y0))
    candidates = [_above_caption(r, index.captions) for r in candidates[:_MOST_REGIONS]]
    candidates.extend(_tables(page, size, index.captions)[:_MOST_REGIONS])
    return [r for r in candidates if r.y1 > r.y0 and not _holds_prose(r, index, size)]


def _on_page(region: Region, page: Page) -> Region:
    """The region cut to the page: an included figure's box may reach past it."""
    return replace(
        region,
        x0=max(region.x0, 0.0),
        y0=max(region.y0, 0.0),
        x1=min(region.x1, page.width),
        y1=min(region.y1, page.height),
    )


def _above_caption(region: Region, captions: list[Line]) -> Region:
    """A picture's region ends where a caption inside its box begins: a figure's box (its
    viewport, not what it draws) can run down over its own caption."""
    for line in captions:
        if region.holds(line):
            region = replace(region, y0=max(region.y0, line.y1))
    return region


def _holds_prose(region: Region, index: _Index, size: float) -> bool:
    width = region.x1 - region.x0
    prose = sum(
        1
        for line in index.inside(region)
        if line.size >= 0.7 * size
        and sum(1 for word in line.text.split() if _WORD.search(word)) >= _PROSE_WORDS
        and line.x1 - line.x0 >= _PROSE_WIDTH * width
    )
    return prose >= _PROSE_LINES


def _drawings(paths: list[Graphic], area: float, budget: _Budget) -> list[Region]:
    """Clusters of touching paths, as big as a picture, drawn with several paths."""
    if len(paths) < _DRAWING_PATHS or budget.pairs < len(paths) ** 2:
        return []
    budget.pairs -= len(paths) ** 2
    parent = list(range(len(paths)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    ordered = sorted(range(len(paths)), key=lambda i: paths[i].x0)
    for position, i in enumerate(ordered):
        a = paths[i]
        for j in ordered[position + 1 :]:
            b = paths[j]
            if b.x0 > a.x1 + _TOUCH:
                break
            if b.y0 <= a.y1 + _TOUCH and a.y0 <= b.y1 + _TOUCH:
                parent[root(i)] = root(j)
    clusters: dict[int, list[Graphic]] = {}
    for i, path in enumerate(paths):
        clusters.setdefault(root(i), []).append(path)
    regions = []
    for members in clusters.values():
        x0 = min(g.x0 for g in members)
        y0 = min(g.y0 for g in members)
        x1 = max(g.x1 for g in members)
        y1 = max(g.y1 for g in members)
        big = x1 - x0 >= 2 * _PICTURE and y1 - y0 >= 2 * _PICTURE
        if len(members) >= _DRAWING_PATHS and big and (x1 - x0) * (y1 - y0) < _BACKGROUND * area:
            regions.append(Region("drawing", x0, y0, x1, y1))
    return regions


def _tables(page: Page, size: float, captions: list[Line]) -> list[Region]:
    """Stacks of rules of one width with a caption right above or below."""
    rules = [
        g
        for g in page.graphics
        if g.y1 - g.y0 <= _THIN and g.x1 - g.x0 >= _RULE_LENGTH and g.kind != "s"
    ]
    # the reader sends the longest boxes first; stacking is quadratic in the rules kept
    rules = sorted(rules[:_MOST_RULES], key=lambda g: -g.y1)
    stacks: list[list[Graphic]] = []
    for rule in rules:
        for stack in stacks:
            last = stack[-1]
            same = abs(last.x0 - rule.x0) <= 2 and abs(last.x1 - rule.x1) <= 2
            if same and last.y0 - rule.y1 <= _RULE_SPAN * page.height:
                stack.append(rule)
                break
        else:
            stacks.append([rule])
    regions = []
    for stack in stacks:
        if len(stack) < 2:
            continue
        top, bottom = stack[0].y1, stack[-1].y0
        x0, x1 = stack[0].x0, stack[0].x1
        for caption in captions:
            across = caption.x0 < x1 and caption.x1 > x0
            # a caption above runs down to the table: its first line may be a few lines up
            above = 0 <= caption.y0 - top <= _CAPTION_ABOVE * size
            below = 0 <= bottom - caption.y1 <= _CAPTION_BELOW * size
            if across and (above or below):
                regions.append(Region("table", x0, bottom, x1, top))
                break
    return regions
