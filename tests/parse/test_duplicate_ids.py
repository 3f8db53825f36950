"""An id is held by one node: an element met a second time is not read again."""

from __future__ import annotations

from collections import Counter

import pytest

from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from paperanchor.tree import Figure, walk
from tests.corpus_pages import PAIR_PAGES, PAPER_PAGES, parsed, section_page


@pytest.mark.parametrize("name", PAPER_PAGES + PAIR_PAGES)
def test_no_id_is_held_by_two_nodes_on_any_corpus_page(name: str) -> None:
    ids = Counter(visit.node.id for visit in walk(parsed(name).roots()))
    assert [node_id for node_id, count in ids.items() if count > 1] == []


def test_an_abstract_a_broken_conversion_nests_in_the_body_is_read_once_as_the_abstract() -> None:
    # agd's abstract sits inside a listing inside the first paragraph: it was read twice
    document = parsed("generated/agd.html")
    assert document.abstract is not None
    in_abstract = {visit.node.id for visit in walk([document.abstract])}
    assert "p1.3.4.1" in in_abstract
    in_body = {visit.node.id for visit in walk(document.blocks)}
    assert "p1.3.4.1" not in in_body
    markdown = Paper.open(LoadedPaper(document, "local/agd", "local/agd")).markdown()
    assert markdown.count("The architecture of a deep neural network is defined explicitly") == 1


FIGURE = (
    "<figure class='ltx_figure' id='S1.F1'><img class='ltx_graphics' src='f.png'>"
    "<figure class='ltx_figure ltx_figure_panel' id='S1.F1.sf1'><figcaption class='ltx_caption'>"
    "<span class='ltx_tag'>(a)</span>panel words</figcaption></figure>{panel}"
    "<figcaption class='ltx_caption'><span class='ltx_tag'>Figure 1: </span>caption words"
    "</figcaption></figure>"
)


def test_a_float_rendered_twice_is_one_node_read_once() -> None:
    figure = FIGURE.format(panel="")
    html = section_page(
        f"<div class='ltx_para' id='S1.p1'><p class='ltx_p'>Text.</p></div>{figure}{figure}"
    )
    document = parse_document(html)
    figures = [v.node for v in walk(document.roots()) if isinstance(v.node, Figure)]
    assert [f.id for f in figures] == ["S1.F1", "S1.F1.sf1"]
    markdown = Paper.open(LoadedPaper(document, "local/d", "local/d")).markdown()
    assert markdown.count("caption words") == 1 and markdown.count("panel words") == 1


def test_a_panel_repeated_inside_its_float_is_one_panel() -> None:
    repeated = (
        "<figure class='ltx_figure ltx_figure_panel' id='S1.F1.sf1'><figcaption "
        "class='ltx_caption'><span class='ltx_tag'>(b)</span>another caption</figcaption></figure>"
    )
    document = parse_document(section_page(FIGURE.format(panel=repeated)))
    (figure,) = [v.node for v in walk(document.roots()) if v.node.id == "S1.F1"]
    assert isinstance(figure, Figure)
    assert [p.caption.text for p in figure.panels] == ["panel words"]
