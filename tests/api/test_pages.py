"""HTML pages (contract §8) in a real browser: Debian's Chromium, headless, driven by Playwright's
Python package (`executable_path`, no browser download), at a phone's 375 px."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import ROOT, require_program

ARTIFACTS = ROOT / "test-artifacts"
PHONE = {"width": 375, "height": 812}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_program(importlib.util.find_spec("playwright") is not None, "playwright is missing")
    executable = chromium_path()
    require_program(executable is not None, "Chromium is not installed (apt-get install chromium)")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    """A page at 375 px with JavaScript off: the pages must not need it."""
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_the_outline_page_shows_the_title_and_every_top_level_section(server, http, phone):
    outline = http.get("/local/full/outline.json").json()

    phone.goto(f"{server.url}/local/full")

    assert phone.locator("h1").inner_text() == outline["title"]
    links = phone.locator("ol.sections > li > a.section")
    expected = [
        f"{section['number']} {section['title']}" if section["number"] else section["title"]
        for section in outline["sections"]
    ]
    assert links.all_inner_texts() == expected
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert hrefs == [f"/local/full/sections/{s['id']}" for s in outline["sections"]]
    markdown = phone.locator("ol.sections > li > span > a.markdown")
    markdown_hrefs = [markdown.nth(i).get_attribute("href") for i in range(markdown.count())]
    assert markdown_hrefs == [f"/local/full/sections/{s['id']}.md" for s in outline["sections"]]
    # nested sections, token counts and the conversion error of section 4
    assert phone.locator("#S2\\.SS1\\.SSS1 > a.section").inner_text() == (
        "2.1.1 Formulas as features"
    )
    assert "1 conversion error" in phone.locator("#S4").inner_text()
    assert re.search(r"figures\s*2", phone.locator("dl.counts").inner_text())
    # readable on a phone: nothing wider than the screen
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    ARTIFACTS.mkdir(exist_ok=True)
    phone.screenshot(path=str(ARTIFACTS / "outline-full-375px.png"), full_page=True)
    assert (ARTIFACTS / "outline-full-375px.png").stat().st_size > 10_000


def test_a_section_link_opens_its_page_and_its_markdown_link_the_markdown(server, phone):
    phone.goto(f"{server.url}/local/full")

    phone.locator("ol.sections > li > a.section", has_text="2 Model").click()

    assert phone.url == f"{server.url}/local/full/sections/S2"
    assert phone.locator("article h1").inner_text() == "2 Model"
    phone.go_back()
    phone.locator("li#S2 > span > a.markdown").click()
    assert phone.url == f"{server.url}/local/full/sections/S2.md"
    assert phone.locator("body").inner_text().startswith("# 2 Model\n")


def test_the_landing_form_opens_a_paper(server, phone):
    phone.goto(f"{server.url}/")

    phone.locator("input[name=paper]").fill("local/short")
    phone.locator("form.open button").click()

    assert phone.url == f"{server.url}/local/short"
    assert phone.locator("h1").inner_text() == "Sparse Anchoring for Incremental Document Alignment"


@pytest.fixture
def scripted(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """A phone page with JavaScript on, and the messages of the dialogs it opened: an injected
    script or handler would run there, and its `alert` would open one."""
    context = browser.new_context(viewport=PHONE)
    dialogs: list[str] = []
    try:
        page = context.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        yield page, dialogs
    finally:
        context.close()


def test_markup_in_a_paper_is_shown_as_text_and_runs_nothing(server, scripted):
    page, dialogs = scripted
    page.goto(f"{server.url}/local/xss")
    page.wait_for_timeout(200)  # an onerror handler would have fired by now

    assert page.locator("h1").inner_text() == "On Escaping: <script>alert(1)</script>"
    assert page.locator(".authors").inner_text() == "Eve <img src=x onerror=alert(2)> Mallory"
    assert "Titles with <b>bold</b>" in page.locator("ol.sections").inner_text()
    assert page.locator("script, img, main b").count() == 0
    assert page.title() == "On Escaping: <script>alert(1)</script> · paperanchor"
    assert dialogs == []


def test_a_paper_from_arxiv_links_each_section_to_the_same_anchor_on_its_source_page(
    server, http, replay
):
    page = http.get("/2501.11120v1").text
    outline = http.get("/2501.11120v1/outline.json").json()
    first = outline["sections"][0]["id"]

    # the public, versioned address (contract §4 permalink), not the upstream base it came from
    source = "https://arxiv.org/html/2501.11120v1"
    assert f'href="{source}#{first}"' in page
    assert f'href="{source}"' in page  # the paper's own source link
    assert replay.arxiv_url not in page
    assert f'href="/2501.11120v1/sections/{first}"' in page
    assert f'href="/2501.11120v1/sections/{first}.md"' in page
    # a local paper has no public source page to link to
    assert 'class="source"' not in http.get("/local/full").text


# -- the section page (contract §6) ------------------------------------------------------------

DESKTOP = {"width": 1280, "height": 900}
WIDTHS = {"375px": PHONE, "1280px": DESKTOP}
# TeX left as text: a control word, or a dollar that opens math
RAW_TEX = re.compile(r"\\[A-Za-z]+|\$")


@pytest.fixture(params=list(WIDTHS), ids=list(WIDTHS))
def reader(request: Any, browser: Any) -> Iterator[tuple[str, Any]]:
    """A page at a phone's and a desktop's width, JavaScript off."""
    context = browser.new_context(viewport=WIDTHS[request.param], java_script_enabled=False)
    try:
        yield request.param, context.new_page()
    finally:
        context.close()


def _screenshot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


def _scriptless_within(page: Any, width: str, name: str) -> None:
    """The page has no script, nothing wider than the window, and its screenshot is saved."""
    assert page.locator("script").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[width]["width"]
    _screenshot(page, name)


def _label(page: Any, which: str) -> str:
    """The text of the pager's link to the previous or next section, without its arrow."""
    text: str = page.locator(f"nav.pager.top a.{which} span.label").inner_text()
    return text


def test_a_section_page_draws_its_math_as_mathml_with_no_tex_left(server, reader):
    width, page = reader

    page.goto(f"{server.url}/local/full/sections/S2")

    assert page.locator("article h1").inner_text() == "2 Model"
    assert page.locator("article math").count() >= 20
    text = page.locator("article").inner_text()
    assert RAW_TEX.findall(text) == []
    # drawn as MathML, not as a run of letters: the fraction's numerator sits on its denominator
    fraction = page.evaluate(
        """() => {
            const f = document.querySelector('#S2\\\\.E1 mfrac');
            const [top, bottom] = [f.firstElementChild, f.lastElementChild].map(
                e => e.getBoundingClientRect());
            return {top: top.bottom, bottom: bottom.top, height: f.getBoundingClientRect().height};
        }"""
    )
    assert fraction["top"] <= fraction["bottom"] + 1 and fraction["height"] > 20, fraction
    _scriptless_within(page, width, f"section-full-S2-{width}")


def test_a_section_page_shows_its_figures_tables_lists_and_code(server, reader):
    width, page = reader

    page.goto(f"{server.url}/local/full/sections/S4")
    page.wait_for_load_state("load")

    images = page.locator("article figure img")
    assert images.count() == 3
    for i in range(images.count()):
        image = images.nth(i)
        assert image.get_attribute("src").startswith(f"{server.url}/files/full/")
        assert image.evaluate("img => img.complete && img.naturalWidth") > 0
    assert page.locator("#S4\\.F1 > figcaption").inner_text().startswith("Figure 1:")
    assert page.locator("#S4\\.T2 td").first.inner_text() == "Sentence rewrite"
    assert page.locator("#S4\\.I1 > li").count() == 3
    assert "def propagate(" in page.locator("article pre code").inner_text()
    _scriptless_within(page, width, f"section-full-S4-{width}")


def test_markup_in_a_paper_is_text_on_its_section_pages_and_runs_nothing(server, scripted):
    page, dialogs = scripted
    page.goto(f"{server.url}/local/xss/sections/S1")
    assert page.locator("article h1").inner_text() == "1 Titles with <b>bold</b>"
    assert page.title() == (
        "1 Titles with <b>bold</b> · On Escaping: <script>alert(1)</script> · paperanchor"
    )
    assert page.locator(".crumbs a.paper").inner_text() == "On Escaping: <script>alert(1)</script>"
    assert _label(page, "next") == "2 Captions"

    page.goto(f"{server.url}/local/xss/sections/S2")
    page.wait_for_timeout(200)  # an onerror handler would have fired by now
    caption = page.locator("#S2\\.F1 figcaption").inner_text()
    assert caption == "Figure 1: A grey square. <script>alert(3)</script>"
    assert _label(page, "previous") == "1 Titles with <b>bold</b>"
    assert page.locator("script, main b").count() == 0
    sources = page.locator("img").evaluate_all("images => images.map(i => i.src)")
    assert sources == [f"{server.url}/files/xss/fig-xss.png"]
    _screenshot(page, "section-xss-S2-375px")
    assert dialogs == []


def test_previous_and_next_lead_through_the_sections(server, phone):
    phone.goto(f"{server.url}/local/full/sections/S2")

    phone.locator("nav.pager.bottom a.next").click()
    assert phone.url == f"{server.url}/local/full/sections/S3"
    assert phone.locator("article h1").inner_text() == "3 Theory"

    phone.locator("nav.pager.top a.previous").click()
    assert phone.url == f"{server.url}/local/full/sections/S2"

    # a subsection's page: its parent above it, its sibling after it, its subsection a link
    phone.goto(f"{server.url}/local/full/sections/S2.1")
    assert phone.locator(".crumbs a.parent").get_attribute("href") == "/local/full/sections/S2"
    assert phone.locator("nav.pager.top a.next").get_attribute("href") == (
        "/local/full/sections/S2.SS2"
    )
    phone.locator("article h2 a.section-link").click()
    assert phone.url == f"{server.url}/local/full/sections/S2.SS1.SSS1"
    # the first page goes back to the abstract; the last one has no next
    phone.goto(f"{server.url}/local/full/sections/S1")
    assert _label(phone, "previous") == "Abstract"
    phone.goto(f"{server.url}/local/full/sections/A2")
    assert phone.locator("nav.pager.top a.next").count() == 0
    phone.locator("a.markdown").click()
    assert phone.url == f"{server.url}/local/full/sections/A2.md"


def test_each_paragraph_of_an_arxiv_paper_links_to_its_public_versioned_address(
    server, http, replay
):
    arxiv = http.get("/2501.11120v1/sections/S1")
    ar5iv = http.get("/2307.00235/sections/S1")

    assert arxiv.status_code == 200 and ar5iv.status_code == 200
    assert 'href="https://arxiv.org/html/2501.11120v1#S1.p1"' in arxiv.text
    assert re.search(
        r'href="https://ar5iv\.labs\.arxiv\.org/html/2307\.00235#S1\.SS1\.p1"', ar5iv.text
    )
    for page in (arxiv.text, ar5iv.text):
        # links name the public address, never the configured upstream (images come from it)
        links = re.findall(r'href="([^"]*)"', page)
        assert links and not [link for link in links if link.startswith(replay.base_url)]
    assert 'class="permalink"' not in http.get("/local/full/sections/S1").text


def test_the_section_route_answers_json_when_accept_prefers_it_and_html_otherwise(http):
    as_json = http.get("/local/full/sections/S2", headers={"Accept": "application/json"})
    as_html = http.get("/local/full/sections/S2", headers={"Accept": "text/html,*/*;q=0.8"})

    assert as_json.json() == http.get("/local/full/sections/S2.json").json()
    assert as_html.headers["content-type"] == "text/html; charset=utf-8"
    assert as_json.headers["vary"] == as_html.headers["vary"] == "Accept"
    again = http.get("/local/full/sections/S2", headers={"If-None-Match": as_html.headers["etag"]})
    assert again.status_code == 304
    # aliases and slugs name the same node; an unknown anchor is an HTML 404 that says so
    heading = '<h1><span class="number">2.1</span> Paragraph representation</h1>'
    assert heading in http.get("/local/full/sections/paragraph-representation").text
    assert heading in http.get("/local/full/sections/S2.1").text
    missing = http.get("/local/full/sections/<script>x")
    assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
    assert "&lt;script&gt;x" in missing.text and "<script>" not in missing.text


# -- the browser around it -------------------------------------------------------------------

LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def test_the_api_docs_work_with_the_network_blocked(server, browser):
    from urllib.parse import urlsplit

    context = browser.new_context(viewport=DESKTOP)  # Swagger UI is JavaScript
    blocked: list[str] = []

    def only_loopback(route: Any) -> None:
        if urlsplit(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_loopback)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/")
        page.locator("footer a", has_text="API").click()  # the footer's link, followed

        assert page.url == f"{server.url}/docs"
        page.locator(".opblock-summary-path").first.wait_for(timeout=30_000)
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        for path in ("/{paper}/outline.json", "/{paper}/sections/{anchor}.md", "/healthz"):
            assert any(shown.replace("\u200b", "") == path for shown in paths), paths
        _screenshot(page, "docs-offline-1280px")
    finally:
        context.close()
    assert blocked == []  # nothing even tried to leave the machine (no CDN, no validator)


def test_the_landing_page_lists_the_local_papers_and_those_read_recently(server, http, phone):
    http.get("/2501.11120v1/outline.json").raise_for_status()  # read one from "arXiv"

    phone.goto(f"{server.url}/")

    local = phone.locator("ul.papers.local li a")
    listed = {local.nth(i).get_attribute("href"): local.nth(i).inner_text()
              for i in range(local.count())}  # fmt: skip
    assert listed == {
        "/local/authoryear": "How Often Do Equations Change Between Preprint Versions?",
        "/local/full": "Stable Paragraph Identifiers Across Manuscript Revisions",
        "/local/labels": "Counting Revisions with Alphabetic Citations",
        "/local/ieeetran": "Adaptive Sampling for Low-Power Vibration Monitoring of Rail Bridges",
        "/local/manyauthors": "Shared Reading Notes for Long Technical Reports",
        "/local/revtex": "Damping of Spin Waves in Layered Granular Magnets",
        "/hep-th/9901001v2": "Sparse Anchoring for Incremental Document Alignment",
        "/local/short": "Sparse Anchoring for Incremental Document Alignment",
        # not /local/xss: a test fixture the folder's .unlisted leaves off (it opens by name)
    }
    recent = phone.locator("ul.papers.recent li a")
    assert recent.first.get_attribute("href") == "/2501.11120v1"
    assert "Tell me about yourself" in recent.first.inner_text()
    # the examples open a paper that is here, not one that may 404 offline
    assert phone.locator("input[name=paper]").get_attribute("placeholder") == "local/authoryear"
    _screenshot(phone, "landing-375px")
    phone.locator("ul.papers.local a", has_text="Stable Paragraph").click()
    assert phone.url == f"{server.url}/local/full"


def test_an_error_page_keeps_the_reference_that_was_typed(server, phone):
    phone.goto(f"{server.url}/")
    phone.locator("input[name=paper]").fill("1706.0376x")
    phone.locator("form.open button").click()

    assert "400 bad-request" in phone.locator("h1").inner_text()
    assert phone.locator("input[name=paper]").input_value() == "1706.0376x"

    phone.locator("input[name=paper]").fill("1706.99999")
    phone.locator("form.open button").click()
    assert phone.url == f"{server.url}/1706.99999"
    assert "404 not-found" in phone.locator("h1").inner_text()
    assert phone.locator("input[name=paper]").input_value() == "1706.99999"

    phone.goto(f"{server.url}/local/full/sections/nope")
    assert phone.locator("input[name=paper]").input_value() == "local/full"
    # a hostile reference stays text, and no longer than any real one
    phone.goto(f'{server.url}/?paper="><script>alert(1)</script>{"x" * 10_000}')
    typed = phone.locator("input[name=paper]").input_value()
    assert typed.startswith('"><script>alert(1)</script>x') and len(typed) == 500
    assert phone.locator("script").count() == 0
