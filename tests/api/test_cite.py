"""Citable answers (contract §4 cite): public permalinks and hashes for every source kind, cite by
text over REST, MCP and the command line with identical answers; reads that always carry text;
MCP details a client meets (GET /mcp, capabilities, the references shapes, the whole paper)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import unicodedata
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from paperanchor import service
from paperanchor.errors import NotFound
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.render.markdown import tokens_of
from tests.api.test_mcp import call, session, text_of
from tests.conftest import FIXTURES, ROOT
from tests.corpus_pages import PAPER_PAGES, fixture_path, parsed

# A paragraph of the fixture `short` (S2.p2), as the paper says it.
PARAGRAPH = (
    "Between two consecutive anchors the remaining paragraphs are aligned with a standard "
    "dynamic program."
)


def test_cite_answers_a_permalink_and_a_hash_for_an_arxiv_html_paper(http: httpx.Client) -> None:
    answer = http.get("/2501.11120v1/cite/S2.p1.json").json()
    assert answer["permalink"] == "https://arxiv.org/html/2501.11120v1#S2.p1"
    normal = " ".join(unicodedata.normalize("NFC", answer["text"]).split())
    assert answer["hash"] == hashlib.sha256(normal.encode()).hexdigest()[:16]


def test_cite_answers_ar5ivs_address_for_an_ar5iv_rendering(http: httpx.Client) -> None:
    response = http.get("/2307.00235/cite/S1.json")  # a page under the test server's 2 MB cap
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["permalink"] == "https://ar5iv.labs.arxiv.org/html/2307.00235#S1"
    assert len(answer["hash"]) == 16 and int(answer["hash"], 16) >= 0


def test_a_local_document_has_no_permalink_but_a_hash(http: httpx.Client) -> None:
    answer = http.get("/local/short/cite/S2.p2.json").json()
    assert answer["permalink"] is None
    assert answer["text"].startswith(PARAGRAPH) and len(answer["hash"]) == 16


def test_permalinks_are_public_addresses_whatever_upstream_is_configured() -> None:
    # the replay serves arXiv at 127.0.0.1: a quote never carries that address
    meta = LoadedPaper(parsed("html/2501.11120v1.arxiv.html"), "2501.11120", "2501.11120v1", 1)
    meta = LoadedPaper(meta.document, "2501.11120", "2501.11120v1", 1, True, "arxiv", "http://x/")
    assert service.permalink(meta, "S2") == "https://arxiv.org/html/2501.11120v1#S2"
    pdf = LoadedPaper(meta.document, "1706.03762", "1706.03762v5", 5, True, "pdf")
    assert service.permalink(pdf, "S1.p1") == "https://arxiv.org/abs/1706.03762v5"


# cite by text: (quote, how it matches)
QUOTES = [
    (PARAGRAPH, "exact"),
    ("  between TWO consecutive   anchors the remaining PARAGRAPHS are aligned ", "exact"),
    ("Between two consecutive anchers the remaining paragraphs are aligned with a", "fuzzy"),
]


def _cli_cite(text: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "paperanchor.cli", "cite", "local/short", "--text", text, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "PAPERANCHOR_LOCAL_DIR": str(FIXTURES / "html"),
            "PAPERANCHOR_OFFLINE": "1",
            "PAPERANCHOR_PUBLIC_URL": "http://cited.example",
            "PAPERANCHOR_CACHE_DIR": "/tmp/paperanchor-cite-test-cache",
        },
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


@pytest.mark.parametrize(("quote", "match"), QUOTES)
def test_cite_by_text_finds_the_paragraph_over_rest_mcp_and_the_cli(
    server: Any, http: httpx.Client, quote: str, match: str
) -> None:
    rest = http.get(f"/local/short/cite.json?text={quote_param(quote)}").json()
    mcp = call(f"{server.url}/mcp", "cite", {"paper": "local/short", "text": quote})
    cli = _cli_cite(quote)

    assert rest["anchor"] == "S2.p2" and rest["match"] == match
    assert rest["text"].startswith(PARAGRAPH)
    if match == "fuzzy":
        assert 90 <= rest["score"] < 100
    else:
        assert "score" not in rest
    assert mcp.is_error is False and mcp.structured_content == rest
    # the command line hands out its own public URL; all else is the same answer
    assert {k: v for k, v in cli.items() if k != "url"} == {
        k: v for k, v in rest.items() if k != "url"
    }


def quote_param(text: str) -> str:
    return quote(text, safe="")


def test_a_made_up_quote_is_not_found_and_names_the_closest_passage(
    server: Any, http: httpx.Client
) -> None:
    made_up = "Anchors are aligned by a quantum annealer running on a satellite."
    rest = http.get(f"/local/short/cite.json?text={quote_param(made_up)}")
    mcp = call(f"{server.url}/mcp", "cite", {"paper": "local/short", "text": made_up})

    assert rest.status_code == 404
    detail = rest.json()["error"]["detail"]
    assert detail.startswith("No passage of local/short contains")
    assert "; the closest is " in detail and "(score " in detail
    assert mcp.is_error and text_of(mcp) == f"not-found: {detail}"


def test_a_short_quote_cannot_match_inside_a_long_made_up_one() -> None:
    paper = Paper.open(LoadedPaper(parsed("generated/synthetic.html"), "local/s", "local/s"))
    footnote = next(u.text for u in paper.units() if u.anchor.startswith("footnote"))
    padded = f"{footnote} " + "and then a long sentence that the paper never wrote " * 4
    with pytest.raises(NotFound):
        service.cite_text(paper, padded, "http://x")


@pytest.mark.parametrize("text", ["too short", "x" * 2001])
def test_a_quote_out_of_range_is_a_bad_request(http: httpx.Client, text: str) -> None:
    answer = http.get(f"/local/short/cite.json?text={quote_param(text)}")
    assert answer.status_code == 400 and "10–2000 characters" in answer.json()["error"]["detail"]


def test_cite_over_mcp_takes_an_anchor_or_a_text(server: Any) -> None:
    both = call(
        f"{server.url}/mcp", "cite", {"paper": "local/short", "anchor": "S1", "text": "x" * 20}
    )
    neither = call(f"{server.url}/mcp", "cite", {"paper": "local/short"})
    for result in (both, neither):
        assert result.is_error and text_of(result).startswith("bad-request: cite takes an anchor")


# -- reads that always carry text ---------------------------------------------------------------


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_a_read_of_100_tokens_of_a_first_section_carries_body_text_within_budget(
    name: str,
) -> None:
    paper = Paper.open(LoadedPaper(parsed(name), "local/x", "local/x"))
    # the first section of the paper's own (a broken conversion's front matter lands in "body")
    sections = paper.document.sections
    first = next((s for s in sections if s.kind != "body" and paper.tokens(s.id) > 60), sections[0])
    result = service.read(paper, first.id, 100)
    assert result.tokens == tokens_of(result.markdown) <= 100, result.markdown
    body = [c for c in result.markdown.split("\n\n") if c and not c.startswith(("#", "…["))]
    assert any(len(chunk) >= 20 for chunk in body), result.markdown
    if result.truncated:
        assert result.markdown.rstrip().endswith(f"fetch /local/x/sections/{first.id}.md]") or (
            f"/local/x/sections/{paper.index.alias_of.get(first.id)}.md]" in result.markdown
        )


def test_the_whole_paper_cut_short_carries_the_abstracts_text(http: httpx.Client) -> None:
    markdown = http.get("/local/full.md?maxTokens=100").text
    assert tokens_of(markdown) <= 100
    assert "# Abstract\n\nReaders annotate papers" in markdown
    assert markdown.rstrip().endswith("fetch /local/full/outline.json]")


def test_the_truncation_line_speaks_each_front_door(server: Any, http: httpx.Client) -> None:
    rest = http.get("/local/full/sections/S2.md?maxTokens=100").text
    whole = http.get("/local/full/sections/S2.json?anchors=1").json()["tokens"]  # as MCP reads
    mcp = text_of(call(f"{server.url}/mcp", "read", {**FULL_S2, "maxTokens": 100}))
    assert rest.rstrip().endswith("; fetch /local/full/sections/S2.md]")
    assert mcp.rstrip().endswith(f"; call read with maxTokens={whole}]")


FULL_S2 = {"paper": "local/full", "anchor": "S2"}


def test_read_with_the_anchor_paper_is_the_whole_paper(server: Any, http: httpx.Client) -> None:
    whole = http.get("/local/short.md?maxTokens=8000&anchors=1").text
    result = call(f"{server.url}/mcp", "read", {"paper": "local/short", "anchor": "paper"})
    assert text_of(result) == whole
    cut = text_of(call(f"{server.url}/mcp", "read", {"paper": "local/full", "anchor": "paper",
                                                     "maxTokens": 100}))  # fmt: skip
    assert tokens_of(cut) <= 100 and "call read with maxTokens=" in cut


# -- MCP details ------------------------------------------------------------------------------


def test_get_on_mcp_is_405_not_a_stream_that_never_ends(http: httpx.Client) -> None:
    answer = http.get("/mcp", headers={"Accept": "text/event-stream"}, timeout=5)
    assert answer.status_code == 405 and answer.headers["allow"] == "POST"
    assert answer.json()["error"]["code"] == "bad-request"


def test_the_server_advertises_tools_only(server: Any) -> None:
    async def capabilities(client: Any) -> Any:
        return client.server_capabilities

    found = session(f"{server.url}/mcp", capabilities)
    assert found.tools is not None
    assert found.prompts is None and found.resources is None


def test_references_has_one_schema_with_both_forms_named(server: Any) -> None:
    async def tools(client: Any) -> Any:
        return (await client.list_tools()).tools

    (references,) = [t for t in session(f"{server.url}/mcp", tools) if t.name == "references"]
    properties = references.output_schema["properties"]
    assert {"idv", "references", "reference"} <= set(properties)
    listing = call(f"{server.url}/mcp", "references", {"paper": "local/short"})
    single = call(f"{server.url}/mcp", "references", {"paper": "local/short", "id": "2"})
    assert set(listing.structured_content) == {"idv", "references"}
    assert set(single.structured_content) == {"idv", "reference"}
    assert single.structured_content["reference"]["citedIn"] == ["S1.p1"]


def test_fixture_short_is_where_the_paragraph_is() -> None:
    assert PARAGRAPH.encode() in fixture_path("short").read_bytes().replace(b"\n", b" ")
