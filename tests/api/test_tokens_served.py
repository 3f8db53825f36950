"""Through the official MCP client, on every corpus page: the outline's `tokens` of the paper
and of each section are within 1% of the o200k count of the Markdown `read` answers for it
(contract §11) less its anchor markers, which cost at most 6 tokens a block on top (docs/agents.md),
and a default `read` stays within its 8,000 tokens."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from paperanchor import tokens
from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.api.test_mcp import session, text_of
from tests.conftest import CORPUS
from tests.corpus_pages import PAIR_PAGES, PAPER_PAGES

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("corpus")]

# an anchored read's marker line and the blank line after it (render/markdown.py)
MARKER = re.compile(r"^<!--¶[0-9]+-->\n\n", re.MULTILINE)


def unmarked(text: str) -> tuple[str, int]:
    """A read's Markdown without its anchor markers, and how many there were."""
    return MARKER.subn("", text)


@pytest.fixture(scope="module")
def corpus_server(
    replay_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    """A server whose local directory links every corpus page (read in place) by a plain name."""
    folder = tmp_path_factory.mktemp("corpus-papers")
    names = {}
    for index, page in enumerate(PAPER_PAGES + PAIR_PAGES):
        name = f"page-{index:02d}"
        (folder / f"{name}.html").symlink_to(CORPUS / page)
        names[f"local/{name}"] = page
    cache = tmp_path_factory.mktemp("cache")
    with live_server(settings_for(replay_server, cache, local_dir=folder, max_html_mb=8)) as live:
        yield live, names


def test_every_corpus_pages_tokens_over_mcp_are_within_one_percent_of_the_markdown_read(
    corpus_server: tuple[LiveServer, dict[str, str]],
) -> None:
    server, names = corpus_server

    async def job(client: Client) -> list[tuple[str, str, int, int]]:
        checked = []
        for paper, page in names.items():
            outline = (await client.call_tool("outline", {"paper": paper})).structured_content
            assert outline is not None
            whole_paper = {"paper": paper, "anchor": "paper", "maxTokens": 100_000}
            whole, _ = unmarked(text_of(await client.call_tool("read", whole_paper)))
            checked.append((page, "paper", outline["tokens"], tokens.count(whole)))
            # the compact outline's section lines: "<tokens> <id> <number> <title>"
            for line in outline["sections"]:
                count, section_id = line.split()[:2]
                read = await client.call_tool(
                    "read", {"paper": paper, "anchor": section_id, "maxTokens": 100_000}
                )
                marked = text_of(read)
                text, markers = unmarked(marked)
                checked.append((page, section_id, int(count), tokens.count(text)))
                assert tokens.count(marked) <= tokens.count(text) + 6 * markers, section_id
                default = text_of(
                    await client.call_tool("read", {"paper": paper, "anchor": section_id})
                )
                assert tokens.count(default) <= 8000, (page, section_id)
        return checked

    checked = session(f"{server.url}/mcp", job)
    assert len({page for page, *_ in checked}) == len(names)
    off = [row for row in checked if abs(row[2] - row[3]) > row[3] / 100]
    exact = sum(reported == real for *_, reported, real in checked)
    print(f"\n{len(checked)} counts on {len(names)} pages: {exact} exact, {len(off)} over 1%")
    assert not off, off
