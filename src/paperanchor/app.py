"""The ASGI app: REST, MCP at /mcp and the HTML pages over one service (SPEC §6-§9).

    metrics middleware          every request, by route template and status
      rate-limit middleware     429 + Retry-After per client address (not /healthz, /metrics)
        disconnect watcher      a client that hangs up cancels its request (api/disconnect.py)
          bug catcher           an unexpected exception -> 500 `internal`, traceback to the log
            FastAPI router      /docs, /openapi.json, /mcp, REST routes, then the pages

The MCP session manager runs inside the app's lifespan, next to the library it shares.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from mcp.server.transport_security import TransportSecuritySettings
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from paperanchor import __version__
from paperanchor.api import mcp, pages, rest
from paperanchor.api.arguments import invalid_arguments
from paperanchor.api.disconnect import CancelOnDisconnect
from paperanchor.api.limits import Rate, RateLimitMiddleware, TokenBuckets
from paperanchor.api.metrics import Metrics, RequestMetrics
from paperanchor.errors import BadRequest, NotFound, PaperAnchorError, RateLimited, internal
from paperanchor.library import Library
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.refs import shown
from paperanchor.service import PaperService
from paperanchor.settings import Settings, get_settings

logger = logging.getLogger(__name__)

DESCRIPTION = """Read scientific papers one section at a time.

`{paper}` is an arXiv id (`1706.03762`, `1706.03762v7`, `hep-th/9901001v2`), an arXiv or ar5iv
URL, or `local/<name>`; it may contain a slash. Errors are `{"error": {code, status, detail}}`
on JSON routes and the text `<code>: <detail>` on Markdown routes. MCP (Streamable HTTP,
stateless) is served at `POST /mcp`.
"""


def create_app(settings: Settings | None = None, *, library: Library | None = None) -> FastAPI:
    """The whole HTTP service; the library is closed when the app shuts down."""
    settings = settings or get_settings()
    if library is None:
        library = Library(settings, parse=parse_document, parser_version=PARSER_VERSION)
    service = PaperService(rest.RecordingLoader(library), settings.public_base)
    tools = mcp.build_server(service)
    mcp_app = tools.streamable_http_app(
        streamable_http_path="/mcp",
        json_response=True,
        stateless_http=True,
        transport_security=transport_security(settings),
        host=settings.host,
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with library, tools.session_manager.run():
            yield

    app = FastAPI(
        title="paperanchor",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    app.state.settings = settings
    app.state.library = library
    app.state.service = service
    app.state.tools = tools
    app.state.metrics = metrics = Metrics(library)

    app.router.routes.extend(mcp_app.routes)  # /mcp, ahead of the catch-all paper routes
    app.include_router(rest.router)
    app.include_router(pages.router)  # last: GET /{paper} takes every path left

    app.add_exception_handler(PaperAnchorError, _on_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _on_invalid)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _on_http_exception)  # type: ignore[arg-type]

    app.add_middleware(_Bugs)  # innermost: the rate limit and the metrics see its 500s
    app.add_middleware(CancelOnDisconnect)  # a request whose client left stops (its 499 counted)
    rate = Rate.parse(settings.rate_limit)
    if rate is not None:
        app.add_middleware(RateLimitMiddleware, buckets=TokenBuckets(rate), refuse=_refuse)
    app.add_middleware(RequestMetrics, metrics=metrics, routes=app.router.routes)
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema without the 422 answers it documents for every route with parameters:
    rejected arguments are answered 400 `bad-request` here, and that is documented."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                operation.get("responses", {}).pop("422", None)
        for name in ("HTTPValidationError", "ValidationError"):
            schema.get("components", {}).get("schemas", {}).pop(name, None)
        app.openapi_schema = schema
    return app.openapi_schema


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection for a server bound to loopback: only its own names may call.

    A page on another site could otherwise make the browser post to 127.0.0.1/mcp. A server
    bound to a public address is reachable anyway, so the check would only get in the way.
    """
    if not _is_loopback(settings.host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    public = urlsplit(settings.public_base)
    if public.netloc and public.netloc not in hosts:
        hosts.append(public.netloc)
    origins = [f"http://{host}" for host in hosts[:3]]
    origins.append(f"{public.scheme}://{public.netloc}")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# -- errors: each request gets the wire form of the route it asked for -----------------------


def error_answer(error: PaperAnchorError, path: str, accept: str | None) -> Response:
    form = rest.wire_form(path, accept)
    if form == "html":
        return pages.error_page(error, path)
    return rest.error_response(error, form)


async def _on_error(request: Request, exc: PaperAnchorError) -> Response:
    return error_answer(exc, request.url.path, request.headers.get("accept"))


async def _on_invalid(request: Request, exc: RequestValidationError) -> Response:
    return await _on_error(request, invalid_arguments(exc.errors()))


async def _on_http_exception(request: Request, exc: HTTPException) -> Response:
    path = shown(request.url.path)
    error: PaperAnchorError
    if exc.status_code == 404:
        error = NotFound(f"No route {request.method} {path}")
    elif exc.status_code == 405:
        error = _MethodNotAllowed(f"{request.method} is not allowed on {path}")
    else:
        error = BadRequest(f"{request.method} {path}: {exc.detail}")
    answer = await _on_error(request, error)
    answer.headers.update(exc.headers or {})  # Allow, on a 405
    return answer


class _MethodNotAllowed(BadRequest):
    """A `bad-request` with HTTP's own status for it, so clients and checkers see a 405."""

    status = 405


def _refuse(scope: Scope, error: RateLimited) -> ASGIApp:
    return error_answer(error, scope["path"], _accept(scope))


def _accept(scope: Scope) -> str | None:
    for key, value in scope["headers"]:
        if key == b"accept":
            return str(value.decode("latin-1"))
    return None


class _Bugs:
    """Answers an unexpected exception as `internal` (500) and logs its traceback.

    Starlette's own handler re-raises after answering, and uvicorn then closes the connection,
    which a client reusing it sees as a reset on its next request.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception as exc:
            logger.error("%s %s failed", scope["method"], scope["path"], exc_info=exc)
            if started:
                raise
            answer = error_answer(internal(exc), scope["path"], _accept(scope))
            await answer(scope, receive, send)
