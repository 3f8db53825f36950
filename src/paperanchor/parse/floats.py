"""Figures (with panels), tables (with spanning cells) and other floats."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from lxml import etree

from paperanchor.parse.context import MAX_BLOCK_DEPTH, BlocksOf, ParseContext
from paperanchor.parse.dom import (
    HtmlElement,
    children,
    classes,
    is_chrome,
    keep_decision,
    tag_of,
    text_of,
)
from paperanchor.parse.inline import inline_of
from paperanchor.parse.pictures import text_boxes
from paperanchor.tree import Block, CellSpan, Figure, Inline, Table

_TAG_WORD = re.compile(r"^[^\W\d_]+\.?\s+(?=\S)")
_FLOAT_CLASSES = frozenset({"ltx_figure", "ltx_table", "ltx_float"})
# A tabular inside inline content (`\resizebox`, `\scalebox`, `\rotatebox`, a tabular in a
# paragraph or a cell) is written with spans: `span.ltx_tabular` > `span.ltx_tr` > `span.ltx_td`,
# its row groups `span.ltx_thead`/`ltx_tbody`, its spans as `ltx_rowspan_N`/`ltx_colspan_N`.
_ROW_GROUPS = {"ltx_thead": "thead", "ltx_tbody": "tbody", "ltx_tfoot": "tfoot"}
_SPAN_CLASS = re.compile(r"\bltx_(row|col)span_(\d{1,7})\b")


def is_float(el: HtmlElement) -> bool:
    return is_float_of(tag_of(el), classes(el))


def is_float_of(tag: str, cls: frozenset[str]) -> bool:
    """Whether an element of this tag and classes is a float (a figure, table or other)."""
    return tag == "figure" or not cls.isdisjoint(_FLOAT_CLASSES)


def is_tabular(tag: str, cls: frozenset[str]) -> bool:
    """A tabular, whether LaTeXML wrote it as a `table` or, inside inline content, as spans."""
    return "ltx_tabular" in cls and tag in ("table", "span")


def number_of(tag_text: str) -> str | None:
    """`Figure 1:` -> `1`, `TABLE I` -> `I`, `(a)` -> `a`."""
    text = _TAG_WORD.sub("", tag_text.strip()).strip().rstrip(":.").strip()
    text = text.strip("()") if text.startswith("(") and text.endswith(")") else text
    return text or None


@dataclass(slots=True)
class _Parts:
    caption: HtmlElement | None = None
    nested: list[HtmlElement] = field(default_factory=list)
    tabulars: list[HtmlElement] = field(default_factory=list)
    boxes: list[HtmlElement] = field(default_factory=list)
    """Tabulars and pictures that are boxes of text, in document order: a figure's blocks."""
    images: list[HtmlElement] = field(default_factory=list)
    """Images of the float itself: not in a cell, a caption or a nested float."""


def _parts(el: HtmlElement) -> _Parts:
    """A float's caption, nested floats, tabulars and own images, in one walk that does not
    enter them (a tabular nested in a cell belongs to that cell, a nested float's caption and
    images to the panel, a cell's image to the cell, a caption's inline icon to the caption)."""
    found = _Parts()
    stack = [c for c in reversed(el) if type(c.tag) is str]
    while stack:
        node = stack.pop()
        tag = tag_of(node)
        cls = classes(node)
        if tag == "figcaption" or "ltx_caption" in cls:
            if found.caption is None:
                found.caption = node
        elif tag == "figure" or not cls.isdisjoint(_FLOAT_CLASSES):
            found.nested.append(node)
        elif is_tabular(tag, cls):
            found.tabulars.append(node)
            found.boxes.append(node)
        elif tag == "svg":
            if text_boxes(node):
                found.boxes.append(node)  # its text is read as blocks
            else:  # a drawing: only the images in its foreignObjects are the float's
                found.images.extend(node.iter("img"))
        elif tag == "img":
            found.images.append(node)
        elif tag != "math" and not is_chrome(node):
            stack.extend(c for c in reversed(node) if type(c.tag) is str)
    return found


def _caption(
    node: HtmlElement | None, ctx: ParseContext
) -> tuple[str, Inline, tuple[str, ...], tuple[str, ...]]:
    """The caption's printed tag, its content, the footnotes it references and what it cites."""
    if node is None:
        return "", Inline("", ""), (), ()
    tag_text = ""
    for sub in node.iter():
        if "ltx_tag" in classes(sub):
            tag_text = text_of(sub)
            break
    caption, cites, notes = inline_of(node, ctx, skip=frozenset({"ltx_tag"}))
    return tag_text, caption, notes, cites


def _images(
    own: list[HtmlElement], panels: tuple[Figure | Table, ...], ctx: ParseContext
) -> tuple[str, ...]:
    """The float's own images, then its panels'."""
    urls = [ctx.absolute(node.get("src") or "") for node in own]
    urls.extend(url for panel in panels for url in panel.images)
    return tuple(dict.fromkeys(url for url in urls if url))


def parse_float(
    el: HtmlElement, ctx: ParseContext, parent_id: str, blocks_of: BlocksOf
) -> Figure | Table:
    cls = classes(el)
    float_id = el.get("id") or ctx.positional_id(parent_id, "fl")
    parts = _parts(el)
    tag_text, caption, notes, cites = _caption(parts.caption, ctx)
    panels: tuple[Figure | Table, ...] = ()
    if ctx.block_depth < MAX_BLOCK_DEPTH:  # panels of panels of … on a hostile page end here
        ctx.block_depth += 1
        try:
            panels = tuple(
                parse_float(node, ctx, float_id, blocks_of)
                for node in parts.nested
                if node.get("id") is None or ctx.first_reading(node.get("id"))
            )
        finally:
            ctx.block_depth -= 1
    # A figure's pictures are its images wherever LaTeXML laid them out (a tabular of
    # sub-pictures among them); a table's cell images belong to its cells.
    in_cells = [] if "ltx_table" in cls else [i for t in parts.tabulars for i in t.iter("img")]
    images = _images(parts.images + in_cells, panels, ctx)
    # A panel of tabulars (LaTeXML's `ltx_figure_panel` inside a table float, 2604.15597v1's
    # tables of icons and numbers) is a table panel: its cells, images included, stay cells.
    table_panel = (
        "ltx_figure_panel" in cls and parts.tabulars and not parts.images and not parts.nested
    )
    if table_panel:
        images = _images([], panels, ctx)
    if "ltx_table" in cls or table_panel:
        rows: list[tuple[str, ...]] = []
        md_rows: list[tuple[str, ...]] = []
        header = 0
        cut = False
        total = 0
        cell_notes: list[str] = []
        cell_cites: list[str] = []
        spans: list[CellSpan] = []
        for index, tabular in enumerate(parts.tabulars):
            if total >= MAX_TABLE_CELLS:
                cut = True  # many tabulars in one float: the cap holds for them together
                break
            cells = table_cells(tabular, ctx)
            if index == 0:
                header = cells.header_rows
            spans.extend(replace(span, row=span.row + len(rows)) for span in cells.spans)
            rows.extend(cells.text_rows)
            md_rows.extend(cells.md_rows)
            cell_notes.extend(cells.notes)
            cell_cites.extend(cells.cites)
            total += sum(len(row) for row in cells.text_rows)
            cut = cut or cells.cut
        return Table(
            float_id,
            number_of(tag_text),
            tag_text,
            caption,
            tuple(rows),
            tuple(md_rows),
            header,
            images,
            panels,
            is_float=not table_panel,
            cut=cut,
            notes=tuple(dict.fromkeys((*notes, *cell_notes))),
            spans=tuple(spans),
            cites=tuple(dict.fromkeys((*cites, *cell_cites))),
        )
    kind = "figure"
    if "ltx_float_algorithm" in cls:
        kind = "algorithm"
    elif "ltx_float" in cls and "ltx_figure" not in cls:
        kind = next(
            (c.removeprefix("ltx_float_") for c in cls if c.startswith("ltx_float_")), "float"
        )
    body: list[Block] = []
    homes = _by_child(el, parts.boxes)
    for child in children(el):
        if tag_of(child) == "figcaption" or is_float(child) or "ltx_caption" in classes(child):
            continue
        if kind == "figure":
            # A figure's pictures are its images; its content blocks are the tabulars and
            # boxes of text it holds, however deeply LaTeXML wrapped them (`\resizebox` puts
            # them in spans), and code listings.
            if child in homes:
                for box in homes[child]:
                    if tag_of(box) == "svg":
                        body.extend(blocks_of(box, ctx, float_id))
                    else:
                        body.append(parse_tabular(box, ctx, float_id))
            elif _has_code(child):
                body.extend(blocks_of(child, ctx, float_id))
            continue
        if tag_of(child) == "img" or (
            not child.xpath("string()").strip() and child.find(".//img") is not None
        ):
            continue
        body.extend(blocks_of(child, ctx, float_id))
    return Figure(
        float_id,
        kind,
        number_of(tag_text),
        tag_text,
        caption,
        images,
        panels,
        tuple(body),
        notes,
        cites,
    )


def _by_child(el: HtmlElement, boxes: list[HtmlElement]) -> dict[Any, list[Any]]:
    """Each tabular or picture under the child of `el` that holds it."""
    homes: dict[Any, list[Any]] = {}
    for box in boxes:
        node = box
        parent = node.getparent()
        while parent is not None and parent is not el:
            node, parent = parent, parent.getparent()
        homes.setdefault(node, []).append(box)
    return homes


def _has_code(el: HtmlElement) -> bool:
    for node in el.iter():
        cls = node.get("class") or ""
        if "ltx_listing" in cls or "ltx_verbatim" in cls:
            return True
    return False


# contract §3 Limits: a table's grid is capped. 16 cells spanning 1000 x 1000 (a 1 KB page) made
# a 64 MB table in 29 s and 2.3 GB before; the largest table in the corpus has 2,790 cells.
MAX_TABLE_CELLS = 100_000


@dataclass(slots=True)
class Cells:
    text_rows: list[tuple[str, ...]]
    md_rows: list[tuple[str, ...]]
    header_rows: int
    cut: bool
    """Whether the grid reached MAX_TABLE_CELLS and its later rows were left out."""
    notes: list[str]
    """Footnotes the cells reference, in order."""
    spans: list[CellSpan]
    """The cells that cover more than one position, clipped to the grid."""
    cites: list[str]
    """Bibliography ids the cells cite, in order."""


def table_cells(tabular: HtmlElement, ctx: ParseContext) -> Cells:
    """Rows of plain-text and Markdown cells; a spanning cell repeats wherever it reaches.

    Spans are clipped so that filling the grid costs at most MAX_TABLE_CELLS steps in all.
    """
    # the grid by row, each row by column: what a position holds is its first cell's value
    grid: list[dict[int, tuple[str, str]]] = []
    header_rows = 0
    counting_header = True
    steps = 0
    cut = False
    notes: list[str] = []
    cites: list[str] = []
    last_row = last_col = -1
    spans: list[CellSpan] = []
    for row_index, (section, row) in enumerate(_table_rows(tabular)):
        if cut:
            break
        cells = []
        all_th = True
        for child in row.iterchildren(etree.Element):
            kind = _part_kind(child)
            if kind.cell:
                cells.append((child, kind.spanning))
                all_th = all_th and kind.header
        while len(grid) <= row_index:
            grid.append({})
        here = grid[row_index]
        col = 0
        for cell, spanning in cells:
            while col in here:
                col += 1
            rowspan, colspan = _spans(cell, spanning)
            allowed = MAX_TABLE_CELLS - steps
            if allowed <= 0:
                cut = True
                break
            if rowspan * colspan > allowed:  # clip the span to what is left of the grid
                cut = True
                colspan = min(colspan, allowed)
                rowspan = max(1, min(rowspan, allowed // colspan))
            steps += rowspan * colspan
            content, cell_cites, cell_notes = inline_of(cell, ctx, cell=True)
            if cell_notes:
                notes.extend(cell_notes)
            if cell_cites:
                cites.extend(cell_cites)
            value = (content.text, content.markdown)
            if rowspan == 1 and colspan == 1:  # most cells
                here.setdefault(col, value)
                if row_index > last_row:
                    last_row = row_index
            else:
                spans.append(CellSpan(row_index, col, rowspan, colspan))
                while len(grid) < row_index + rowspan:
                    grid.append({})
                for dr in range(rowspan):
                    target = grid[row_index + dr]
                    for dc in range(colspan):
                        target.setdefault(col + dc, value)
                # the grid's extent, as the largest of its keys (a span adds all it reaches)
                last_row = max(last_row, row_index + rowspan - 1)
            col += colspan
            if col > last_col + 1:
                last_col = col - 1
        if counting_header and (section == "thead" or (cells and all_th)):
            header_rows += 1
        else:
            counting_header = False
    n_rows = last_row + 1
    n_cols = last_col + 1
    if n_rows * n_cols > MAX_TABLE_CELLS:  # a sparse grid of long spans: keep the first rows
        n_rows, cut = MAX_TABLE_CELLS // n_cols, True
    columns = range(n_cols)
    text_rows = []
    md_rows = []
    for row_cells in grid[:n_rows]:
        get = row_cells.get
        values = [get(c, _NO_CELL) for c in columns]
        text_rows.append(tuple([value[0] for value in values]))
        md_rows.append(tuple([value[1] for value in values]))
    kept = [
        CellSpan(span.row, span.col, min(span.rows, n_rows - span.row), span.cols)
        for span in spans
        if span.row < n_rows
    ]
    return Cells(text_rows, md_rows, min(header_rows, n_rows), cut, notes, kept, cites)


_NO_CELL = ("", "")


def _span(value: str | None) -> int:
    if value is None:
        return 1  # most cells span nothing
    try:
        return max(1, min(int(value or 1), 1000))
    except ValueError:
        return 1


def _spans(cell: HtmlElement, spanning: bool) -> tuple[int, int]:
    """A cell's rowspan and colspan: its attributes, or a span cell's `ltx_rowspan_N` classes
    (`spanning`: the cell has the class that says it has them)."""
    rowspan, colspan = cell.get("rowspan"), cell.get("colspan")
    if rowspan is None and colspan is None:
        if not spanning:
            return 1, 1
        for axis, count in _SPAN_CLASS.findall(cell.get("class") or ""):
            if axis == "row":
                rowspan = count
            else:
                colspan = count
    return _span(rowspan), _span(colspan)


_SPAN_CELLS = frozenset({"ltx_td", "ltx_th"})
_SPANNING = frozenset({"ltx_rowspan", "ltx_colspan"})


class _PartKind(NamedTuple):
    """What an element is to the table walk, in either form (`tr` or `span.ltx_tr`, …)."""

    row: bool
    group: str | None
    """`thead`, `tbody` or `tfoot` for a row group, else None."""
    cell: bool
    header: bool
    """A header cell (`th` or `ltx_th`)."""
    spanning: bool
    """A span cell whose classes say it spans rows or columns (`ltx_rowspan_N`)."""


# decided once per tag and class attribute, as the inline walk's kinds are (inline.py)
_PART_KINDS: dict[tuple[str, str | None], _PartKind] = {}


def _part_kind(el: HtmlElement) -> _PartKind:
    key = (el.tag, el.get("class"))
    found = _PART_KINDS.get(key)
    if found is None:
        tag, cls = tag_of(el), classes(el)
        group: str | None = None
        if tag in ("thead", "tbody", "tfoot"):
            group = tag
        elif tag == "span":
            group = next((_ROW_GROUPS[c] for c in cls if c in _ROW_GROUPS), None)
        found = _PartKind(
            row=tag == "tr" or (tag == "span" and "ltx_tr" in cls),
            group=group,
            cell=tag == "td" or tag == "th" or (tag == "span" and not cls.isdisjoint(_SPAN_CELLS)),
            header="ltx_th" in cls or tag == "th",
            spanning=not cls.isdisjoint(_SPANNING),
        )
        keep_decision(_PART_KINDS, key, found, key[1])
    return found


def _table_rows(tabular: HtmlElement) -> Iterator[tuple[str, HtmlElement]]:
    for child in tabular.iterchildren(etree.Element):
        kind = _part_kind(child)
        if kind.row:
            yield "tbody", child
            continue
        if kind.group is not None:
            for row in child.iterchildren(etree.Element):
                if _part_kind(row).row:
                    yield kind.group, row


def parse_tabular(el: HtmlElement, ctx: ParseContext, parent_id: str) -> Table:
    """A tabular outside any float: a table without caption or number."""
    table_id = el.get("id") or ctx.positional_id(parent_id, "tab")
    cells = table_cells(el, ctx)
    return Table(
        table_id,
        None,
        "",
        Inline("", ""),
        tuple(cells.text_rows),
        tuple(cells.md_rows),
        cells.header_rows,
        is_float=False,
        cut=cells.cut,
        notes=tuple(dict.fromkeys(cells.notes)),
        spans=tuple(cells.spans),
        cites=tuple(dict.fromkeys(cells.cites)),
    )
