"""One HTTP request straight to an ASGI app, no server and no socket: what the app sends."""

from __future__ import annotations

import asyncio
from typing import Any

Headers = list[tuple[bytes, bytes]]


async def asgi_request(
    app: Any, method: str, path: str, headers: Headers, body: bytes = b"", host: bytes = b""
) -> list[dict[str, Any]]:
    """The messages `app` sends for one request (`host` defaults to 127.0.0.1:8000)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", host or b"127.0.0.1:8000"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # the client stays until the answer is complete
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent
