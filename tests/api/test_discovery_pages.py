"""Discovery on the HTML pages (contract §8) in Debian's Chromium: the outline page's arXiv
metadata and BibTeX link, the landing page's search box and its server-rendered results, a
hostile search answer shown as text."""

# The Chromium fixtures of test_pages.py are imported: pytest hands them over by parameter name.
# ruff: noqa: F811

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paperanchor.discovery import query
from paperanchor.discovery.client import api_url
from tests.api.live import LiveServer
from tests.api.test_discovery import discovery_server, script_paper
from tests.api.test_pages import PHONE, _screenshot, browser, phone, scripted  # noqa: F401
from tests.discovery.recorded import all_metadata, atom
from tests.discovery.test_client import metadata_target, target
from tests.replay import Reply, status

pytestmark = pytest.mark.usefixtures("corpus")


@pytest.fixture(scope="module")
def finder(
    replay_server: Any, papers_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with discovery_server(replay_server, tmp_path_factory.mktemp("cache"), papers_dir) as live:
        yield live


def test_the_outline_page_shows_the_arxiv_metadata_and_links_its_bibtex(finder, phone, replay):
    script_paper(replay, "1111.2011v2")  # a corpus page under a recorded id (its metadata)

    phone.goto(f"{finder.url}/1111.2011v2")

    recorded = all_metadata()["1111.2011"]
    metadata = phone.locator("dl.metadata")
    assert metadata.locator(".published").inner_text() == recorded["published"][:10]
    assert metadata.locator(".updated").inner_text() == f"{recorded['updated'][:10]} (v2)"
    assert metadata.locator(".categories").inner_text() == " ".join(recorded["categories"])
    assert metadata.locator(".categories code.primary").inner_text() == "cond-mat.str-el"
    doi = metadata.locator(".doi a")
    assert doi.inner_text() == recorded["doi"] == "10.1103/PhysRevB.85.115117"
    assert doi.get_attribute("href") == "https://doi.org/10.1103/PhysRevB.85.115117"
    assert metadata.locator(".journal").inner_text() == recorded["journalRef"]
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    _screenshot(phone, "outline-metadata-375px")

    phone.locator("a.bibtex").click()
    assert phone.url == f"{finder.url}/1111.2011v2.bib"
    assert phone.locator("body").inner_text().startswith("@misc{murray2011quantum,")


def test_a_local_paper_has_no_bibtex_link_nor_metadata(finder, phone, replay):
    phone.goto(f"{finder.url}/local/full")

    assert phone.locator("a.bibtex").count() == 0
    assert phone.locator("dl.metadata, .metadata-pending").count() == 0


def test_an_outline_whose_metadata_did_not_come_says_so(finder, phone, replay):
    script_paper(replay, "2104.12255v1")
    replay.script(metadata_target(replay, "2104.12255v1"), status(503))

    phone.goto(f"{finder.url}/2104.12255v1")

    assert phone.locator("dl.metadata").count() == 0
    assert "did not come in time" in phone.locator(".metadata-pending").inner_text()


def test_the_landing_page_searches_arxiv_and_pages_through_the_results(finder, phone, replay):
    phone.goto(f"{finder.url}/")
    phone.locator("input[name=q]").fill("testing")
    phone.locator("form.search button").click()

    assert phone.url == f"{finder.url}/?q=testing"
    hits = phone.locator("ol.hits > li")
    assert hits.count() == 10
    assert phone.locator("section.results h2").inner_text() == "Results 1–10 of 214,881"
    first = hits.first.locator("a.title")
    assert first.inner_text() == (
        "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
    )
    assert first.get_attribute("href") == "/2202.12139"
    assert phone.locator("input[name=q]").input_value() == "testing"  # kept in the box
    _screenshot(phone, "landing-search-375px")

    phone.locator("nav.pager a.next").click()
    assert phone.url == f"{finder.url}/?q=testing&start=10"
    assert phone.locator("section.results h2").inner_text() == "Results 11–20 of 214,881"
    phone.locator("nav.pager a.previous").click()
    assert phone.url == f"{finder.url}/?q=testing&start=0"
    assert phone.locator("script").count() == 0  # no JavaScript anywhere
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_bad_search_is_shown_on_the_landing_page_with_its_status(finder, http_get, replay):
    response = http_get("/", params={"q": "x", "start": 30_000})

    assert response.status_code == 400
    assert "bad-request" in response.text and "start must be from 0 to 29999" in response.text


HOSTILE_ENTRY = b"""<entry>
  <id>http://arxiv.org/abs/2101.00001v1</id>
  <updated>2021-01-01T00:00:00Z</updated>
  <published>2021-01-01T00:00:00Z</published>
  <title>&lt;script&gt;alert(1)&lt;/script&gt; "&gt;&lt;img src=x onerror=alert(2)&gt;</title>
  <summary>&lt;b&gt;bold&lt;/b&gt; &lt;a href="javascript:alert(3)"&gt;x&lt;/a&gt;</summary>
  <author><name>Eve &lt;iframe src=javascript:alert(4)&gt;</name></author>
  <category term="cs.CR&lt;svg onload=alert(5)&gt;" scheme="http://arxiv.org/schemas/atom"/>
  <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom"
    term="cs.CR&lt;svg onload=alert(5)&gt;"/>
</entry>"""


def hostile_feed() -> bytes:
    head, _, _ = atom("arxivpy_2026_q_testing_s0_m10_bc5a6c384fe9.xml").partition(b"<entry>")
    head = head.replace(b"<opensearch:totalResults>214881", b"<opensearch:totalResults>1")
    return head + HOSTILE_ENTRY + b"\n</feed>\n"


def test_a_hostile_search_answer_is_shown_as_text_and_runs_nothing(finder, scripted, replay):
    page, dialogs = scripted
    asked = query.search_query("hostile")
    answer = Reply(200, hostile_feed(), (("Content-Type", "application/atom+xml"),))
    replay.script(target(api_url(replay.arxiv_api_url, asked.params())), answer)

    page.goto(f"{finder.url}/?q=hostile")
    page.wait_for_timeout(200)  # a handler would have fired by now

    hit = page.locator("ol.hits > li")
    assert hit.count() == 1
    assert hit.locator("a.title").inner_text() == (
        '<script>alert(1)</script> "><img src=x onerror=alert(2)>'
    )
    assert '<a href="javascript:alert(3)">' in hit.locator("p.summary").inner_text()
    assert "Eve <iframe src=javascript:alert(4)>" in hit.locator(".muted").inner_text()
    assert page.locator("main script, main img, main iframe, main svg, main b").count() == 0
    assert dialogs == []


@pytest.fixture
def http_get(finder: LiveServer) -> Iterator[Any]:
    with finder.client() as client:
        yield client.get
