"""Bearer tokens (contract §12, PAPERANCHOR_AUTH_TOKENS_FILE): REST, the pages and /mcp refuse a
request without a good token with 401 and `WWW-Authenticate`, serve one with it; /healthz and
the protected resource metadata stay open; loopback stays open unless the server is public.
Real HTTP on loopback, and the official MCP client with and without a token."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from paperanchor.api import auth
from paperanchor.api.auth import HashedTokens, hash_token, read_tokens_file
from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.replay import page

TOKEN = "pa-test-token-0123456789abcdef"
OTHER = "pa-second-token"
METADATA = "/.well-known/oauth-protected-resource"
OPEN = "2402.08939v1"  # CC BY 4.0: a public server serves its text


@pytest.fixture(scope="module")
def tokens_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auth") / "tokens.sha256"
    path.write_text(f"# the readers' tokens\n{hash_token(TOKEN)}\n\n{hash_token(OTHER)}  # Bo\n")
    return path


def guarded(
    replay_server: Any, papers_dir: Path, tmp_path_factory: pytest.TempPathFactory, **options: Any
) -> Iterator[LiveServer]:
    cache = tmp_path_factory.mktemp("auth-cache")
    settings = settings_for(replay_server, cache, local_dir=papers_dir, **options)
    with live_server(settings) as live:
        yield live


@pytest.fixture(scope="module")
def public(replay_server, papers_dir, tmp_path_factory, tokens_file) -> Iterator[LiveServer]:
    replay_server.script(f"/html/{OPEN}", page(replay_server.corpus_page(f"{OPEN}.arxiv.html")))
    yield from guarded(
        replay_server, papers_dir, tmp_path_factory, auth_tokens_file=tokens_file, public=True
    )


@pytest.fixture(scope="module")
def private(replay_server, papers_dir, tmp_path_factory, tokens_file) -> Iterator[LiveServer]:
    # not public: a client on this machine needs no token
    yield from guarded(replay_server, papers_dir, tmp_path_factory, auth_tokens_file=tokens_file)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    ("path", "wire"),
    [
        ("/local/full/outline.json", "json"),
        (f"/{OPEN}/sections/S1.md", "markdown"),
        ("/local/full", "html"),
        ("/", "html"),
        ("/metrics", "json"),
        ("/openapi.json", "json"),
    ],
)
def test_a_request_without_a_token_is_401_with_www_authenticate(public, path, wire):
    with public.client() as http:
        refused = http.get(path)
        wrong = http.get(path, headers=bearer("not-a-token"))
        served = http.get(path, headers=bearer(TOKEN))

    assert refused.status_code == 401 and wrong.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="paperanchor"')
    assert f'resource_metadata="{public.url}{METADATA}/mcp"' in challenge
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert wire in refused.headers["content-type"] or (
        wire == "markdown" and refused.headers["content-type"].startswith("text/markdown")
    )
    assert "unauthorized" in refused.text
    assert served.status_code == 200, served.text


def test_every_token_of_the_file_is_accepted(public):
    with public.client() as http:
        assert http.get(f"/{OPEN}.md", headers=bearer(OTHER)).status_code == 200
        assert http.get(f"/{OPEN}.md", headers=bearer(OTHER + "x")).status_code == 401


def test_healthz_and_the_resource_metadata_need_no_token(public):
    with public.client() as http:
        health = http.get("/healthz")
        metadata = http.get(f"{METADATA}/mcp")
        root = http.get(METADATA)

    assert health.status_code == 200
    assert metadata.status_code == 200 and root.json() == metadata.json()
    assert metadata.json()["resource"] == f"{public.url}/mcp"
    assert metadata.json()["bearer_methods_supported"] == ["header"]


def test_mcp_without_a_token_is_the_sdks_401_naming_the_metadata(public):
    with public.client() as http:
        refused = http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )

    assert refused.status_code == 401
    assert refused.json()["error"] == "invalid_token"
    assert (
        f'resource_metadata="{public.url}{METADATA}/mcp"' in (refused.headers["www-authenticate"])
    )


def mcp_read(url: str, token: str | None, paper: str = OPEN) -> tuple[Any, list[int]]:
    """The official client's `read` of S1, and the HTTP statuses its requests were answered."""
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    async def main() -> Any:
        headers = bearer(token) if token is not None else {}
        hooks = {"response": [record]}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30, event_hooks=hooks) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await client.call_tool("read", {"paper": paper, "anchor": "S1"})

    try:
        return asyncio.run(main()), statuses
    except BaseException as exc:  # the SDK's own error for an HTTP error answer
        return exc, statuses


def test_the_official_mcp_client_is_served_with_a_token_and_refused_without(public):
    served, _ = mcp_read(f"{public.url}/mcp", TOKEN)
    refused, statuses = mcp_read(f"{public.url}/mcp", None)

    assert not served.is_error and served.content[0].text.startswith("# 1 Introduction")
    assert isinstance(refused, BaseException) and set(statuses) == {401}  # the DELETE too


def test_loopback_needs_no_token_unless_the_server_is_public(private):
    with private.client() as http:
        assert http.get("/local/full/outline.json").status_code == 200
    served, statuses = mcp_read(f"{private.url}/mcp", None, "local/full")
    assert not served.is_error and 401 not in statuses


def test_the_tokens_file_holds_digests_one_a_line(tmp_path):
    good = tmp_path / "good"
    good.write_text(f"{hash_token(TOKEN).upper()}\n# comment\n")
    bad = tmp_path / "bad"
    bad.write_text(f"{hash_token(TOKEN)}\n{TOKEN}\n")  # a token itself, not its digest

    assert HashedTokens(read_tokens_file(good)).matches(TOKEN)
    with pytest.raises(ValueError, match="line 2: not a SHA-256 hex digest"):
        read_tokens_file(bad)
    with pytest.raises(ValueError, match="no token digest"):
        (tmp_path / "empty").write_text("# nobody yet\n")
        read_tokens_file(tmp_path / "empty")


def test_a_token_is_compared_with_every_digest_of_the_file_whichever_matches(monkeypatch):
    # constant time by construction, not by a clock (a timed assertion is noise on a busy
    # machine): a loop that stopped at a match would compare the first digest only
    tokens = [f"t{n}" for n in range(50)]
    verifier = HashedTokens(frozenset(bytes.fromhex(hash_token(token)) for token in tokens))
    compared: list[bytes] = []
    real = auth.hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        compared.append(b)
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", counting)
    answers = {}
    for token in (tokens[0], tokens[-1], "zzzz-nothing-like-it"):
        compared.clear()
        answers[token] = (verifier.matches(token), len(compared))

    assert answers == {
        tokens[0]: (True, 50),
        tokens[-1]: (True, 50),
        "zzzz-nothing-like-it": (False, 50),
    }


def test_hash_token_prints_the_line_of_each_token_on_stdin():
    printed = subprocess.run(
        [sys.executable, "-m", "paperanchor.cli", "hash-token"],
        input=f"{TOKEN}\n{OTHER}\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    assert printed.split() == [hash_token(TOKEN), hash_token(OTHER)]
