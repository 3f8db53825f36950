"""The MCP tool sets (contract §7) with the official client: the seven by default, eleven with
PAPERANCHOR_TOOLS=all, the discovery tools' results equal to the REST answers, their failures
as `isError`, and the eleven definitions under 2,400 tokens of tools/list."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from paperanchor import operations, tokens
from paperanchor.discovery import query
from paperanchor.discovery.client import api_url
from tests.api.live import LiveServer
from tests.api.test_discovery import NOW, discovery_server, script_paper
from tests.api.test_mcp import TOOLS, call, rest_error_text, session, text_of
from tests.conftest import ROOT
from tests.discovery.recorded import TESTING_100, atom
from tests.discovery.test_client import script_citations, target
from tests.replay import page

pytestmark = pytest.mark.usefixtures("corpus")

DISCOVERY_TOOLS = [op.name for op in operations.listed("all") if op.name not in TOOLS]
# o200k tokens of the tools/list answer with the discovery tools (contract §7)
ELEVEN_BUDGET = 2400


@pytest.fixture(scope="module")
def every_tool(
    replay_server: Any, papers_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    cache = tmp_path_factory.mktemp("cache")
    with discovery_server(replay_server, cache, papers_dir, tools="all") as live:
        yield live


@pytest.fixture
def rest(every_tool: LiveServer) -> Iterator[httpx.Client]:
    with every_tool.client() as client:
        yield client


def tools_list(url: str) -> httpx.Response:
    with httpx.Client(trust_env=False) as client:
        return client.post(
            f"{url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )


def test_all_lists_the_eleven_read_only_tools_with_output_schemas(every_tool):
    tools = session(f"{every_tool.url}/mcp", lambda c: c.list_tools()).tools

    assert [tool.name for tool in tools] == TOOLS + DISCOVERY_TOOLS
    for tool in tools[len(TOOLS) :]:
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is True
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert len(tool.description or "") <= 160
    by_name = {tool.name: tool for tool in tools}
    search = by_name["search_arxiv"].input_schema
    assert list(search["properties"]) == [
        "query",
        "category",
        "from",
        "to",
        "sort",
        "start",
        "limit",
    ]
    assert search["required"] == ["query"]
    assert list(by_name["bibtex"].input_schema["properties"]) == ["papers", "referencesOf"]


def test_the_eleven_tools_list_answer_stays_under_its_token_budget(every_tool, server):
    eleven = tools_list(every_tool.url)
    seven = tools_list(server.url)  # tests/api's own server: the default set

    assert len(eleven.json()["result"]["tools"]) == len(TOOLS + DISCOVERY_TOOLS)
    assert len(seven.json()["result"]["tools"]) == len(TOOLS)
    seven_tokens, eleven_tokens = tokens.count(seven.text), tokens.count(eleven.text)
    print(f"\ntools/list: {seven_tokens} tokens for seven, {eleven_tokens} for eleven")
    assert eleven_tokens < ELEVEN_BUDGET, eleven_tokens


# (tool, arguments, the REST route asked the same thing)
JSON_CASES = [
    ("search_arxiv", {"query": "testing", "start": 10}, "/search.json?q=testing&start=10"),
    (
        "search_arxiv",
        {"query": "", "category": "cs.LG", "limit": 5},
        "/search.json?category=cs.LG&limit=5",
    ),
    ("citations", {"paper": "2304.05376", "limit": 5}, "/2304.05376/citations.json?limit=5"),
    ("category_trends", {"category": "cs.SE", "days": 30}, "/categories/cs.SE/trends.json?days=30"),
]


@pytest.mark.parametrize(("tool", "arguments", "route"), JSON_CASES)
def test_a_discovery_tools_structured_content_equals_the_rest_json(
    every_tool, rest, replay, tool, arguments, route
):
    if tool == "citations":
        script_citations(replay, "2304.05376", count=5)
    if tool == "category_trends":
        asked, _ = query.trends_query("cs.SE", 30, today=NOW.date())
        replay.script(
            target(api_url(replay.arxiv_api_url, asked.params())), page(atom(TESTING_100))
        )

    result = call(f"{every_tool.url}/mcp", tool, arguments)
    answer = rest.get(route)

    assert result.is_error is False and answer.status_code == 200, text_of(result)
    assert result.structured_content == answer.json()
    assert json.loads(text_of(result)) == answer.json()


def test_bibtex_of_papers_and_of_a_bibliography_equals_the_rest_bib(every_tool, rest, replay):
    replay.answer_ids_from_recordings()
    papers = call(f"{every_tool.url}/mcp", "bibtex", {"papers": ["astro-ph/0601001", "1202.0819"]})
    one = rest.get("/astro-ph/0601001.bib").text
    two = rest.get("/1202.0819.bib").text
    script_paper(replay, "2104.12255v1")
    bibliography = call(f"{every_tool.url}/mcp", "bibtex", {"referencesOf": "2104.12255v1"})

    assert papers.is_error is False and bibliography.is_error is False
    assert papers.structured_content == {"bibtex": one + "\n" + two}
    assert bibliography.structured_content == {
        "bibtex": rest.get("/2104.12255v1/references.bib").text
    }


FAILURES = [
    (
        "search_arxiv",
        {"query": "x", "from": "2024-02-01", "to": "2024-01-01"},
        "/search.json?q=x&from=2024-02-01&to=2024-01-01",
    ),
    ("search_arxiv", {"query": "x", "limit": 99}, "/search.json?q=x&limit=99"),
    (
        "search_arxiv",
        {"query": "x", "date_from": "2024-01-01"},
        "bad-request: search_arxiv takes no argument date_from "
        "(it takes query, category, from, to, sort, start, limit)",
    ),
    (
        "search_arxiv",
        {"query": "x", "from": 20240101},
        "bad-request: from must be a string, got 20240101",
    ),
    ("bibtex", {}, "bad-request: bibtex takes papers or referencesOf, one of the two"),
    (
        "bibtex",
        {"papers": ["1202.0819"], "referencesOf": "1202.0819"},
        "bad-request: bibtex takes papers or referencesOf, one of the two",
    ),
    ("bibtex", {"papers": []}, "bad-request: Metadata needs at least one paper"),
    (
        "bibtex",
        {"papers": [f"2101.{n:05d}" for n in range(1, 22)]},
        "bad-request: At most 20 papers in one request (got 21)",
    ),
    ("bibtex", {"papers": ["local/full"]}, "/local/full.bib"),
    ("citations", {"paper": "local/full"}, "/local/full/citations.json"),
    ("category_trends", {"category": "cs.XY"}, "/categories/cs.XY/trends.json"),
    ("category_trends", {"category": "cs.LG", "days": 0}, "/categories/cs.LG/trends.json?days=0"),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), FAILURES)
def test_a_failed_discovery_call_is_an_error_result_as_rest_says_it(
    every_tool, rest, replay, tool, arguments, expected
):
    result = call(f"{every_tool.url}/mcp", tool, arguments)

    if expected.startswith("/"):
        answer = rest.get(expected)
        text = answer.headers["content-type"].startswith("text/plain")  # a .bib route's error
        expected = answer.text.rstrip("\n") if text else rest_error_text(answer)
    assert result.is_error is True and result.structured_content is None
    assert text_of(result) == expected
    assert replay.count() == 0  # refused before any request


def test_the_default_set_has_no_discovery_tool(server, replay):
    result = call(f"{server.url}/mcp", "search_arxiv", {"query": "testing"})

    assert result.is_error is True
    assert text_of(result).startswith(
        "bad-request: Unknown tool search_arxiv: the tools are outline,"
    )


def test_stdio_serves_the_eleven_with_paperanchor_tools_all(replay, papers_dir, tmp_path):
    env = {
        **os.environ,
        **replay.environ(local_dir=papers_dir, cache_dir=tmp_path, discovery=True, tools="all"),
    }
    stdio = StdioServerParameters(
        command=sys.executable, args=["-m", "paperanchor.cli", "mcp"], env=env, cwd=str(ROOT)
    )

    async def job(client: Client) -> Any:
        listed = await client.list_tools()
        found = await client.call_tool("search_arxiv", {"query": "testing", "start": 20})
        return [tool.name for tool in listed.tools], found

    names, found = session(stdio, job)

    assert names == TOOLS + DISCOVERY_TOOLS
    assert found.is_error is False and found.structured_content["start"] == 20
    assert len(found.structured_content["hits"]) == 10
