"""The paper's text stays text (contract §3): our Markdown, rendered back by a CommonMark renderer
(markdown-it-py with GFM tables, footnotes and dollar math, as a reader would render it),
yields the paper's words and no element or URL scheme the paper did not put there."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from lxml import etree, html
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin

from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from paperanchor.render.escape import ESCAPE_MAY_CHANGE, escape_text, safe_url
from tests.corpus_pages import PAPER_PAGES, fixture_path, parsed

RENDERER = (
    MarkdownIt("commonmark", {"html": True})
    .enable("table")
    .use(footnote_plugin)
    .use(dollarmath_plugin)
)
# What our Markdown makes: blocks, emphasis, code, links, images, tables, footnotes, math.
ALLOWED = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "code", "pre", "ul", "ol", "li",
    "blockquote", "table", "thead", "tbody", "tr", "th", "td", "img", "a", "sup", "section",
    "hr", "div", "span", "eq", "eqn", "br", "html", "body",
}  # fmt: skip


def _rendered(markdown: str) -> Any:
    return html.fromstring(f"<html><body>{RENDERER.render(markdown)}</body></html>")


def _check_markup(markdown: str) -> None:
    root = _rendered(markdown)
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        assert element.tag in ALLOWED, etree.tostring(element)[:200]
        for name in element.attrib:
            assert not name.startswith("on"), etree.tostring(element)[:200]
        for name in ("href", "src"):
            url = element.get(name)
            if url is not None and not url.startswith("#"):
                assert safe_url(url) is not None, (name, url)


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_a_corpus_page_renders_to_no_element_or_scheme_the_paper_did_not_put_there(
    name: str,
) -> None:
    _check_markup(Paper.open(LoadedPaper(parsed(name), "local/x", "local/x")).markdown())


@pytest.mark.parametrize("name", ["short", "full", "authoryear", "xss"])
def test_a_fixture_renders_to_no_element_or_scheme_the_paper_did_not_put_there(name: str) -> None:
    document = parse_document(fixture_path(name).read_bytes(), "https://paperanchor.invalid/")
    markdown = Paper.open(LoadedPaper(document, "local/x", "local/x")).markdown()
    _check_markup(markdown)


HOSTILE_TEXT = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[x](javascript:alert(3))",
    "![y](javascript:alert(4))",
    "[link][ref]",
    "**bold** and __strong__ and *em* and _em_",
    "`code` and ``code``",
    "&lt;b&gt; and &#60;i&#62; and &amp;",
    "~~struck~~",
    "<http://evil.example/autolink>",
    "a\\*b and \\$5 and C:\\path",
    "$not math$ and $$not display$$",
    "[^1] a footnote reference",
    "| a | b |",
]
LINE_STARTS = ["# heading", "## heading", "- item", "+ item", "1. item", "2) item", "> quote",
               "[ref]: http://evil.example/def", "= setext", "    indented"]  # fmt: skip


def _page(paragraphs: list[str]) -> bytes:
    body = "".join(
        f"<div class='ltx_para' id='S1.p{i}'><p class='ltx_p'>{p}</p></div>"
        for i, p in enumerate(paragraphs, 1)
    )
    return (
        "<html><body><article class='ltx_document'><section class='ltx_section' id='S1'>"
        f"<h2 class='ltx_title'>1 Text</h2>{body}</section></article></body></html>"
    ).encode()


def _escaped_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@pytest.mark.parametrize("text", HOSTILE_TEXT + LINE_STARTS)
def test_markup_written_in_a_paper_renders_back_as_its_text(text: str) -> None:
    document = parse_document(_page([_escaped_html(text)]))
    markdown = Paper.open(LoadedPaper(document, "local/x", "local/x")).markdown()
    root = _rendered(markdown)
    paragraphs = [" ".join("".join(p.itertext()).split()) for p in root.iter("p")]
    assert " ".join(text.split()) in paragraphs, (markdown, paragraphs)
    _check_markup(markdown)
    assert [e.tag for e in root.iter() if isinstance(e.tag, str)] == [
        "html", "body", "h1", "h1", "p"
    ]  # fmt: skip


def test_links_and_images_of_other_schemes_are_dropped_and_their_text_kept() -> None:
    body = (
        "<a class='ltx_href' href='javascript:alert(1)'>click here</a> "
        "<a class='ltx_href' href='data:text/html,x'>data link</a> "
        "<a class='ltx_href' href='https://ok.example/a(b)c d'>fine link</a> "
        "<img src='javascript:alert(2)' alt='bad image'/> "
        "<img src='https://ok.example/x.png' alt='](javascript:alert(3))'/> "
        "[split<!-- a comment between two runs of text -->](javascript:alert(4))"
    )
    document = parse_document(_page([body]))
    markdown = Paper.open(LoadedPaper(document, "local/x", "local/x")).markdown()
    _check_markup(markdown)
    root = _rendered(markdown)
    links = [(a.get("href"), a.text_content()) for a in root.iter("a")]
    assert links == [("https://ok.example/a(b)c%20d", "fine link")]
    images = [img.get("src") for img in root.iter("img")]
    assert images == ["https://ok.example/x.png"]
    text = root.text_content()
    assert "click here" in text and "data link" in text
    assert "[split](javascript:alert(4))" in text


def test_escaping_is_idempotent_on_text_that_needs_none() -> None:
    plain = "Plain words, numbers 1.5 and [12] citations (2017) stay as they are."
    assert escape_text(plain) == plain


# the characters that take part in escaping, with letters, digits, spaces and brackets between
_MARKED_TEXT = st.text(alphabet="\\`*~$<&_[]()^#-+>!a1 \u00e9", max_size=12)


@settings(max_examples=3000, deadline=None)
@given(_MARKED_TEXT)
@example("[12] and (2017) ]x [x")
@example("a_b")
def test_text_the_parser_takes_as_its_own_markdown_is_what_escaping_returns(text: str) -> None:
    # the parser keeps a run of words without a match of ESCAPE_MAY_CHANGE as its Markdown
    # (inline.py): escaping must leave every such run as it is
    if re.search(ESCAPE_MAY_CHANGE, text) is None:
        assert escape_text(text) == text


@settings(max_examples=3000, deadline=None)
@given(_MARKED_TEXT)
@example("a_b _c")
@example("x ] [")
def test_a_long_text_is_escaped_as_its_short_pieces_are(text: str) -> None:
    # a long text is tested for marks character by character, a short one by a regex: spaces
    # before a text change nothing that escaping does, and make it long
    pad = " " * 60
    assert escape_text(pad + text) == pad + escape_text(text)
