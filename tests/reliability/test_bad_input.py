"""Bad input over REST and MCP: each gets its contract §9 error, nothing but the configured
upstreams is contacted (the replay's log, and the loopback guard), and nothing is cached.

Each case is one hostile or broken value, sent as a raw request target (so that no client
normalises `..` away) and as a tool call; `None` on a side means the case cannot be said there.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from paperanchor.parse import PARSER_VERSION
from paperanchor.refs import parse_ref
from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.reliability.report import record
from tests.replay import AR5IV, ARXIV, PDF, cache_entries

LONG = 100_000  # a 100 kB string
FITS = 8_000  # the longest request line many proxies pass on
DETAIL_MAX = 600  # an error detail never echoes a long input whole


def q(text: str) -> str:
    return quote(text, safe="")


@dataclass(frozen=True)
class Case:
    name: str
    rest: str | None  # the raw request target
    rest_code: str | None
    mcp: tuple[str, dict[str, Any]] | None
    mcp_code: str | None
    headers: dict[str, str] = field(default_factory=dict)


CRLF = "1706.03762\r\nX-Injected: 1"
RLO = "\u202e1706.03762"
ZWSP = "S1\u200b"
FULL = "local/full"
SECTION = "/local/full/sections/S1.md"
SEARCH = "/local/full/search.json?q="


def both(name: str, code: str, rest: str | None, tool: str, **arguments: Any) -> Case:
    return Case(name, rest, code, (tool, arguments), code)


CASES = [
    # -- path traversal in the paper and the anchor ------------------------------------------
    both("paper ../../etc/passwd", "bad-request", "/../../etc/passwd/outline.json",
         "outline", paper="../../etc/passwd"),
    both("paper %2e%2e%2f", "bad-request", "/%2e%2e%2f%2e%2e%2fetc%2fpasswd/outline.json",
         "outline", paper="%2e%2e%2f%2e%2e%2fetc%2fpasswd"),
    both("local/../../etc/passwd", "bad-request", "/local/../../etc/passwd/outline.json",
         "outline", paper="local/../../etc/passwd"),
    both("local/..%2f..%2fetc%2fpasswd", "bad-request", "/local/..%2f..%2fetc%2fpasswd.md",
         "read", paper="local/..%2f..%2fetc%2fpasswd", anchor="S1"),
    both("local/..", "bad-request", "/local/%2e%2e/outline.json", "outline", paper="local/.."),
    both("local/.hidden", "bad-request", "/local/.hidden/outline.json",
         "outline", paper="local/.hidden"),
    both("local/passwd, not in the folder", "not-found", "/local/passwd/outline.json",
         "outline", paper="local/passwd"),
    # Over REST a slash in the anchor makes the path no route's anchor: the paper part is then
    # not a reference. As a tool argument it is an anchor the paper does not have.
    Case("anchor ../../etc/passwd", "/local/full/sections/..%2f..%2fetc%2fpasswd.md",
         "bad-request", ("read", {"paper": FULL, "anchor": "../../etc/passwd"}), "not-found"),
    both("anchor ..", "not-found", "/local/full/sections/%2e%2e.md",
         "read", paper=FULL, anchor=".."),
    Case("cite anchor %2e%2e%2f", "/local/full/cite/%2e%2e%2f%2e%2e%2fetc%2fpasswd.json",
         "bad-request", ("cite", {"paper": FULL, "anchor": "../../etc/passwd"}), "not-found"),
    Case("figure anchor /etc/passwd", "/local/full/figures/%2fetc%2fpasswd.json",
         "bad-request", ("figure", {"paper": FULL, "anchor": "/etc/passwd"}), "not-found"),
    Case("reference ../../etc/passwd", "/local/full/references/..%2f..%2fetc%2fpasswd.json",
         "bad-request", ("references", {"paper": FULL, "id": "../../etc/passwd"}), "not-found"),
    # -- references that are URLs of other places --------------------------------------------
    both("http://127.0.0.1:22/", "bad-request", f"/{q('http://127.0.0.1:22/')}/outline.json",
         "outline", paper="http://127.0.0.1:22/"),
    both("file:///etc/passwd", "bad-request", f"/{q('file:///etc/passwd')}/outline.json",
         "outline", paper="file:///etc/passwd"),
    both("//evil.example/x", "bad-request", f"/{q('//evil.example/x')}/outline.json",
         "outline", paper="//evil.example/x"),
    both("another host's /abs/", "bad-request",
         f"/{q('https://evil.example/abs/1706.03762')}/outline.json",
         "outline", paper="https://evil.example/abs/1706.03762"),
    both("arxiv.org as a subdomain", "bad-request",
         f"/{q('https://arxiv.org.evil.example/abs/1706.03762')}/outline.json",
         "outline", paper="https://arxiv.org.evil.example/abs/1706.03762"),
    both("arxiv.org as a user name", "bad-request",
         f"/{q('https://arxiv.org@evil.example/abs/1706.03762')}/outline.json",
         "outline", paper="https://arxiv.org@evil.example/abs/1706.03762"),
    both("the landing page's redirect", "bad-request", f"/?paper={q('//evil.example/x')}",
         "outline", paper="//evil.example/x"),
    # an arXiv URL is reduced to its id: only the replay's /html and /ar5iv/html are asked
    both("an arxiv.org URL of an unknown paper", "not-found",
         f"/{q('https://arxiv.org/abs/1706.03762')}/outline.json",
         "outline", paper="https://arxiv.org/abs/1706.03762"),
    # -- empty and long strings --------------------------------------------------------------
    both("empty paper", "bad-request", "//outline.json", "outline", paper=""),
    Case("empty anchor", None, None, ("read", {"paper": FULL, "anchor": ""}), "not-found"),
    both("empty query", "bad-request", SEARCH, "search_paper", paper=FULL, query=""),
    both("blank query", "bad-request", SEARCH + "%20%0A%09", "search_paper",
         paper=FULL, query=" \n\t"),
    both("8 kB paper", "bad-request", f"/{'x' * FITS}/outline.json", "outline", paper="x" * FITS),
    both("8 kB anchor", "not-found", f"/local/full/sections/{'S' * FITS}.md",
         "read", paper=FULL, anchor="S" * FITS),
    both("8 kB query", "bad-request", SEARCH + "w+" * (FITS // 2), "search_paper",
         paper=FULL, query="w " * (FITS // 2)),
    both("100 kB paper", "bad-request", f"/{'1' * LONG}/outline.json",
         "outline", paper="1" * LONG),
    Case("100 kB anchor", f"/local/full/sections/{'S' * LONG}.md", "not-found",
         ("read", {"paper": FULL, "anchor": "é" * (LONG // 2)}), "not-found"),
    both("100 kB query", "bad-request", SEARCH + "w+" * (LONG // 2), "search_paper",
         paper=FULL, query="w " * (LONG // 2)),
    both("100 kB reference id", "not-found", f"/local/full/references/{'9' * LONG}.json",
         "references", paper=FULL, id="9" * LONG),
    # -- unicode and control characters ------------------------------------------------------
    both("full-width digits", "bad-request", f"/{q('１７０６.０３７６２')}/outline.json",
         "outline", paper="１７０６.０３７６２"),
    both("a legacy id in full-width digits", "bad-request",
         f"/{q('hep-th/９９０１００１')}/outline.json", "outline", paper="hep-th/９９０１００１"),
    both("NUL after the id", "bad-request", "/1706.03762%00/outline.json",
         "outline", paper="1706.03762\x00"),
    # A line break in a path matches no route (Starlette's path pattern stops at it): the
    # answer is that there is no such route. Nothing reaches a header either way.
    Case("CR LF and a header", f"/{q(CRLF)}.md", "not-found",
         ("read", {"paper": CRLF, "anchor": "S1"}), "bad-request"),
    both("right-to-left override", "bad-request", f"/{q(RLO)}/outline.json",
         "outline", paper=RLO),
    both("anchor with NUL", "not-found", "/local/full/sections/S1%00.md",
         "read", paper=FULL, anchor="S1\x00"),
    both("anchor with a zero-width space", "not-found", f"/local/full/sections/{q(ZWSP)}.md",
         "read", paper=FULL, anchor=ZWSP),
    both("emoji reference id", "not-found", f"/local/full/references/{q('😀')}.json",
         "references", paper=FULL, id="😀"),
    # -- out-of-range numbers ----------------------------------------------------------------
    *[both(f"maxTokens={value}", "bad-request", f"{SECTION}?maxTokens={q(str(value))}",
           "read", paper=FULL, anchor="S1", maxTokens=value)
      for value in (99, 100_001, 0, -1, 2**64, "many", 1.5)],
    *[both(f"limit={value}", "bad-request", f"{SEARCH}x&limit={q(str(value))}",
           "search_paper", paper=FULL, query="x", limit=value)
      for value in (0, 51, -1, 10**30, "ten")],
    *[Case(f"wait={value}", None, None, ("outline", {"paper": FULL, "wait": value}),
           "bad-request")
      for value in (-1, 61, 1e9, "NaN", "Infinity", "soon")],
]  # fmt: skip


@pytest.fixture(scope="module")
def guarded(
    replay_server: Any, papers_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, Path]]:
    cache = tmp_path_factory.mktemp("cache")
    with live_server(settings_for(replay_server, cache, local_dir=papers_dir)) as live:
        yield live, cache


def rest_get(server: LiveServer, target: str) -> tuple[int, dict[str, str], str]:
    """GET the raw target as it is: no client normalises `..` or re-encodes it."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.putrequest("GET", target, skip_accept_encoding=True)
        connection.endheaders()
        response = connection.getresponse()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return response.status, headers, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def rest_error(status: int, headers: dict[str, str], body: str) -> tuple[str, str]:
    """(code, detail) from any of the three wire forms."""
    content_type = headers.get("content-type", "")
    if content_type.startswith("application/json"):
        error = json.loads(body)["error"]
        assert error["status"] == status
        return error["code"], error["detail"]
    if content_type.startswith("text/markdown"):
        code, _, detail = body.rstrip("\n").partition(": ")
        return code, detail
    assert content_type.startswith("text/html"), content_type
    heading = body.split("<h1>", 1)[1].split("</h1>", 1)[0]
    detail = body.split('<p class="detail">', 1)[1].split("</p>", 1)[0]
    return heading.split(" ", 1)[1], detail


def mcp_call(server: LiveServer, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    with server.client() as client:
        response = client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            },
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


STATUS = {"bad-request": 400, "not-found": 404}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gets_its_spec_error_and_reaches_nothing_else(
    guarded, replay, loopback_only, case
):
    server, cache = guarded
    if case.rest is not None:
        status, headers, body = rest_get(server, case.rest)
        code, detail = rest_error(status, headers, body)
        assert (status, code) == (STATUS[case.rest_code], case.rest_code), body[:300]
        assert len(detail) < DETAIL_MAX
        assert headers["cache-control"] == "no-store" and "location" not in headers
        assert "x-injected" not in headers
        assert str(server.settings.local_dir) not in body and "root:" not in body
    if case.mcp is not None:
        result = mcp_call(server, *case.mcp)
        (content,) = result["content"]
        assert result["isError"] is True, content["text"][:300]
        code, _, detail = content["text"].partition(": ")
        assert code == case.mcp_code, content["text"][:300]
        assert len(detail) < DETAIL_MAX
        assert str(server.settings.local_dir) not in detail

    assert replay.requests == [] or case.name == "an arxiv.org URL of an unknown paper"
    assert_only_the_upstreams_were_asked(replay, loopback_only)
    server.stored()  # a paper answered before its store write is in the cache after this
    assert_nothing_but_local_parses_is_cached(cache)


def assert_only_the_upstreams_were_asked(replay: Any, elsewhere: list[str]) -> None:
    """Every request the replay saw is a configured base plus a normalised arXiv id, and the
    loopback guard saw no lookup or connection elsewhere."""
    assert elsewhere == []
    for request in replay.requests:
        base = next((b for b in (AR5IV, PDF) if request.path.startswith(b + "/")), ARXIV)
        assert request.path.startswith(base + "/"), request.path
        reference = request.path[len(base) + 1 :]
        assert reference.isascii() and parse_ref(reference).idv == reference, request.path


def assert_nothing_but_local_parses_is_cached(cache: Path) -> None:
    entries = cache_entries(cache)
    # "no such paper" is remembered for PAPERANCHOR_NOT_FOUND_TTL_S (contract §2), nothing else
    missing = {key: ttl for key, ttl in entries.items() if key.startswith("missing:")}
    assert all(ttl is not None and 0 < ttl <= 600 for ttl in missing.values()), missing
    keys = [key for key in entries if key not in missing]
    local = f"paper:{PARSER_VERSION}:local-sha256:"
    assert all(key.startswith(local) for key in keys), keys
    assert len(keys) <= 1  # local/full's parse, and nothing else


def test_an_out_of_range_prefer_wait_is_capped_or_ignored_over_rest(guarded, replay):
    # REST reads `wait` from the Prefer header, where RFC 7240 says a preference the server
    # cannot honour is ignored: docs/serving.md. MCP's `wait` argument is checked (above).
    server, _ = guarded
    with server.client() as client:
        for prefer, applied in [
            ("wait=61", "wait=60"),
            ("wait=1e9", "wait=60"),
            ("wait=-1", None),
            ("wait=NaN", None),
            ("wait=soon", None),
        ]:
            response = client.get("/local/full/outline.json", headers={"Prefer": prefer})
            assert response.status_code == 200
            assert response.headers.get("preference-applied") == applied


def test_the_table_covers_every_kind_of_bad_input(loopback_only):
    kinds = {
        "traversal": [c for c in CASES if ".." in c.name or "passwd" in c.name],
        "urls": [c for c in CASES if "://" in c.name or "//" in c.name or "arxiv" in c.name],
        "long": [c for c in CASES if "kB" in c.name],
        "ranges": [c for c in CASES if "=" in c.name],
    }
    record(
        "bad-input",
        cases=len(CASES),
        rest_requests=sum(c.rest is not None for c in CASES),
        mcp_calls=sum(c.mcp is not None for c in CASES),
        **{kind: len(cases) for kind, cases in kinds.items()},
    )
    assert all(kinds.values())


FILE_TARGETS = [
    "/files/../../etc/passwd",
    "/files/%2e%2e/%2e%2e/etc/passwd",
    "/files/..%2f..%2fetc%2fpasswd.png",
    "/files//etc/passwd.png",
    "/files/full/..%2f..%2f..%2fetc%2fhostname.png",
    "/files/full%00.png",
    "/files/%2fetc%2fpasswd",
]


@pytest.mark.parametrize("target", FILE_TARGETS)
def test_no_request_reads_a_file_outside_the_local_directory(
    guarded, replay, loopback_only, target
):
    # whatever route answers it (the page route, or a route serving the folder's images),
    # a path that climbs out of the folder is a 4xx error and carries no file
    server, cache = guarded
    status, headers, body = rest_get(server, target)

    assert 400 <= status < 500, (status, body[:200])
    assert "root:" not in body and headers["cache-control"] == "no-store"
    assert replay.requests == [] and loopback_only == []
    server.stored()
    assert_nothing_but_local_parses_is_cached(cache)


# -- a long request head that reaches the server in pieces -------------------------------------
# h11 checks its head limit only while a head is incomplete: a 100 kB target read in one piece
# passed, one split over several reads (a busy machine) was refused and reset mid-send.


def send_in_pieces(server: LiveServer, head: bytes, piece: int = 1024) -> bytes:
    """Send `head` a kilobyte at a time, as a slow network would; the answer, read whole."""
    import socket
    import time

    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        for start in range(0, len(head), piece):
            connection.sendall(head[start : start + piece])
            time.sleep(0.0005)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_100_kB_request_target_sent_in_pieces_gets_the_services_error(guarded):
    server, _ = guarded
    target = f"/{'1' * LONG}/outline.json".encode()
    answer = send_in_pieces(
        server, b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )

    status, body = answer.partition(b"\r\n")[0], answer.partition(b"\r\n\r\n")[2]
    assert status == b"HTTP/1.1 400 Bad Request", answer[:300]
    assert json.loads(body)["error"]["code"] == "bad-request"


def test_a_request_head_past_the_limit_is_answered_400_never_reset(guarded):
    from paperanchor.api.transport import MAX_HEAD_BYTES

    server, _ = guarded
    head = b"GET /" + b"1" * (2 * MAX_HEAD_BYTES) + b"/outline.json HTTP/1.1\r\n"
    for _ in range(3):
        answer = send_in_pieces(server, head)  # ConnectionResetError here is the failure
        assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), answer[:300]
