"""`POST /mcp` without a session per request: a tool call answered in the request's own task.

The SDK's stateless Streamable HTTP manager builds, for every POST of a 2025-era client, a
server transport with its memory streams and message router, a task in its task group, a
JSON-RPC dispatcher with a task group of its own, and a connection, then passes the request
through those streams to `ServerRunner.on_request` and its answer back (streamable_http_manager.
py `_handle_stateless_request`): in-process a warm `read` cost the server 2.7× the REST read, of
which the tool itself is a tenth. A stateless server with JSON answers needs none of it for a
request that is one JSON-RPC request: this app runs `tools/call` and `tools/list` with the
SDK's single-exchange driver (`mcp.server.runner.serve_one`, what it uses for 2026-era
requests) under a born-ready connection of the header's version, as the manager does, and
writes the answer as its transport writes it. Everything else (initialize, notifications,
batches, other versions, a request the SDK would refuse) goes to the SDK's app unchanged, its
body replayed.

A plain `tools/call` (params `name`, a text, and `arguments`, an object or absent) goes further:
`ToolServer.call_tool` straight away, its result put in the wire shape of the connection's
version (`serialize_server_result`, the sieve `ServerRunner._serialize` applies) and encoded
once. `serve_one`'s steps around it change nothing such a call answers here: its params are
valid (`validate_client_request`, the params model); the server's middleware is the SDK's
OpenTelemetry span (a no-op without an OpenTelemetry SDK: when one is set up, `tracing`, plain
calls go through `serve_one` and have their span),
its `requestState` seal (a plain call carries none, and no tool answers `input_required`) and
`mcp.call_shape` (which lets a plain call through); no cache hint is set; no tool takes a
context (each call gets one built at start). In-process this brought a warm `read` from 1.16×
the REST read's server cost to 0.65× (0.27 to 0.16 ms).

Hooks into the SDK beyond its documented calls, pinned by tests/api/test_sdk_hooks.py and the
mcp pin in pyproject.toml: `serve_one`, `Connection.from_envelope`, the manager's
`_lifespan_state`, `handler_exception_to_error_data`, and for plain calls the server's
middleware and cache hints (`Server.middleware`, `Server.cache_hints`) and the result sieve
`mcp_types.methods.serialize_server_result`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.connection import Connection
from mcp.server.request_state import RequestStateBoundary
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCResponse,
    TextContent,
)
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from opentelemetry import trace
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from paperanchor.api.mcp import ToolServer, call_shape

log = logging.getLogger(__name__)

# The requests answered here: a session would add nothing to them.
SINGLE = frozenset({"tools/call", "tools/list"})
_JSON = "application/json"
_CALL_PARAMS = frozenset({"name", "arguments"})


@dataclass
class _Exchange:
    """The dispatch context of one request with no back channel (JSON answers carry none)."""

    request_id: str | int
    message_metadata: MessageMetadata
    transport: TransportContext = field(
        default_factory=lambda: TransportContext(kind="streamable-http", can_send_request=False)
    )
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        """No request can reach the client from a JSON answer."""
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        """Dropped, as the SDK's JSON-answer transport drops them."""

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Dropped: a JSON answer has no stream to carry progress."""


# the tracer providers of the OpenTelemetry API alone, whose spans record nothing
_NO_SDK = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)


def tracing() -> bool:
    """Whether an OpenTelemetry SDK is set up to record spans (`opentelemetry-instrument`, or a
    TracerProvider the operator set): then a plain call goes through `serve_one`, whose
    middleware gives it the span every other MCP request has. Without one, the API's provider
    is its proxy or no-op, the span would be a no-op, and the plain call skips it."""
    return not isinstance(trace.get_tracer_provider(), _NO_SDK)


class SingleExchange:
    """The /mcp endpoint: `SINGLE` requests in their own task, the rest to the SDK's `app`."""

    def __init__(
        self, app: ASGIApp, manager: StreamableHTTPSessionManager, tools: ToolServer
    ) -> None:
        if not (manager.stateless and manager.json_response):
            raise ValueError("a single exchange needs a stateless manager with JSON answers")
        self.app = app
        self.manager = manager
        self.tools = tools
        self.security = TransportSecurityMiddleware(manager.security_settings)
        # a plain call skips serve_one's steps only while each of them would change nothing
        middleware = manager.app.middleware
        self.plain_calls = (
            not manager.app.cache_hints
            and len(middleware) == 3
            and isinstance(middleware[0], OpenTelemetryMiddleware)
            and isinstance(middleware[1], RequestStateBoundary)
            and middleware[2] is call_shape
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        has_json, _ = check_accept_headers(request)
        if (
            (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS)
            or not has_json
            or await self.security.validate_request(request, is_post=True) is not None
        ):
            await self.app(scope, receive, send)
            return
        body, more = await self._body(receive)
        message = _single_request(body) if not more else None
        if message is None:
            await self.app(scope, _replay(body, more, receive), send)
            return
        version = version or DEFAULT_NEGOTIATED_VERSION
        answer: bytes | str
        if self.plain_calls and _plain_call(message) and not tracing():
            answer = await self._call(message, version)
        else:
            answer = (await self._answer(request, message, version)).model_dump_json(
                by_alias=True, exclude_unset=True
            )
        await Response(answer, headers={"Content-Type": _JSON})(scope, receive, send)

    async def _body(self, receive: Receive) -> tuple[bytes, bool]:
        """The body up to the manager's limit, and whether more of it is left unread."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks), False
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False
            if size > self.manager.max_request_body_size:
                return b"".join(chunks), True  # the SDK refuses it, in its words

    async def _call(self, message: dict[str, Any], version: str) -> bytes:
        """A plain `tools/call` answered by the tool server itself, encoded once."""
        request_id, params = message["id"], message["params"]
        name = params["name"]
        try:
            result = await self.tools.call_tool(
                name, params.get("arguments") or {}, self.tools.bare_context
            )
        except MCPError as exc:
            return _error(request_id, exc.error)
        except Exception as exc:
            # as MCPServer._handle_call_tool answers what ToolServer.call_tool lets through
            log.exception("Tool %r raised an unexpected exception", name)
            result = CallToolResult(
                content=[TextContent(type="text", text=str(exc))], is_error=True
            )
        try:
            shaped = serialize_server_result(
                "tools/call",
                version,
                result.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
        except ValidationError:
            # as ServerRunner._serialize answers a result its sieve refuses
            log.exception("handler for %r returned an invalid result", "tools/call")
            error = ErrorData(code=INTERNAL_ERROR, message="Handler returned an invalid result")
            return _error(request_id, error)
        return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "result": shaped})

    async def _answer(
        self, request: Request, message: dict[str, Any], version: str
    ) -> JSONRPCResponse | JSONRPCError:
        request_id = message["id"]
        exchange = _Exchange(request_id, ServerMessageMetadata(request_context=request))
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self.manager.app,
                exchange,
                message["method"],
                message.get("params"),
                connection=connection,
                lifespan_state=self.manager._lifespan_state,
            )
        except Exception as exc:
            error = _error_data(exc, message["method"])
            return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)


def _error_data(exc: Exception, method: str) -> ErrorData:
    """An exception of a handler as the SDK's JSON-RPC dispatcher answers it."""
    error = handler_exception_to_error_data(exc)
    if error is None:
        log.exception("handler for %r raised", method)
        error = ErrorData(code=0, message=str(exc))
    return error


def _error(request_id: str | int, error: ErrorData) -> bytes:
    answer = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
    return answer.model_dump_json(by_alias=True, exclude_unset=True).encode()


def _plain_call(message: dict[str, Any]) -> bool:
    """A `tools/call` whose params the SDK would take as they are: a text `name` and an object
    (or no) `arguments`, nothing else (no `_meta`)."""
    params = message.get("params")
    return (
        message["method"] == "tools/call"
        and isinstance(params, dict)
        and isinstance(params.get("name"), str)
        and isinstance(params.get("arguments", {}), dict | None)
        and not set(params) - _CALL_PARAMS
    )


def _single_request(body: bytes) -> dict[str, Any] | None:
    """The body as one JSON-RPC request answered here, else None (the SDK says what is wrong)."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if message.get("method") not in SINGLE or set(message) - {"jsonrpc", "id", "method", "params"}:
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    params = message.get("params")
    return message if params is None or isinstance(params, dict) else None


def _replay(body: bytes, more: bool, receive: Receive) -> Receive:
    """`receive` with the body read so far given back first."""
    given = False

    async def again() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return again
