"""MCP (contract §7) with the official `mcp` client, over Streamable HTTP and over stdio: the seven
tools, their results equal to the REST answers for the same request, failures as `isError`."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent

from paperanchor import operations, tokens
from paperanchor.compact import compact
from paperanchor.errors import PaperAnchorError, internal
from paperanchor.render.escape import markdown_line
from tests.api.conftest import settings_for
from tests.api.live import live_server
from tests.conftest import ROOT

# the reading tools, from the table every door is generated from (operations.py)
TOOLS = [operation.name for operation in operations.listed("reader")]
TOOLS_LIST_BUDGET = 1500  # o200k tokens of the tools/list answer (contract §7)


def session(target: Any, job: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run `job` with a connected client, in a fresh event loop."""

    async def main() -> Any:
        async with Client(target) as client:
            return await job(client)

    return asyncio.run(main())


def call(target: Any, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    result: CallToolResult = session(target, lambda c: c.call_tool(tool, arguments))
    return result


def text_of(result: CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, TextContent)
    return content.text


def rest_error_text(response: httpx.Response) -> str:
    """`<code>: <detail>` of a REST error as Markdown (MCP's form), from either wire form."""
    if response.headers["content-type"].startswith("text/markdown"):
        return response.text.rstrip("\n")
    error = response.json()["error"]
    return f"{error['code']}: {markdown_line(error['detail'])}"


def service_says(check: Callable[..., Any], *arguments: Any) -> str:
    """The error text of one of the service's own argument checks, worded by the service."""
    try:
        check(*arguments)
    except PaperAnchorError as exc:
        return exc.wire_text()
    raise AssertionError(f"{check.__name__}{arguments} accepted")


# -- the tool list ---------------------------------------------------------------------------


def test_the_server_lists_exactly_the_reading_operations_of_the_table_read_only(server):
    tools = session(f"{server.url}/mcp", lambda c: c.list_tools()).tools

    assert [tool.name for tool in tools] == TOOLS
    for tool in tools:
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is True
        assert tool.input_schema["required"][0] == "paper"
        assert len(tool.description or "") <= 160
        # JSON tools publish an output schema; read answers Markdown text
        assert (tool.output_schema is None) == (tool.name == "read")


def test_the_whole_tools_list_answer_stays_under_the_token_budget(http):
    response = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"  # JSON, not an SSE stream
    assert len(response.json()["result"]["tools"]) == len(TOOLS)
    assert tokens.count(response.text) < TOOLS_LIST_BUDGET, tokens.count(response.text)


# -- results equal the REST answers ----------------------------------------------------------

# (tool, arguments, the REST route asked the same thing)
JSON_CASES = [
    ("outline", {"paper": "local/full"}, "/local/full/outline.json"),
    ("outline", {"paper": "2501.11120v1", "wait": 0}, "/2501.11120v1/outline.json"),
    ("outline", {"paper": "local/full", "depth": 1}, "/local/full/outline.json?depth=1"),
    ("cite", {"paper": "local/full", "anchor": "S2.SS1.p1"}, "/local/full/cite/S2.SS1.p1.json"),
    ("references", {"paper": "local/full"}, "/local/full/references.json"),
    ("references", {"paper": "local/full", "id": "[2]"}, "/local/full/references/%5B2%5D.json"),
    ("references", {"paper": "local/full", "id": 5}, "/local/full/references/5.json"),
    ("figure", {"paper": "local/full", "anchor": "F1"}, "/local/full/figures/F1.json"),
    ("figure", {"paper": "local/full", "anchor": "S4.T1"}, "/local/full/figures/S4.T1.json"),
    ("equation", {"paper": "local/full", "anchor": "E1"}, "/local/full/equations/E1.json"),
    (
        "equation",
        {"paper": "local/full", "anchor": "A2.EGx1"},
        "/local/full/equations/A2.EGx1.json",
    ),
    (
        "search_paper",
        {"paper": "local/full", "query": "paragraph identifier", "limit": 3},
        "/local/full/search.json?" + urlencode({"q": "paragraph identifier", "limit": 3}),
    ),
]


@pytest.mark.parametrize(("tool", "arguments", "route"), JSON_CASES)
def test_a_json_tools_structured_content_equals_the_rest_json(
    server, http, replay, tool, arguments, route
):
    result = call(f"{server.url}/mcp", tool, arguments)
    rest = http.get(route)

    assert result.is_error is False and rest.status_code == 200
    expected = rest.json()
    if tool == "outline":  # the outline an agent receives: the REST one, compact (contract §11)
        expected = compact(expected)
    if tool == "search_paper":  # structured content is an object: the hit list is wrapped
        expected = {"hits": expected}
    if tool == "references" and "id" in arguments:  # one entry: {idv, reference}
        expected = {"idv": "local/full", "reference": expected}
    assert result.structured_content == expected
    assert json.loads(text_of(result)) == expected  # the same JSON as text


@pytest.mark.parametrize(
    ("arguments", "route"),
    [
        (
            {"paper": "local/full", "anchor": "S2", "maxTokens": 100},
            "/sections/S2.md?maxTokens=100&anchors=1",
        ),
        ({"paper": "local/full", "anchor": "S2.1"}, "/sections/S2.1.md?maxTokens=8000&anchors=1"),
        ({"paper": "local/full", "anchor": "S4.F1"}, "/sections/S4.F1.md?maxTokens=8000&anchors=1"),
    ],
)
def test_read_returns_the_markdown_of_the_rest_route_with_anchors(server, http, arguments, route):
    result = call(f"{server.url}/mcp", "read", arguments)

    assert result.is_error is False and result.structured_content is None
    rest = http.get(f"/local/full{route}").text
    # a cut answer says how to get the rest in each front door: the REST route, or read again
    whole = http.get(f"/local/full/sections/{arguments['anchor']}.json?anchors=1").json()["tokens"]
    expected = re.sub(
        r"; fetch /local/full/sections/[^\]]+\]$",
        f"; call read with maxTokens={whole}]",
        rest.rstrip("\n"),
    )
    assert text_of(result).rstrip("\n") == expected


# -- failures --------------------------------------------------------------------------------

FULL = {"paper": "local/full"}
S1 = {**FULL, "anchor": "S1"}
SECTION = "/local/full/sections/S1.md"
UNKNOWN_TOOL = "bad-request: Unknown tool summarise: the tools are " + ", ".join(TOOLS)

# (tool, arguments, the REST route asked the same thing, or the expected text)
FAILURES = [
    ("outline", {"paper": "1706.99999"}, "/1706.99999/outline.json"),
    ("outline", {"paper": "not a paper"}, "/not a paper/outline.json"),
    (
        "outline",
        {**FULL, "wait": 99},
        service_says(operations.BY_NAME["outline"].check, {"wait": 99}),
    ),
    ("read", {**FULL, "anchor": "intro"}, "/local/full/sections/intro.md"),
    ("read", {**S1, "maxTokens": 5}, f"{SECTION}?maxTokens=5"),
    ("read", {**S1, "maxTokens": "many"}, f"{SECTION}?maxTokens=many"),
    ("read", FULL, "bad-request: anchor is required"),
    # pydantic's lax mode would read true as 1 (issue 21 #10)
    ("read", {**S1, "maxTokens": True}, "bad-request: maxTokens must be an integer, got true"),
    ("outline", {**FULL, "wait": False}, "bad-request: wait must be a number, got false"),
    ("cite", {"paper": "local/nothing", "anchor": "S1"}, "/local/nothing/cite/S1.json"),
    ("cite", {**S1, "paper": 1706.03762}, "bad-request: paper must be a string, got 1706.03762"),
    (
        "cite",
        {**S1, "page": 2},
        "bad-request: cite takes no argument page "
        "(it takes paper, anchor, text, from, prefix, suffix)",
    ),
    ("references", {**FULL, "id": "[99]"}, "/local/full/references/%5B99%5D.json"),
    ("figure", {**FULL, "anchor": "E1"}, "/local/full/figures/E1.json"),
    ("equation", {**FULL, "anchor": "T1"}, "/local/full/equations/T1.json"),
    ("search_paper", {**FULL, "query": "x", "limit": 0}, "/local/full/search.json?q=x&limit=0"),
    ("search_paper", FULL, "bad-request: query is required"),
    ("summarise", FULL, UNKNOWN_TOOL),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), FAILURES)
def test_a_failed_call_is_an_error_result_with_code_and_detail(
    server, http, replay, tool, arguments, expected
):
    result = call(f"{server.url}/mcp", tool, arguments)

    if expected.startswith("/"):  # the REST answer to the same question
        expected = rest_error_text(http.get(expected))
    assert result.is_error is True
    assert text_of(result) == expected
    assert result.structured_content is None


def mcp_call(http: httpx.Client, params: dict[str, Any]) -> dict[str, Any]:
    """A raw `tools/call` POST: what the official client cannot send."""
    response = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"name": 5, "arguments": FULL}, "bad-request: the tool name must be a string, got 5"),
        ({"arguments": FULL}, "bad-request: the tool name must be a string, got nothing"),
        (
            {"name": "outline", "arguments": ["local/full"]},
            'bad-request: outline takes its arguments as an object, got ["local/full"]',
        ),
        (
            {"name": "outline", "arguments": "local/full"},
            'bad-request: outline takes its arguments as an object, got "local/full"',
        ),
    ],
)
def test_a_wrongly_typed_name_or_arguments_is_a_tool_error_not_a_protocol_error(
    http, params, expected
):
    body = mcp_call(http, params)

    assert "error" not in body, body
    assert body["result"]["isError"] is True
    code, detail = expected.split(": ", 1)  # the detail is Markdown, as every error's is
    text = f"{code}: {markdown_line(detail)}"
    assert body["result"]["content"] == [{"type": "text", "text": text}]


def test_a_well_typed_raw_call_still_reaches_the_tool(http, replay):
    body = mcp_call(http, {"name": "outline", "arguments": FULL})

    assert body["result"].get("isError") is not True, body
    assert body["result"]["structuredContent"]["paper"] == "local/full"


def test_the_spec_example_of_a_failure(server, replay):
    result = call(f"{server.url}/mcp", "outline", {"paper": "1706.99999"})
    assert text_of(result) == "not-found: Unknown paper 1706.99999"


def test_a_bug_in_a_tool_is_internal_without_a_trace(replay, papers_dir, tmp_path):
    def parse(html: bytes, base_url: str) -> Any:
        raise RuntimeError("parser bug near /srv/secret/path")

    settings = settings_for(replay, tmp_path, local_dir=papers_dir)
    with live_server(settings, parse=parse, parser_version="broken") as live:
        result = call(f"{live.url}/mcp", "outline", {"paper": "local/short"})

    assert result.is_error is True
    assert text_of(result) == f"internal: {internal(RuntimeError()).detail}"


# -- stdio -----------------------------------------------------------------------------------


def test_stdio_serves_the_same_tools_with_the_same_results(server, replay, papers_dir, tmp_path):
    env = {
        **os.environ,
        **replay.environ(local_dir=papers_dir, cache_dir=tmp_path, public_url=server.url),
    }
    stdio = StdioServerParameters(
        command=sys.executable, args=["-m", "paperanchor.cli", "mcp"], env=env, cwd=str(ROOT)
    )
    calls = [(tool, arguments) for tool, arguments, _ in JSON_CASES + FAILURES]
    calls.append(("read", {"paper": "local/full", "anchor": "S2", "maxTokens": 100}))

    async def everything(client: Client) -> list[Any]:
        listed = await client.list_tools()
        answers: list[Any] = [listed.model_dump(mode="json", exclude={"meta"})]
        for tool, arguments in calls:
            answer = await client.call_tool(tool, arguments)
            answers.append(answer.model_dump(mode="json", exclude={"meta"}))
        return answers

    over_stdio = session(stdio, everything)
    over_http = session(f"{server.url}/mcp", everything)

    assert over_stdio == over_http
    assert [tool["name"] for tool in over_stdio[0]["tools"]] == TOOLS
