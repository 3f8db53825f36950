"""Stop serving a request whose client has gone (a fetch nobody waits for is cancelled).

uvicorn tells an app that its client hung up only through `receive()`, and an endpoint that
does not read its body never calls it: without this middleware a request dropped after 0.5 s
kept its paper's fetch, and its place in the upstream's queue, for as long as the fetch took
(twenty dropped requests for unknown papers held a real request back 31 s at a 1.5 s gap).
Here the app runs in a task of its own while the middleware reads `receive()` on its behalf;
`http.disconnect` before the response is complete cancels the task, and the cancellation
reaches the library's single flight, which cancels a fetch once its last waiter is gone.
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# What metrics record for a request whose client left before the answer (nginx's convention);
# the status is never sent, the client is gone.
CLIENT_GONE = 499


class CancelOnDisconnect:
    """ASGI middleware: cancel the app's handling of an HTTP request when its client hangs up."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        inbox: asyncio.Queue[Message] = asyncio.Queue()
        started = complete = False

        async def watched_send(message: Message) -> None:
            nonlocal started, complete
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        handler = asyncio.ensure_future(self.app(scope, inbox.get, watched_send))

        async def listen() -> None:
            while True:
                message = await receive()
                await inbox.put(message)
                if message["type"] == "http.disconnect":
                    if not complete:
                        handler.cancel()
                    return

        listener = asyncio.ensure_future(listen())
        current = asyncio.current_task()
        try:
            await handler
        except asyncio.CancelledError:
            if current is not None and current.cancelling():
                handler.cancel()  # the server itself is stopping this request
                raise
            if not started:
                # Only the middlewares outside see this (metrics); uvicorn drops it.
                await send({"type": "http.response.start", "status": CLIENT_GONE, "headers": []})
        finally:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
