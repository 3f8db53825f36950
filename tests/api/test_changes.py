"""What changed since another edition (contract §10) through every door: REST's `Changes`, its
CriticMarkup and its HTML page (in Chromium at 375 and 1280 px), `outline`, `read` and
`references` with `since` over REST and MCP (the official client), on a constructed pair and on
a corpus pair."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paperanchor.render.markdown import tokens_of
from tests.api.test_mcp import call, session, text_of
from tests.api.test_pages import DESKTOP, PHONE, _screenshot, browser  # noqa: F401
from tests.changes.constructed import edited, rendering
from tests.conftest import CORPUS
from tests.render.critic_reader import sides

# a corpus pair: arXiv's 2024 rendering of v1 and ar5iv's, read as two local editions
CORPUS_PAIR = ("2403.04706.ar5iv.html", "2403.04706v1.arxiv.html")


@pytest.fixture(scope="module")
def papers_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The local directory of this module's server (tests/api/conftest.py): editions."""
    folder = tmp_path_factory.mktemp("editions")
    pair = edited()
    (folder / "full-v1.html").write_bytes(pair.old)
    (folder / "full-v2.html").write_bytes(pair.new)
    (folder / "full-r.html").write_bytes(rendering().new)
    shutil.copy(CORPUS / "pairs" / CORPUS_PAIR[0], folder / "pair-old.html")
    shutil.copy(CORPUS / "pairs" / CORPUS_PAIR[1], folder / "pair-new.html")
    return folder


NEW, OLD = "local/full-v2", "local/full-v1"


def test_the_changes_json_counts_every_scripted_edit_and_lists_every_section(http) -> None:
    truth = edited()
    answer = http.get(f"/{NEW}/changes/{OLD}.json")
    assert answer.status_code == 200, answer.text
    changes = answer.json()
    assert (changes["since"], changes["to"]) == (OLD, NEW)
    for kind, counts in truth.counts.items():
        assert {c: changes[kind][c] for c in counts} == counts, kind
    assert changes["numbers"] == truth.numbers
    listed = {s["id"]: s["change"] for s in changes["sectionList"]}
    assert {s: c for s, c in listed.items() if c != "same"} == truth.sections


def test_a_rendering_that_changed_no_text_shows_no_change(http) -> None:
    changes = http.get(f"/local/full-r/changes/{OLD}.json").json()
    for kind in ("sections", "paragraphs", "equations", "tables", "figures"):
        assert [changes[kind][c] for c in ("edited", "added", "moved", "removed")] == [0] * 4
    assert changes["numbers"] == []
    assert "No change." in http.get(f"/local/full-r/changes/{OLD}.md").text


def test_the_changes_markdown_says_the_numbers_first_and_costs_a_few_hundred_tokens(http) -> None:
    answer = http.get(f"/{NEW}/changes/{OLD}.md")
    assert answer.headers["content-type"].startswith("text/markdown")
    markdown = answer.text
    whole = http.get(f"/{NEW}.md").text
    assert tokens_of(markdown) < 600 < tokens_of(whole) / 4
    assert markdown.index("**Numbers that changed:** 0.50 → 0.55 (S4.T2)") < markdown.index(
        "sections: 7 edited"
    )
    assert "references: 1 added, 0 removed" in markdown


def test_outline_since_marks_each_section_and_carries_the_changes(http) -> None:
    outline = http.get(f"/{NEW}/outline.json", params={"since": OLD}).json()
    marks = {}

    def walk(sections: list[dict[str, Any]]) -> None:
        for section in sections:
            marks[section["id"]] = (section["change"], section["changed"])
            walk(section["children"])

    walk(outline["sections"])
    assert marks["S4"] == ("edited", 3) and marks["S3"] == ("same", 0)
    assert marks["S2"] == ("edited", 1) and marks["S2.SS1"] == ("edited", 1)
    assert outline["changes"]["tables"]["edited"] == 1
    assert "change" not in json.dumps(http.get(f"/{NEW}/outline.json").json()["sections"])


def test_read_since_marks_a_table_cell_and_reads_back_as_both_editions(http) -> None:
    markdown = http.get(f"/{NEW}/sections/S4.md", params={"since": OLD}).text
    assert "| Sentence rewrite | {~~0.50~>0.55~~} |" in markdown
    assert "{++We repeated every run on a second machine; the figures did not move.++}" in markdown
    # the paragraph that did not change is folded, by its anchor
    assert "unchanged" in markdown and "S4.p1" in markdown
    paragraph = http.get(f"/{NEW}/sections/S1.p2.md", params={"since": OLD}).text
    old, new = sides(paragraph)
    assert old.startswith("Earlier work") and new.startswith("Prior work")
    assert old == http.get(f"/{OLD}/sections/S1.p2.md").text
    assert new == http.get(f"/{NEW}/sections/S1.p2.md").text


def test_references_since_lists_the_entries_added_and_removed(http) -> None:
    answer = http.get(f"/{NEW}/references.json", params={"since": OLD}).json()
    assert [entry["id"] for entry in answer["added"]] == ["bib.bib9"]
    assert answer["removed"] == [] and answer["since"] == OLD


def test_an_edition_of_another_paper_is_a_bad_request(http) -> None:
    answer = http.get(f"/{NEW}/changes/1706.03762v1.json")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad-request"


def test_mcp_read_since_is_the_rest_markdown_and_outline_since_the_rest_outline(server, http):
    url = f"{server.url}/mcp"
    read = call(url, "read", {"paper": NEW, "anchor": "S4", "since": OLD})
    assert not read.is_error
    rest = http.get(f"/{NEW}/sections/S4.md", params={"since": OLD}).text
    assert text_of(read).strip() == rest.strip()
    outline = call(url, "outline", {"paper": NEW, "since": OLD, "wait": 0})
    assert outline.structured_content["changes"]["numbers"] == edited().numbers
    references = call(url, "references", {"paper": NEW, "since": OLD})
    assert [r["id"] for r in references.structured_content["added"]] == ["bib.bib9"]


def _edited_sections(lines: list[str]) -> list[str]:
    """The sections to read again from the compact outline's lines: added ones, and edited or
    moved ones whose changes are not all in their subsections (`[edited N]` counts those too)."""
    marked: dict[str, tuple[str, int]] = {}
    for line in lines:
        found = re.search(r" \[(added|edited|moved)(?: (\d+))?\]$", line)
        if found is not None:
            marked[line.split()[1]] = (found.group(1), int(found.group(2) or 0))
    chosen = []
    for node_id, (change, changed) in marked.items():
        inner = sum(
            count
            for other, (_kind, count) in marked.items()
            if other.startswith(node_id + ".") and other.count(".") == node_id.count(".") + 1
        )
        if change == "added" or changed - inner > 0:
            chosen.append(node_id)
    return chosen


FLOW: dict[str, int] = {}


def test_an_agent_reads_what_changed_for_a_fraction_of_the_new_version(server) -> None:
    url = f"{server.url}/mcp"

    async def flow(client: Any) -> dict[str, int]:
        outline = await client.call_tool(
            "outline", {"paper": "local/pair-new", "since": "local/pair-old", "wait": 0}
        )
        sections = _edited_sections(outline.structured_content["sections"])
        assert sections
        reads = 0
        for section in sections:
            read = await client.call_tool(
                "read", {"paper": "local/pair-new", "anchor": section, "since": "local/pair-old"}
            )
            reads += tokens_of(text_of(read))
        whole = await client.call_tool(
            "read", {"paper": "local/pair-new", "anchor": "paper", "maxTokens": 100000}
        )
        return {
            "outline": tokens_of(text_of(outline)),
            "reads": reads,
            "whole": tokens_of(text_of(whole)),
            "sections": len(sections),
        }

    FLOW.update(session(url, flow))
    print(json.dumps(FLOW))
    # o200k tokens of what the agent receives; the outline is most of the flow
    assert FLOW["reads"] < FLOW["whole"] / 10, FLOW
    assert FLOW["outline"] + FLOW["reads"] < FLOW["whole"] / 5, FLOW


@pytest.fixture(params=["375px", "1280px"])
def viewer(request: Any, browser: Any) -> Iterator[tuple[str, Any]]:  # noqa: F811
    size = PHONE if request.param == "375px" else DESKTOP
    context = browser.new_context(viewport=size, java_script_enabled=False)
    try:
        yield request.param, context.new_page()
    finally:
        context.close()


def test_the_changes_page_shows_ins_del_and_mathml_and_folds_unchanged_sections(server, viewer):
    width, page = viewer
    page.goto(f"{server.url}/{NEW}/changes/{OLD}")
    assert page.locator("script").count() == 0
    size = PHONE if width == "375px" else DESKTOP
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
    # the changed table cell, the equation shown twice (old struck, new inserted), the moved
    # paragraph said as moved, the added and removed blocks
    assert page.locator("td del").first.inner_text() == "0.50"
    assert page.locator("td ins").first.inner_text() == "0.55"
    assert page.locator("del math").count() >= 1 and page.locator("ins math").count() >= 1
    assert "moved here from 1 Introduction (S1.p3)" in page.locator("p.moved").inner_text()
    assert page.locator("ins.block").count() >= 2 and page.locator("del.block").count() == 1
    # every changed section links to its page; unchanged ones are folded
    assert page.locator("section#S4 h2 a").get_attribute("href") == f"/{NEW}/sections/S4"
    assert page.locator("details.same").count() >= 5
    assert page.locator("ul.numbers li").inner_text().startswith("0.50")
    _screenshot(page, f"changes-full-{width}")


def test_the_changes_page_of_a_corpus_pair_fits_the_window(server, viewer) -> None:
    width, page = viewer
    page.goto(f"{server.url}/local/pair-new/changes/local/pair-old")
    size = PHONE if width == "375px" else DESKTOP
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
    assert page.locator("section.change").count() >= 1
    _screenshot(page, f"changes-2403.04706-{width}")


def test_a_cut_read_since_says_how_to_get_the_rest_with_since(http) -> None:
    answer = http.get(f"/{NEW}/sections/S4.md", params={"since": OLD, "maxTokens": 100}).text
    assert tokens_of(answer) <= 100
    assert answer.rstrip().endswith(f"fetch /{NEW}/sections/S4.md?since={OLD}]")
