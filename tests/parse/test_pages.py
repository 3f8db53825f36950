"""Real pages as they arrive: saved from a browser, LaTeXML-oxide, furniture, site chrome."""

from __future__ import annotations

import re
import time

import pytest
from lxml import etree

from paperanchor.paper import LoadedPaper
from paperanchor.parse import parse_document
from paperanchor.service import Paper, outline
from tests.corpus_pages import PAPER_PAGES, has_class, manifest, page_bytes, parsed

BROWSER_SAVED = ["html/2402.08939v1.arxiv.html", "html/2404.12241v1.arxiv.html"]
OXIDE = [
    "html/2307.00235.ar5iv.html",
    "html/2410.00260v2.arxiv.html",
    "html/2507.00150v1.arxiv.html",
    "html/2608.30667v1.arxiv.html",
]
SITE_CHROME = (
    "Report issue",
    "Report Issue",
    "Instructions for reporting errors",
    "Why HTML?",
    "arXiv is now an independent nonprofit!",
    "view the build logs",
    "Back to Abstract",
    "Download PDF",
)


def _clean(html: bytes) -> bytes:
    """The page as arXiv served it before its scripts ran: no report-errors footer, no
    package-alerts banner, no report buttons (a DOM edit, to compare trees with)."""
    root = etree.fromstring(html, etree.HTMLParser(encoding="utf-8", huge_tree=True))
    junk = root.xpath(
        "//footer[@id='footer'] | //*[contains(@class, 'package-alerts')] | "
        "//button[contains(@class, 'sr-only')] | //button[contains(@class, 'back-to-reference')]"
    )
    for element in junk:
        parent = element.getparent()
        if element.tail:  # keep the text that follows the element
            previous = element.getprevious()
            if previous is not None:
                previous.tail = (previous.tail or "") + element.tail
            else:
                parent.text = (parent.text or "") + element.tail
        parent.remove(element)
    return etree.tostring(root, method="html", encoding="utf-8")


@pytest.mark.parametrize("name", BROWSER_SAVED)
def test_a_browser_saved_page_gives_the_tree_of_the_clean_page(name: str) -> None:
    saved = parsed(name)
    clean = parse_document(_clean(page_bytes(name)), f"https://example.org/{name}")
    assert saved.title == clean.title and saved.authors == clean.authors
    assert saved.abstract == clean.abstract
    assert saved.blocks == clean.blocks
    assert saved.quality == clean.quality and saved.page_idv == clean.page_idv


@pytest.mark.parametrize("name", BROWSER_SAVED)
def test_a_browser_saved_page_reads_as_its_paper(name: str) -> None:
    document = parsed(name)
    row = manifest()[name]
    paper = Paper.open(LoadedPaper(document, f"local/{name}", f"local/{name}"))
    answer = outline(paper)
    title = etree.fromstring(page_bytes(name), etree.HTMLParser(encoding="utf-8")).xpath(
        f"//article//h1[{has_class('ltx_title_document')}]"
    )[0]
    assert answer["title"] == " ".join("".join(title.itertext()).split())
    assert "Report issue" not in answer["abstract"]
    # 2404.12241v1 has no abstract element (its "Executive summary" is a section)
    assert bool(answer["abstract"]) == bool(document.abstract)
    assert answer["counts"]["references"] == int(row["n_bibitems"])
    assert answer["tokens"] > 10_000  # the paper, not 300 tokens of help text
    assert document.page_idv == f"{row['arxiv_id']}{row['version']}"


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_no_site_chrome_reaches_any_node(name: str) -> None:
    paper = Paper.open(LoadedPaper(parsed(name), f"local/{name}", f"local/{name}"))
    texts = [paper.markdown(), *(u.text for u in paper.units())]
    for text in texts:
        for chrome in SITE_CHROME:
            assert chrome not in text, chrome


@pytest.mark.parametrize("name", OXIDE)
def test_the_generator_comment_says_which_latexml_wrote_the_page(name: str) -> None:
    assert (parsed(name).generator or "").startswith("oxide 0.7.")


def test_the_licence_and_watermark_of_a_2026_page_are_furniture_not_text() -> None:
    document = parsed("html/2604.15597v1.arxiv.html")
    assert document.license == "arXiv.org perpetual non-exclusive license"
    assert document.page_idv == "2604.15597v1"
    paper = Paper.open(LoadedPaper(document, "local/x", "local/x"))
    assert "2604.15597v1 [cs.CL]" not in paper.markdown()
    assert "License:" not in paper.markdown()


def _page(head: str = "", furniture: str = "", body: str = "") -> bytes:
    return (
        f"<!DOCTYPE html><html><head>{head}</head><body><div class='ltx_page_main'>{furniture}"
        "<div class='ltx_page_content'><article class='ltx_document'>"
        "<h1 class='ltx_title ltx_title_document'>T</h1><section class='ltx_section' id='S1'>"
        f"<h2 class='ltx_title'>1 A</h2><div class='ltx_para' id='S1.p1'><p class='ltx_p'>{body}"
        "</p></div></section></article></div></div></body></html>"
    ).encode()


WATERMARK = "<div id='infobox'><div id='watermark-tr'>{}</div></div>"


@pytest.mark.parametrize(
    ("html", "idv"),
    [
        (_page(head="<base href='/html/1706.03762v7/'>"), "1706.03762v7"),
        (_page(head="<base href='https://arxiv.org/html/hep-th/9901001v2/'>"), "hep-th/9901001v2"),
        (
            _page(furniture=WATERMARK.format("arXiv:2604.15597v1 [cs.CL] 17 Apr 2026")),
            "2604.15597v1",
        ),
        # the base wins over the watermark; a base without a version is no evidence
        (
            _page(
                head="<base href='/html/1706.03762v7/'>",
                furniture=WATERMARK.format("arXiv:1706.03762v5 [cs.CL]"),
            ),
            "1706.03762v7",
        ),
        (_page(head="<base href='/html/1706.03762/'>"), None),
        # text of the body is never furniture
        (_page(body="An earlier version appeared as arXiv:1706.03762v3 [cs.CL] 2017."), None),
        (_page(furniture=WATERMARK.format("arXiv:not-an-id [cs.CL]")), None),
        (_page(furniture=WATERMARK.format("no watermark here")), None),
    ],
)
def test_the_page_idv_comes_from_the_base_or_the_watermark_only(
    html: bytes, idv: str | None
) -> None:
    assert parse_document(html).page_idv == idv


def test_hostile_furniture_costs_bounded_time() -> None:
    # a 300 KB head of unterminated <base tags and a megabyte-long watermark
    head = "<base " + "<base x" * 43_000
    watermark = WATERMARK.format("arXiv:" + "9" * 1_000_000)
    started = time.perf_counter()
    document = parse_document(_page(head=head, furniture=watermark))
    assert time.perf_counter() - started < 5  # loose: the quadratic pattern took 66 s
    assert document.page_idv is None


def test_the_report_errors_footer_is_not_the_document_even_alone() -> None:
    # a page whose only ltx_document is the browser's report-errors footer has no paper in it
    html = (
        b"<html><body><footer id='footer' class='ltx_document'><div class='keyboard-glossary'>"
        b"<h2>Instructions for reporting errors</h2><p>We are continuing to improve HTML</p>"
        b"</div></footer></body></html>"
    )
    with pytest.raises(Exception, match="not a LaTeXML document"):
        parse_document(html)


def test_unknown_markup_degrades_to_readable_text() -> None:
    # element kinds the parser has no rule for keep their words in the Markdown
    body = (
        "known <custom-widget>widget words</custom-widget> <details><summary>summary words"
        "</summary>details words</details> <table><tr><td>plain cell</td></tr></table>"
        " <dl><dt>term words</dt><dd>definition words</dd></dl>"
    )
    paper = Paper.open(LoadedPaper(parse_document(_page(body=body)), "local/u", "local/u"))
    markdown = paper.markdown()
    for words in ("widget words", "summary words", "details words", "plain cell", "term words"):
        assert words in markdown, words
    assert "definition words" in markdown
    assert not re.search(r"<(?:custom|details|dl)", markdown)
