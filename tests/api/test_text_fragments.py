"""A Cite's textFragment (contract §10) in a real browser: Debian's Chromium, headless, opens the
corpus page (served by the replay as arXiv) at the fragment's text directive alone, without
the element id, and scrolls to that paragraph; a directive whose words are not on the page
does not move it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.test_pages import browser  # noqa: F401 - the Chromium fixture

PAPER = "2501.11120v1"
# paragraphs and a caption well down the page, so that a scroll to them is a scroll at all
ANCHORS = ["S3.SS1.SSS3.p1", "S3.SS2.SSS1.p1", "S3.F3"]


@pytest.fixture
def page(browser: Any, replay: Any) -> Iterator[Any]:  # noqa: F811
    """A browser page that may only reach the replay (the saved page names arXiv's assets)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    base = replay.base_url

    def only_replay(route: Any) -> None:
        if route.request.url.startswith(base):
            route.continue_()
        else:
            route.abort()

    context.route("**/*", only_replay)
    try:
        yield context.new_page()
    finally:
        context.close()


def _directive(fragment: str) -> str:
    """The fragment's text directive, without the element id before it."""
    assert fragment.startswith(f"https://arxiv.org/html/{PAPER}#")
    _id, directive = fragment.split(":~:", 1)
    assert directive.startswith("text=")
    return directive


def _top_of(page: Any, anchor: str) -> float:
    top: float = page.evaluate(
        "id => document.getElementById(id).getBoundingClientRect().top", anchor
    )
    return top


@pytest.mark.parametrize("anchor", ANCHORS)
def test_a_text_fragment_scrolls_the_browser_to_its_paragraph(
    http: httpx.Client, replay: Any, page: Any, anchor: str
) -> None:
    cited = http.get(f"/{PAPER}/cite/{anchor}.json").json()
    directive = _directive(cited["textFragment"])

    page.goto(f"{replay.arxiv_url}/{PAPER}#:~:{directive}", wait_until="load")
    page.wait_for_timeout(500)  # the directive is applied after load

    height = page.evaluate("window.innerHeight")
    assert page.evaluate("window.scrollY") > 0
    top = _top_of(page, anchor)
    bottom: float = page.evaluate(
        "id => document.getElementById(id).getBoundingClientRect().bottom", anchor
    )
    assert bottom > 0 and top < height  # the paragraph is on screen


def test_a_directive_whose_words_are_not_on_the_page_does_not_scroll(
    replay: Any, page: Any
) -> None:
    page.goto(
        f"{replay.arxiv_url}/{PAPER}#:~:text=quantum%20annealer%20satellite", wait_until="load"
    )
    page.wait_for_timeout(500)
    assert page.evaluate("window.scrollY") == 0
