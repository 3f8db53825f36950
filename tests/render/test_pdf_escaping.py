"""A PDF's text layer is the paper's text: Markdown and HTML written in it stay characters.

The PDF (tests/parse/pdf_samples.py `hostile_text_pdf`) sets `<script>`, `[x](javascript:…)`,
an image, emphasis, a heading mark and an equation made of markup in its text layer; the
Markdown we serve is rendered back with a CommonMark renderer, as a reader's client would.
"""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt

from paperanchor import service
from paperanchor.paper import LoadedPaper
from paperanchor.parse.pdf import parse_pdf
from paperanchor.render.markdown import document_chunks, join
from paperanchor.render.text import plain_text
from paperanchor.tree import Equation, walk
from tests.parse import pdf_samples as samples

# what our own Markdown of this paper is made of: headings and paragraphs
_OURS = {"h1", "p"}


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.extend(attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _rendered(markdown: str) -> _Elements:
    elements = _Elements()
    elements.feed(MarkdownIt("commonmark").render(markdown))
    return elements


def test_markup_in_a_pdfs_text_layer_renders_as_its_characters() -> None:
    document = parse_pdf(samples.hostile_text_pdf())
    elements = _rendered(join(document_chunks(document)))
    assert elements.tags <= _OURS, elements.tags
    assert elements.attributes == []
    text = "".join(elements.text)
    for written in (
        "A Paper <script>alert(1)</script>",
        "Click [x](javascript:alert(1)) or <img src=x onerror=alert(1)>.",
        "Some **bold** and `code` and a ![pic](http://evil/x.png) here.",
        "# not a heading",
        "<b>x</b> = [y](javascript:alert(2)) (1)",
    ):
        assert written in text


def test_an_equation_read_from_a_pdf_is_escaped_text_with_its_number() -> None:
    document = parse_pdf(samples.hostile_text_pdf())
    (equation,) = [v.node for v in walk(document.blocks) if isinstance(v.node, Equation)]
    assert equation.latex is None and equation.number == "1"
    assert equation.text == "<b>x</b> = [y](javascript:alert(2))"
    paper = service.Paper.open(LoadedPaper(document, "local/hostile", "local/hostile"))
    markdown = service.read(paper, equation.id).markdown
    assert "$$" not in markdown
    assert _rendered(markdown).tags <= _OURS
    assert service.equation(paper, "E1") == {
        "id": equation.id,
        "number": "1",
        "latex": None,
        "text": "<b>x</b> = [y](javascript:alert(2))",
    }
    # cite is plain text: the paper's characters as they are
    assert plain_text(equation) == "<b>x</b> = [y](javascript:alert(2)) (1)"
