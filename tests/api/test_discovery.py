"""Discovery over REST (contract §4, §6) against the replay of the recorded arXiv API feeds,
Semantic Scholar answers and taxonomy: metadata, search, BibTeX, citations, categories,
trends, and the outline's metadata while the API is slow, down or rate-limited."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from paperanchor.api import models
from paperanchor.discovery import query
from paperanchor.discovery.atom import MAX_AUTHORS, parse_feed, search_page
from paperanchor.discovery.categories import categories, title_terms
from paperanchor.discovery.client import Discovery, api_url
from paperanchor.papers import Papers
from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.api.test_rest import error_of, json_of
from tests.conftest import free_port
from tests.discovery import hostile
from tests.discovery.recorded import TESTING_100, atom, recorded_entries
from tests.discovery.test_client import ABC, metadata_target, script_citations, target
from tests.replay import Reply, page, slow, status

pytestmark = pytest.mark.usefixtures("corpus")

JSON_TYPE = "application/json"
BIBTEX_TYPE = "text/plain; charset=utf-8"
LATEST = "public, max-age=3600"
# The clock of the servers here: the day after the newest paper of the 100-entry feed.
NOW = datetime(2025, 4, 8, 12, tzinfo=UTC)
ARXIV_PAGE = "2501.11120v1.arxiv.html"
ATOM = (("Content-Type", "application/atom+xml"),)


def clocked(library: Papers) -> Discovery:
    return Discovery(
        library.settings, upstream=library.sources.upstream, store=library.store, clock=lambda: NOW
    )


def discovery_server(replay: Any, cache: Path, papers_dir: Path, **overrides: Any) -> Any:
    settings = settings_for(replay, cache, local_dir=papers_dir, discovery=True, **overrides)
    return live_server(settings, discovery=clocked)


@pytest.fixture(scope="module")
def finder(
    replay_server: Any, papers_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with discovery_server(replay_server, tmp_path_factory.mktemp("cache"), papers_dir) as live:
        yield live


@pytest.fixture
def api(finder: LiveServer) -> Iterator[httpx.Client]:
    with finder.client() as client:
        yield client


def api_paths(replay: Any) -> list[str]:
    return [path for path in replay.paths() if path.startswith("/api/query")]


# -- metadata --------------------------------------------------------------------------------


def test_the_metadata_of_every_recorded_paper_is_its_fields_as_recorded(api, replay):
    replay.answer_ids_from_recordings()
    recorded = recorded_entries()
    assert len(recorded) == 132

    for paper, entries in recorded.items():
        response = api.get(f"/{paper}/metadata.json")
        assert response.status_code == 200, (paper, response.text)
        metadata = json_of(response, models.Metadata)
        assert metadata in entries, paper  # every field as one recording wrote it
        assert response.headers["cache-control"] == LATEST and response.headers["etag"]


@pytest.mark.parametrize(
    ("paper", "version", "title"),
    [
        ("2104.12255v1", 1, "0"),  # the paper titled 0: text, not a number
        (
            "1111.2011v2",
            2,
            "Quantum Criticality for Extended Nodes on a Bethe Lattice in the "
            "Large Connectivity Limit",
        ),
        ("hep-ex/0406020v1", 1, "Sparticle Reconstruction at LHC"),  # legacy and versioned
        ("quant-ph/0201082v1", 1, None),
        ("astro-ph/0601001", 1, None),  # legacy, bare
        ("arXiv:1202.0819", 1, None),
        ("https://arxiv.org/abs/1512.03385", 1, "Deep Residual Learning for Image Recognition"),
    ],
)
def test_legacy_and_versioned_references_get_their_recorded_entry(
    api, replay, paper, version, title
):
    metadata = json_of(api.get(f"/{paper}/metadata.json"), models.Metadata)

    assert metadata["latestVersion"] == version
    assert isinstance(metadata["title"], str) and metadata["title"]
    if title is not None:
        assert metadata["title"] == title
    assert metadata["absUrl"].startswith("http") and metadata["pdfUrl"].startswith("http")


def test_metadata_is_asked_once_and_kept(api, replay):
    first = api.get("/1207.7214/metadata.json")
    again = api.get("/1207.7214/metadata.json", headers={"If-None-Match": first.headers["etag"]})

    assert first.status_code == 200 and again.status_code == 304
    assert len(api_paths(replay)) <= 1  # none when an earlier test kept it


def test_arxivs_error_feed_is_a_bad_request_with_arxivs_words(api, replay):
    replay.script(metadata_target(replay, "2508.16191"), Reply(400, atom(ABC), ATOM))

    error = error_of(api.get("/2508.16191/metadata.json"))

    assert (error["code"], error["status"]) == ("bad-request", 400)
    assert error["detail"] == "arXiv API: incorrect id format for abc"
    # and "abc" itself never reaches arXiv: it is not a paper reference
    refused = error_of(api.get("/abc/metadata.json"))
    assert refused["code"] == "bad-request" and refused["detail"].startswith(
        'Not a paper reference: "abc"'
    )
    assert api_paths(replay) == [metadata_target(replay, "2508.16191")]


def test_a_local_document_has_no_metadata(api, replay):
    error = error_of(api.get("/local/full/metadata.json"))

    assert error["code"] == "bad-request" and "local/full is a local document" in error["detail"]
    assert replay.count() == 0


def test_a_hostile_feed_field_is_an_upstream_error_answered_at_once(api, replay):
    # a title of 140,000 <b> children (14 M characters), then more authors than any paper has
    for paper, body in [
        ("2508.16191", hostile.nested_title(140_000)),
        ("2508.16192", hostile.many_authors(MAX_AUTHORS + 1)),
    ]:
        body = body.replace(b"1706.03762v7", f"{paper}v1".encode())
        replay.script(metadata_target(replay, paper), Reply(200, body, ATOM))
        started = time.monotonic()
        error = error_of(api.get(f"/{paper}/metadata.json"))
        assert error["code"] == "upstream-error", error
        assert time.monotonic() - started < 5.0


# -- search ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "recording"),
    [
        (0, "arxivpy_2026_q_testing_s0_m10_bc5a6c384fe9.xml"),
        (10, "arxivpy_2026_q_testing_s10_m10_34e56e15aaac.xml"),
        (20, "arxivpy_2026_q_testing_s20_m10_348a237fecab.xml"),
    ],
)
def test_search_pages_through_the_recorded_testing_feed(api, replay, start, recording):
    response = api.get("/search.json", params={"q": "testing", "start": start})

    found = json_of(response, models.SearchPage)
    assert found == search_page(parse_feed(atom(recording)), "testing")
    assert (found["start"], found["total"], len(found["hits"])) == (start, 214881, 10)
    # the pages are the 100-entry feed's entries, ten at a time
    whole = parse_feed(atom(TESTING_100)).entries
    assert [hit["paper"] for hit in found["hits"]] == [
        e["paper"] for e in whole[start : start + 10]
    ]
    assert response.headers["cache-control"] == LATEST


@pytest.mark.parametrize(
    ("params", "sent", "count"),
    [
        ({"q": "au:del_maestro AND ti:checkerboard"}, "au:del_maestro AND ti:checkerboard", 1),
        (
            {"q": "au:del_maestro ANDNOT (ti:checkerboard OR ti:Pyrochlore)"},
            "au:del_maestro ANDNOT (ti:checkerboard OR ti:Pyrochlore)",
            10,
        ),
        (
            {"q": 'au:del_maestro AND ti:"quantum criticality"'},
            'au:del_maestro AND ti:"quantum criticality"',
            2,
        ),
        ({"category": "cs.lg", "limit": 5}, "cat:cs.LG", 5),
    ],
)
def test_field_syntax_is_passed_through_to_arxiv(api, replay, params, sent, count):
    found = json_of(api.get("/search.json", params=params), models.SearchPage)

    assert found["query"] == sent and len(found["hits"]) == count
    assert all(len(hit["summary"]) <= 150 for hit in found["hits"])


def test_a_search_returns_at_most_limit_hits_whatever_the_feed_holds(api, replay):
    asked = query.search_query("testing", limit=1)
    replay.script(target(api_url(replay.arxiv_api_url, asked.params())), page(atom(TESTING_100)))

    found = json_of(api.get("/search.json", params={"q": "testing", "limit": 1}), models.SearchPage)

    assert len(found["hits"]) == 1
    assert found["hits"][0]["paper"] == parse_feed(atom(TESTING_100)).entries[0]["paper"]


def test_a_search_with_no_result_is_an_empty_list(api, replay):
    asked = query.search_query("ti:zzyzzyvaqq")
    empty = page(atom("empty-feed-1234.1234.xml"))
    replay.script(target(api_url(replay.arxiv_api_url, asked.params())), empty)

    response = api.get("/search.json", params={"q": "ti:zzyzzyvaqq"})

    assert response.status_code == 200
    assert response.json() == {"query": "ti:zzyzzyvaqq", "total": 0, "start": 0, "hits": []}


@pytest.mark.parametrize(
    ("params", "detail"),
    [
        ({}, "A search needs a query (q), a category or a date range"),
        ({"q": "x", "limit": 51}, "limit must be from 1 to 50 (got 51)"),
        ({"q": "x", "limit": "many"}, 'limit must be an integer, got "many"'),
        (
            {"q": "x", "sort": "newest"},
            'sort must be relevance, submitted or updated (got "newest")',
        ),
        (
            {"q": "x", "from": "2024-02-01", "to": "2024-01-01"},
            "from (2024-02-01) is after to (2024-01-01)",
        ),
        ({"q": "x", "from": "yesterday"}, 'from must be a date YYYY-MM-DD (got "yesterday")'),
        ({"category": "cs.XY"}, 'Unknown arXiv category "cs.XY"; did you mean'),
        ({"q": "x\x00y"}, "q contains control characters"),
        ({"q": "x" * 1001}, "q is 1001 characters long (at most 1000)"),
        ({"q": "x", "start": 29_999, "limit": 2}, "start + limit must be at most 30000"),
    ],
)
def test_a_bad_search_is_a_bad_request_naming_the_argument(api, replay, params, detail):
    error = error_of(api.get("/search.json", params=params))

    assert error["code"] == "bad-request" and error["detail"].startswith(detail)
    assert replay.count() == 0


# -- BibTeX ----------------------------------------------------------------------------------


def test_a_papers_bibtex_is_text_with_its_own_caching(api, replay):
    response = api.get("/astro-ph/0601001.bib")

    assert response.status_code == 200
    assert response.headers["content-type"] == BIBTEX_TYPE
    assert response.headers["cache-control"] == LATEST
    bib = response.text
    assert bib.startswith("@misc{gould2006frequency,\n") and bib.isascii()
    assert "  eprint = {astro-ph/0601001},\n" in bib  # a legacy id keeps its slash
    assert "  archivePrefix = {arXiv},\n" in bib
    again = api.get("/astro-ph/0601001.bib", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304


def test_bibtex_errors_are_text_and_never_cached(api, replay):
    local = api.get("/local/full.bib")
    unknown = api.get("/2401.00001.bib")  # nothing recorded: the replay answers 404

    assert local.status_code == 400 and local.headers["content-type"] == BIBTEX_TYPE
    assert local.text == (
        "bad-request: local/full is a local document; the arXiv API has no metadata\n"
    )
    assert unknown.status_code == 502 and unknown.text.startswith("upstream-error: arXiv API")
    assert local.headers["cache-control"] == unknown.headers["cache-control"] == "no-store"


def test_a_bibliography_as_bibtex_takes_its_arxiv_papers_from_the_api(api, replay):
    replay.answer_ids_from_recordings()

    response = api.get("/2501.11120v1/references.bib")

    assert response.status_code == 200 and response.headers["content-type"] == BIBTEX_TYPE
    references = api.get("/2501.11120v1/references.json").json()["references"]
    assert response.text.count("@misc{") == len(references)
    # every arXiv id of the bibliography was asked for, twenty at a time at most
    asked = [p for p in api_paths(replay) if "id_list=" in p]
    ids = {r["arxiv"].split("v")[0] for r in references if r["arxiv"]}
    assert ids and len(asked) == -(-len(ids) // 20)


def _api_targets(replay: Any, references: list[dict[str, Any]]) -> list[str]:
    """The id_list requests a bibliography's BibTeX makes: its bare arXiv ids, 20 at a time."""
    ids = list(dict.fromkeys(r["arxiv"].split("v")[0] for r in references if r["arxiv"]))
    return [metadata_target(replay, *ids[at : at + 20]) for at in range(0, len(ids), 20)]


@pytest.mark.parametrize("outage", ["fails", "down"])
def test_a_bibliography_as_bibtex_keeps_its_parsed_entries_when_the_api_fails(
    replay, papers_dir, tmp_path, outage
):
    # a fresh server: nothing of the API is kept from the module's other tests
    closed = {"arxiv_api_url": f"http://127.0.0.1:{free_port()}/api/query"}
    overrides = closed if outage == "down" else {}
    with discovery_server(replay, tmp_path, papers_dir, **overrides) as live, live.client() as api:
        references = api.get("/2501.11120v1/references.json").json()["references"]
        for asked in _api_targets(replay, references):
            replay.script(asked, status(503))
        response = api.get("/2501.11120v1/references.bib")
        again = api.get("/2501.11120v1/references.bib")

    assert response.status_code == 200 and response.headers["content-type"] == BIBTEX_TYPE
    assert response.text.count("@misc{") == len(references)
    # the arXiv entries as parsed (the API's own form has a primaryClass and no note): their
    # id as the page prints it, and the page's printed text as their note, as every other entry
    bare = {r["arxiv"].split("v")[0] for r in references if r["arxiv"]}
    assert len(bare) > 20 and all(f"  eprint = {{{paper}}},\n" in response.text for paper in bare)
    assert "primaryClass" not in response.text
    assert response.text.count("\n  note = {") == len(references)
    # a later answer may hold the API's fields: not kept as final, and asked again next time
    assert response.headers["cache-control"] == "no-cache"
    assert again.status_code == 200 and again.text == response.text
    if outage == "fails":
        # each chunk asked three times (max_retries=2) by each of the two answers: nothing of
        # the failure was kept
        chunks = _api_targets(replay, references)
        assert len([p for p in api_paths(replay) if "id_list=" in p]) == 2 * 3 * len(chunks)


# -- citations, categories, trends -----------------------------------------------------------


def test_citations_of_a_recorded_paper(api, replay):
    script_citations(replay, "2304.05376", count=5)

    found = json_of(api.get("/2304.05376/citations.json", params={"limit": 5}), models.Citations)

    assert found["paper"] == "2304.05376" and found["count"] == 500
    assert len(found["citations"]) == 5
    bad = error_of(api.get("/2304.05376/citations.json", params={"limit": 101}))
    assert bad["detail"] == "limit must be from 1 to 100 (got 101)"


def test_the_categories_are_arxivs_taxonomy(api, replay):
    response = api.get("/categories.json")

    taxonomy = json_of(response, models.Taxonomy)
    assert taxonomy == categories() and len(taxonomy["categories"]) == 176
    assert response.headers["cache-control"] == "public, max-age=86400"
    assert replay.count() == 0  # package data: nothing is asked


def test_trends_count_the_100_entry_feeds_submissions_per_day(api, replay):
    asked, _ = query.trends_query("cs.SE", 30, today=NOW.date())
    replay.script(target(api_url(replay.arxiv_api_url, asked.params())), page(atom(TESTING_100)))

    found = json_of(api.get("/categories/cs.SE/trends.json", params={"days": 30}), models.Trends)

    entries = parse_feed(atom(TESTING_100)).entries
    window = [e for e in entries if "2025-03-10" <= e["published"][:10] <= "2025-04-08"]
    assert (found["since"], found["until"], found["days"]) == ("2025-03-10", "2025-04-08", 30)
    assert found["submissions"] == len(window) and found["total"] == 214881
    assert len(found["perDay"]) == 30
    by_day = {day["date"]: day["count"] for day in found["perDay"]}
    for entry in window:
        assert by_day[entry["published"][:10]] >= 1
    assert sum(by_day.values()) == len(window)
    assert found["complete"] is True  # the feed reaches back past the window's first day
    titles = [title_terms(entry["title"]) for entry in window]
    assert found["topTerms"] and all(
        term["count"] == sum(term["term"] in terms for terms in titles) >= 1
        for term in found["topTerms"]
    )


def test_an_unknown_category_is_a_bad_request_before_any_request(api, replay):
    error = error_of(api.get("/categories/cs.XY/trends.json"))

    assert error["detail"].startswith('Unknown arXiv category "cs.XY"') and replay.count() == 0
    days = error_of(api.get("/categories/cs.LG/trends.json", params={"days": 31}))
    assert days["detail"] == "days must be from 1 to 30 (got 31)"


def test_search_and_categories_are_never_taken_for_papers(api, replay):
    # {paper} may hold a slash, so these paths could be read as a paper's routes: they are not
    assert api.get("/search.json", params={"q": "testing"}).json()["total"] == 214881
    assert api.get("/categories.json").json()["categories"]
    # and no paper is `search` or `categories`: they are not references
    for path in ("/search/outline.json", "/categories/outline.json"):
        error = error_of(api.get(path))
        assert error["code"] == "bad-request"
        assert error["detail"].startswith("Not a paper reference")
    assert api.get("/search.bib").text.startswith('bad-request: Not a paper reference: "search"')


# -- the outline's metadata ------------------------------------------------------------------


def script_paper(replay: Any, idv: str) -> None:
    """`idv` on the arXiv-like route: a corpus page under an id whose metadata is recorded."""
    replay.script(f"/html/{idv}", page(replay.corpus_page(ARXIV_PAGE)))


def test_the_outline_carries_the_papers_metadata(api, replay):
    script_paper(replay, "2104.12255v1")

    response = api.get("/2104.12255v1/outline.json")

    outline = json_of(response, models.Outline)
    assert outline["metadata"] == api.get("/2104.12255v1/metadata.json").json()
    assert outline["metadata"]["title"] == "0"
    # contract §10: the editions available, from the API's latest version
    latest = outline["metadata"]["latestVersion"]
    assert outline["versions"] == list(range(1, latest + 1))
    # the metadata changes (a journal reference, a new version): kept an hour, not a year
    assert response.headers["cache-control"] == LATEST
    local = api.get("/local/full/outline.json").json()
    assert local["metadata"] is None and "versions" not in local


def outline_until_metadata(client: httpx.Client, path: str, seconds: float) -> tuple[Any, float]:
    """Ask for the outline until it has metadata: the outline and when it came."""
    started = time.monotonic()
    while True:
        outline = client.get(path).json()
        if outline["metadata"] is not None or time.monotonic() - started > seconds:
            return outline, time.monotonic() - started
        time.sleep(0.1)


def test_a_slow_api_leaves_the_outline_without_metadata_until_the_next(
    replay, papers_dir, tmp_path
):
    script_paper(replay, "2104.12255v1")
    feed = atom("arxivpy_2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml")
    # three seconds for the whole feed
    replay.script(metadata_target(replay, "2104.12255v1"), slow(feed, len(feed) // 3 + 1, 1.0))

    with discovery_server(replay, tmp_path, papers_dir) as live, live.client() as client:
        client.get("/2104.12255v1.md").raise_for_status()  # the paper is ready: no outline yet
        started = time.monotonic()
        first = client.get("/2104.12255v1/outline.json")
        answered = time.monotonic() - started
        later, filled = outline_until_metadata(client, "/2104.12255v1/outline.json", 15)

    assert first.status_code == 200 and first.json()["metadata"] is None
    assert answered < 2.5, answered  # a second for the metadata, not three
    # the metadata may still come: revalidated rather than kept, so the next one is asked
    assert first.headers["cache-control"] == "no-cache"
    assert later["metadata"]["title"] == "0" and filled < 10
    assert later["sections"] == first.json()["sections"]
    # the first fetch went on and was kept: one API request in all
    assert api_paths(replay) == [metadata_target(replay, "2104.12255v1")]


def test_outlines_queued_behind_the_api_gap_answer_at_once_and_share_one_request(
    replay, papers_dir, tmp_path
):
    replay.answer_ids_from_recordings()
    recorded = recorded_entries()
    bare = ("1201.4869", "1005.5383", "1303.6954", "1312.6177")
    papers = [f"{paper}v{recorded[paper][0]['latestVersion']}" for paper in bare]
    for idv in papers:
        script_paper(replay, idv)

    # the default gap of the arXiv API: a request 3 s after the end of the previous one
    server = discovery_server(replay, tmp_path, papers_dir, arxiv_api_gap_s=3.0)
    with server as live, live.client() as client:
        for idv in papers:
            client.get(f"/{idv}.md").raise_for_status()  # the papers are ready: no outline yet
        took, first = [], []
        for idv in papers:
            started = time.monotonic()
            first.append(client.get(f"/{idv}/outline.json").json())
            took.append(time.monotonic() - started)
        later = [outline_until_metadata(client, f"/{idv}/outline.json", 15) for idv in papers]
    print("\noutlines in a row:", ", ".join(f"{seconds:.3f} s" for seconds in took))

    # the API's turn was free for the first; the others' is 3 s off: none waits for it
    assert first[0]["metadata"]["paper"] == bare[0]
    assert [outline["metadata"] for outline in first[1:]] == [None, None, None]
    assert max(took[1:]) < 0.9, took  # a second each before
    assert [outline["metadata"]["paper"] for outline, _ in later] == list(bare)
    # the three queued behind the gap went out together when the turn came
    assert api_paths(replay) == [
        metadata_target(replay, papers[0]),
        metadata_target(replay, *papers[1:]),
    ]
    sent = [r for r in replay.requests if r.path.startswith("/api/query")]
    assert sent[1].at - sent[0].at >= 3.0


def test_a_rate_limited_api_is_waited_out_behind_the_outline(replay, papers_dir, tmp_path):
    script_paper(replay, "2104.12255v1")
    feed = atom("arxivpy_2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml")
    replay.script(metadata_target(replay, "2104.12255v1"), status(429, retry_after=2), page(feed))

    with discovery_server(replay, tmp_path, papers_dir) as live, live.client() as client:
        client.get("/2104.12255v1.md").raise_for_status()  # the paper is ready: no outline yet
        started = time.monotonic()
        first = client.get("/2104.12255v1/outline.json")
        answered = time.monotonic() - started
        later, filled = outline_until_metadata(client, "/2104.12255v1/outline.json", 15)

    assert first.status_code == 200 and first.json()["metadata"] is None and answered < 2.5
    assert later["metadata"]["paper"] == "2104.12255" and answered + filled >= 2.0
    # the Retry-After of 2 s was honoured before asking again
    api = [r for r in replay.requests if r.path.startswith("/api/query")]
    assert len(api) == 2 and api[1].at - api[0].at >= 2.0


def test_an_api_that_fails_leaves_metadata_null_and_the_next_outline_asks_again(
    replay, papers_dir, tmp_path
):
    script_paper(replay, "2104.12255v1")
    replay.script(metadata_target(replay, "2104.12255v1"), status(503))

    with discovery_server(replay, tmp_path, papers_dir) as live, live.client() as client:
        first = client.get("/2104.12255v1/outline.json")
        time.sleep(0.3)  # the retries (backoff 0.01 s) are over
        failed = len(api_paths(replay))
        feed = atom("arxivpy_2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml")
        replay.script(metadata_target(replay, "2104.12255v1"), page(feed))
        later, _ = outline_until_metadata(client, "/2104.12255v1/outline.json", 10)

    assert first.status_code == 200 and first.json()["metadata"] is None
    assert failed == 3  # max_retries=2; nothing kept of the failure
    assert later["metadata"]["title"] == "0"


def test_an_unreachable_api_costs_the_outline_nothing_but_its_metadata(
    replay, papers_dir, tmp_path
):
    script_paper(replay, "2104.12255v1")
    closed = f"http://127.0.0.1:{free_port()}/api/query"

    server = discovery_server(replay, tmp_path, papers_dir, arxiv_api_url=closed)
    with server as live, live.client() as client:
        started = time.monotonic()
        outline = client.get("/2104.12255v1/outline.json")
        elapsed = time.monotonic() - started
        search = client.get("/search.json", params={"q": "testing"})

    assert outline.status_code == 200 and outline.json()["metadata"] is None and elapsed < 2.5
    # the API is marked down: a search fails at once, saying so
    error = search.json()["error"]
    assert (search.status_code, error["code"]) == (503, "unavailable")
    assert "arXiv API" in error["detail"] and "unreachable" in error["detail"]
    assert "retry-after" in search.headers


def test_the_outline_without_discovery_stays_as_it_was(http, replay):
    # the module server of tests/api has discovery off (the replay's default)
    response = http.get("/2501.11120v1/outline.json")

    assert response.json()["metadata"] is None
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert api_paths(replay) == []


def test_the_outline_with_and_without_metadata_costs(api, replay):
    """Tokens (ceil(characters / 4)) of the compact outline with and without its metadata."""
    script_paper(replay, "1111.2011v2")
    outline = api.get("/1111.2011v2/outline.json").json()
    assert outline["metadata"] is not None
    with_it = len(json.dumps(outline, ensure_ascii=False, separators=(",", ":")))
    without = len(
        json.dumps({**outline, "metadata": None}, ensure_ascii=False, separators=(",", ":"))
    )
    print(f"\noutline tokens: {-(-with_it // 4)} with metadata, {-(-without // 4)} without")
    assert 0 < with_it - without < 4 * 1000  # the metadata costs under a thousand tokens
