"""HEAD on every GET route (RFC 9110 §9.3.2): the GET's status and headers, no body.

FastAPI registers a route for the methods it is given and no more, so a HEAD was a 405 on every
route, `/healthz` included (a load balancer's health check, `curl -I`). Here a HEAD request is
routed as a GET and its body dropped on the way out; the answer's `Content-Length` stays the
GET's, as the RFC asks. Only the router sees a GET: the layers outside this one (metrics, logs,
the host check) see the HEAD it was.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """ASGI middleware: serve HEAD as GET, without the body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        ended = False

        async def without_body(message: Message) -> None:
            nonlocal ended
            if message["type"] == "http.response.body":
                if ended:
                    return
                ended = not message.get("more_body", False)
                message = {"type": "http.response.body", "body": b"", "more_body": not ended}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)


def allowed(methods: str) -> str:
    """An `Allow` header's value with HEAD wherever GET is (this server answers both)."""
    names = [name.strip() for name in methods.split(",") if name.strip()]
    if "GET" in names and "HEAD" not in names:
        names.insert(names.index("GET") + 1, "HEAD")
    return ", ".join(names)
