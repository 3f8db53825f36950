"""HTML pages (SPEC §8) in a real browser: Debian's Chromium, headless, driven by Playwright's
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
    assert hrefs == [f"/local/full/sections/{s['id']}.md" for s in outline["sections"]]
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


def test_a_section_link_leads_to_its_markdown(server, phone):
    phone.goto(f"{server.url}/local/full")

    phone.locator("ol.sections > li > a.section", has_text="2 Model").click()

    assert phone.url == f"{server.url}/local/full/sections/S2.md"
    assert phone.locator("body").inner_text().startswith("# 2 Model\n")


def test_the_landing_form_opens_a_paper(server, phone):
    phone.goto(f"{server.url}/")

    phone.locator("input[name=paper]").fill("local/short")
    phone.locator("form.open button").click()

    assert phone.url == f"{server.url}/local/short"
    assert phone.locator("h1").inner_text() == "Sparse Anchoring for Incremental Document Alignment"


def test_markup_in_a_paper_is_shown_as_text_and_runs_nothing(server, browser):
    # JavaScript on: an injected script would run here, and a dialog would open.
    context = browser.new_context(viewport=PHONE)
    dialogs: list[str] = []
    try:
        page = context.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(f"{server.url}/local/xss")
        page.wait_for_timeout(200)  # an onerror handler would have fired by now

        assert page.locator("h1").inner_text() == "On Escaping: <script>alert(1)</script>"
        assert page.locator(".authors").inner_text() == "Eve <img src=x onerror=alert(2)> Mallory"
        assert "Titles with <b>bold</b>" in page.locator("ol.sections").inner_text()
        assert page.locator("script, img, main b").count() == 0
        assert page.title() == "On Escaping: <script>alert(1)</script> · paperanchor"
    finally:
        context.close()
    assert dialogs == []


def test_a_paper_from_arxiv_links_each_section_to_the_same_anchor_on_its_source_page(
    server, http, replay
):
    page = http.get("/2501.11120v1").text
    outline = http.get("/2501.11120v1/outline.json").json()
    first = outline["sections"][0]["id"]

    source = f"{replay.arxiv_url}/2501.11120v1"
    assert f'href="{source}#{first}"' in page
    assert f'href="/2501.11120v1/sections/{first}.md"' in page
    # a local paper has no public source page to link to
    assert 'class="source"' not in http.get("/local/full").text
