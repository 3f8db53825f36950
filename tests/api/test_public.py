"""Public mode (contract §12, issue 25): a server anyone can reach serves a paper's text only where
its licence allows, and names the licence and the arXiv link where it does not. Through a real
server on loopback (REST, the pages) and the official MCP client, with corpus pages replayed as
arXiv serves them: 2402.08939v1 under CC BY 4.0, 2401.16380v1 under arXiv's non-exclusive
licence (both named by the page's furniture), a page that names none whose arXiv listing
(corpus/abs) does, and one that names none anywhere."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from paperanchor.licence import NON_EXCLUSIVE
from tests.api.conftest import FIXTURE_HTML, settings_for
from tests.api.live import LiveServer, live_server
from tests.api.test_mcp import call, text_of
from tests.replay import page

OPEN = "2402.08939v1"  # License: CC BY 4.0, in the page's furniture
CLOSED = "2401.16380v1"  # License: arXiv.org perpetual non-exclusive license
LISTED = "2004.10162v1"  # no licence in the page; corpus/abs/2004.10162.html: non-exclusive
UNKNOWN = "2501.11120v1"  # no licence in the page, and no listing
CLOSED_QUOTE = "by rephrasing articles on the web"


@pytest.fixture(scope="module")
def public(replay_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    replay_server.script(f"/html/{OPEN}", page(replay_server.corpus_page(f"{OPEN}.arxiv.html")))
    replay_server.script(f"/html/{CLOSED}", page(replay_server.corpus_page(f"{CLOSED}.arxiv.html")))
    # a page without furniture under an id whose listing the corpus keeps
    replay_server.script(f"/html/{LISTED}", page((FIXTURE_HTML / "short.html").read_bytes()))
    cache = tmp_path_factory.mktemp("public-cache")
    with live_server(settings_for(replay_server, cache, public=True)) as live:
        yield live
    replay_server.reset()


@pytest.fixture
def client(public: LiveServer) -> Iterator[httpx.Client]:
    with public.client() as http:
        yield http


def forbidden_detail(response: httpx.Response) -> str:
    assert response.status_code == 403, response.text
    if response.headers["content-type"].startswith("application/json"):
        error = response.json()["error"]
        assert error["code"] == "forbidden"
        return str(error["detail"])
    assert response.text.startswith("forbidden: ")
    return response.text


def test_a_cc_by_paper_is_served_whole(client):
    outline = client.get(f"/{OPEN}/outline.json").json()

    assert outline["license"] == "CC BY 4.0"
    assert client.get(f"/{OPEN}.md").status_code == 200
    section = "S1"
    assert client.get(f"/{OPEN}/sections/{section}.md").text.startswith("# 1")
    assert client.get(f"/{OPEN}/search.json", params={"q": "premise"}).json()
    assert client.get(f"/{OPEN}/sections/{section}").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        f"/{CLOSED}.md",
        f"/{CLOSED}/sections/S1.md",
        f"/{CLOSED}/sections/S1.json",
        f"/{CLOSED}/search.json?q=rephrase",
        f"/{CLOSED}/figures/F1.json",
        f"/{CLOSED}/cite/S1.p1.json",
        f"/{CLOSED}/equations/E1.json",
    ],
)
def test_the_text_of_a_non_exclusive_paper_is_forbidden_naming_its_licence(client, path):
    detail = forbidden_detail(client.get(path))

    assert NON_EXCLUSIVE in detail
    assert f"https://arxiv.org/abs/{CLOSED}" in detail
    assert "rephras" not in detail.split("licence")[0].lower()  # no text of the paper


def test_citing_a_node_of_a_non_exclusive_paper_names_its_permalink(client):
    detail = forbidden_detail(client.get(f"/{CLOSED}/cite/S1.p2.json"))
    unknown = client.get(f"/{CLOSED}/cite/S99.json")

    assert f"read it at https://arxiv.org/html/{CLOSED}#S1.p2" in detail
    assert unknown.status_code == 404


def test_a_non_exclusive_paper_keeps_its_structure_metadata_and_quote_check(client):
    outline = client.get(f"/{CLOSED}/outline.json").json()
    assert outline["license"] == NON_EXCLUSIVE
    assert [s["title"] for s in outline["sections"]][:2] == ["Introduction", "Related Work"]
    assert outline["contributions"] is None  # sentences of the introduction are its text
    assert client.get(f"/{CLOSED}/references.json").status_code == 200

    cited = client.get(f"/{CLOSED}/cite.json", params={"text": CLOSED_QUOTE}).json()

    assert cited["match"] == "exact" and cited["text"] == CLOSED_QUOTE
    assert cited["permalink"] == f"https://arxiv.org/html/{CLOSED}#{cited['anchor']}"
    assert len(cited["hash"]) == 16
    # the passage around the quote is the paper's text too
    assert (cited["prefix"], cited["suffix"], cited["textFragment"]) == ("", "", None)
    missing = client.get(f"/{CLOSED}/cite.json", params={"text": "a sentence nobody wrote here"})
    detail = missing.json()["error"]["detail"]
    assert (
        missing.status_code == 404
        and "the closest is" in detail
        and ": " not in (detail.split("the closest is")[1])
    )


def test_every_url_a_public_servers_cite_answers_is_one_it_serves(public, client):
    open_quote = " ".join(client.get(f"/{OPEN}/cite/S1.p1.json").json()["text"].split()[:12])
    answers = []
    for paper, quoted in ((CLOSED, CLOSED_QUOTE), (OPEN, open_quote)):
        answers.append(client.get(f"/{paper}/cite.json", params={"text": quoted}).json())
        tool = call(f"{public.url}/mcp", "cite", {"paper": paper, "text": quoted})
        answers.append(tool.structured_content)
    closed_rest, closed_mcp, open_rest, open_mcp = answers

    # the section a closed paper's quote is in is refused here: no url of it, the permalink kept
    refused = f"/{CLOSED}/sections/{closed_rest['anchor'].split('.')[0]}.md"
    assert client.get(refused).status_code == 403
    assert closed_rest["url"] is None and closed_mcp["url"] is None
    assert closed_rest["permalink"] == f"https://arxiv.org/html/{CLOSED}#{closed_rest['anchor']}"
    assert open_rest["url"] == open_mcp["url"] == f"{public.url}/{OPEN}/sections/S1.md"
    for cited in answers:
        if cited["url"] is not None:
            assert client.get(cited["url"].removeprefix(public.url)).status_code == 200


def test_a_licence_the_page_does_not_name_comes_from_the_arxiv_listing(client, replay_server):
    detail = forbidden_detail(client.get(f"/{LISTED}.md"))

    assert NON_EXCLUSIVE in detail
    assert client.get(f"/{LISTED}/outline.json").json()["license"] == NON_EXCLUSIVE
    assert replay_server.count(f"/abs/{LISTED}") == 1  # asked once, then kept


def test_a_licence_known_nowhere_is_unknown_and_forbidden(client):
    detail = forbidden_detail(client.get(f"/{UNKNOWN}/sections/S1.md"))

    assert "(unknown)" in detail and f"https://arxiv.org/abs/{UNKNOWN}" in detail


def test_the_pages_show_the_structure_and_refuse_the_text(client):
    outline = client.get(f"/{CLOSED}")
    assert outline.status_code == 200
    assert 'class="withheld"' in outline.text and NON_EXCLUSIVE in outline.text
    assert f'href="https://arxiv.org/abs/{CLOSED}"' in outline.text
    assert f'href="/{CLOSED}/sections/' not in outline.text  # no link to a page that is refused

    section = client.get(f"/{CLOSED}/sections/S1")
    assert section.status_code == 403 and section.headers["content-type"].startswith("text/html")
    assert NON_EXCLUSIVE in section.text
    assert f'<a href="https://arxiv.org/abs/{CLOSED}"' in section.text  # where to read it
    missing = client.get("/https://evil.example/x")  # another error repeats what was asked
    assert missing.status_code == 400 and 'href="https://evil.example' not in missing.text

    opened = client.get(f"/{OPEN}")
    assert 'class="withheld"' not in opened.text and f'href="/{OPEN}/sections/' in opened.text


def test_mcp_refuses_the_text_of_a_non_exclusive_paper_and_serves_a_cc_by_one(public):
    target = f"{public.url}/mcp"

    refused = call(target, "read", {"paper": CLOSED, "anchor": "S1"})
    snippets = call(target, "search_paper", {"paper": CLOSED, "query": "rephrase"})
    caption = call(target, "figure", {"paper": CLOSED, "anchor": "F1"})
    served = call(target, "read", {"paper": OPEN, "anchor": "S1"})
    outline = call(target, "outline", {"paper": CLOSED, "wait": 0})
    quoted = call(target, "cite", {"paper": CLOSED, "text": CLOSED_QUOTE})

    for result in (refused, snippets, caption):
        assert result.is_error and text_of(result).startswith("forbidden: ")
        assert NON_EXCLUSIVE in text_of(result) and quote(CLOSED) in text_of(result)
    assert not served.is_error and text_of(served).startswith("# 1")
    assert not outline.is_error and outline.structured_content["license"] == NON_EXCLUSIVE
    assert not quoted.is_error and quoted.structured_content["text"] == CLOSED_QUOTE


def test_a_server_that_is_not_public_serves_every_paper_whole(http, replay):
    replay.script(f"/html/{CLOSED}", page(replay.corpus_page(f"{CLOSED}.arxiv.html")))

    assert http.get(f"/{CLOSED}/sections/S1.md").status_code == 200


def test_a_public_server_serves_a_local_papers_images_only_where_its_licence_allows(
    replay_server, papers_dir, tmp_path
):
    # full.html names no licence: its figures are as much the paper's as its text
    settings = settings_for(replay_server, tmp_path, local_dir=papers_dir, public=True)
    with live_server(settings) as live, live.client() as http:
        figure = http.get("/files/full/fig-overview.png")
        loose = http.get("/files/fig.png")

    assert forbidden_detail(figure).startswith("The image full/fig-overview.png of local/full")
    assert "(unknown)" in forbidden_detail(figure)
    assert "not in a page's folder" in forbidden_detail(loose)
