"""Figures (with panels), tables (with spanning cells) and other floats."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from paperanchor.parse.context import ParseContext
from paperanchor.parse.dom import HtmlElement, children, classes, squash, tag_of
from paperanchor.parse.inline import inline_of
from paperanchor.tree import Block, Figure, Inline, Table

_TAG_WORD = re.compile(r"^[^\W\d_]+\.?\s+(?=\S)")
BlocksOf = Callable[[HtmlElement, ParseContext, str], list[Block]]
_FLOAT_CLASSES = frozenset({"ltx_figure", "ltx_table", "ltx_float"})


def is_float(el: HtmlElement) -> bool:
    return tag_of(el) == "figure" or not classes(el).isdisjoint(_FLOAT_CLASSES)


def number_of(tag_text: str) -> str | None:
    """`Figure 1:` -> `1`, `TABLE I` -> `I`, `(a)` -> `a`."""
    text = _TAG_WORD.sub("", tag_text.strip()).strip().rstrip(":.").strip()
    text = text.strip("()") if text.startswith("(") and text.endswith(")") else text
    return text or None


def _parts(el: HtmlElement) -> tuple[HtmlElement | None, list[HtmlElement], list[HtmlElement]]:
    """A float's caption, nested floats and tabulars, in one walk that does not enter them
    (a tabular nested in a cell belongs to that cell, a nested float's caption to the panel)."""
    caption: HtmlElement | None = None
    nested: list[HtmlElement] = []
    tabulars: list[HtmlElement] = []
    stack = [c for c in reversed(el) if type(c.tag) is str]
    while stack:
        node = stack.pop()
        tag = tag_of(node)
        cls = classes(node)
        if caption is None and (tag == "figcaption" or "ltx_caption" in cls):
            caption = node
        elif tag == "figure" or not cls.isdisjoint(_FLOAT_CLASSES):
            nested.append(node)
        elif tag == "table" and "ltx_tabular" in cls:
            tabulars.append(node)
        elif tag != "math":
            stack.extend(c for c in reversed(node) if type(c.tag) is str)
    return caption, nested, tabulars


def _caption(node: HtmlElement | None, ctx: ParseContext) -> tuple[str, Inline]:
    if node is None:
        return "", Inline("", "")
    tag_text = ""
    for sub in node.iter():
        if "ltx_tag" in classes(sub):
            tag_text = squash("".join(sub.itertext())).strip()
            break
    caption, _c, _n = inline_of(node, ctx, skip=frozenset({"ltx_tag"}))
    return tag_text, caption


def _images(el: HtmlElement, ctx: ParseContext) -> tuple[str, ...]:
    urls = [ctx.absolute(node.get("src") or "") for node in el.iter("img", "{*}img")]
    return tuple(dict.fromkeys(url for url in urls if url))


def parse_float(
    el: HtmlElement, ctx: ParseContext, parent_id: str, blocks_of: BlocksOf
) -> Figure | Table:
    cls = classes(el)
    float_id = el.get("id") or ctx.positional_id(parent_id, "fl")
    caption_el, nested, tabulars = _parts(el)
    tag_text, caption = _caption(caption_el, ctx)
    panels = tuple(parse_float(node, ctx, float_id, blocks_of) for node in nested)
    if "ltx_table" in cls:
        rows: list[tuple[str, ...]] = []
        md_rows: list[tuple[str, ...]] = []
        header = 0
        for index, tabular in enumerate(tabulars):
            t_rows, t_md, t_header = table_cells(tabular, ctx)
            if index == 0:
                header = t_header
            rows.extend(t_rows)
            md_rows.extend(t_md)
        return Table(
            float_id,
            number_of(tag_text),
            tag_text,
            caption,
            tuple(rows),
            tuple(md_rows),
            header,
            _images(el, ctx),
            panels,
        )
    kind = "figure"
    if "ltx_float_algorithm" in cls:
        kind = "algorithm"
    elif "ltx_float" in cls and "ltx_figure" not in cls:
        kind = next(
            (c.removeprefix("ltx_float_") for c in cls if c.startswith("ltx_float_")), "float"
        )
    body: list[Block] = []
    for child in children(el):
        if tag_of(child) == "figcaption" or is_float(child) or "ltx_caption" in classes(child):
            continue
        if tag_of(child) == "img" or (
            not child.xpath("string()").strip() and child.find(".//img") is not None
        ):
            continue
        if kind == "figure" and not _has_code_or_table(child):
            continue
        body.extend(blocks_of(child, ctx, float_id))
    return Figure(
        float_id,
        kind,
        number_of(tag_text),
        tag_text,
        caption,
        _images(el, ctx),
        panels,
        tuple(body),
    )


def _has_code_or_table(el: HtmlElement) -> bool:
    for node in el.iter():
        cls = node.get("class") or ""
        if "ltx_listing" in cls or "ltx_tabular" in cls or "ltx_verbatim" in cls:
            return True
    return False


def table_cells(
    tabular: HtmlElement, ctx: ParseContext
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]], int]:
    """Rows of plain-text and Markdown cells; a spanning cell repeats wherever it reaches."""
    grid: dict[tuple[int, int], tuple[str, str]] = {}
    header_rows = 0
    counting_header = True
    for row_index, (section, row) in enumerate(_table_rows(tabular)):
        col = 0
        cells = [c for c in children(row) if tag_of(c) in ("td", "th")]
        all_th = bool(cells) and all(tag_of(c) == "th" or "ltx_th" in classes(c) for c in cells)
        for cell in cells:
            while (row_index, col) in grid:
                col += 1
            content, _c, _n = inline_of(cell, ctx, cell=True)
            value = (content.text, content.markdown)
            rowspan = _span(cell.get("rowspan"))
            colspan = _span(cell.get("colspan"))
            for dr in range(rowspan):
                for dc in range(colspan):
                    grid.setdefault((row_index + dr, col + dc), value)
            col += colspan
        if counting_header and (section == "thead" or all_th):
            header_rows += 1
        else:
            counting_header = False
    n_rows = max((r for r, _ in grid), default=-1) + 1
    n_cols = max((c for _, c in grid), default=-1) + 1
    text_rows = [tuple(grid.get((r, c), ("", ""))[0] for c in range(n_cols)) for r in range(n_rows)]
    md_rows = [tuple(grid.get((r, c), ("", ""))[1] for c in range(n_cols)) for r in range(n_rows)]
    return text_rows, md_rows, min(header_rows, n_rows)


def _span(value: str | None) -> int:
    try:
        return max(1, min(int(value or 1), 1000))
    except ValueError:
        return 1


def _table_rows(tabular: HtmlElement) -> Iterator[tuple[str, HtmlElement]]:
    for child in children(tabular):
        tag = tag_of(child)
        if tag == "tr":
            yield "tbody", child
        elif tag in ("thead", "tbody", "tfoot"):
            for row in children(child):
                if tag_of(row) == "tr":
                    yield tag, row


def parse_tabular(el: HtmlElement, ctx: ParseContext, parent_id: str) -> Table:
    """A tabular outside any float: a table without caption or number."""
    table_id = el.get("id") or ctx.positional_id(parent_id, "tab")
    rows, md_rows, header = table_cells(el, ctx)
    return Table(
        table_id, None, "", Inline("", ""), tuple(rows), tuple(md_rows), header, is_float=False
    )
