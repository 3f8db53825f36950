"""The habits of the web (issue 25, item 5): HEAD wherever GET is, `Accept: text/markdown` on a
page's address, a trailing slash, and arXiv's own paths typed with this server's host; and the
caching of a local file served under an arXiv id (item 6). Through a real server on loopback."""

from __future__ import annotations

import pytest

from tests.api.conftest import LEGACY

MARKDOWN_TYPE = "text/markdown; charset=utf-8"


@pytest.mark.parametrize(
    "path",
    [
        "/healthz",
        "/",
        "/local/full",
        "/local/full/outline.json",
        "/local/full/sections/S2",
        "/local/full/sections/S2.md",
        "/local/full.md",
        "/openapi.json",
        "/2501.11120v1/references.json",
    ],
)
def test_head_answers_every_get_route_with_its_headers_and_no_body(http, path):
    got = http.get(path)
    head = http.head(path)

    assert got.status_code == 200, got.text
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-length"] == str(len(got.content))
    assert head.headers.get("etag") == got.headers.get("etag")
    assert head.headers.get("cache-control") == got.headers.get("cache-control")


def test_head_answers_metrics_whose_body_changes_with_every_request(http):
    head = http.head("/metrics")

    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"].startswith("text/plain")
    assert int(head.headers["content-length"]) > 0


def test_head_of_an_unknown_paper_is_its_404_without_a_body(http):
    head = http.head("/local/no-such-paper/outline.json")

    assert head.status_code == 404 and head.content == b""


def test_a_405_allows_head_beside_get(http):
    response = http.post("/local/full/outline.json")

    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"


def test_accept_text_markdown_on_a_section_page_answers_its_markdown(http):
    asked = http.get("/local/full/sections/S2.SS1", headers={"Accept": "text/markdown"})
    route = http.get("/local/full/sections/S2.SS1.md")

    assert asked.status_code == 200
    assert asked.headers["content-type"] == MARKDOWN_TYPE
    assert asked.headers["vary"] == "Accept"
    assert asked.text == route.text and asked.text.startswith("## 2.1 Paragraph representation\n")
    # a browser's Accept, which names text/html first, still gets the page
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    page = http.get("/local/full/sections/S2.SS1", headers={"Accept": browser})
    assert page.headers["content-type"].startswith("text/html")


def test_accept_text_markdown_on_a_paper_page_answers_the_whole_paper(http):
    asked = http.get("/local/full", headers={"Accept": "text/markdown, text/html;q=0.5"})

    assert asked.headers["content-type"] == MARKDOWN_TYPE
    assert asked.text == http.get("/local/full.md").text


def test_an_unknown_anchor_asked_as_markdown_is_a_markdown_404(http):
    asked = http.get("/local/full/sections/S99", headers={"Accept": "text/markdown"})

    assert asked.status_code == 404
    assert asked.headers["content-type"] == MARKDOWN_TYPE
    assert asked.text.startswith("not-found: ")


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/local/short/", "/local/short"),
        ("/2501.11120v1/", "/2501.11120v1"),
        ("/abs/2501.11120", "/2501.11120"),
        ("/abs/2501.11120v1", "/2501.11120v1"),
        ("/html/2501.11120v1", "/2501.11120v1"),
        ("/html/2501.11120v1/", "/2501.11120v1"),
        ("/pdf/2501.11120v1", "/2501.11120v1"),
        ("/pdf/2501.11120v1.pdf", "/2501.11120v1"),
        ("/abs/hep-th/9901001v2", f"/{LEGACY}"),
    ],
)
def test_a_habitual_address_opens_the_paper_page(http, path, location):
    moved = http.get(path)

    assert moved.status_code == 308 and moved.headers["location"] == location
    opened = http.get(path, follow_redirects=True)
    assert opened.status_code == 200 and '<h1 id="title">' in opened.text


@pytest.mark.parametrize("path", ["//evil.example/", "/abs/not-an-id", "/pdf/"])
def test_an_address_that_names_no_paper_is_not_redirected(http, path):
    response = http.get(str(http.base_url).rstrip("/") + path)  # the path as given, `//` kept

    assert response.status_code == 400 and "location" not in response.headers


def test_a_local_file_under_an_arxiv_id_is_revalidated_not_immutable(http):
    first = http.get(f"/{LEGACY}/sections/S1.md")
    again = http.get(f"/{LEGACY}/sections/S1.md", headers={"If-None-Match": first.headers["etag"]})

    assert first.headers["cache-control"] == "no-cache"
    assert again.status_code == 304
    # a paper fetched from arXiv under a confirmed version never changes
    fetched = http.get("/2501.11120v1/sections/S1.md")
    assert fetched.headers["cache-control"] == "public, max-age=31536000, immutable"
