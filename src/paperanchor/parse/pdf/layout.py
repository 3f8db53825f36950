"""Page geometry: drop furniture, find columns, put lines in reading order, join split rows.

Furniture is what a page repeats around its text: running heads and feet, page numbers, and
the arXiv margin stamp (the worker already cut that out and kept its id). Reading order is
band by band down the page: a line that spans both columns closes a band, and inside a band the
left column is read before the right one, which is how LaTeX sets two-column pages.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, replace

from paperanchor.parse.pdf.extract import Line, Page

_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?[\-–—(\[]?\s*(?:\d{1,4}|[ivxlc]{1,7})\s*[\-–—)\]]?(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_HEAD_NUMBER = re.compile(r"(?:^\d{1,4}\s+\S|\S\s+\d{1,4}$)")
# Blank space, in the line's sizes, between a running head or foot and the text block: the
# corpus's heads stand 1.2-2.5 sizes off, lines of running text overlap (loose boxes).
_APART = 0.8
# A page's own running head sits in its top fifth: LNCS on letter paper sets it 13% down.
_HEAD_ZONE = 0.2
_SPACE = re.compile(r"\s+")
# How far into the page's height, from the top and from the bottom, a running head or foot may
# sit: ACM heads sit 8% from the top edge, page numbers 4-6% from the bottom.
_EDGE = 0.12
# Furniture candidates per page edge: the head is one or two lines (title and page number set
# apart), so is the foot.
_EDGE_LINES = 2
# The height, in body sizes, of a blank strip through both columns that cuts a page into bands.
_STRIP = 3.0
# Pieces joined into one row at most: a wide table's row has a few dozen cells.
_ROW_PIECES = 64
# Lines looked at under a wide line for its paragraph's short last line: a caption's is the
# first; more than a few there is a pile of lines, not a paragraph.
_NEAR = 8
_LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
)


# TeX sets an accent as a glyph of its own before the letter (`\v{s}` is "ˇs" in the text
# layer): spacing accent -> combining mark, composed with its letter by NFC.
_COMBINING = {
    "\u00b4": "\u0301",  # ´ acute
    "\u02c7": "\u030c",  # ˇ caron
    "\u00a8": "\u0308",  # ¨ diaeresis
    "\u02c6": "\u0302",  # ˆ circumflex
    "\u02dc": "\u0303",  # ˜ tilde
    "\u02d8": "\u0306",  # ˘ breve
    "\u02d9": "\u0307",  # ˙ dot above
    "\u02da": "\u030a",  # ˚ ring
    "\u02dd": "\u030b",  # ˝ double acute
    "\u00af": "\u0304",  # ¯ macron
}
_SPACING_ACCENT = re.compile("([" + "".join(_COMBINING) + "])\\s?([^\\W\\d_])")
# a grave accent is also a backquote in code: only between letters, before a vowel ("Lumi`ere")
_GRAVE = re.compile(r"(?<=[^\W\d_])`([aeiouAEIOU])")


def accented(text: str) -> str:
    """The text with TeX's spacing accents joined to the letters they sit on."""
    if not _SPACING_ACCENT.search(text) and "`" not in text:
        return text

    def join(match: re.Match[str]) -> str:
        letter = match.group(2).replace("ı", "i").replace("ȷ", "j")
        return letter + _COMBINING[match.group(1)]

    joined = _SPACING_ACCENT.sub(join, text)
    joined = _GRAVE.sub(lambda m: m.group(1) + "\u0300", joined)
    return unicodedata.normalize("NFC", joined)


@dataclass(frozen=True, slots=True)
class Placed:
    """A line in reading order: its page, its column (0 whole width, 1 left, 2 right)."""

    line: Line
    page: int
    column: int
    column_left: float
    column_right: float


def body_size(pages: tuple[Page, ...]) -> float:
    """The font size most characters of the paper are set in."""
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            weights[round(line.size, 1)] += len(line.text)
    if not weights:
        return 10.0
    return weights.most_common(1)[0][0]


def _edge_key(text: str) -> str:
    return _SPACE.sub(" ", _DIGITS.sub("#", text.lower())).strip()


def _edge_lines(page: Page) -> list[Line]:
    """The topmost and bottommost lines of a page that sit near its edges."""
    ordered = sorted(page.lines, key=lambda line: -line.y1)
    top = [ln for ln in ordered[:_EDGE_LINES] if ln.y0 > page.height * (1 - _EDGE)]
    bottom = [ln for ln in ordered[-_EDGE_LINES:] if ln.y1 < page.height * _EDGE]
    return top + [ln for ln in bottom if ln not in top]


def drop_furniture(pages: tuple[Page, ...]) -> tuple[Page, ...]:
    """Pages without running heads, feet and page numbers."""
    seen: Counter[str] = Counter()
    edges = [_edge_lines(page) for page in pages]
    for lines in edges:
        for key in {_edge_key(line.text) for line in lines}:
            seen[key] += 1
    out = []
    for page, lines in zip(pages, edges, strict=True):
        drop = {
            id(line)
            for line in lines
            if _PAGE_NUMBER.match(line.text.strip())
            or (seen[_edge_key(line.text)] >= 2 and _set_apart(line, page))
        }
        ordered = sorted(page.lines, key=lambda line: -line.y1)
        top = [ln for ln in ordered if ordered and abs(ln.y1 - ordered[0].y1) <= 1]
        bottom = [ln for ln in ordered if ordered and abs(ln.y0 - ordered[-1].y0) <= 1]
        for line in top + bottom:
            # a bare number above or below everything else is the page number, wherever the
            # class puts it (article sets it 12% up a letter page)
            if _PAGE_NUMBER.match(line.text.strip()):
                drop.add(id(line))
        if top and _numbered_head(top, page):
            drop.update(id(line) for line in top)
        kept = tuple(
            replace(line, text=accented(line.text.translate(_LIGATURES)))
            for line in page.lines
            if id(line) not in drop
        )
        out.append(replace(page, lines=kept))
    return tuple(out)


def _set_apart(line: Line, page: Page) -> bool:
    """Whether blank space at least most of the line's size separates it from the text
    below (a head) or above (a foot): running heads stand apart from the text block, so a
    body line that happens to open two pages alike is not one."""
    top = line.y0 > page.height / 2
    gaps = [
        (line.y0 - other.y1) if top else (other.y0 - line.y1)
        for other in page.lines
        if other is not line and ((other.y1 <= line.y0 + 1) if top else (other.y0 >= line.y1 - 1))
    ]
    return not gaps or min(gaps) >= _APART * line.size


def _numbered_head(row: list[Line], page: Page) -> bool:
    """A running head with its page number ("Optimized Table Tokenization … 9"), known on a
    page of its own (a one-page cut) by its place and its print: the topmost row, set apart,
    smaller than the page's text, a number at one end."""
    text_size = body_size((page,))
    smaller = all(line.size < text_size for line in row)
    high = all(line.y0 > (1 - _HEAD_ZONE) * page.height for line in row)
    text = " ".join(line.text.strip() for line in sorted(row, key=lambda line: line.x0))
    numbered = bool(_HEAD_NUMBER.search(text))
    return high and smaller and numbered and all(_set_apart(line, page) for line in row)


def _columns(page: Page, size: float) -> tuple[float, float] | None:
    """The gutter of a two-column page as (left column's right edge, right column's left
    edge), or None for one column: enough lines on each side of the middle, none crossing."""
    middle = page.width / 2
    left = [ln for ln in page.lines if ln.x1 <= middle + size and ln.x1 - ln.x0 > 6 * size]
    right = [ln for ln in page.lines if ln.x0 >= middle - size and ln.x1 - ln.x0 > 6 * size]
    if len(left) < 4 or len(right) < 4:
        return None
    return max(ln.x1 for ln in left), min(ln.x0 for ln in right)


def _edges(lines: list[Line]) -> tuple[float, float]:
    """A column's left edge (the most common start) and right edge (where full lines end)."""
    if not lines:
        return 0.0, 0.0
    starts = Counter(round(ln.x0) for ln in lines)
    left = float(starts.most_common(1)[0][0])
    ends = sorted(ln.x1 for ln in lines)
    right = ends[int(len(ends) * 0.9)] if len(ends) > 1 else ends[0]
    return left, right


def _merge_rows(lines: list[Line]) -> list[Line]:
    """Lines of one column sorted top to bottom; pieces of one row (a footnote mark PDFium set
    apart, an equation and its number, table cells) joined left to right."""
    ordered = sorted(lines, key=lambda ln: (-(ln.y0 + ln.y1) / 2, ln.x0))
    rows: list[list[Line]] = []
    for index, line in enumerate(ordered):
        if rows:
            last = rows[-1]
            top = min(ln.y1 for ln in last)
            bottom = max(ln.y0 for ln in last)
            overlap = min(top, line.y1) - max(bottom, line.y0)
            height = min(line.y1 - line.y0, top - bottom) or 1.0
            # a sub- or superscript PDFium set on a row of its own joins the row it hangs from
            if len(last) >= _ROW_PIECES:
                rows.append([line])  # a pile of pieces on one height is no row of a table
                continue
            small = line.size < 0.8 * max(ln.size for ln in last)
            disjoint = all(line.x0 >= ln.x1 - 1 or line.x1 <= ln.x0 + 1 for ln in last)
            if small and index + 1 < len(ordered):
                # ... unless it hangs over the row below more: a raised entry number in a
                # bibliography (REVTeX's superscript labels) starts the line under it
                below = ordered[index + 1]
                if min(line.y1, below.y1) - max(line.y0, below.y0) > overlap:
                    small = False
            if (small and overlap > -0.3 * line.size) or (overlap > 0.5 * height and disjoint):
                last.append(line)
                continue
        rows.append([line])
    return [_join_row(sorted(row, key=lambda ln: ln.x0)) for row in rows]


def _join_row(row: list[Line]) -> Line:
    if len(row) == 1:
        return row[0]
    parts = [row[0].text]
    for before, line in itertools.pairwise(row):
        gap = line.x0 - before.x1
        parts.append((" " if gap > 0.15 * line.size else "") + line.text)
    weights = [len(ln.text) for ln in row]
    total = sum(weights) or 1
    main = max(row, key=lambda ln: len(ln.text))
    return Line(
        "".join(parts),
        min(ln.x0 for ln in row),
        min(ln.y0 for ln in row),
        max(ln.x1 for ln in row),
        max(ln.y1 for ln in row),
        main.size,
        sum(ln.bold * w for ln, w in zip(row, weights, strict=True)) / total,
        sum(ln.math * w for ln, w in zip(row, weights, strict=True)) / total,
        row[-1].hyphen,
        sum(ln.italic * w for ln, w in zip(row, weights, strict=True)) / total,
    )


def _short_last_lines(spanning: list[Line], lines: tuple[Line, ...], size: float) -> list[Line]:
    """The short last line of a paragraph set across both columns (a wide caption's), which
    alone would sit in the left column: straight under a spanning line, at its left edge,
    in its size."""
    by_top = sorted(lines, key=lambda line: line.y1)
    tops = [line.y1 for line in by_top]
    taken = {id(line) for line in spanning}
    found = []
    for wide in spanning:
        # the lines whose top is at most 0.75 sizes under the wide line's bottom, a few at most
        start = bisect.bisect_right(tops, wide.y0 - 0.75 * size)
        end = bisect.bisect_right(tops, wide.y0)
        for line in by_top[start:end][:_NEAR]:
            aligned = abs(line.x0 - wide.x0) <= 1 and abs(line.size - wide.size) <= 0.3
            if aligned and id(line) not in taken:
                taken.add(id(line))
                found.append(line)
    return found


def _gaps(lines: list[Line], least: float) -> list[tuple[float, float]]:
    """The blank vertical intervals of at least `least` points between a column's lines."""
    ordered = sorted(lines, key=lambda ln: -ln.y1)
    gaps = []
    bottom = ordered[0].y0 if ordered else 0.0
    for line in ordered[1:]:
        if bottom - line.y1 >= least:
            gaps.append((line.y1, bottom))
        bottom = min(bottom, line.y0)
    return gaps


def _blank_strips(left: list[Line], right: list[Line], size: float) -> set[float]:
    """The middles of blank strips through both columns, with text above and below in each.

    A two-column block that starts below another without a line across the page (REVTeX
    balances the columns above its bibliography) is read after the block above it, not beside
    it. A strip must be three body sizes high: that is past the space above a heading (2.5)
    and below a float, so two columns' headings that happen to sit level do not cut the page.
    """
    least = _STRIP * size
    cuts = set()
    for low, high in _gaps(left, least):
        for other_low, other_high in _gaps(right, least):
            bottom, top = max(low, other_low), min(high, other_high)
            if top - bottom >= least:
                cuts.add((bottom + top) / 2)
    return cuts


def reading_order(pages: tuple[Page, ...], size: float) -> list[Placed]:
    """Every line of every page in reading order, with its column and the column's edges."""
    out: list[Placed] = []
    for page in pages:
        gutter = _columns(page, size)
        if gutter is None:
            lines = _merge_rows(list(page.lines))
            left, right = _edges(lines)
            out.extend(Placed(ln, page.number, 0, left, right) for ln in lines)
            continue
        left_end, right_start = gutter
        # a line crosses into the right column by a quarter of its width at least; less is a
        # formula or a verbatim line running into the gutter
        reach = right_start + 0.25 * max(left_end - min(ln.x0 for ln in page.lines), size)
        spanning = [ln for ln in page.lines if ln.x0 < left_end - size and ln.x1 > reach]
        spanning += _short_last_lines(spanning, page.lines, size)
        across = {id(ln) for ln in spanning}
        middle = (left_end + right_start) / 2
        columns = [ln for ln in page.lines if id(ln) not in across]
        left_lines = [ln for ln in columns if (ln.x0 + ln.x1) / 2 < middle]
        right_lines = [ln for ln in columns if (ln.x0 + ln.x1) / 2 >= middle]
        left_edges = _edges(left_lines)
        right_edges = _edges(right_lines)
        whole_edges = (min(left_edges[0], right_edges[0]), max(left_edges[1], right_edges[1]))
        # bands between the lines that cross the gutter, and across the blank strips that
        # run through both columns, top to bottom
        cuts = sorted(
            {(ln.y0 + ln.y1) / 2 for ln in spanning} | _blank_strips(left_lines, right_lines, size)
        )
        at_cut: dict[float, list[Line]] = {}
        for line in spanning:
            at_cut.setdefault((line.y0 + line.y1) / 2, []).append(line)
        bands: list[tuple[list[Line], list[Line]]] = [([], []) for _ in range(len(cuts) + 1)]
        for side, group in ((0, left_lines), (1, right_lines)):
            for line in group:
                # the band of a line is the number of cuts above its middle
                band = len(cuts) - bisect.bisect_right(cuts, (line.y0 + line.y1) / 2)
                bands[band][side].append(line)
        for band, (on_left, on_right) in enumerate(bands):
            out.extend(Placed(ln, page.number, 1, *left_edges) for ln in _merge_rows(on_left))
            out.extend(Placed(ln, page.number, 2, *right_edges) for ln in _merge_rows(on_right))
            if band < len(cuts):
                cut = cuts[len(cuts) - 1 - band]
                rows = _merge_rows(at_cut.get(cut, []))
                out.extend(Placed(ln, page.number, 0, *whole_edges) for ln in rows)
    return out
