"""REST (contract §6, §9) through a real server on a loopback port: every route, its answer's shape,
and each of its error codes in the route's wire form."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest
from pydantic import TypeAdapter

from paperanchor.api import models
from paperanchor.errors import internal
from paperanchor.render.markdown import tokens_of
from tests.api.conftest import FIXTURE_HTML, LEGACY, settings_for
from tests.api.live import live_server
from tests.api.test_mcp import call, text_of
from tests.reliability.hostile_pages import SPACED_IDS, spaced_ids
from tests.replay import huge, page, random_bytes, status

JSON_TYPE = "application/json"
MARKDOWN_TYPE = "text/markdown; charset=utf-8"
HTML_TYPE = "text/html; charset=utf-8"


def json_of(response: httpx.Response, model: Any) -> Any:
    """The body, checked against the route's declared model (extra fields are refused)."""
    assert response.headers["content-type"] == JSON_TYPE
    body = response.json()
    TypeAdapter(model).validate_python(body)
    return body


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = json_of(response, models.Error)
    error: dict[str, Any] = body["error"]
    assert error["status"] == response.status_code
    assert response.headers["cache-control"] == "no-store" and "etag" not in response.headers
    return error


# -- success ---------------------------------------------------------------------------------

JSON_ROUTES = [
    ("/local/full/outline.json", models.Outline),
    ("/local/full/sections/S2.1.json", models.SectionText),
    ("/local/full/cite/S2.SS1.p1.json", models.Cite),
    ("/local/full/references.json", models.References),
    ("/local/full/references/%5B2%5D.json", models.Reference),  # "[2]", as printed
    ("/local/full/figures/F1.json", models.Figure),
    ("/local/full/figures/S4.T2.json", models.Table),
    ("/local/full/equations/E1.json", models.Equation),
    ("/local/full/search.json?q=paragraph+identifier&limit=2", list[models.SearchHit]),
    ("/healthz", models.Health),
]


def test_a_reference_cited_only_in_a_table_is_cited_in_that_table(http, replay):
    # 2404.09516v1 (a survey) cites 45 of its 269 entries only in its comparison tables
    replay.script("/html/2401.00020v1", page(replay.corpus_page("2404.09516v1.arxiv.html")))

    entry = http.get("/2401.00020v1/references/bib.bib114.json")

    assert entry.status_code == 200, entry.text
    assert entry.json()["citedIn"] == ["S2.T5"]
    table = http.get("/2401.00020v1/figures/S2.T5.json").json()
    assert table["kind"] == "table" and "[114]" in " ".join(map(" ".join, table["rows"]))


@pytest.mark.parametrize(("path", "model"), JSON_ROUTES, ids=[p for p, _ in JSON_ROUTES])
def test_every_json_route_answers_its_declared_shape(http, path, model):
    response = http.get(path)

    assert response.status_code == 200, response.text
    json_of(response, model)


def test_the_json_routes_answer_what_the_spec_says_for_a_fixture(http, server):
    section = http.get("/local/full/sections/S2.1.json").json()
    assert (section["id"], section["title"], section["truncated"]) == (
        "S2.SS1",
        "Paragraph representation",
        False,
    )
    assert section["markdown"].startswith("## 2.1 Paragraph representation\n")

    cited = http.get("/local/full/cite/S2.SS1.p1.json").json()
    assert cited["url"] == f"{server.url}/local/full/sections/S2.SS1.md"
    assert cited["anchor"] == "S2.SS1.p1"

    entry = http.get("/local/full/references/%5B2%5D.json").json()
    assert (entry["id"], entry["citedIn"]) == ("bib.bib2", ["S1.p2"])
    assert len(http.get("/local/full/references.json").json()["references"]) == 5

    figure = http.get("/local/full/figures/F1.json").json()
    assert figure["id"] == "S4.F1" and [p["id"] for p in figure["panels"]] == [
        "S4.F0.sf1",
        "S4.F0.sf2",
    ]
    table = http.get("/local/full/figures/T2.json").json()
    assert (table["kind"], table["id"], table["headerRows"]) == ("table", "S4.T2", 1)

    equation = http.get("/local/full/equations/E1.json").json()
    assert (equation["id"], equation["number"]) == ("S2.E1", "1")

    hits = http.get("/local/full/search.json", params={"q": "paragraph", "limit": 2}).json()
    assert 1 <= len(hits) <= 2
    assert http.get("/local/full/search.json", params={"q": "zyzzyva"}).json() == []


def test_the_outline_names_every_author_of_blocks_that_hold_many(http):
    # fixtures/src/manyauthors: a tabular per author, then lines of bold names with marks
    outline = json_of(http.get("/local/manyauthors/outline.json"), models.Outline)
    assert outline["authors"] == [
        "Linnea Sandoval", "Tariq Okafor", "Wen Haruki",
        "Marta Quispe", "Oskar Lindgren", "Ines Carvalho", "Dmitri Volkov", "Aiyana Redcloud",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "starts"),
    [
        ("/local/full.md", "# Stable Paragraph Identifiers Across Manuscript Revisions\n"),
        ("/local/full/sections/S2.SS1.md", "## 2.1 Paragraph representation\n"),
        ("/local/full/sections/introduction.md", "# 1 Introduction\n"),  # by slug
        (f"/{LEGACY}/sections/S1.md", "# 1 Introduction\n"),  # a legacy id keeps its slash
        (f"/{LEGACY}.md", "# Sparse Anchoring for Incremental Document Alignment\n"),
    ],
)
def test_markdown_routes_answer_text_markdown(http, path, starts):
    response = http.get(path)

    assert response.status_code == 200
    assert response.headers["content-type"] == MARKDOWN_TYPE
    assert response.text.startswith(starts)
    assert "[truncated" not in response.text  # whole unless ?maxTokens= asks for less


def test_max_tokens_cuts_the_markdown_and_says_where_the_rest_is(http):
    whole = http.get("/local/full/sections/S2.md").text
    cut = http.get("/local/full/sections/S2.md", params={"maxTokens": 100})

    assert len(cut.text) < len(whole) and tokens_of(cut.text) <= 100
    assert cut.text.rstrip().endswith("fetch /local/full/sections/S2.md]")
    as_json = http.get("/local/full/sections/S2.json", params={"maxTokens": 100}).json()
    assert as_json["truncated"] is True and as_json["markdown"] == cut.text


def test_the_paper_page_is_html_unless_accept_prefers_json(http):
    page = http.get("/local/full", headers={"Accept": "text/html,*/*;q=0.8"})
    assert page.headers["content-type"] == HTML_TYPE
    assert "Stable Paragraph Identifiers Across Manuscript Revisions</h1>" in page.text
    assert page.headers["vary"] == "Accept"

    as_json = http.get("/local/full", headers={"Accept": "application/json"})
    assert json_of(as_json, models.Outline) == http.get("/local/full/outline.json").json()

    assert http.get("/local/full").headers["content-type"] == HTML_TYPE  # curl's */*


def test_the_landing_page_opens_a_paper_by_any_spelling_of_its_reference(http):
    landing = http.get("/")
    assert landing.status_code == 200 and '<form class="open" method="get" action="/">' in (
        landing.text
    )

    opened = http.get("/", params={"paper": " https://arxiv.org/abs/hep-th/9901001v2 "})

    assert opened.status_code == 303
    assert opened.headers["location"] == f"/{LEGACY}"


def test_docs_openapi_healthz_and_metrics_answer(http):
    spec = http.get("/openapi.json").json()
    assert "/{paper}/sections/{anchor}.md" in spec["paths"]
    assert "Outline" in spec["components"]["schemas"]
    assert "swagger-ui" in http.get("/docs").text
    metrics = http.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert "paperanchor_http_requests_total" in metrics.text


# -- errors, in each wire form ---------------------------------------------------------------

# (path, status, code, detail fragment); the wire form follows from the route's suffix
LOCAL_ERRORS = [
    ("/not-a-paper/outline.json", 400, "bad-request", 'Not a paper reference: "not-a-paper"'),
    ("/local/full/sections/S1.json?maxTokens=5", 400, "bad-request", "maxTokens=5 is out of range"),
    (
        "/local/full/sections/S1.md?maxTokens=abc",
        400,
        "bad-request",
        "maxTokens must be an integer",
    ),
    ("/local/full/search.json", 400, "bad-request", "q is required"),
    ("/local/full/search.json?q=x&limit=51", 400, "bad-request", "limit=51 is out of range"),
    ("/local/full/sections/intro.md", 404, "not-found", "did you mean introduction (S1)?"),
    ("/local/full/cite/S9.json", 404, "not-found", 'No anchor "S9" in local/full'),
    ("/local/full/references/99.json", 404, "not-found", 'No reference "99" in local/full'),
    ("/local/full/figures/E1.json", 404, "not-found", "No figure or table"),
    ("/local/full/equations/F1.json", 404, "not-found", 'No equation "F1"'),
    ("/local/full/outline.json?", 200, None, None),  # control: a query string changes nothing
    ("/local/nothing.md", 404, "not-found", "Unknown local document local/nothing"),
    ("/local/nothing/references.json", 404, "not-found", "Unknown local document"),
]


@pytest.mark.parametrize(("path", "status", "code", "detail"), LOCAL_ERRORS)
def test_errors_come_in_the_routes_wire_form(http, path, status, code, detail):
    response = http.get(path)

    assert response.status_code == status, response.text
    if code is None:
        return
    if path.split("?")[0].endswith(".md"):
        assert response.headers["content-type"] == MARKDOWN_TYPE
        assert response.text.startswith(f"{code}: ") and detail in response.text
    else:
        error = error_of(response)
        assert error["code"] == code and detail in error["detail"], error


def test_an_error_on_the_paper_page_is_an_html_page_with_the_same_status(http):
    response = http.get("/local/nothing")

    assert response.status_code == 404
    assert response.headers["content-type"] == HTML_TYPE
    assert "Unknown local document local/nothing" in response.text
    as_json = http.get("/local/nothing", headers={"Accept": "application/json"})
    assert error_of(as_json)["code"] == "not-found"


def test_a_bad_reference_on_the_landing_page_is_a_400_page(http):
    response = http.get("/", params={"paper": "<b>nonsense</b>"})

    assert response.status_code == 400 and response.headers["content-type"] == HTML_TYPE
    assert "&lt;b&gt;nonsense&lt;/b&gt;" in response.text and "<b>nonsense" not in response.text


def test_a_method_other_than_get_is_405_with_allow(http):
    response = http.post("/local/full/outline.json")

    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"
    assert error_of(response)["code"] == "bad-request"


# -- upstream errors, through the replay upstream ---------------------------------------------


def test_an_unknown_paper_is_404_after_asking_arxiv_ar5iv_and_the_pdf(http, replay):
    response = http.get("/1706.99999/outline.json")

    assert error_of(response) == {
        "code": "not-found",
        "status": 404,
        "detail": "Unknown paper 1706.99999",
    }
    assert replay.paths() == ["/html/1706.99999", "/ar5iv/html/1706.99999", "/pdf/1706.99999"]


def test_a_page_over_the_size_cap_is_413(http, replay):
    replay.script("/html/2401.00010", huge(3 * 1024 * 1024))

    error = error_of(http.get("/2401.00010/outline.json"))

    assert (error["code"], error["status"]) == ("too-large", 413)
    assert "2401.00010" in error["detail"]


def test_garbage_from_upstream_is_502(http, replay):
    replay.script("/html/2401.00011", random_bytes(4096))

    response = http.get("/2401.00011/sections/S1.md")

    assert response.status_code == 502
    assert response.text.startswith("upstream-error: ") and "2401.00011" in response.text


def test_an_upstream_that_keeps_failing_is_503(http, replay):
    replay.script("/html/2401.00012", status(503))

    error = error_of(http.get("/2401.00012/references.json"))

    assert (error["code"], error["status"]) == ("unavailable", 503)
    assert replay.count("/html/2401.00012") == 3  # 1 + PAPERANCHOR_MAX_RETRIES


def test_an_upstream_429_beyond_the_backoff_cap_is_503_with_retry_after(replay, tmp_path):
    # Its own server: the host stays closed for 120 s after this.
    replay.script("/html/2401.00013", status(429, retry_after=120))
    with live_server(settings_for(replay, tmp_path)) as live, live.client() as http:
        markdown = http.get("/2401.00013/sections/S1.md")
        page = http.get("/2401.00014")  # another paper, same host: refused without a request

    assert markdown.status_code == 503 and markdown.text.startswith("unavailable: ")
    assert 100 <= int(markdown.headers["retry-after"]) <= 120
    assert page.status_code == 503 and page.headers["content-type"] == HTML_TYPE
    assert "retry-after" in page.headers
    assert replay.paths() == ["/html/2401.00013"]


def test_a_bug_is_500_internal_without_a_trace(replay, papers_dir, tmp_path):
    def broken_parse(html: bytes, base_url: str) -> Any:
        raise RuntimeError("parser bug near /srv/secret/path")

    settings = settings_for(replay, tmp_path, local_dir=papers_dir)
    parts = {"parse": broken_parse, "parser_version": "broken"}
    with live_server(settings, **parts) as live, live.client() as http:
        as_json = http.get("/local/short/outline.json")
        as_text = http.get("/local/short/sections/S1.md")

    expected = internal(RuntimeError()).detail
    assert error_of(as_json) == {"code": "internal", "status": 500, "detail": expected}
    assert as_text.status_code == 500 and as_text.text == f"internal: {expected}\n"
    assert "secret" not in as_json.text + as_text.text


def test_a_local_papers_images_are_served_from_files_and_its_source_names_no_folder(http, server):
    outline = http.get("/local/full/outline.json").json()
    assert outline["sourceUrl"] == "full.html"  # the file's name, never the server's path
    figure = http.get("/local/full/figures/F2.json").json()
    [image] = figure["images"]
    assert image == f"{server.url}/files/full/fig-overview.png"
    answer = http.get(image)
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
    assert answer.content == (FIXTURE_HTML / "full" / "fig-overview.png").read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/files/full.html",  # pages are not images
        "/files/%2e%2e/%2e%2e/etc/passwd.png",  # httpx would resolve a literal "../" itself
        "/files/full/%2e%2e/%2e%2e/x.png",
        "/files//etc/hosts.png",
        "/files/full/%2E%2E%2F%2E%2E%2Fshort.html",
        "/files/full/missing.png",
    ],
)
def test_only_images_inside_the_local_directory_are_served(http, path):
    answer = http.get(path)
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "not-found"


def _long_paper(sections: int = 120) -> bytes:
    """A paper of about 150,000 tokens: 120 sections of 50 distinct sentences each."""
    body = "".join(
        f"<section class='ltx_section' id='S{s}'><h2 class='ltx_title'>{s} Part {s}</h2>"
        + "".join(
            f"<div class='ltx_para' id='S{s}.p{p}'><p class='ltx_p'>Sentence {s}.{p} says "
            "that revisions of preprints are counted once per version and compared by their "
            f"paragraphs, figures and equations, number {s * 100 + p}.</p></div>"
            for p in range(1, 51)
        )
        + "</section>"
        for s in range(1, sections + 1)
    )
    return (
        "<!DOCTYPE html><html><head><title>Long</title></head><body><article "
        f"class='ltx_document'><h1 class='ltx_title ltx_title_document'>Long</h1>{body}"
        "</article></body></html>"
    ).encode()


def test_the_whole_paper_markdown_is_never_cut_however_long(replay_server, tmp_path):
    local = tmp_path / "papers"
    local.mkdir()
    (local / "long.html").write_bytes(_long_paper())
    settings = settings_for(replay_server, tmp_path / "cache", local_dir=local)
    with live_server(settings) as server, server.client() as http:
        whole = http.get("/local/long.md")
        section = http.get("/local/long/sections/S120.md")
        cut = http.get("/local/long.md", params={"maxTokens": 100_000})
    assert whole.status_code == 200
    assert whole.text.rstrip().endswith("number 12050.")  # its last paragraph
    assert "[truncated:" not in whole.text
    assert "[truncated:" not in section.text
    # asked for a bound, it is cut and says where the rest is, in REST's own words
    assert len(cut.text) < len(whole.text) and "; fetch /local/long/outline.json]" in cut.text


def test_a_whole_paper_read_over_mcp_is_bounded_and_says_so_in_mcps_words():
    from paperanchor.paper import LoadedPaper
    from paperanchor.parse import parse_document
    from paperanchor.service import Paper, read

    paper = Paper.open(LoadedPaper(parse_document(_long_paper()), "local/long", "local/long"))
    result = read(paper, None, None, door="mcp")
    assert result.truncated and result.tokens <= 8_000
    assert result.markdown.rstrip().endswith("; call read with maxTokens=100000]")


def test_every_section_id_the_outline_lists_reads_its_own_section_over_rest_and_mcp(
    replay_server, tmp_path
):
    local = tmp_path / "papers"
    local.mkdir()
    (local / "spaced-ids.html").write_bytes(spaced_ids())
    (local / "short.html").write_bytes((FIXTURE_HTML / "short.html").read_bytes())
    settings = settings_for(replay_server, tmp_path / "cache", local_dir=local)
    with live_server(settings) as server, server.client() as http:
        outline = http.get("/local/spaced-ids/outline.json").json()
        ids = [section["id"] for section in outline["sections"]]
        rest = [http.get(f"/local/spaced-ids/sections/{quote(i, safe='')}.md") for i in ids]
        mcp = [
            call(f"{server.url}/mcp", "read", {"paper": "local/spaced-ids", "anchor": i})
            for i in ids
        ]
        padded = http.get(f"/local/short/sections/{quote(' S1 ')}.md")  # not an id: stripped

    assert ids == list(SPACED_IDS)
    for n, (answer, tool) in enumerate(zip(rest, mcp, strict=True), 1):
        assert answer.status_code == 200, answer.text
        assert answer.text.startswith(f"# {n} Part {n}\n") and f"Text of part {n}." in answer.text
        text = text_of(tool)
        assert not tool.is_error and text.startswith(f"# {n} Part {n}\n")
        assert f"Text of part {n}." in text
    assert padded.status_code == 200 and padded.text.startswith("# 1 ")
