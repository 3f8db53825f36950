"""The ASGI app: REST, MCP at /mcp and the HTML pages over one service (contract §6–§9).

    metrics middleware              every request, by route template and status
      host check                    421 unless `Host` names this server (contract §6), every route
        rate-limit middleware       429 + Retry-After per client address (not /healthz, /metrics)
          bearer tokens             401 without one, with PAPERANCHOR_AUTH_TOKENS_FILE (api/auth.py)
            disconnect watcher      a client that hangs up cancels its request (api/disconnect.py)
              bug catcher           an unexpected exception -> 500 `internal`, traceback to log
                HEAD as GET         every GET route answers HEAD (api/head.py)
                  FastAPI router    /docs, /openapi.json, /mcp, REST routes, then the pages

The MCP session manager runs inside the app's lifespan, next to the runtime (runtime.py) whose
service it shares; the runtime is closed when the app shuts down.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from fastapi_offline import FastAPIOffline
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.transport_security import TransportSecuritySettings
from starlette.exceptions import HTTPException
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from paperanchor import __version__, warmup
from paperanchor.api import auth, mcp, pages, rest
from paperanchor.api.arguments import invalid_arguments
from paperanchor.api.disconnect import CancelOnDisconnect
from paperanchor.api.head import HeadAsGet, allowed
from paperanchor.api.headers import DefenceHeaders
from paperanchor.api.limits import ClientLimit, Rate, RateLimitMiddleware
from paperanchor.api.metrics import Metrics, RequestMetrics
from paperanchor.api.single_exchange import SingleExchange
from paperanchor.errors import BadRequest, NotFound, PaperAnchorError, internal
from paperanchor.refs import shown
from paperanchor.runtime import Runtime
from paperanchor.settings import Settings, get_settings

logger = logging.getLogger(__name__)

DESCRIPTION = """Read scientific papers one section at a time.

`{paper}` is an arXiv id (`1706.03762`, `1706.03762v7`, `hep-th/9901001v2`), an arXiv or ar5iv
URL, or `local/<name>`; it may contain a slash. Errors are `{"error": {code, status, detail}}`
on JSON routes and the text `<code>: <detail>` on Markdown routes. MCP (Streamable HTTP,
stateless) is served at `POST /mcp`.
"""


DOCS_ASSETS = "/docs-assets"


def create_app(
    settings: Settings | None = None,
    **parts: Any,
) -> FastAPI:
    """The whole HTTP service over one runtime (runtime.py), closed when the app shuts down.
    `parts` replace some of the runtime's (`Runtime.build`'s keywords: tests)."""
    settings = settings or get_settings()
    runtime = Runtime.build(settings, **parts)
    service = runtime.service
    # contract §12: bearer tokens, read (and checked) once, at start
    verifier = (
        auth.HashedTokens(auth.read_tokens_file(settings.auth_tokens_file))
        if settings.auth_tokens_file is not None
        else None
    )
    guard = (auth.auth_settings(settings), verifier) if verifier is not None else None
    tools = mcp.build_server(service, tools=settings.tools, auth=guard)
    mcp_app = tools.streamable_http_app(
        streamable_http_path="/mcp",
        json_response=True,
        stateless_http=True,
        transport_security=transport_security(settings),
        host=settings.host,
    )

    rate = Rate.parse(settings.rate_limit)
    limit = ClientLimit(rate, runtime.link) if rate is not None else None

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with runtime, tools.session_manager.run():
            app.state.warm_up_s = await _warm_up(runtime)
            await _route_once(app)
            try:
                yield
            finally:
                if limit is not None:
                    await limit.aclose()

    # Swagger UI's script and style come from the fastapi-offline package, served by this
    # server, so /docs works without a network (FastAPI's own page loads them from a CDN).
    # Swagger UI's validator badge would send the schema's URL to validator.swagger.io.
    app = FastAPIOffline(
        title="paperanchor",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
        openapi_url="/openapi.json",
        static_url=DOCS_ASSETS,
        swagger_ui_parameters={"validatorUrl": None},
    )
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    app.state.settings = settings
    app.state.runtime = runtime
    app.state.papers = runtime.papers
    app.state.service = service
    app.state.discovery = runtime.discovery
    app.state.tools = tools
    app.state.metrics = metrics = Metrics(runtime.papers)

    # A stateless server with JSON responses has no event stream to open: GET /mcp would hang
    app.router.add_route("/mcp", _mcp_not_a_stream, methods=["GET", "DELETE"])
    for route in mcp_app.routes:
        if isinstance(route, Route) and route.path == "/mcp":
            # a tool call answered in its request's task, not a session per request, inside
            # the SDK's own token guard when there is one
            sdk_guard = route.app if isinstance(route.app, RequireAuthMiddleware) else None
            exchange = SingleExchange(
                sdk_guard.app if sdk_guard else route.app, tools.session_manager, tools
            )
            if sdk_guard is not None:
                sdk_guard.app = exchange
            else:
                route.app = exchange
        elif isinstance(route, Route) and route.path.startswith(auth.METADATA_PATH):
            # RFC 9728's address for /mcp is …/oauth-protected-resource/mcp; clients that ask
            # the server's root first (the MCP authorization spec's fallback) find it too
            app.router.routes.append(
                Route(auth.METADATA_PATH, route.endpoint, methods=sorted(route.methods or ()))
            )
    app.router.routes.extend(mcp_app.routes)  # /mcp, ahead of the catch-all paper routes
    app.include_router(rest.routes())
    app.include_router(pages.router)  # last: GET /{paper} takes every path left

    app.add_exception_handler(PaperAnchorError, _on_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _on_invalid)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _on_http_exception)  # type: ignore[arg-type]

    app.add_middleware(HeadAsGet)  # innermost: only the router takes a HEAD for a GET
    app.add_middleware(_Bugs)  # the rate limit and the metrics see its 500s
    app.add_middleware(CancelOnDisconnect)  # a request whose client left stops (its 499 counted)
    if verifier is not None:
        # inside the rate limit: guessing tokens is limited like any request
        app.add_middleware(AuthContextMiddleware)
        app.add_middleware(auth.RequireToken, settings=settings, refuse=_refuse)
        app.add_middleware(
            AuthenticationMiddleware,
            backend=auth.TokenOrLoopback(verifier, public=settings.public),
        )
    if limit is not None:
        app.add_middleware(
            RateLimitMiddleware,
            limit=limit,
            refuse=_refuse,
            loopback=settings.rate_limit_loopback,
        )
    if settings.public_url is None and not _is_loopback(settings.host):
        logger.warning(
            "listening on %s without PAPERANCHOR_PUBLIC_URL: only requests with Host %s are "
            "answered, the others 421 (contract §6)",
            settings.host,
            settings.host,
        )
    app.add_middleware(HostCheck, settings=settings)  # before the rate limit counts the request
    app.add_middleware(RequestMetrics, metrics=metrics, routes=app.router.routes)
    app.add_middleware(DefenceHeaders, settings=settings)  # outermost: on every answer, 421s too
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
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        schemas.update(rest.error_schemas())
        schema["components"]["schemas"] = dict(sorted(schemas.items()))
        app.openapi_schema = schema
    return app.openapi_schema


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def allowed_hostnames(settings: Settings) -> frozenset[str]:
    """The names a request's `Host` may carry (contract §6): the public URL's host, on a loopback
    bind the loopback names. A page elsewhere that points its own name at this address (DNS
    rebinding) sends its own name, and is refused; ports are not compared."""
    names = {urlsplit(settings.public_base).hostname or ""}
    if _is_loopback(settings.host):
        names.update(LOOPBACK_NAMES)
    names.discard("")
    return frozenset(names)


def request_hostname(host: str) -> str | None:
    """`Host: [::1]:8000` -> `::1`, `Example.ORG:443` -> `example.org`; None when unreadable."""
    host = host.strip().lower()
    if host.startswith("["):
        name, bracket, port = host[1:].partition("]")
        if not bracket or (port and not port.startswith(":")):
            return None
        return name
    name, _, port = host.partition(":")
    if ":" in port:
        return None
    return name


async def _warm_up(runtime: Runtime) -> float | None:
    """warmup.warm_up in a worker thread (where requests parse); None when it failed, which
    is logged and does not keep the server from serving."""
    try:
        return await asyncio.to_thread(warmup.warm_up, None, runtime.store)
    except Exception:
        logger.exception("the warm-up failed; serving without it")
        return None


async def _route_once(app: FastAPI) -> None:
    """Route one GET /healthz past the middleware: FastAPI builds every route's state (its
    parameters and response fields, 53 pydantic adapters) on the first request it routes, about
    13 ms that the first reader of a fresh server would otherwise pay."""
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/healthz",
        "raw_path": b"/healthz",
        "query_string": b"",
        "root_path": "",
        "headers": [],
        "client": None,
        "server": None,
        "app": app,
        "state": {},
    }

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(_: Message) -> None:
        return None

    try:
        # the stack FastAPI's own middleware gives every request (its endpoints assert it)
        async with AsyncExitStack() as stack:
            scope["fastapi_middleware_astack"] = stack
            await app.router(scope, receive, send)
    except Exception:
        logger.exception("routing the first request at start failed; serving anyway")


def transport_security(_: Settings) -> TransportSecuritySettings:
    """The MCP SDK's own Host and Origin check is off: `HostCheck` applies the one rule to every
    route, /mcp included (the SDK's compares names case-sensitively, and only on /mcp)."""
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class HostCheck:
    """Refuses a request whose `Host` is not one of this server's names with 421 (contract §6), and
    one a browser sends from a page of another site (`Origin`) with 403, in the route's wire
    form, on every route: REST, /mcp, the pages, /healthz and /metrics."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.names = allowed_hostnames(settings)
        self.public = settings.public_base

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host, origin = _header(scope, b"host"), _header(scope, b"origin")
        error: PaperAnchorError | None = None
        where = f"{scope['method']} {shown(scope['path'])}"
        if host is None or request_hostname(host) not in self.names:
            named = "no Host" if host is None else f"Host {shown(host)!r}"
            error = _MisdirectedRequest(
                f"{where}: {named} is not this server ({self.public}); "
                "set PAPERANCHOR_PUBLIC_URL to the name clients use"
            )
        elif origin is not None and _origin_hostname(origin) not in self.names:
            error = _CrossSite(f"{where}: a page of {shown(origin)!r} may not call this server")
        if error is None:
            await self.app(scope, receive, send)
        else:
            await error_answer(error, scope["path"], _accept(scope))(scope, receive, send)


def _origin_hostname(origin: str) -> str | None:
    # `Origin: null` (a sandboxed frame, a file) and anything unreadable name no host
    try:
        return urlsplit(origin.strip()).hostname
    except ValueError:
        return None


# -- errors: each request gets the wire form of the route it asked for -----------------------


def error_answer(error: PaperAnchorError, path: str, accept: str | None) -> Response:
    """The error's wire form for this request: an HTML page, JSON or text (contract §9)."""
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
    if "allow" in answer.headers:
        answer.headers["Allow"] = allowed(answer.headers["allow"])
    return answer


class _MethodNotAllowed(BadRequest):
    """A `bad-request` with HTTP's own status for it, so clients and checkers see a 405."""

    status = 405


async def _mcp_not_a_stream(request: Request) -> Response:
    error = _MethodNotAllowed(
        f"{request.method} /mcp: this server speaks stateless Streamable HTTP with JSON "
        "responses; send requests with POST (there is no event stream to open)"
    )
    answer = rest.error_response(error, "json")
    answer.headers["Allow"] = "POST"
    return answer


class _CrossSite(BadRequest):
    """A `bad-request` with 403: a browser page of another site calls the server."""

    status = 403


class _MisdirectedRequest(BadRequest):
    """A `bad-request` with 421 Misdirected Request: the Host names another server (contract §6)."""

    status = 421


def _refuse(scope: Scope, error: PaperAnchorError) -> Response:
    return error_answer(error, scope["path"], _accept(scope))


def _accept(scope: Scope) -> str | None:
    return _header(scope, b"accept")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
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
