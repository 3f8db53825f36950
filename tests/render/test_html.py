"""The section page's HTML (contract §6): the paper's text stays text, math becomes MathML
through an allowlist, every cost is bounded, and a reader can move between sections."""

from __future__ import annotations

import time
from xml.etree.ElementTree import Element, SubElement

import pytest
from lxml import html as lxml_html

from paperanchor import refs
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from paperanchor.render import html, mathml
from paperanchor.render.escape import escape_text, safe_url
from paperanchor.render.mathml import MathBudget
from paperanchor.tree import Document, Inline, Node, Paragraph, Section, Text
from tests.conftest import FIXTURES
from tests.corpus_pages import PAPER_PAGES, fixture_path, parsed
from tests.render.test_escape import HOSTILE_TEXT, LINE_STARTS

FILES = "http://127.0.0.1:8000/files/"
# What the renderer writes: our elements only, MathML Core's among them.
ALLOWED = {
    "section", "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "span", "a", "em", "strong",
    "code", "pre", "ul", "ol", "li", "blockquote", "figure", "figcaption", "img", "table",
    "thead", "tbody", "tr", "th", "td", "sup", "html", "body",
} | {"math", "mrow", "mi", "mn", "mo", "mtext", "ms", "mspace", "msub", "msup", "msubsup",
     "munder", "mover", "munderover", "mfrac", "msqrt", "mroot", "mstyle", "mpadded", "mphantom",
     "mtable", "mtr", "mtd", "mmultiscripts", "mprescripts", "none", "merror", "menclose",
     "mfenced", "semantics"}  # fmt: skip


def _document(name: str) -> Document:
    return parse_document(fixture_path(name).read_bytes(), f"{FILES}{name}.html")


def _article(node: Node, document: Document) -> html.Article:
    return html.article(
        node,
        document,
        permalink=lambda i: f"https://arxiv.org/html/2501.11120v1#{i}",
        section_href=lambda i: f"/local/x/sections/{i}",
    )


def _section(document: Document, section_id: str) -> Section:
    return next(s for s in document.sections if s.id == section_id)


def _root(fragment: str) -> lxml_html.HtmlElement:
    return lxml_html.fromstring(f"<html><body>{fragment}</body></html>")


def _check_markup(fragment: str) -> lxml_html.HtmlElement:
    root = _root(fragment)
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        assert element.tag in ALLOWED, lxml_html.tostring(element)[:200]
        for name in element.attrib:
            assert not name.startswith("on") and name not in ("style", "srcdoc"), name
        for name in ("href", "src"):
            url = element.get(name)
            if url is not None and not url.startswith(("#", "/local/x/sections/")):
                assert safe_url(url) is not None, (name, url)
    return root


def _text_of(root: lxml_html.HtmlElement) -> str:
    """The words shown, without the permalinks' pilcrows."""
    return " ".join(root.text_content().replace("¶", "").split())


def _one_paragraph(markdown: str) -> Document:
    text = Text("S1.p1.1", Inline(markdown, markdown))
    section = Section(
        "S1", "section", "1", "1", Inline("Text", "Text"), 1, (Paragraph("S1.p1", (text,)),)
    )
    return Document(Inline("T", "T"), (), None, None, (section,))


# -- the paper's text is text ----------------------------------------------------------------


def test_every_hostile_string_of_the_xss_fixture_is_text_on_its_section_pages() -> None:
    document = _document("xss")
    pages = {s.id: _article(s, document).html for s in document.sections}
    titles = _root(pages["S1"])
    assert _text_of(titles.xpath("//h1")[0]) == "1 Titles with <b>bold</b>"
    captions = _root(pages["S2"])
    caption = _text_of(captions.xpath("//figcaption")[0])
    assert "A grey square. <script>alert(3)</script>" in caption
    for page in pages.values():
        root = _check_markup(page)
        assert not root.xpath("//script | //b | //img[@src='x']")
    assert html.node_title(document.sections[0]) == "1 Titles with <b>bold</b>"


@pytest.mark.parametrize("text", HOSTILE_TEXT + LINE_STARTS)
def test_markup_written_in_a_paragraph_is_shown_as_its_text(text: str) -> None:
    # the tree's Markdown is what the parser makes of the paper's words: escaped
    document = _one_paragraph(escape_text(text))
    page = _article(document.sections[0], document).html
    root = _check_markup(page)
    paragraph = root.xpath("//p[@id='S1.p1.1']")[0]
    assert _text_of(paragraph) == " ".join(text.split())
    assert not root.xpath("//p[@id='S1.p1.1']//*[not(self::a[@class='permalink'])]")


def test_links_only_point_to_web_addresses() -> None:
    document = _one_paragraph(
        "[ok](https://ok.example/a) [bad](javascript:alert(1)) <javascript:alert(2)> "
        "![pic](data:image/png;base64,AAAA) ![fine](https://ok.example/x.png)"
    )
    root = _check_markup(_article(document.sections[0], document).html)
    hrefs = [a.get("href") for a in root.iter("a") if a.get("class") != "permalink"]
    assert hrefs == ["https://ok.example/a"]
    assert [img.get("src") for img in root.iter("img")] == ["https://ok.example/x.png"]
    assert root.xpath("//a[@href='https://ok.example/a']")[0].get("rel") == (
        "nofollow noopener noreferrer"
    )


# -- math --------------------------------------------------------------------------------------


HOSTILE_TEX = {
    r"\text{<script>alert(1)</script>}": "<script>alert(1)</script>",
    r"\href{javascript:alert(2)}{x}": "x",
    r"\style{position:fixed;top:0}{y}": "y",
    r"\class{overlay}{z}": "z",
    r"\mathrm{a&b}": "a&b",
    r"\text{&lt;i&gt;}": "&lt;i&gt;",
    r"\text{&#60;i&#62;}": "<i>",  # a numeric reference is read as latex2mathml's own, as text
}


@pytest.mark.parametrize(("tex", "shown"), HOSTILE_TEX.items())
def test_tex_that_latex2mathml_would_pass_through_becomes_plain_mathml(
    tex: str, shown: str
) -> None:
    out = mathml.mathml(tex, display=False, budget=MathBudget())
    root = _check_markup(out)
    math = root.xpath("//math")[0]
    assert math.text_content() == shown
    for element in math.iter():
        assert set(element.attrib) <= {"xmlns", "display", "mathvariant", "stretchy", "fence"}


def test_a_formula_cannot_draw_a_box_over_the_page() -> None:
    out = mathml.mathml(r"\rule{1000cm}{1000cm}\hspace{99999em}\hspace{2em}", display=True,
                        budget=MathBudget())  # fmt: skip
    root = _root(out)
    widths = [e.get("width") for e in root.iter("mspace")]
    assert widths == [None, None, "2em"]
    assert not root.xpath("//*[@mathbackground or @height]")


def test_latex2mathml_s_own_serialiser_is_the_one_that_would_run_markup() -> None:
    # why render/mathml.py writes the tree itself: the library's string carries the script
    from latex2mathml.converter import convert

    assert "<script>" in convert(r"\text{<script>}")
    assert "<script>" not in mathml.mathml(r"\text{<script>}", display=False, budget=MathBudget())


def test_a_formula_that_cannot_be_converted_is_shown_as_its_tex_as_text() -> None:
    deep = r"\frac{" * 600 + "<b>x</b>" + "}{y}" * 600  # RecursionError inside latex2mathml
    out = mathml.mathml(deep, display=True, budget=MathBudget())
    root = _check_markup(out)
    assert root.xpath("//code[@class='tex display']")[0].text_content() == f"$${deep}$$"
    assert not root.xpath("//b")


def test_a_page_converts_formulas_within_its_budget_and_shows_the_rest_as_tex() -> None:
    budget = MathBudget(chars=20, formulas=3)
    outs = [mathml.mathml(f"x_{i}", display=False, budget=budget) for i in range(5)]
    assert [o.startswith("<math") for o in outs] == [True, True, True, False, False]
    assert outs[3] == '<code class="tex">$x_3$</code>'
    long_formula = "x+" * (mathml.MAX_FORMULA_CHARS // 2 + 1)
    assert mathml.mathml(long_formula, display=False, budget=MathBudget()).startswith("<code")


def test_the_worst_page_of_formulas_is_bounded_in_time() -> None:
    # as many of the slowest formulas (15 µs a character) as one page may convert: about 1.5 s
    started = time.perf_counter()
    budget = MathBudget()
    formula = "x+" * (mathml.MAX_FORMULA_CHARS // 2 - 1)
    converted = 0
    for _ in range(100):
        converted += mathml.mathml(formula, display=True, budget=budget).startswith("<math")
    assert converted == mathml.PAGE_TEX_CHARS // len(formula)
    assert time.perf_counter() - started < 60  # loose: a shared machine; typically 1.5 s


def test_letters_in_a_math_alphabet_are_drawn_with_unicode_s_mathematical_letters() -> None:
    out = mathml.mathml(r"\mathbb{R}^n \mathcal{L} \mathbf{x} \mathfrak{g} \mathrm{d}",
                        display=False, budget=MathBudget())  # fmt: skip
    text = _root(out).xpath("//math")[0].text_content()
    assert text == "ℝn" + "ℒ" + "𝐱" + "𝔤" + "d"


def test_latexml_s_braced_sized_delimiters_and_aligned_displays_are_drawn() -> None:
    out = mathml.mathml(r"\bigl{(}x\bigr{)}", display=False, budget=MathBudget())
    assert [mo.text for mo in _root(out).iter("mo")] == ["(", ")"]
    aligned = mathml.mathml(r"\begin{aligned}a&=b\\c&=d\end{aligned}", display=True,
                            budget=MathBudget())  # fmt: skip
    assert len(_root(aligned).xpath("//mtr")) == 2 and "&" not in _root(aligned).text_content()


def test_an_element_outside_the_allowlist_is_written_as_a_row() -> None:
    root = Element("math")
    link = SubElement(root, "a", href="javascript:alert(1)")
    SubElement(link, "mi").text = "x"
    out = mathml.serialise(root, display=False)
    assert out == '<math xmlns="http://www.w3.org/1998/Math/MathML"><mrow><mi>x</mi></mrow></math>'


# -- the fixture's section pages -------------------------------------------------------------


def test_a_section_with_equations_has_mathml_and_no_tex_left_as_text() -> None:
    document = _document("full")
    page = _article(_section(document, "S2"), document).html
    root = _check_markup(page)
    assert len(root.xpath("//math")) >= 20
    assert root.xpath("//div[@id='S2.E1']//mfrac")
    assert root.xpath("//div[@id='S2.E1']/span[@class='eqno']")[0].text == "(1)"
    assert "\\" not in _text_of(root) and "$" not in _text_of(root)
    # an align's rows share its columns, each row keeping its id and number
    rows = root.xpath("//div[@id='A2.EGx1']//tr")
    assert [r.get("id") for r in rows] == ["S2.E2", "S2.Ex2", "S2.E3"]
    assert [r.xpath("td[@class='eqno']")[0].text for r in rows] == ["(2)", None, "(3)"]


def test_every_paragraph_links_to_its_permalink_once() -> None:
    document = _document("full")
    root = _root(_article(_section(document, "S4"), document).html)
    links = [a.get("href") for a in root.xpath("//a[@class='permalink']")]
    expected = {f"https://arxiv.org/html/2501.11120v1#S4.p{i}" for i in (1, 2, 3)}
    assert expected <= set(links)
    assert len(links) == len(set(links))  # a list item's paragraph has none of its own
    assert not [href for href in links if "S4.I1" in href]


def test_a_local_document_has_no_permalinks() -> None:
    document = _document("full")
    page = html.article(
        _section(document, "S1"),
        document,
        permalink=lambda i: refs.permalink("local/full", "local/full", "local", i),
        section_href=lambda i: i,
    )
    assert 'class="permalink"' not in page.html


def test_figures_show_their_images_with_captions_and_tables_their_cells() -> None:
    document = _document("full")
    root = _check_markup(_article(_section(document, "S4"), document).html)
    images = [img.get("src") for img in root.iter("img")]
    assert images == [f"{FILES}full/fig-loss-a.png", f"{FILES}full/fig-loss-b.png",
                      f"{FILES}full/fig-overview.png"]  # fmt: skip
    caption = _text_of(root.xpath("//figure[@id='S4.F1']/figcaption")[0])
    assert caption.startswith("Figure 1: Assignment cost per revision")
    table = root.xpath("//figure[@id='S4.T1']//table")[0]
    # the paper's spanning cells span on the page, drawn once (the tree repeats them)
    spans = [(th.text_content(), th.get("rowspan"), th.get("colspan"))
             for th in table.xpath("thead/tr/th")]  # fmt: skip
    assert spans == [
        ("Method", "2", None), ("Features", "2", None), ("Edit type", None, "2"),
        ("Rewrite", None, None), ("Insert/delete", None, None),
    ]  # fmt: skip
    ours = table.xpath("tbody/tr[2]/td[1]")[0]
    assert ours.text_content() == "Ours" and ours.get("rowspan") == "2"
    assert table.xpath("tbody/tr[3]/td[2]/strong")[0].text == "91.7"
    assert "Ours" not in table.xpath("tbody/tr[3]")[0].text_content()
    assert root.xpath("//ol[@id='S4.I1']/li[2]//ul/li")  # the nested list
    assert "def propagate(versions, lam=0.3):" in root.xpath("//pre/code")[0].text


def test_theorems_lead_with_their_label_and_footnotes_end_the_page() -> None:
    document = _document("full")
    root = _check_markup(_article(_section(document, "S3"), document).html)
    first = root.xpath("//div[@id='Thmtheorem1']//p")[0]
    assert first.xpath("span[@class='theorem-label']")[0].text == "Lemma 1."
    assert root.xpath("//div[@class='proof']//span[@class='theorem-label']")[0].text == "Proof."
    mark = root.xpath("//sup[@class='note-mark']/a")[0]
    assert mark.get("href") == "#footnote2" and mark.text == "2"
    note = root.xpath("//section[@class='footnotes']//li[@id='footnote2']")[0]
    assert "The bound on" in note.text_content() and note.xpath(".//math")


def test_a_page_of_a_node_that_is_not_a_section_has_a_title_of_its_own() -> None:
    document = _document("full")
    view = Paper.open(LoadedPaper(document, "local/full", "local/full"))
    figure = view.index.resolve("F1").node
    page = _article(figure, document)
    assert page.title == "Figure 1"
    assert _root(page.html).xpath("//h1")[0].text == "Figure 1"
    equation = view.index.resolve("E1").node
    assert html.node_title(equation) == "Equation (1)"


def test_a_page_past_its_size_stops_and_says_so() -> None:
    paragraph = "word " * 20_000  # 100 kB a paragraph
    texts = tuple(
        Paragraph(f"S1.p{i}", (Text(f"S1.p{i}.1", Inline(paragraph, paragraph)),))
        for i in range(100)
    )
    section = Section("S1", "section", "1", "1", Inline("Long", "Long"), 1, texts)
    document = Document(Inline("T", "T"), (), None, None, (section,))
    page = _article(section, document)
    assert page.cut
    assert html.MAX_PAGE_CHARS < len(page.html) < html.MAX_PAGE_CHARS + 2 * len(paragraph) + 10_000


# -- where a section sits --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "previous", "following", "parent"),
    [
        ("abstract", None, "S1", None),
        ("S1", "abstract", "S2", None),
        ("S2", "S1", "S3", None),  # a section's page holds its subsections: next is S3
        ("S2.SS1", "S2", "S2.SS2", "S2"),
        ("S2.SS1.SSS1.Px1", "S2.SS1.SSS1", "S2.SS2", "S2.SS1.SSS1"),  # up two levels for next
        ("S2.SS2", "S2.SS1", "S3", "S2"),
        ("A2", "A1", None, None),
    ],
)
def test_a_section_s_neighbours_are_the_sections_before_and_after_it(
    section: str, previous: str | None, following: str | None, parent: str | None
) -> None:
    around = html.neighbours(_document("full"), section)
    ids = [s.id if s is not None else None for s in (around.previous, around.next, around.parent)]
    assert ids == [previous, following, parent]


def test_permalinks_are_public_versioned_addresses() -> None:
    assert refs.permalink("2501.11120", "2501.11120v1", "arxiv", "S1.p1") == (
        "https://arxiv.org/html/2501.11120v1#S1.p1"
    )
    assert refs.permalink("1808.08002", "1808.08002", "ar5iv", "S2.p3") == (
        "https://ar5iv.labs.arxiv.org/html/1808.08002#S2.p3"
    )
    assert refs.permalink("2501.11120", "2501.11120v1", "pdf", "S1.p1") == (
        "https://arxiv.org/abs/2501.11120v1"
    )
    assert refs.permalink("local/full", "local/full", "local", "S1.p1") is None


# -- the corpus ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_section_of_a_corpus_page_renders_to_our_elements_only(name: str) -> None:
    document = parsed(name)
    for section in document.sections:
        page = _article(section, document)
        assert not page.cut, section.id
        root = _check_markup(page.html)
        # every formula of the corpus converts: none is left as TeX
        assert not root.xpath("//code[contains(@class, 'tex')]"), section.id


def test_a_pdf_equation_without_tex_shows_its_extracted_text() -> None:
    from paperanchor.parse.pdf import parse_pdf
    from paperanchor.tree import Equation, walk

    pdf = FIXTURES / "pdf" / "full.pdf"
    document = parse_pdf(pdf.read_bytes())
    visit = next(v for v in walk(document.roots()) if isinstance(v.node, Equation) and v.node.text)
    assert visit.node.latex is None
    page = html.article(
        visit.section or visit.node, document, permalink=lambda _i: None, section_href=str
    )
    assert escape_text_html(visit.node.text) in page.html


def escape_text_html(text: str) -> str:
    from html import escape

    return escape(text, quote=True)


@pytest.mark.parametrize("page", ["span-bomb-table", "span-bomb-span-table"])
def test_a_span_bomb_is_drawn_once_per_cell_in_bounded_time(page: str) -> None:
    from tests.reliability.hostile_pages import PAGES

    document = parse_document(PAGES[page](), "https://example.org/")
    started = time.perf_counter()
    drawn = _article(_section(document, "S1"), document).html
    elapsed = time.perf_counter() - started

    root = lxml_html.fromstring(drawn)
    cells = root.xpath("//table//td | //table//th")
    # 16 cells in the page, each drawn once, spanning what is left of the capped grid
    assert len(cells) <= 16 and all(cell.text_content().startswith("c") for cell in cells)
    assert elapsed < 2.0, f"{elapsed:.2f} s"
