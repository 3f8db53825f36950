"""The landing, outline and section pages at 375 and 1280 px in Debian's Chromium (issue 25): what
a reader sees after the changes of this issue (the sample list without the escaping fixture,
an abstract's links, a table's spanning cells drawn once, a public server's refusal), nothing
wider than the window, and a screenshot of each kept in test-artifacts/ to look at."""

# The Chromium fixtures of test_pages.py are imported: pytest hands them over by parameter name.
# ruff: noqa: F811

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.api.test_pages import WIDTHS, _scriptless_within, browser, reader  # noqa: F401
from tests.replay import page as reply

CLOSED = "2401.16380v1"  # arXiv's non-exclusive licence, in its furniture


@pytest.fixture(scope="module")
def public(replay_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    body = replay_server.corpus_page(f"{CLOSED}.arxiv.html")
    replay_server.script(f"/html/{CLOSED}", reply(body))
    cache = tmp_path_factory.mktemp("public-cache")
    with live_server(settings_for(replay_server, cache, public=True)) as live:
        yield live


def test_the_landing_page_lists_the_sample_papers_only(server, reader):
    width, page = reader

    page.goto(f"{server.url}/")

    titles = page.locator("ul.papers.local li a").all_inner_texts()
    assert "Stable Paragraph Identifiers Across Manuscript Revisions" in titles
    assert not [title for title in titles if "<script>" in title]
    _scriptless_within(page, width, f"landing-{width}")


def test_the_outline_page_links_the_abstracts_address(server, reader, replay):
    width, page = reader

    page.goto(f"{server.url}/2501.11120v1")

    link = page.locator("p.abstract a")
    assert link.count() == 1 and link.get_attribute("href").startswith("https://github.com/")
    _scriptless_within(page, width, f"outline-2501.11120v1-{width}")


def test_the_section_page_draws_a_spanning_cell_once(server, reader):
    width, page = reader

    page.goto(f"{server.url}/local/full/sections/S4")

    header = page.locator("#S4\\.T1 thead tr").first.locator("th")
    assert header.all_inner_texts() == ["Method", "Features", "Edit type"]
    assert header.nth(2).get_attribute("colspan") == "2"
    assert page.locator("#S4\\.T1 tbody td", has_text="Ours").count() == 1
    _scriptless_within(page, width, f"section-full-S4-spans-{width}")


def test_a_public_servers_outline_of_a_non_exclusive_paper_says_why_it_has_no_text(public, reader):
    width, page = reader

    page.goto(f"{public.url}/{CLOSED}")

    notice = page.locator("p.withheld")
    assert "arXiv.org perpetual non-exclusive license" in notice.inner_text()
    assert notice.locator("a").get_attribute("href") == f"https://arxiv.org/abs/{CLOSED}"
    assert page.locator("ol.sections a.section").count() == 0
    _scriptless_within(page, width, f"outline-public-{CLOSED}-{width}")
    page.goto(f"{public.url}/{CLOSED}/sections/S1")
    assert "forbidden" in page.locator("body").inner_text()
    _scriptless_within(page, width, f"section-public-refused-{width}")
