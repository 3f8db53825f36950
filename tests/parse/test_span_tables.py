"""Tabulars written in spans (`span.ltx_tabular`, under `\\resizebox`, inline) read as tables."""

from __future__ import annotations

import re

import pytest
from lxml import etree

from paperanchor.parse import parse_document
from paperanchor.tree import Table, walk
from tests.corpus_pages import has_class, page_root, parsed, section_page

# Pages whose table floats hold span tabulars (2401.10225: all eleven, 2402.00838: three).
SPAN_TABLE_PAGES = [
    "pairs/2401.10225v1.arxiv.html",
    "pairs/2401.10225.ar5iv.html",
    "pairs/2402.00838v3.arxiv.html",
    "pairs/2402.00838.ar5iv.html",
]


def _as_spans(table: str) -> str:
    """The same tabular as LaTeXML writes it inside inline content."""
    spans = re.sub(r"<(/?)(table|thead|tbody|tr|td|th)\b", r"<\1span", table)
    spans = re.sub(r"rowspan='(\d+)'", r"data-r='\1'", spans)
    spans = re.sub(r"colspan='(\d+)'", r"data-c='\1'", spans)
    # LaTeXML's span cells say their spans in classes, not attributes
    spans = re.sub(
        r"class='([^']*)' data-r='(\d+)'", r"class='\1 ltx_rowspan ltx_rowspan_\2'", spans
    )
    return re.sub(
        r"class='([^']*)' data-c='(\d+)'", r"class='\1 ltx_colspan ltx_colspan_\2'", spans
    )


TABULAR = (
    "<table class='ltx_tabular' id='S1.T1.1'>"
    "<thead class='ltx_thead'><tr class='ltx_tr'>"
    "<th class='ltx_td ltx_th ltx_th_column' rowspan='2'>Model</th>"
    "<th class='ltx_td ltx_th ltx_th_column' colspan='2'>Score</th></tr>"
    "<tr class='ltx_tr'><th class='ltx_td ltx_th ltx_th_column'>top-1</th>"
    "<th class='ltx_td ltx_th ltx_th_column'>top-5</th></tr></thead>"
    "<tbody class='ltx_tbody'><tr class='ltx_tr'><td class='ltx_td'>A <math class='ltx_Math' "
    "alttext='x^{2}'><semantics><mi>x</mi><annotation encoding='application/x-tex'>x^{2}"
    "</annotation></semantics></math></td><td class='ltx_td'>1.0</td><td class='ltx_td'>2.0</td>"
    "</tr></tbody></table>"
)


def _float(tabular: str, wrapped: bool) -> str:
    if wrapped:  # \resizebox{\textwidth}{!}{…}
        tabular = (
            "<div class='ltx_inline-block ltx_transformed_outer'>"
            "<span class='ltx_transformed_inner'><p class='ltx_p'>"
            f"<span class='ltx_text'>{tabular}</span></p></span></div>"
        )
    return (
        "<figure class='ltx_table' id='S1.T1'><figcaption class='ltx_caption'>"
        f"<span class='ltx_tag ltx_tag_table'>Table 1: </span>Scores</figcaption>{tabular}</figure>"
    )


def _table(html: bytes, table_id: str = "S1.T1") -> Table:
    node = next(v.node for v in walk(parse_document(html).roots()) if v.node.id == table_id)
    assert isinstance(node, Table)
    return node


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_span_tabular_reads_exactly_as_the_same_table_tabular(wrapped: bool) -> None:
    as_table = _table(section_page(_float(TABULAR, wrapped=False)))
    as_spans = _table(section_page(_float(_as_spans(TABULAR), wrapped)))
    assert as_spans.rows == as_table.rows
    assert as_spans.markdown_rows == as_table.markdown_rows
    assert as_spans.header_rows == as_table.header_rows == 2
    assert as_table.rows == (
        ("Model", "Score", "Score"),
        ("Model", "top-1", "top-5"),
        ("A $x^{2}$", "1.0", "2.0"),
    )


def test_a_span_tabular_among_blocks_is_a_table() -> None:
    html = section_page(f"<div class='ltx_para' id='S1.p1'>{_as_spans(TABULAR)}</div>")
    assert _table(html, "S1.T1.1").rows[2] == ("A $x^{2}$", "1.0", "2.0")


def test_an_inline_tabular_in_a_cell_keeps_its_cells_apart() -> None:
    # 2404.09516v1 stacks names in a cell with an inline tabular (104 of them)
    stacked = (
        "<span class='ltx_tabular'><span class='ltx_tr'><span class='ltx_td'>GSS-192M</span>"
        "</span><span class='ltx_tr'><span class='ltx_td'>GSS-L-352M</span></span></span>"
    )
    html = section_page(
        _float(
            "<table class='ltx_tabular'><tr class='ltx_tr'><td class='ltx_td'>"
            f"<span class='ltx_text'>{stacked}</span></td></tr></table>",
            wrapped=False,
        )
    )
    assert _table(html).rows == (("GSS-192M GSS-L-352M",),)


@pytest.mark.parametrize("name", SPAN_TABLE_PAGES)
def test_every_table_float_of_a_span_tabular_page_has_its_rows(name: str) -> None:
    root = page_root(name)
    document = parsed(name)
    tables = {v.node.id: v.node for v in walk(document.roots()) if isinstance(v.node, Table)}
    for el in root.xpath(f"//figure[{has_class('ltx_table')}]"):
        cell = f"*[self::td or self::th or self::span[{has_class('ltx_td')}]]"
        cells = el.xpath(f".//{cell}[not(ancestor::{cell})]")
        table = tables[el.get("id")]
        assert table.rows, el.get("id")
        grid = {text for row in table.rows for text in row}
        for cell in cells:
            words = " ".join(etree.tostring(cell, method="text", encoding=str).split())
            if words and "\\" not in words and "{" not in words:  # cells without math
                assert words in grid, (el.get("id"), words)
