"""Every corpus PDF served end to end (issue 13): a live server whose upstream is the replay,
where neither arXiv HTML nor ar5iv has the paper and arXiv's PDF does.

For each PDF of ../shared/corpus/pdf (the two one-page excerpts served as the PDFs of their
ids), over REST and then over MCP with the official client: the outline (source pdf, quality
degraded, the version of the PDF's margin stamp), a `read` of each top-level section, `cite`
(the abstract page as permalink), `search_paper` and `references`, with the MCP answers equal
to the REST ones. What was checked by eye per paper is tests/test_pdf_papers.py's table.
`pytest -s` prints, per paper, the time of each door and the tokens.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from paperanchor.compact import compact
from paperanchor.parse import PARSER_VERSION
from paperanchor.refs import parse_ref
from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.conftest import FIXTURES
from tests.parse.pdf_samples import scanned_pdf
from tests.replay import as_pdf, cache_entries, huge_pdf, no_html, page, pdf, truncated
from tests.test_pdf_papers import PAPERS, Expected


@dataclass(frozen=True)
class Served:
    """A corpus PDF as the paper it is served for."""

    expected: Expected
    reference: str  # what is asked for
    idv: str  # what it resolves to
    confirmed: bool
    script: str | None  # the PDF route the test scripts (excerpts), else the replay's default

    @property
    def paper(self) -> str:
        return parse_ref(self.reference).paper


def _served(expected: Expected) -> Served:
    stem = Path(expected.file).stem
    if expected.file == "excerpts/1903.10676-1page.pdf":  # no stamp, a bare id: unconfirmed
        return Served(expected, "1903.10676", "1903.10676", False, "/pdf/1903.10676")
    if expected.file == "excerpts/2305.03393v1-pg9.pdf":  # no stamp, a versioned request
        return Served(expected, "2305.03393v1", "2305.03393v1", True, "/pdf/2305.03393v1")
    # a bare id, answered at /pdf/<id> without a redirect: the version is the stamp's
    return Served(expected, stem.split("v")[0], stem, True, None)


SERVED = [_served(expected) for expected in PAPERS]


@pytest.fixture(scope="module")
def pdf_server(
    replay_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    cache = tmp_path_factory.mktemp("pdf-cache")
    # the default cap (PAPERANCHOR_MAX_HTML_MB=50): the corpus PDFs run to 3.7 MB
    with live_server(settings_for(replay_server, cache, max_html_mb=50)) as live:
        yield live


def _mcp(url: str, calls: list[tuple[str, dict[str, Any]]]) -> list[CallToolResult]:
    """The calls in order over one MCP client session (Streamable HTTP)."""

    async def main() -> list[CallToolResult]:
        async with Client(f"{url}/mcp") as client:
            return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return asyncio.run(main())


def _text(result: CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, TextContent)
    return content.text


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, (response.request.url, response.text[:300])
    return response.json() if "json" in response.headers["content-type"] else response.text


# fields of the outline that do not depend on when it is asked (tldr may still be pending)
MARKER_LINE = re.compile(r"<!--¶[0-9]+-->\n\n")
_STABLE = ("paper", "idv", "version", "versionConfirmed", "source", "sourceUrl", "title")
_STABLE += ("authors", "abstract", "tokens", "counts", "sections", "quality", "license")


@pytest.mark.parametrize("served", SERVED, ids=[s.reference for s in SERVED])
def test_a_corpus_pdf_is_served_over_rest_and_mcp_when_no_html_exists(
    pdf_server: LiveServer, replay: Any, served: Served
) -> None:
    expected, idv = served.expected, served.idv
    if served.script is not None:
        replay.script(served.script, pdf(replay.corpus_pdf_bytes(expected.file)))
    tops: list[str] = expected.sections
    first = tops[0]
    with pdf_server.client() as http:
        # -- REST ------------------------------------------------------------------------
        started = time.perf_counter()
        outline = _ok(http.get(f"/{served.reference}/outline.json"))
        cold = time.perf_counter() - started

        assert (outline["source"], outline["quality"]) == ("pdf", "degraded")
        assert (outline["idv"], outline["versionConfirmed"]) == (idv, served.confirmed)
        assert outline["version"] == (int(idv.rsplit("v", 1)[1]) if "v" in idv else None)
        assert outline["sourceUrl"] == f"{replay.pdf_url}/{served.reference}"
        assert expected.title in outline["title"]
        assert [section["id"] for section in outline["sections"]] == tops
        low, high = expected.references
        assert low <= outline["counts"]["references"] <= high

        started = time.perf_counter()
        reads = {}
        for section_id in tops:
            reads[section_id] = _ok(
                # with the anchor markers an MCP read carries (contract §11)
                http.get(f"/{idv}/sections/{quote(section_id)}.json?maxTokens=100000&anchors=1")
            )
            heading, _, body = MARKER_LINE.sub("", reads[section_id]["markdown"]).partition("\n\n")
            assert heading.startswith("#") and len(body.split()) >= 5, (section_id, heading)
            assert reads[section_id]["truncated"] is False
        cite = _ok(http.get(f"/{idv}/cite/{first}.p1.json"))
        assert cite["anchor"] == f"{first}.p1" and len(cite["text"].split()) >= 10
        assert cite["url"] == f"{pdf_server.url}/{idv}/sections/{first}.md"
        assert cite["permalink"] == f"https://arxiv.org/abs/{idv}"  # a PDF's: the abstract page
        query = urlencode({"q": expected.query, "limit": 5})
        hits = _ok(http.get(f"/{idv}/search.json?{query}"))
        assert expected.found_in in [hit["sectionId"] for hit in hits]
        bibliography = _ok(http.get(f"/{idv}/references.json"))
        assert len(bibliography["references"]) == outline["counts"]["references"]
        entry = _ok(http.get(f"/{idv}/references/1.json")) if bibliography["references"] else None
        assert entry is None or entry["id"] == "bib.bib1"
        page = _ok(http.get(f"/{idv}", headers={"Accept": "text/html"}))
        assert f"https://arxiv.org/abs/{idv}" in page  # the outline page links the source
        _ok(http.get(f"/{idv}/sections/{quote(first)}", headers={"Accept": "text/html"}))
        rest_s = time.perf_counter() - started
        rest_calls = len(tops) + 5 + (entry is not None)
        again = _ok(http.get(f"/{idv}/outline.json"))

        # -- MCP, the same questions -------------------------------------------------------
        paper = {"paper": idv}
        calls: list[tuple[str, dict[str, Any]]] = [("outline", {**paper, "wait": 0})]
        calls += [("read", {**paper, "anchor": s, "maxTokens": 100_000}) for s in tops]
        calls += [
            ("cite", {**paper, "anchor": f"{first}.p1"}),
            ("search_paper", {**paper, "query": expected.query, "limit": 5}),
            ("references", paper),
        ]
        started = time.perf_counter()
        results = _mcp(pdf_server.url, calls)
        mcp_s = time.perf_counter() - started

    assert not any(result.is_error for result in results), [_text(r) for r in results]
    mcp_outline, *mcp_reads = results[: 1 + len(tops)]
    mcp_cite, mcp_hits, mcp_references = results[1 + len(tops) :]
    assert mcp_outline.structured_content is not None
    compacted = compact(again)  # the outline an agent receives (contract §11)
    assert {k: mcp_outline.structured_content.get(k) for k in _STABLE} == {
        k: compacted.get(k) for k in _STABLE
    }
    for section_id, result in zip(tops, mcp_reads, strict=True):
        assert _text(result) == reads[section_id]["markdown"]
    assert mcp_cite.structured_content == cite
    assert mcp_hits.structured_content == {"hits": hits}
    assert mcp_references.structured_content == bibliography

    # fetched once: arXiv HTML and ar5iv have no rendering, the PDF is read; MCP hit the cache
    fetched = [p for p in replay.paths() if not p.startswith(("/api/", "/graph/"))]
    asked = served.reference
    assert fetched == [f"/html/{asked}", f"/ar5iv/html/{served.paper}", f"/pdf/{asked}"]

    outline_tokens = math.ceil(len(json.dumps(outline)) / 4)
    print(
        f"\n{served.reference:>13} -> {idv:<13} cold outline {cold:5.2f} s, "
        f"REST {rest_calls} calls {rest_s:5.2f} s, MCP {len(calls)} calls {mcp_s:5.2f} s; "
        f"paper {outline['tokens']:,} tokens, outline JSON {outline_tokens:,} tokens, "
        f"{len(tops)} top-level sections, {outline['counts']['references']} references"
    )


# -- faults, through the server: the error in both doors, nothing of the fetch cached --------

BODY = "2304.02623v1.pdf"  # a 4-page ACM paper


FAULTS = {
    # name: (replies by path, status, wire text)
    "cut-short": (
        lambda r, p: {f"/pdf/{p}": as_pdf(truncated(r.corpus_pdf_bytes(BODY), 400_000))},
        502,
        "upstream-error: arXiv PDF sent a broken response",
    ),
    "past-the-cap": (
        lambda r, p: {f"/pdf/{p}": huge_pdf(51 * 2**20)},
        413,
        "too-large: arXiv's PDF of {p} is larger than PAPERANCHOR_MAX_HTML_MB (52428800 bytes)",
    ),
    "html-as-the-pdf": (
        lambda r, p: {
            f"/html/{p}": no_html(p),
            f"/pdf/{p}": page(r.corpus_page("2501.11120v1.arxiv.html")),
        },
        404,
        "not-found: No HTML rendering of {p} on arXiv or ar5iv, and no PDF on arXiv",
    ),
    "scanned": (
        lambda r, p: {f"/pdf/{p}": pdf(scanned_pdf())},
        404,
        "not-found: No HTML rendering of {p} on arXiv or ar5iv, and arXiv's PDF of {p} cannot "
        "be read: the PDF has no text layer (a scanned paper?): there is no text to read",
    ),
}


@pytest.mark.parametrize("fault", list(FAULTS), ids=list(FAULTS))
def test_a_bad_pdf_is_the_same_clear_error_in_both_doors_and_nothing_is_cached(
    pdf_server: LiveServer, replay: Any, fault: str
) -> None:
    script, status, wire = FAULTS[fault]
    paper = f"2402.{list(FAULTS).index(fault) + 100:05d}"
    for path, reply in script(replay, paper).items():
        replay.script(path, reply)
    wire = wire.format(p=paper)

    with pdf_server.client() as http:
        response = http.get(f"/{paper}/outline.json")
    (result,) = _mcp(pdf_server.url, [("outline", {"paper": paper, "wait": 0})])

    error = response.json()["error"]
    assert response.status_code == error["status"] == status
    assert f"{error['code']}: {error['detail']}".startswith(wire)
    assert result.is_error and _text(result).startswith(wire)
    pdf_server.stored()
    papers = [key for key in cache_entries(pdf_server.settings.cache_dir) if paper in key]
    # a not-found is remembered for NOT_FOUND_TTL_S, as every source's "not here" is
    assert papers == ([f"missing:{paper}"] if status == 404 else [])


def test_a_failed_arxiv_rendering_and_no_ar5iv_page_serve_the_pdf_through_the_server(
    pdf_server: LiveServer, replay: Any
) -> None:
    paper = "2402.00200"  # a paper of its own: the module's server caches what it served
    replay.script(f"/html/{paper}", page(replay.corpus_page("2608.30667v1.arxiv.html")))
    replay.script(f"/pdf/{paper}", pdf(replay.corpus_pdf_bytes(BODY)))

    with pdf_server.client() as http:
        outline = _ok(http.get(f"/{paper}/outline.json"))

    assert (outline["source"], outline["quality"]) == ("pdf", "degraded")
    assert outline["title"].startswith("Beyond Summarization")
    # the stamp names 2304.02623v1, another paper: no evidence of this one's version
    assert (outline["idv"], outline["versionConfirmed"]) == (paper, False)
    fetched = [p for p in replay.paths() if not p.startswith(("/api/", "/graph/"))]
    assert fetched == [f"/html/{paper}", f"/ar5iv/html/{paper}", f"/pdf/{paper}"]
    # the PDF's tree only: nothing of the failed rendering
    pdf_server.stored()
    keys = {key for key in cache_entries(pdf_server.settings.cache_dir) if paper in key}
    assert keys == {f"paper:{PARSER_VERSION}:{paper}"}


def test_a_private_draft_in_the_local_directory_is_read_through_the_server(
    replay: Any, tmp_path: Path
) -> None:
    drafts = tmp_path / "drafts"
    drafts.mkdir()
    (drafts / "draft.pdf").symlink_to(FIXTURES / "pdf" / "short.pdf")
    settings = settings_for(replay, tmp_path / "cache", local_dir=drafts, offline=True)

    with live_server(settings) as server, server.client() as http:
        outline = _ok(http.get("/local/draft/outline.json"))
        cite = _ok(http.get("/local/draft/cite/S2.p1.json"))
        landing = _ok(http.get("/", headers={"Accept": "text/html"}))
        (result,) = _mcp(server.url, [("read", {"paper": "local/draft", "anchor": "S2"})])

    assert (outline["source"], outline["quality"]) == ("local", "degraded")
    assert outline["sourceUrl"] == "draft.pdf"  # the file's name, never the server's folder
    assert outline["title"] == "Sparse Anchoring for Incremental Document Alignment"
    assert [s["id"] for s in outline["sections"]] == ["S1", "S2", "S3", "bib"]
    assert cite["permalink"] is None  # a local document has no public address
    assert 'href="/local/draft"' in landing  # listed on the landing page
    assert _text(result).startswith(
        "# 2 Method\n\n<!--¶8-->\n\nLet the old version consist of paragraphs"
    )
    assert replay.requests == []
