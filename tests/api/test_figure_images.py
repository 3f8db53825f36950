"""Figures it can see (contract §11): `figure {…, image: true}` over MCP (the official client) sends
the figure's images as image content, and REST serves the same bytes at
`/{paper}/figures/{anchor}/{n}`: real image files served by the replay as arXiv's own site for a
corpus paper, and from the local directory for a local one; an image over the cap, a non-image,
redirects and an image on another site (never fetched)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters
from mcp_types import ImageContent, TextContent

from paperanchor.images import MAX_IMAGE_BYTES, MAX_IMAGES, sniff
from tests.api.conftest import FIXTURE_HTML, settings_for
from tests.api.live import LiveServer, live_server
from tests.api.test_mcp import call, session
from tests.conftest import ROOT
from tests.replay import Reply, redirect

DATA = Path(__file__).resolve().parents[1] / "data" / "images"
PNG = (DATA / "short-page1.png").read_bytes()
JPEG = (DATA / "full-page1.jpg").read_bytes()
SVG = (DATA / "bars.svg").read_bytes()
PAPER = "2501.11120v1"  # a corpus page; its figures name x1.png … x7.png on arXiv's site
SITE = f"/html/{PAPER}"
OFF_SITE_PATH = "/elsewhere/x.png"
OVERVIEW = FIXTURE_HTML / "full" / "fig-overview.png"
OVERVIEW_IMG = 'src="full/fig-overview.png"'


def image(body: bytes, content_type: str = "image/png") -> Reply:
    return Reply(200, body, (("Content-Type", content_type),))


def local_papers(folder: Path, replay_url: str) -> Path:
    """The `full` fixture with its images, and two pages made from it: `offsite`, whose
    overview figure's image is on another site, and `many`, whose overview figure has five
    images (an SVG first)."""
    folder.mkdir()
    shutil.copy(FIXTURE_HTML / "full.html", folder / "full.html")
    shutil.copytree(FIXTURE_HTML / "full", folder / "full")
    page = (FIXTURE_HTML / "full.html").read_text()
    assert page.count(OVERVIEW_IMG) == 1
    off_site = f'src="{replay_url}{OFF_SITE_PATH}"'
    (folder / "offsite.html").write_text(page.replace(OVERVIEW_IMG, off_site))
    (folder / "many").mkdir()
    (folder / "many" / "bars.svg").write_bytes(SVG)
    names = ["bars.svg"]
    for letter in "abcd":
        (folder / "many" / f"{letter}.png").write_bytes(PNG)
        names.append(f"{letter}.png")
    several = '> <img class="ltx_graphics" '.join(f'src="many/{name}"' for name in names)
    (folder / "many.html").write_text(page.replace(OVERVIEW_IMG, several))
    return folder


@pytest.fixture
def server(replay: Any, tmp_path: Path) -> Iterator[LiveServer]:
    replay.script(f"{SITE}/x1.png", image(PNG))
    replay.script(f"{SITE}/x2.png", image(JPEG, "image/png"))  # a JPEG that says it is a PNG
    # over the cap: the PNG signature, then more bytes than an image may have
    replay.script(f"{SITE}/x4.png", image(PNG[:8] + b"\0" * MAX_IMAGE_BYTES))
    replay.script(f"{SITE}/x5.png", image(b"<!DOCTYPE html><html><body>no</body></html>"))
    replay.script(f"{SITE}/x6.png", redirect(f"{SITE}/moved/x6.png"))
    replay.script(f"{SITE}/moved/x6.png", image(PNG))
    # the same server under another name is another site: a redirect there is not followed
    off_host = replay.arxiv_url.replace("127.0.0.1", "localhost")
    replay.script(f"{SITE}/x7.png", redirect(f"{off_host}/{PAPER}/moved/x7.png"))
    replay.script(OFF_SITE_PATH, image(PNG))
    papers = local_papers(tmp_path / "papers", replay.arxiv_url.removesuffix("/html"))
    with live_server(settings_for(replay, tmp_path / "cache", local_dir=papers)) as live:
        yield live


def figure(server: LiveServer, paper: str, anchor: str, **arguments: Any) -> Any:
    return call(f"{server.url}/mcp", "figure", {"paper": paper, "anchor": anchor, **arguments})


def images_of(result: Any) -> list[tuple[str, bytes]]:
    return [
        (content.mime_type, base64.b64decode(content.data))
        for content in result.content
        if isinstance(content, ImageContent)
    ]


def notes_of(result: Any) -> list[str]:
    return [content.text for content in result.content[1:] if isinstance(content, TextContent)]


def test_a_figure_with_image_true_sends_its_png_as_image_content_beside_its_json(server):
    with server.client() as http:
        as_rest = http.get(f"/{PAPER}/figures/S1.F1.json").json()

    result = figure(server, PAPER, "S1.F1", image=True)

    assert not result.is_error
    assert result.structured_content == as_rest
    assert json.loads(result.content[0].text) == as_rest
    assert images_of(result) == [("image/png", PNG)]


def test_a_figure_without_image_is_its_json_alone(server, replay):
    result = figure(server, PAPER, "S1.F1")

    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    assert replay.count(f"{SITE}/x1.png") == 0  # nothing was fetched for it


def test_rest_serves_the_same_bytes_and_keeps_them_in_the_store(server, replay):
    with server.client() as http:
        first = http.get(f"/{PAPER}/figures/S1.F1/1")
        again = http.get(f"/{PAPER}/figures/F1/1")  # the alias: the same figure

    assert first.status_code == 200
    assert first.content == PNG == again.content
    assert first.headers["content-type"] == "image/png"
    assert first.headers["x-content-type-options"] == "nosniff"
    assert first.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert replay.count(f"{SITE}/x1.png") == 1


def test_the_media_type_is_read_from_the_bytes_not_from_the_content_type(server):
    with server.client() as http:
        answer = http.get(f"/{PAPER}/figures/S3.F2/1")

    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/jpeg" and answer.content == JPEG


def test_an_image_over_the_cap_is_refused_and_left_out_of_the_figure(server):
    with server.client() as http:
        answer = http.get(f"/{PAPER}/figures/S3.F4/1")
    result = figure(server, PAPER, "S3.F4", image=True)

    assert answer.status_code == 413 and answer.json()["error"]["code"] == "too-large"
    assert not result.is_error and images_of(result) == []
    (note,) = notes_of(result)
    assert note.startswith("image 1 is not included: too-large:")


def test_an_answer_that_is_not_an_image_is_refused_whatever_it_is_served_as(server):
    with server.client() as http:
        answer = http.get(f"/{PAPER}/figures/S3.F5/1")

    assert answer.status_code == 502
    assert "is not an image" in answer.json()["error"]["detail"]


def test_a_redirect_is_followed_on_the_site_and_not_off_it(server, replay):
    result = figure(server, PAPER, "S3.F6", image=True)  # two panels: x6.png, x7.png
    with server.client() as http:
        off = http.get(f"/{PAPER}/figures/S3.F6/2")

    assert images_of(result) == [("image/png", PNG)]
    (note,) = notes_of(result)
    assert note.startswith("image 2 is not included: upstream-error:")
    assert off.status_code == 502 and "not followed" in off.json()["error"]["detail"]
    assert replay.count(f"{SITE}/moved/x7.png") == 0  # the off-site target was never asked
    assert replay.count(f"{SITE}/moved/x6.png") == 1


def test_an_image_on_another_site_is_never_fetched(server, replay):
    with server.client() as http:
        answer = http.get("/local/offsite/figures/S4.F2/1")
    result = figure(server, "local/offsite", "S4.F2", image=True)

    assert answer.status_code == 404 and "not fetched" in answer.json()["error"]["detail"]
    assert images_of(result) == []
    assert replay.count(OFF_SITE_PATH) == 0


def test_a_local_papers_images_come_from_the_local_directory(server):
    result = figure(server, "local/full", "S4.F2", image=True)
    with server.client() as http:
        answer = http.get("/local/full/figures/S4.F2/1")

    assert images_of(result) == [("image/png", OVERVIEW.read_bytes())]
    assert answer.content == OVERVIEW.read_bytes()
    assert answer.headers["cache-control"] == "no-cache"


def test_at_most_four_images_are_sent_and_an_svg_is_passed_as_it_is_served_sandboxed(server):
    result = figure(server, "local/many", "S4.F2", image=True)
    with server.client() as http:
        svg = http.get("/local/many/figures/S4.F2/1")
        fifth = http.get("/local/many/figures/S4.F2/5")

    assert len(result.structured_content["images"]) == 5
    assert images_of(result) == [("image/svg+xml", SVG)] + [("image/png", PNG)] * 3
    assert len(images_of(result)) == MAX_IMAGES
    assert svg.content == SVG and svg.headers["content-type"] == "image/svg+xml"
    assert "sandbox" in svg.headers["content-security-policy"]
    assert fifth.status_code == 400  # n is 1-4


def test_an_image_number_the_figure_has_not_is_not_found(server):
    with server.client() as http:
        answer = http.get(f"/{PAPER}/figures/S1.F1/2")
        zero = http.get(f"/{PAPER}/figures/S1.F1/0")

    assert answer.status_code == 404
    assert answer.json()["error"]["detail"] == f"S1.F1 of {PAPER} has 1 image, no image 2"
    assert zero.status_code == 400


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
        (SVG, "image/svg+xml"),
        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"<html><svg></svg></html>", None),  # an HTML page holding an SVG is a page
        (b"%PDF-1.7", None),
        (b"", None),
    ],
)
def test_an_images_type_is_sniffed_from_its_first_bytes(data: bytes, media_type: str | None):
    assert sniff(data) == media_type


def test_over_stdio_a_local_papers_images_are_read_from_the_local_directory(replay, tmp_path):
    # no HTTP server: the figure names its image by a file: URL beside the page (contract §7)
    papers = local_papers(tmp_path / "papers", replay.arxiv_url.removesuffix("/html"))
    outside = tmp_path / "secret.png"
    outside.write_bytes(PNG)
    page = (papers / "full.html").read_text()
    (papers / "escape.html").write_text(page.replace(OVERVIEW_IMG, f'src="{outside.as_uri()}"'))
    env = {**os.environ, **replay.environ(local_dir=papers, cache_dir=tmp_path / "cache")}
    env.pop("PAPERANCHOR_PUBLIC_URL", None)
    stdio = StdioServerParameters(
        command=sys.executable, args=["-m", "paperanchor.cli", "mcp"], env=env, cwd=str(ROOT)
    )

    async def both(client: Any) -> tuple[Any, Any]:
        arguments = {"anchor": "S4.F2", "image": True}
        inside = await client.call_tool("figure", {"paper": "local/full", **arguments})
        elsewhere = await client.call_tool("figure", {"paper": "local/escape", **arguments})
        return inside, elsewhere

    inside, elsewhere = session(stdio, both)

    assert json.loads(inside.content[0].text)["images"][0].startswith("file:")
    assert images_of(inside) == [("image/png", OVERVIEW.read_bytes())]
    assert images_of(elsewhere) == []
