"""The Host rule of contract §6 on a live server: a request whose `Host` is not one of the server's
names is refused 421 on every route, so a page elsewhere cannot read it through DNS rebinding."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server

MCP_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}

# (what is asked, how the answer's wire form is told apart)
ROUTES = [
    ("GET", "/local/short/outline.json", "json"),
    ("GET", "/local/short/sections/S1.md", "markdown"),
    ("GET", "/local/short", "html"),
    ("GET", "/", "html"),
    ("GET", "/healthz", "json"),
    ("GET", "/metrics", "json"),
    ("GET", "/docs", "html"),
    ("POST", "/mcp", "json"),
]

FOREIGN = [
    "evil.example",
    "evil.example:{port}",
    "127.0.0.1.evil.example:{port}",
    "localhost.evil.example",
    "[::1].evil.example",
    "[::1",
    "127.0.0.1:80:{port}",
    "",
]


def ask(
    server: LiveServer, method: str, path: str, host: str | None, origin: str | None = None
) -> httpx.Response:
    headers = dict(MCP_HEADERS) if path == "/mcp" else {}
    if host is not None:
        headers["Host"] = host
    if origin is not None:
        headers["Origin"] = origin
    with server.client() as client:
        return client.request(
            method, path, headers=headers, json=MCP_LIST if method == "POST" else None
        )


def assert_refused(answer: httpx.Response, form: str, status: int = 421) -> None:
    assert answer.status_code == status, answer.text[:300]
    assert answer.headers["cache-control"] == "no-store"
    if form == "json":
        error = answer.json()["error"]
        assert error["status"] == status and error["code"] == "bad-request"
        assert EXPLAINED[status] in error["detail"]
    elif form == "markdown":
        assert answer.headers["content-type"].startswith("text/markdown")
        assert answer.text.startswith("bad-request: ") and EXPLAINED[status] in answer.text
    else:
        assert answer.headers["content-type"].startswith("text/html")
        assert EXPLAINED[status] in answer.text


EXPLAINED = {421: "is not this server", 403: "may not call this server"}


@pytest.mark.parametrize(("method", "path", "form"), ROUTES)
@pytest.mark.parametrize("host", FOREIGN)
def test_a_foreign_host_is_refused_421_on_every_route(server, method, path, form, host):
    answer = ask(server, method, path, host.format(port=server.port))

    assert_refused(answer, form)
    assert "secret" not in answer.text and "Sparse Anchoring" not in answer.text


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST"]
)
@pytest.mark.parametrize(("method", "path", "form"), ROUTES)
def test_the_loopback_names_are_served_on_a_loopback_bind(server, method, path, form, host):
    answer = ask(server, method, path, host.format(port=server.port))

    assert answer.status_code == 200, answer.text[:300]


def test_a_request_without_host_is_refused(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(b"GET /local/short/outline.json HTTP/1.0\r\n\r\n")
        answer = connection.makefile("rb").read()

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 421 ")
    assert json.loads(body)["error"]["detail"].endswith(
        "no Host is not this server "
        f"({server.url}); set PAPERANCHOR_PUBLIC_URL to the name clients use"
    )


@pytest.mark.parametrize(("method", "path", "form"), ROUTES)
@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1.evil.example"])
def test_a_page_of_another_site_is_refused_403_with_the_servers_own_host(
    server, method, path, form, origin
):
    assert_refused(ask(server, method, path, None, origin), form, 403)


@pytest.mark.parametrize(("method", "path", "form"), ROUTES)
def test_the_servers_own_pages_may_call_it(server, method, path, form):
    answer = ask(server, method, path, None, f"http://localhost:{server.port}")

    assert answer.status_code == 200


@pytest.fixture(scope="module")
def public(
    replay_server: Any, papers_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A server configured as bound to every address, behind the public name papers.test."""
    cache = tmp_path_factory.mktemp("cache")
    settings = settings_for(
        replay_server,
        cache,
        local_dir=papers_dir,
        host="0.0.0.0",
        public_url="https://papers.test",
    )
    with live_server(settings) as live:
        yield live


@pytest.mark.parametrize(("method", "path", "form"), ROUTES)
def test_a_public_server_answers_its_public_name_and_refuses_loopback_names(
    public, method, path, form
):
    assert ask(public, method, path, "papers.test").status_code == 200
    assert ask(public, method, path, "Papers.Test:443").status_code == 200
    assert_refused(ask(public, method, path, f"127.0.0.1:{public.port}"), form)
    assert_refused(ask(public, method, path, "localhost"), form)
