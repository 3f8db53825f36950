"""What an agent reads over MCP (contract §11), through the official client: every block it reads
carries an anchor that `cite` takes as it is written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.api.conftest import settings_for
from tests.api.live import live_server
from tests.api.test_mcp import session, text_of
from tests.conftest import ROOT

MARKER = re.compile(r"<!--(¶[0-9]+)-->")


def test_every_anchor_a_read_shows_is_cited_by_the_official_client(server):
    async def read_then_cite(client: Client) -> tuple[str, list[tuple[str, bool, str]]]:
        read = await client.call_tool("read", {"paper": "local/full", "anchor": "S2"})
        shown = text_of(read)
        cited = []
        for label in MARKER.findall(shown):
            answer = await client.call_tool("cite", {"paper": "local/full", "anchor": label})
            found = answer.structured_content or {}
            cited.append((label, answer.is_error, f"{found['anchor']} in {found['url']}"))
        return shown, cited

    shown, cited = session(f"{server.url}/mcp", read_then_cite)
    assert len(cited) >= 8, shown  # paragraphs, equations, a table and a list of section 2
    assert [error for _label, error, _anchor in cited] == [False] * len(cited)
    # each names a block of its own, in the section that was read
    anchors = [anchor for _label, _error, anchor in cited]
    assert len(set(anchors)) == len(anchors)
    assert all(re.search(r"/sections/S2(\.SS[0-9.SPx]+)?\.md$", a) for a in anchors), anchors


def test_the_rest_section_routes_mark_blocks_only_when_asked(server, http):
    plain = http.get("/local/full/sections/S2.md").text
    marked = http.get("/local/full/sections/S2.md?anchors=1").text
    as_json = http.get("/local/full/sections/S2.json?anchors=1").json()

    assert "<!--¶" not in plain and MARKER.findall(marked)
    assert as_json["markdown"] == marked
    assert MARKER.sub("", marked).replace("\n\n\n\n", "\n\n") == plain
    assert http.get("/local/full/sections/S2.md?anchors=2").status_code == 400


def _stdio(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "paperanchor.cli", "mcp"], env=env, cwd=str(ROOT)
    )


STDIO_CALLS = [
    ("cite", {"paper": "local/full", "anchor": "S2.SS1.p1"}),
    ("figure", {"paper": "local/full", "anchor": "F1"}),
    ("read", {"paper": "local/full", "anchor": "S4"}),
    ("read", {"paper": "local/full", "anchor": "paper"}),
    ("outline", {"paper": "local/full"}),
    ("search_paper", {"paper": "local/full", "query": "figure"}),
]


def _over_stdio(env: dict[str, str]) -> list[str]:
    async def everything(client: Client) -> list[str]:
        return [text_of(await client.call_tool(tool, a)) for tool, a in STDIO_CALLS]

    answers: list[str] = session(_stdio(env), everything)
    return answers


def test_stdio_hands_out_no_url_of_a_server_that_is_not_running(replay, papers_dir, tmp_path):
    env = {**os.environ, **replay.environ(local_dir=papers_dir, cache_dir=tmp_path)}
    env.pop("PAPERANCHOR_PUBLIC_URL", None)
    cited, figure, read, whole, *_ = answers = _over_stdio(env)

    assert all("127.0.0.1" not in answer and "localhost" not in answer for answer in answers)
    assert json.loads(cited)["url"] is None and json.loads(cited)["anchor"] == "S2.SS1.p1"
    # a local document's images are the files beside it, as file: URLs
    images = json.loads(figure)["images"]
    assert images and all(url.startswith(papers_dir.resolve().as_uri() + "/") for url in images)
    assert all(Path(unquote(urlsplit(url).path)).is_file() for url in images)
    assert images[0] in read and images[0] in whole


def test_stdio_hands_out_the_public_url_when_one_is_set(replay, papers_dir, tmp_path):
    public = "https://papers.example.org"
    env = {**os.environ, **replay.environ(local_dir=papers_dir, cache_dir=tmp_path)}
    env["PAPERANCHOR_PUBLIC_URL"] = public
    cited, figure, *_ = _over_stdio(env)

    assert json.loads(cited)["url"] == f"{public}/local/full/sections/S2.SS1.md"
    assert all(url.startswith(f"{public}/files/") for url in json.loads(figure)["images"])


def _calls(server_url: str, count: int) -> list[tuple[bool, str]]:
    async def many(client: Client) -> list[tuple[bool, str]]:
        answers = []
        for _ in range(count):
            answer = await client.call_tool("cite", {"paper": "local/full", "anchor": "S1"})
            answers.append((bool(answer.is_error), text_of(answer)))
        return answers

    result: list[tuple[bool, str]] = session(f"{server_url}/mcp", many)
    return result


def test_quick_calls_past_the_rate_limit_are_tool_errors_the_client_reads(
    replay, papers_dir, tmp_path
):
    settings = settings_for(
        replay, tmp_path, local_dir=papers_dir, rate_limit="60/minute", rate_limit_loopback=True
    )
    with live_server(settings) as live:
        answers = _calls(live.url, 200)
    refused = [text for error, text in answers if error]
    # the session's own requests and the first calls pass; every later call is refused
    assert 140 <= len(refused) < 200
    assert all(re.fullmatch(r"rate-limited: retry in [0-9]+ s", text) for text in refused)
    assert not any(error for error, _text in answers[:50])


def test_loopback_clients_are_not_rate_limited_by_default(replay, papers_dir, tmp_path):
    settings = settings_for(replay, tmp_path, local_dir=papers_dir, rate_limit="3/minute")
    with live_server(settings) as live:
        answers = _calls(live.url, 20)
    assert [error for error, _text in answers] == [False] * 20


def test_the_rest_outline_takes_a_depth_and_stays_schema_1(server, http):
    whole = http.get("/local/full/outline.json").json()
    top = http.get("/local/full/outline.json?depth=1").json()

    assert top["schema"] == 1 and set(top) == set(whole)
    assert [s["id"] for s in top["sections"]] == [s["id"] for s in whole["sections"]]
    assert [s["tokens"] for s in top["sections"]] == [s["tokens"] for s in whole["sections"]]
    assert all(s["children"] == [] for s in top["sections"])
    assert any(s["children"] for s in whole["sections"])
    refused = http.get("/local/full/outline.json?depth=0")
    assert refused.status_code == 400 and "depth" in refused.json()["error"]["detail"]


def test_the_command_line_outline_takes_a_depth():
    page = str(ROOT / "fixtures" / "html" / "full.html")
    run = [sys.executable, "-m", "paperanchor.cli", "outline", page]
    whole = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    top = subprocess.run(
        [*run, "--depth", "1"], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    assert "(S2.SS1," in whole and "(S2.SS1," not in top and "(S2," in top
