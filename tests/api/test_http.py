"""HTTP behaviours of contract §6 and §9: ETag and 304, Cache-Control by what was asked for,
`Prefer: wait`, the per-client rate limit, and the metrics that count it all."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from paperanchor.api import rest
from tests.api.conftest import LEGACY, settings_for
from tests.api.live import live_server
from tests.replay import slow

IMMUTABLE = "public, max-age=31536000, immutable"
LATEST = "public, max-age=3600"

# -- ETag, If-None-Match, Cache-Control ------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "cache_control"),
    [
        ("/2501.11120v1/outline.json", IMMUTABLE),  # a version asked for and confirmed
        ("/2501.11120/outline.json", LATEST),  # the latest version may change
        ("/2501.11120v1/sections/S1.md", IMMUTABLE),
        ("/2501.11120v1", IMMUTABLE),  # the HTML page
        # ar5iv keeps one rendering per paper: the v1 asked for is not confirmed
        ("/2307.00235v1/references.json", LATEST),
        (f"/{LEGACY}/outline.json", "no-cache"),  # a version, but a local file can change
        ("/local/short/outline.json", "no-cache"),  # a local file can change: revalidate
    ],
)
def test_cache_control_follows_what_was_asked_for(http, replay, path, cache_control):
    response = http.get(path)

    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == cache_control
    assert re.fullmatch(r'"[0-9a-f]{32}"', response.headers["etag"])


def test_a_matching_if_none_match_is_304_without_a_body(http, replay):
    first = http.get("/2501.11120v1/outline.json")
    etag = first.headers["etag"]

    again = http.get("/2501.11120v1/outline.json", headers={"If-None-Match": etag})
    weak = http.get("/2501.11120v1/outline.json", headers={"If-None-Match": f'"x", W/{etag}'})
    stale = http.get("/2501.11120v1/outline.json", headers={"If-None-Match": '"other"'})

    assert (again.status_code, again.content) == (304, b"")
    assert again.headers["etag"] == etag and again.headers["cache-control"] == IMMUTABLE
    assert weak.status_code == 304
    assert stale.status_code == 200 and stale.content == first.content
    assert replay.count("/html/2501.11120v1") <= 1  # the paper came from the cache after


def test_etags_differ_between_representations_of_one_paper(http):
    etags = {
        http.get(path, headers={"Accept": accept}).headers["etag"]
        for path, accept in [
            ("/local/full/outline.json", "*/*"),
            ("/local/full", "text/html"),
            ("/local/full", "application/json"),
            ("/local/full.md", "*/*"),
        ]
    }
    # The page's JSON is the outline's JSON: same bytes, same tag.
    assert len(etags) == 3


def test_concurrent_requests_for_different_papers_get_their_own_headers(
    replay, papers_dir, tmp_path
):
    # Each answer's caching comes with the answer (service.Served), never from state shared
    # between requests. The confirmed version's page comes slowly, so the others are loaded
    # and answered while it loads; then every paper is asked again and again at once, through
    # routes that answer from a worker thread, so requests overtake one another there.
    body = replay.corpus_page("2501.11120v1.arxiv.html")
    replay.script("/html/2501.11120v1", slow(body, len(body) // 20, 0.05))
    expected = {
        "/2501.11120v1/outline.json": IMMUTABLE,
        "/2501.11120v1/search.json?q=model": IMMUTABLE,
        "/2307.00235v1/outline.json": LATEST,  # ar5iv: the version is not confirmed
        "/2307.00235v1/search.json?q=model": LATEST,
        "/2501.11120/references.json": LATEST,
        "/local/short/outline.json": "no-cache",
    }
    asked = [path for _ in range(3) for path in expected]

    def get_repeatedly(path: str) -> list[httpx.Response]:
        with httpx.Client(base_url=live.url, timeout=60, trust_env=False) as client:
            return [client.get(path) for _ in range(8)]

    with live_server(settings_for(replay, tmp_path, local_dir=papers_dir)) as live:
        with ThreadPoolExecutor(len(asked)) as pool:
            answers = list(pool.map(get_repeatedly, asked))
        with live.client() as client:
            alone = {path: client.get(path) for path in expected}

    for path, responses in zip(asked, answers, strict=True):
        for response in responses:
            assert response.status_code == 200, (path, response.text)
            assert (path, response.headers["cache-control"]) == (path, expected[path])
            # the same bytes as asked alone, so the same tag
            assert response.headers["etag"] == alone[path].headers["etag"]


def test_errors_are_never_cached(http):
    response = http.get("/local/full/sections/nope.md")

    assert response.status_code == 404
    assert response.headers["cache-control"] == "no-store" and "etag" not in response.headers


# -- Prefer: wait ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefer", "applied"),
    [
        ("wait=5", "wait=5"),
        ("respond-async, wait=0", "wait=0"),
        ("wait=120", "wait=60"),  # the most the service waits; said so
        ("wait=abc", None),  # a preference the server cannot read is ignored (RFC 7240)
        ("return=minimal", None),
        (None, None),
    ],
)
def test_prefer_wait_is_answered_with_preference_applied(http, prefer, applied):
    headers = {"Prefer": prefer} if prefer else {}
    response = http.get("/local/short/outline.json", headers=headers)

    assert response.status_code == 200
    assert response.headers.get("preference-applied") == applied
    assert response.json()["inferred"] == "ready"  # extractive: ready at once, whatever the wait


def test_the_page_in_json_honours_prefer_too(http):
    response = http.get("/local/short", headers={"Accept": "application/json", "Prefer": "wait=3"})
    assert response.headers["preference-applied"] == "wait=3"


# -- rate limit ------------------------------------------------------------------------------


def test_a_client_over_the_rate_limit_gets_429_with_retry_after(replay, papers_dir, tmp_path):
    settings = settings_for(
        replay, tmp_path, local_dir=papers_dir, rate_limit="3/minute", rate_limit_loopback=True
    )
    with live_server(settings) as live, live.client() as http:
        allowed = [http.get("/local/short/outline.json").status_code for _ in range(3)]
        as_json = http.get("/local/short/outline.json")
        as_markdown = http.get("/local/short/sections/S1.md")
        as_page = http.get("/local/short")
        as_mcp = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        health = http.get("/healthz")
        metrics = http.get("/metrics").text

    assert allowed == [200, 200, 200]
    assert as_json.status_code == 429
    error = as_json.json()["error"]
    assert error["code"] == "rate-limited" and "3/minute" in error["detail"]
    # 3 a minute: the next token is 20 s away
    assert 1 <= int(as_json.headers["retry-after"]) <= 20
    assert as_markdown.status_code == 429 and as_markdown.text.startswith("rate-limited: ")
    assert as_page.status_code == 429 and "rate-limited" in as_page.text
    assert as_page.headers["content-type"].startswith("text/html")
    # MCP's answer is JSON-RPC an MCP client reads (tests/api/test_agent_reads.py)
    assert as_mcp.status_code == 200 and as_mcp.json()["id"] == 1
    assert as_mcp.json()["error"]["message"].startswith("rate-limited: retry in ")
    assert health.status_code == 200  # monitoring is never limited
    assert 'status="429"' in metrics


def test_rate_limit_zero_disables_it(http):
    statuses = {http.get("/healthz").status_code for _ in range(5)}
    statuses |= {http.get("/local/short/cite/S1.json").status_code for _ in range(12)}
    assert statuses == {200}


# -- metrics ---------------------------------------------------------------------------------


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one Prometheus sample, 0 when absent."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        if head.split("{")[0] != name:
            continue
        if all(f'{key}="{val}"' in head for key, val in labels.items()):
            return float(value)
    return 0.0


def test_metrics_count_requests_by_route_template_cache_hits_and_upstream_fetches(http, replay):
    before = http.get("/metrics").text
    http.get("/2501.11120v1/sections/S1.md")
    http.get("/2501.11120v1/sections/S2.md")
    http.get("/local/full/sections/nope.md")
    http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    after = http.get("/metrics").text

    route = "/{paper:path}/sections/{anchor}.md"
    ok = sample(after, "paperanchor_http_requests_total", route=route, status="200")
    missing = sample(after, "paperanchor_http_requests_total", route=route, status="404")
    assert ok - sample(before, "paperanchor_http_requests_total", route=route, status="200") == 2
    assert (
        missing - sample(before, "paperanchor_http_requests_total", route=route, status="404") == 1
    )
    assert sample(after, "paperanchor_http_request_duration_seconds_count", route=route) >= 3
    assert sample(after, "paperanchor_cache_hits_total") > sample(
        before, "paperanchor_cache_hits_total"
    )
    assert sample(after, "paperanchor_paper_fetches_total") >= 1
    assert sample(after, "paperanchor_upstream_requests_total") >= 1
    assert sample(after, "paperanchor_http_requests_total", route="/mcp", method="POST") >= 1
    assert "/local/full" not in after  # raw paths never become labels


# -- the header parsers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "json"),
    [
        (None, False),
        ("*/*", False),  # curl: the page
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", False),  # a browser
        ("application/json", True),
        ("application/json, text/html;q=0.5", True),
        ("text/html;q=0.2, application/*", True),
        ("application/json;q=0", False),
    ],
)
def test_accept_decides_between_the_page_and_json(accept, json):
    assert rest.prefers_json(accept) is json


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ([], None),
        (["wait=10"], 10.0),
        (["handling=lenient", "respond-async; foo=bar, wait = 2.5"], 2.5),
        (['wait="7"'], 7.0),
        (["wait=-1"], None),
        (["wait=inf"], None),
        (["wait=600"], 60.0),
    ],
)
def test_prefer_wait_is_read_from_any_prefer_header(headers, wait):
    assert rest.prefer_wait(headers) == wait
