"""What an agent reads over MCP (SPEC §11), through the official client: every block it reads
carries an anchor that `cite` takes as it is written."""

from __future__ import annotations

import re

from mcp import Client

from tests.api.test_mcp import session, text_of

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
