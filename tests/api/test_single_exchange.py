"""POST /mcp answered in its request's task (api/single_exchange.py): byte for byte what the
SDK's stateless session manager answers, for the requests it takes and those it passes on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route

from paperanchor.api.single_exchange import SingleExchange
from paperanchor.app import create_app
from tests.api.conftest import settings_for
from tests.asgi import asgi_request

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
LEGACY = {**HEADERS, "mcp-protocol-version": "2025-06-18"}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


REQUESTS: list[tuple[dict[str, str], Any]] = [
    (LEGACY, call("read", {"paper": "local/full", "anchor": "S1"})),
    (HEADERS, call("outline", {"paper": "local/full"})),
    (LEGACY, call("read", {"paper": "local/full", "maxTokens": "many"})),
    (LEGACY, call("read", {"paper": "local/nothing-here"})),
    (LEGACY, call("read", {"paper": "local/full", "colour": "blue"})),
    (LEGACY, call("no_such_tool", {})),
    (LEGACY, {"jsonrpc": "2.0", "id": "list", "method": "tools/list"}),
    (LEGACY, {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"arguments": {}}}),
    (LEGACY, {"jsonrpc": "2.0", "id": 9, "method": "ping"}),
    (LEGACY, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    (LEGACY, [call("read", {"paper": "local/full"})]),
    ({**LEGACY, "accept": "text/html"}, call("read", {"paper": "local/full"})),
    ({**LEGACY, "content-type": "text/plain"}, call("read", {"paper": "local/full"})),
    (LEGACY, "{not json"),
    # plain calls, answered by the tool server itself: every kind of result and refusal
    ({**HEADERS, "mcp-protocol-version": "2024-11-05"}, call("outline", {"paper": "local/full"})),
    ({**HEADERS, "mcp-protocol-version": "2025-11-25"}, call("read", {"paper": "local/full"})),
    (LEGACY, call("cite", {"paper": "local/full", "anchor": "S1.p1"})),
    (LEGACY, call("cite", {"paper": "local/full", "text": "nowhere in it", "from": "v1"})),
    (LEGACY, call("search_paper", {"paper": "local/full", "query": "the"})),
    (LEGACY, call("figure", {"paper": "local/full", "anchor": "S4.F1", "image": True})),
    (LEGACY, call("equation", {"paper": "local/full", "anchor": "S2.E1"})),
    (LEGACY, call("references", {"paper": "local/full"})),
    (LEGACY, call("read", {"paper": "local/full", "anchor": "S9.nope"})),
    (LEGACY, call("read", {"anchor": "S1"})),
    (LEGACY, call("read", {"paper": "local/full", "maxTokens": 10**30})),
    (LEGACY, call("read", {"paper": "local/full", "maxTokens": True})),
    (LEGACY, call("read", {"paper": ["local/full"]})),
    (LEGACY, {**call("read", {}), "id": "a string id"}),
    (LEGACY, {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "read"}}),
    (
        LEGACY,
        {
            "jsonrpc": "2.0",
            "id": 11,
            "method": "tools/call",
            "params": {"name": "x", "arguments": None},
        },
    ),
    # not plain: to serve_one
    (LEGACY, {**call("read", {"paper": "local/full"}), "params": {"name": 5, "arguments": {}}}),
    (LEGACY, {**call("read", {}), "params": {"name": "read", "arguments": [1]}}),
    (
        LEGACY,
        {
            **call("read", {}),
            "params": {"name": "read", "arguments": {"paper": "local/full"}, "_meta": {}},
        },
    ),
]


async def asgi_post(app: Any, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
    """One POST /mcp straight to an ASGI app: status, content type, body."""
    sent = await asgi_request(
        app,
        "POST",
        "/mcp",
        [(b"content-length", str(len(body)).encode())]
        + [(key.encode(), value.encode()) for key, value in headers.items()],
        body,
    )
    start = sent[0]
    kind = dict(start["headers"]).get(b"content-type", b"").decode()
    return start["status"], kind, b"".join(m.get("body", b"") for m in sent[1:])


def test_each_request_is_answered_as_the_sdks_session_manager_answers_it(
    replay_server: Any, papers_dir: Path, tmp_path: Path
) -> None:
    settings = settings_for(replay_server, tmp_path, local_dir=papers_dir)("http://127.0.0.1:8000")
    app = create_app(settings)
    (route,) = [
        r for r in app.router.routes if isinstance(r, Route) and r.path == "/mcp" and not r.methods
    ]
    assert isinstance(route.app, SingleExchange)
    fast, sdk = route.app, route.app.app
    assert fast.plain_calls  # plain tools/call answered without serve_one

    async def main() -> list[tuple[Any, Any]]:
        async with app.router.lifespan_context(app):
            pairs = []
            for headers, request in REQUESTS:
                body = (
                    request.encode() if isinstance(request, str) else json.dumps(request).encode()
                )
                pairs.append(
                    (await asgi_post(fast, headers, body), await asgi_post(sdk, headers, body))
                )
            return pairs

    pairs = asyncio.run(main())
    for (_, request), (ours, theirs) in zip(REQUESTS, pairs, strict=True):
        assert ours == theirs, request
    read = json.loads(pairs[0][0][2])
    assert read["id"] == 7 and read["result"]["content"][0]["text"].startswith("#")
    assert pairs[2][0][0] == 200 and b"isError" in pairs[2][0][2]  # a rejected argument


def test_a_single_exchange_refuses_a_manager_with_sessions() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("x")
    server.streamable_http_app(json_response=True, stateless_http=False)
    with pytest.raises(ValueError, match="stateless"):
        SingleExchange(lambda *_: None, server.session_manager, server)  # type: ignore[arg-type]
