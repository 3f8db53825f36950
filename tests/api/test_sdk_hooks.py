"""The places paperanchor reaches into mcp's and uvicorn's internals, each pinned twice: the
internal it relies on is there with the shape read in the installed sources (the message names
the hook), and its effect is observable from outside (a client, or the server's own socket).

pyproject.toml pins both packages to the versions these tests were written against; a new
version is taken by widening the pin once this file passes on it.
"""

from __future__ import annotations

import asyncio
import inspect
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from typing import Any

import h11
import httpx
import pytest
import uvicorn
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import Tool as WireTool
from uvicorn.protocols.http.h11_impl import H11Protocol

from paperanchor.api.mcp import _NOT_SERVED, build_server
from paperanchor.api.transport import GuardedHttp, server_options
from paperanchor.service import PaperService
from paperanchor.settings import Settings
from tests.conftest import STARTUP_S

MCP_VERSION = version("mcp")
UVICORN_VERSION = version("uvicorn")


class NoLoader:
    async def load(self, ref: object) -> object:
        raise AssertionError("no paper is loaded to build the tools")


def tool_server() -> Any:
    return build_server(PaperService(NoLoader(), "http://127.0.0.1:8000"), tools="all")


def parameters(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def mcp_post(http: httpx.Client, method: str, params: dict[str, Any]) -> httpx.Response:
    return http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"Accept": "application/json, text/event-stream"},
    )


# -- mcp: the output schemas, published by overriding MCPServer.list_tools -------------------


def test_the_sdk_lists_tools_through_the_list_tools_method_tool_server_overrides():
    # ToolServer.list_tools adds the output schemas: the SDK's tools/list handler must call it
    source = inspect.getsource(MCPServer._handle_list_tools)
    assert "self.list_tools()" in source, (
        f"mcp {MCP_VERSION}: MCPServer's tools/list handler no longer calls self.list_tools(), "
        "so ToolServer.list_tools (api/mcp.py) publishes no output schema"
    )
    assert parameters(MCPServer.list_tools) == ["self"], (
        f"mcp {MCP_VERSION}: MCPServer.list_tools changed its signature; ToolServer overrides it"
    )
    # ToolServer.list_tools sets the field by name: a renamed field would be dropped silently
    assert "output_schema" in WireTool.model_fields, (
        f"mcp {MCP_VERSION}: mcp_types.Tool has no output_schema field; ToolServer.list_tools "
        "(api/mcp.py) sets it"
    )


def test_tools_list_carries_each_json_tools_output_schema_exactly(server):
    async def main() -> Any:
        async with Client(f"{server.url}/mcp") as client:
            return (await client.list_tools()).tools

    listed = {tool.name: tool.output_schema for tool in asyncio.run(main())}

    built = tool_server().output_schemas  # what api/mcp.py builds for each tool
    assert listed == {name: built[name] for name in listed}
    assert [name for name, schema in listed.items() if schema is None] == ["read"]
    assert all(schema["type"] == "object" for schema in listed.values() if schema is not None)


def test_the_sdk_does_not_validate_results_against_the_published_schema():
    # The results are built by paperanchor (one definition, api/models.py); the SDK would
    # validate them a second time only for a tool whose own metadata names an output model.
    server = tool_server()
    tools: list[Tool] = server._tool_manager.list_tools()
    assert tools, f"mcp {MCP_VERSION}: MCPServer._tool_manager.list_tools() lists nothing"
    for tool in tools:
        assert tool.fn_metadata.output_model is None, tool.name


# -- mcp: the prompt and resource handlers, unregistered from the low-level table -------------


def test_the_low_level_handler_table_holds_the_handlers_tool_server_removes():
    plain = MCPServer("plain")
    handlers = getattr(getattr(plain, "_lowlevel_server", None), "_request_handlers", None)
    assert isinstance(handlers, dict), (
        f"mcp {MCP_VERSION}: MCPServer._lowlevel_server._request_handlers is gone; "
        "api/mcp.py _drop_handlers cannot unregister the prompt and resource handlers"
    )
    # mcp 2.3 registers these five on every MCPServer (resources/subscribe and unsubscribe
    # only when given a handler, so ToolServer's removal of those two guards a later version)
    registered = [method for method in _NOT_SERVED if method in handlers]
    unregistered = ("resources/subscribe", "resources/unsubscribe")
    assert registered == [method for method in _NOT_SERVED if method not in unregistered], (
        f"mcp {MCP_VERSION}: a plain MCPServer registers {registered} of {_NOT_SERVED} in "
        "_lowlevel_server._request_handlers: read the SDK again before widening the pin"
    )
    # the capabilities follow that table: what the removal relies on to advertise tools only
    assert plain._lowlevel_server.get_capabilities().prompts is not None


def test_a_tool_server_has_none_of_the_removed_handlers_and_keeps_the_tools():
    server = tool_server()
    lowlevel = server._lowlevel_server
    for method in _NOT_SERVED:
        assert lowlevel.get_request_handler(method) is None, method
    for method in ("tools/list", "tools/call", "ping"):
        assert lowlevel.get_request_handler(method) is not None, method
    capabilities = lowlevel.get_capabilities()
    assert capabilities.tools is not None
    assert capabilities.prompts is None and capabilities.resources is None


def test_a_server_without_the_handler_table_refuses_to_start_naming_the_hook(monkeypatch):
    # What an SDK that moved the table does: the server refuses to start, saying why, instead
    # of advertising empty prompts and resources.
    original = MCPServer.__init__

    def without_table(self: MCPServer, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        del self._lowlevel_server._request_handlers

    monkeypatch.setattr(MCPServer, "__init__", without_table)
    with pytest.raises(RuntimeError, match=r"mcp hook MCPServer\._lowlevel_server\._request_"):
        tool_server()


# each removed method with parameters that are valid for it: the SDK checks those first
REMOVED_CALLS = {
    "prompts/list": {},
    "prompts/get": {"name": "summary"},
    "resources/list": {},
    "resources/templates/list": {},
    "resources/read": {"uri": "file:///etc/passwd"},
    "resources/subscribe": {"uri": "file:///etc/passwd"},
    "resources/unsubscribe": {"uri": "file:///etc/passwd"},
}


def test_every_removed_method_has_a_call_below():
    assert set(REMOVED_CALLS) == set(_NOT_SERVED)


@pytest.mark.parametrize("method", sorted(REMOVED_CALLS))
def test_a_removed_method_is_answered_method_not_found(http, method):
    # JSON-RPC's answer for a method the server does not serve (the capabilities say so too)
    response = mcp_post(http, method, REMOVED_CALLS[method])

    assert response.status_code == 200, response.text
    error = response.json()["error"]
    assert error["code"] == -32601, error


def test_the_client_sees_tools_only_and_no_prompts_or_resources(server):
    async def main() -> Any:
        async with Client(f"{server.url}/mcp") as client:
            return client.server_capabilities

    capabilities = asyncio.run(main())

    assert capabilities.tools is not None
    assert capabilities.prompts is None and capabilities.resources is None


# -- uvicorn: GuardedHttp, a subclass of its h11 protocol -----------------------------------

# What transport.py overrides or calls on uvicorn's H11Protocol, with the parameters it was
# written against (uvicorn 0.54's h11_impl.py).
H11_METHODS = {
    "__init__": ["self", "config", "server_state", "app_state", "_loop"],
    "connection_made": ["self", "transport"],
    "data_received": ["self", "data"],
    "on_response_complete": ["self"],
    "connection_lost": ["self", "exc"],
    "send_400_response": ["self", "msg"],
}


@pytest.mark.parametrize("name", sorted(H11_METHODS))
def test_uvicorns_h11_protocol_has_each_method_guarded_http_overrides(name):
    method = getattr(H11Protocol, name, None)
    assert method is not None, (
        f"uvicorn {UVICORN_VERSION}: H11Protocol.{name} is gone; GuardedHttp (api/transport.py) "
        "overrides or calls it"
    )
    assert parameters(method) == H11_METHODS[name], (
        f"uvicorn {UVICORN_VERSION}: H11Protocol.{name}{inspect.signature(method)} changed; "
        "GuardedHttp (api/transport.py) was written against "
        f"({', '.join(H11_METHODS[name])})"
    )


def test_uvicorn_takes_every_option_serve_passes():
    options = server_options(Settings(_env_file=None))  # type: ignore[call-arg]
    accepted = set(inspect.signature(uvicorn.Config).parameters)
    assert set(options) <= accepted, (
        f"uvicorn {UVICORN_VERSION}: Config no longer takes {set(options) - accepted}"
    )


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


@contextmanager
def served(http: Any) -> Iterator[uvicorn.Server]:
    """uvicorn serving a one-line app with protocol `http` on a socket made as `--workers N`
    makes it: protocol number 0, so asyncio sets no TCP_NODELAY of its own."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    assert listener.proto == 0
    config = uvicorn.Config(_hello, http=http, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_S
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield server
    finally:
        server.should_exit = True
        thread.join(STARTUP_S)
        listener.close()


def server_side(server: uvicorn.Server) -> list[Any]:
    """The protocols of the connections `server` holds (read from its own state)."""
    connections = getattr(server.server_state, "connections", None)
    assert isinstance(connections, set), (
        f"uvicorn {UVICORN_VERSION}: ServerState.connections is gone: this test reads the "
        "server's side of a connection from it"
    )
    return list(connections)


def nodelay_of_held_connection(http: Any) -> tuple[int, Any]:
    """TCP_NODELAY of the server's side of one kept-alive connection, read with getsockopt."""
    with served(http) as server, socket.create_connection(("127.0.0.1", server_port(server))) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert c.recv(4096).startswith(b"HTTP/1.1 200")
        (protocol,) = server_side(server)
        sock = protocol.transport.get_extra_info("socket")
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY), protocol


def server_port(server: uvicorn.Server) -> int:
    (listening,) = server.servers
    return int(listening.sockets[0].getsockname()[1])


def test_every_connection_guarded_http_accepts_has_tcp_nodelay_set_server_side():
    nodelay, protocol = nodelay_of_held_connection(GuardedHttp.configured(10.0, 100))

    assert nodelay != 0, "GuardedHttp.connection_made did not set TCP_NODELAY"
    # the attributes GuardedHttp reads from the protocol uvicorn built
    assert isinstance(protocol, GuardedHttp)
    assert isinstance(protocol.conn, h11.Connection), (
        f"uvicorn {UVICORN_VERSION}: H11Protocol.conn is not an h11.Connection; "
        "GuardedHttp._track reads its their_state"
    )
    for attribute in ("client", "server_state", "transport", "loop"):
        assert hasattr(protocol, attribute), (
            f"uvicorn {UVICORN_VERSION}: H11Protocol has no {attribute}; GuardedHttp reads it"
        )


def test_uvicorns_own_h11_protocol_leaves_tcp_nodelay_off_on_such_a_socket():
    # the control: on this socket nothing but GuardedHttp sets it, so the test above can fail
    nodelay, _ = nodelay_of_held_connection(H11Protocol)

    assert nodelay == 0


def test_the_single_exchange_hooks_have_the_shape_read_in_the_sdk():
    """api/single_exchange.py: serve_one, a born-ready connection, the manager's lifespan state."""
    from mcp.server.connection import Connection
    from mcp.server.runner import serve_one
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data

    hook = f"single_exchange hooks (mcp {MCP_VERSION})"
    assert parameters(serve_one) == [
        "server",
        "dctx",
        "method",
        "params",
        "connection",
        "lifespan_state",
    ], hook
    assert parameters(Connection.from_envelope)[:3] == [
        "protocol_version",
        "client_info",
        "client_capabilities",
    ], hook
    assert handler_exception_to_error_data(ValueError("x")) is None, hook
    assert hasattr(StreamableHTTPSessionManager, "_handle_stateless_request"), hook
    manager = tool_server()
    manager.streamable_http_app(json_response=True, stateless_http=True)
    assert "_lifespan_state" in vars(manager.session_manager), hook


def test_a_plain_call_skips_only_what_the_sdks_runner_would_do_to_it_without_effect():
    """api/single_exchange.py's plain calls: the middleware and cache hints they skip are the
    ones read in mcp's sources, serve_one serializes through the sieve they call, and a server
    with a middleware of its own has its calls go through serve_one."""
    from mcp.server._otel import OpenTelemetryMiddleware
    from mcp.server.request_state import RequestStateBoundary
    from mcp.server.runner import ServerRunner
    from mcp_types.methods import serialize_server_result

    from paperanchor.api.mcp import call_shape
    from paperanchor.api.single_exchange import SingleExchange, tracing

    hook = f"single_exchange plain calls (mcp {MCP_VERSION})"
    tools = tool_server()
    tools.streamable_http_app(json_response=True, stateless_http=True)
    lowlevel = tools.session_manager.app
    kinds = [type(middleware) for middleware in lowlevel.middleware]
    assert kinds[:2] == [OpenTelemetryMiddleware, RequestStateBoundary], hook
    assert lowlevel.middleware[2] is call_shape and lowlevel.cache_hints == {}, hook
    assert "serialize_server_result(method, version, dumped)" in inspect.getsource(
        ServerRunner._serialize
    ), hook
    assert parameters(serialize_server_result)[:3] == ["method", "version", "data"], hook
    assert SingleExchange(lambda *_: None, tools.session_manager, tools).plain_calls, hook
    # taken while no OpenTelemetry SDK is set up, the default (tests/api/test_mcp_spans.py)
    assert not tracing(), hook

    async def own(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    lowlevel.middleware.append(own)
    assert not SingleExchange(lambda *_: None, tools.session_manager, tools).plain_calls
