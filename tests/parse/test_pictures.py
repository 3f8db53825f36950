"""Text drawn inside pictures (`svg.ltx_picture`, `foreignObject`) is read as blocks in place."""

from __future__ import annotations

from lxml import etree

from paperanchor.anchors import AnchorIndex
from paperanchor.paper import LoadedPaper
from paperanchor.parse import parse_document
from paperanchor.service import Paper, read
from paperanchor.tree import Equation, Figure, ListBlock, Paragraph, Text, walk
from tests.corpus_pages import has_class, page_bytes, parsed, section_page

PICTURES_PAGE = "html/2401.16380v1.arxiv.html"


def _box(inner: str, picture_id: str = "S1.p1.pic1") -> str:
    return (
        f"<svg class='ltx_picture' id='{picture_id}' width='600' height='90'><g><path d='M 0 0'/>"
        "<g transform='matrix(1 0 0 1 21 13)'><foreignObject width='556' height='59'>"
        f"{inner}</foreignObject></g></g></svg>"
    )


def _markdown(html: bytes, node: str = "S1") -> str:
    paper = Paper.open(LoadedPaper(parse_document(html), "local/p", "local/p"))
    return read(paper, node, 100_000).markdown


def _words(text: str) -> list[str]:
    return " ".join(text.split()).split()


def _in_order(words: list[str], haystack: list[str]) -> bool:
    at = 0
    for word in words:
        try:
            at = haystack.index(word, at) + 1
        except ValueError:
            return False
    return True


def test_every_paragraph_inside_the_pages_pictures_is_read_in_its_section_in_order() -> None:
    root = etree.fromstring(page_bytes(PICTURES_PAGE), etree.HTMLParser(encoding="utf-8"))
    pictures = root.xpath("//svg[contains(@class, 'ltx_picture')]")
    assert len(pictures) == 10
    paper = Paper.open(LoadedPaper(parsed(PICTURES_PAGE), "local/p", "local/p"))
    index = AnchorIndex.build(paper.document, "p")
    for picture in pictures:
        section = picture.xpath("ancestor::section[1]")[0].get("id")
        shown = _words(read(paper, section, 100_000).markdown.replace("`", ""))
        texts = picture.xpath(f".//foreignobject//*[{has_class('ltx_p')}]")
        assert texts
        for text in texts:
            words = _words("".join(text.itertext()))
            assert _in_order(words, shown), (section, words[:8])
            # each run of text keeps LaTeXML's id: it can be anchored and cited
            assert isinstance(index.resolve(text.get("id")).node, Text)


def test_a_box_of_text_is_read_in_place_between_the_text_around_it() -> None:
    box = _box(
        "<span class='ltx_inline-para ltx_minipage'><span class='ltx_para' id='S1.p1.pic1.p1'>"
        "<span class='ltx_p' id='S1.p1.pic1.p1.1'>USER: boxed question words</span>"
        "<span class='ltx_p' id='S1.p1.pic1.p1.2'>ASSISTANT: boxed answer words</span>"
        "</span></span>"
    )
    html = section_page(
        f"<div class='ltx_para' id='S1.p1'><p class='ltx_p'>Before the box.</p>{box}"
        "<p class='ltx_p'>After the box.</p></div>"
    )
    words = _words(_markdown(html))
    assert _in_order(
        ["Before", "USER:", "question", "ASSISTANT:", "answer", "After", "box."], words
    ), words
    document = parse_document(html)
    paragraph = next(v.node for v in walk(document.roots()) if v.node.id == "S1.p1.pic1.p1")
    assert isinstance(paragraph, Paragraph)
    assert [b.id for b in paragraph.blocks] == ["S1.p1.pic1.p1.1", "S1.p1.pic1.p1.2"]


def test_an_equation_and_a_list_inside_a_picture_keep_their_ids_and_order() -> None:
    equation = (
        "<table class='ltx_equation ltx_eqn_table' id='S1.E1'><tr class='ltx_equation ltx_eqn_row'>"
        "<td class='ltx_eqn_cell'><math class='ltx_Math' display='block' "
        "alttext='\\text{intensity}=\\frac{a}{b}'><semantics><mi>i</mi><annotation "
        "encoding='application/x-tex'>\\text{intensity}=\\frac{a}{b}</annotation></semantics>"
        "</math></td><td class='ltx_eqn_cell ltx_eqn_eqno'><span class='ltx_tag'>(1)</span></td>"
        "</tr></table>"
    )
    items = (
        "<ul class='ltx_itemize' id='S1.I1'><li class='ltx_item' id='S1.I1.i1'>"
        "<span class='ltx_tag ltx_tag_item'>•</span><span class='ltx_para' id='S1.I1.i1.p1'>"
        "<span class='ltx_p'>first item words</span></span></li></ul>"
    )
    box = _box(
        "<span class='ltx_inline-block ltx_minipage'><span class='ltx_para' id='S1.p1.pic1.p1'>"
        f"<span class='ltx_p'>The intensity is</span>{equation}"
        f"<span class='ltx_p'>where:</span>{items}</span></span>"
    )
    document = parse_document(section_page(f"<div class='ltx_para' id='S1.p1'>{box}</div>"))
    nodes = [v.node for v in walk(document.roots())]
    kinds = [type(n).__name__ for n in nodes if isinstance(n, Text | Equation | ListBlock)]
    assert kinds == ["Text", "Equation", "Text", "ListBlock", "Text"]
    index = AnchorIndex.build(document, "p")
    found = index.resolve("S1.E1").node
    assert isinstance(found, Equation) and found.number == "1"
    assert found.latex == "\\text{intensity}=\\frac{a}{b}"
    assert isinstance(index.resolve("S1.I1").node, ListBlock)
    assert "first item words" in _markdown(
        section_page(f"<div class='ltx_para' id='S1.p1'>{box}</div>")
    )


def test_a_drawings_labels_are_not_read_as_text() -> None:
    # a graph of nodes a and b (split-cycle's examples): math labels only, the drawing's own
    drawing = (
        "<svg class='ltx_picture' id='S1.p1.pic1'><g><foreignObject width='7'>"
        "<math class='ltx_Math' alttext='a'><mi>a</mi></math></foreignObject></g>"
        "<g><foreignObject width='7'><math class='ltx_Math' alttext='b'><mi>b</mi></math>"
        "</foreignObject></g></svg>"
    )
    html = section_page(
        f"<div class='ltx_para' id='S1.p1'><p class='ltx_p'>A graph.</p>{drawing}"
        "<p class='ltx_p'>Its end.</p></div>"
    )
    markdown = _markdown(html)
    assert "$a$" not in markdown and "$b$" not in markdown
    assert "A graph." in markdown and "Its end." in markdown


def test_a_box_of_text_in_a_figure_is_the_figures_content() -> None:
    # 2410.00260v2's Figure 2 is a prompt written in a picture
    figure = parsed("html/2410.00260v2.arxiv.html")
    index = AnchorIndex.build(figure, "p")
    node = index.resolve("S2.F2").node
    assert isinstance(node, Figure)
    paper = Paper.open(LoadedPaper(figure, "local/p", "local/p"))
    markdown = read(paper, "S2.F2", 100_000).markdown
    assert "Write a {doc_type} about {industry} using the" in markdown
    assert "- MOTIVE:" in markdown


def test_a_box_of_text_inside_a_table_cell_keeps_its_words_in_the_cell() -> None:
    box = _box("<span class='ltx_inline-block'><span class='ltx_p'>cell box words</span></span>")
    html = section_page(
        "<div class='ltx_para' id='S1.p1'><table class='ltx_tabular' id='S1.p1.1'>"
        f"<tr class='ltx_tr'><td class='ltx_td'>left</td><td class='ltx_td'>{box}</td></tr>"
        "</table></div>"
    )
    table = next(v.node for v in walk(parse_document(html).roots()) if v.node.id == "S1.p1.1")
    assert table.rows == (("left", "cell box words"),)  # type: ignore[union-attr]
