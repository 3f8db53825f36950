"""Markup in a paper, or in a request, renders as text on the pages (contract §8), checked in
Debian's Chromium with JavaScript on: no dialog opens, no element is injected.

Two papers: the fixture `xss` (markup in the title, an author, a section title and a figure
caption), and a harsher page made here with markup in every string the outline page shows —
abstract, TL;DR, contributions, section numbers — and a section id that tries to close its
attribute. The error page, which repeats what was asked for, is checked too.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.api.test_pages import PHONE, browser
from tests.conftest import FIXTURES

__all__ = ["browser"]

HOSTILE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>&lt;/title&gt;&lt;script&gt;alert(11)&lt;/script&gt;</title></head><body>
<article class="ltx_document">
<h1 class="ltx_title ltx_title_document">&lt;/title&gt;&lt;script&gt;alert(11)&lt;/script&gt;</h1>
<div class="ltx_authors"><span class="ltx_creator ltx_role_author"><span class="ltx_personname">
"&gt;&lt;svg onload=alert(12)&gt; Quote</span></span></div>
<div class="ltx_abstract"><h6 class="ltx_title ltx_title_abstract">Abstract</h6>
<p class="ltx_p">We show that &lt;iframe src="javascript:alert(13)"&gt;&lt;/iframe&gt; stays text.
The rest &lt;img src=x onerror=alert(14)&gt; is plain.</p></div>
<section id="S1" class="ltx_section">
<h2 class="ltx_title ltx_title_section">
<span class="ltx_tag ltx_tag_section">1 </span>Introduction</h2>
<div id="S1.p1" class="ltx_para"><p class="ltx_p">Our contributions are the following.</p>
<ul class="ltx_itemize">
<li class="ltx_item"><div class="ltx_para"><p class="ltx_p">
We propose &lt;script&gt;alert(15)&lt;/script&gt; as text.</p></div></li>
<li class="ltx_item"><div class="ltx_para"><p class="ltx_p">
We show &lt;a href="javascript:alert(16)"&gt;a link&lt;/a&gt; is not one.</p></div></li>
</ul></div>
</section>
<section id='S2"&gt;&lt;img src=x onerror=alert(17)&gt;' class="ltx_section">
<h2 class="ltx_title ltx_title_section">
<span class="ltx_tag ltx_tag_section">&lt;i&gt;2&lt;/i&gt; </span>
&lt;style&gt;body{display:none}&lt;/style&gt;Method</h2>
<div class="ltx_para"><p class="ltx_p">Text.</p></div>
<figure id="S2.F1" class="ltx_figure"><figcaption class="ltx_caption">
<span class="ltx_tag ltx_tag_figure">Figure 1: </span>&lt;script&gt;alert(18)&lt;/script&gt;
</figcaption></figure>
</section>
</article></body></html>
"""
INJECTED = "script, img, iframe, svg, style:not(head style), a[href^='javascript'], main b, main i"


@pytest.fixture(scope="module")
def hostile_server(
    tmp_path_factory: pytest.TempPathFactory, replay_server: Any
) -> Iterator[LiveServer]:
    papers = tmp_path_factory.mktemp("hostile")
    shutil.copy(FIXTURES / "html" / "xss.html", papers / "xss.html")
    (papers / "hostile.html").write_text(HOSTILE, encoding="utf-8")
    cache = tmp_path_factory.mktemp("cache")
    with live_server(settings_for(replay_server, cache, local_dir=papers)) as live:
        yield live


@pytest.fixture
def scripted(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """A page with JavaScript on (an injected script would run) and the dialogs it opened."""
    context = browser.new_context(viewport=PHONE)
    dialogs: list[str] = []
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        yield page, dialogs
    finally:
        context.close()


def shown(page: Any, selector: str) -> list[str]:
    return [text.strip() for text in page.locator(selector).all_text_contents()]


@pytest.mark.parametrize("paper", ["local/xss", "local/hostile"])
def test_every_paper_string_on_the_outline_page_is_text(hostile_server, scripted, paper):
    page, dialogs = scripted
    outline = page.request.get(f"{hostile_server.url}/{paper}/outline.json").json()

    page.goto(f"{hostile_server.url}/{paper}")
    page.wait_for_timeout(300)  # an onerror or onload handler would have fired by now

    assert dialogs == []
    assert page.locator(INJECTED).count() == 0
    assert page.locator("[onerror], [onload], [onclick]").count() == 0
    assert page.evaluate("document.scripts.length") == 0
    # each string is on the page exactly as the paper has it
    assert page.title() == f"{outline['title']} · paperanchor"
    assert shown(page, "h1") == [outline["title"]]
    assert shown(page, ".authors") == [", ".join(outline["authors"])]
    if outline["abstract"]:
        assert shown(page, ".abstract") == [outline["abstract"]]
    if outline["tldr"]:
        assert shown(page, ".tldr") == [outline["tldr"]]
    if outline["contributions"]:
        assert shown(page, ".contributions li") == outline["contributions"]
    sections = outline["sections"]
    links = shown(page, "ol.sections > li > a.section")
    assert links == [" ".join(filter(None, (s["number"], s["title"]))) for s in sections]
    # a section id stays inside its attributes: the element and its links are found by it
    for section in sections:
        item = page.locator("ol.sections > li").nth(sections.index(section))
        assert item.get_attribute("id") == section["id"]
        href = f"/{paper}/sections/{quote(section['id'], safe='/')}"
        assert item.locator("a.section").get_attribute("href") == href
        assert item.locator("a.markdown").get_attribute("href") == f"{href}.md"


# the section page shows the fixture's figure, and nothing else may be an image
SECTION_INJECTED = INJECTED.replace("img, ", "img:not([src$='/files/xss/fig-xss.png']), ")


@pytest.mark.parametrize("paper", ["local/xss", "local/hostile"])
def test_every_paper_string_on_the_section_pages_is_text(hostile_server, scripted, paper):
    page, dialogs = scripted
    outline = page.request.get(f"{hostile_server.url}/{paper}/outline.json").json()
    captions: list[str] = []

    for section in outline["sections"]:
        # the id that tries to close its attribute, in the path and in the page
        page.goto(f"{hostile_server.url}/{paper}/sections/{quote(section['id'], safe='')}")
        page.wait_for_timeout(300)  # an onerror or onload handler would have fired by now

        assert page.locator(SECTION_INJECTED).count() == 0, section["id"]
        assert page.locator("[onerror], [onload], [onclick]").count() == 0
        assert page.evaluate("document.scripts.length") == 0
        heading = " ".join(filter(None, (section["number"], section["title"])))
        assert shown(page, "article h1") == [heading]
        assert page.locator("article > section").first.get_attribute("id") == section["id"]
        assert shown(page, ".crumbs a.paper") == [outline["title"]]
        captions.extend(shown(page, "figcaption"))
    # each paper's one figure caption carries its script as text
    assert len(captions) == 1 and "<script>alert(" in captions[0], captions
    assert dialogs == []


def test_the_hostile_page_really_carries_markup(hostile_server, scripted):
    # guards the test above: the strings it checked do hold markup
    page, _ = scripted
    outline = page.request.get(f"{hostile_server.url}/local/hostile/outline.json").json()
    texts = [
        outline["title"],
        *outline["authors"],
        outline["abstract"],
        outline["tldr"],
        *outline["contributions"],
        *(s["title"] for s in outline["sections"]),
        *(s["number"] or "" for s in outline["sections"]),
        *(s["id"] for s in outline["sections"]),
    ]
    assert all(texts)
    assert sum("<" in text for text in texts) >= 8, texts


def test_markup_in_the_request_is_text_on_the_error_page(hostile_server, scripted):
    page, dialogs = scripted
    asked = "<img src=x onerror=alert(19)><script>alert(20)</script>"

    response = page.goto(f"{hostile_server.url}/{quote(asked, safe='')}")
    page.wait_for_timeout(300)

    assert response.status == 400
    assert dialogs == []
    assert page.locator(INJECTED).count() == 0
    assert asked in page.locator(".detail").inner_text()


@pytest.mark.parametrize(
    "route", ["/local/xss/sections/S2.md", "/local/hostile.md", "/local/hostile/outline.json"]
)
def test_markdown_and_json_answers_are_not_run_as_html(hostile_server, scripted, route):
    # the caption's <script> is in these bodies as text (the JSON's as it is, the Markdown's
    # with its `<` as `&lt;`, render/escape.py); a browser must not take them for HTML
    page, dialogs = scripted
    response = page.goto(f"{hostile_server.url}{route}")
    page.wait_for_timeout(300)

    assert response.status == 200
    assert ("<script>" if route.endswith(".json") else "&lt;script>") in response.text()
    assert dialogs == []
    assert page.evaluate("document.querySelectorAll('script, img, iframe, svg').length") == 0
