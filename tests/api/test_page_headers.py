"""Headers of defence (issue 21, #12): `nosniff` and `Referrer-Policy` on every answer, and on
HTML pages a Content-Security-Policy with no script, images only from this server and the
paper upstreams, no framing. Checked on a live server's routes, and in Chromium: a section
page whose paper names an image on another address makes the browser ask that address nothing.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.api.test_pages import browser

__all__ = ["browser"]

ROUTES = [
    ("/", True),
    ("/local/full", True),
    ("/local/full/sections/S2", True),
    ("/local/nowhere", True),  # the error page
    ("/local/full/outline.json", False),
    ("/local/full.md", False),
    ("/files/full/fig-overview.png", False),
    ("/healthz", False),
]


def _directives(policy: str) -> dict[str, str]:
    pairs = (part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    return {pair[0]: pair[1] if len(pair) > 1 else "" for pair in pairs}


@pytest.mark.parametrize(("path", "page"), ROUTES)
def test_every_answer_says_nosniff_and_pages_forbid_script_framing_and_foreign_images(
    server: LiveServer, http: httpx.Client, path: str, page: bool
) -> None:
    answer = http.get(path, headers={"Accept": "text/html"})
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["content-type"].startswith("text/html") == page, path
    if not page:
        assert "content-security-policy" not in answer.headers
        return
    policy = _directives(answer.headers["content-security-policy"])
    assert policy["default-src"] == "'none'" and policy["script-src"] == "'none'"
    assert policy["frame-ancestors"] == "'none'" and policy["base-uri"] == "'none'"
    upstream = server.settings.arxiv_html_url.rsplit("/", 1)[0]
    assert policy["img-src"].split() == ["'self'", upstream, "data:"], policy


def test_the_api_documentation_keeps_its_script_and_cannot_be_framed(http: httpx.Client) -> None:
    answer = http.get("/docs")
    assert answer.status_code == 200 and answer.headers["x-content-type-options"] == "nosniff"
    policy = _directives(answer.headers["content-security-policy"])
    assert "script-src" not in policy and policy["frame-ancestors"] == "'none'"


class _Probe(http.server.BaseHTTPRequestHandler):
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Probe.asked.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def probe() -> Iterator[str]:
    """An image host on another loopback address (as an intranet host would be)."""
    _Probe.asked = []
    host = http.server.ThreadingHTTPServer(("127.0.0.2", 0), _Probe)
    thread = threading.Thread(target=host.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.2:{host.server_address[1]}"
    finally:
        host.shutdown()
        host.server_close()


def test_a_section_page_does_not_load_an_image_from_another_host(
    browser: Any, probe: str, replay_server: Any, tmp_path: Path
) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "probe.html").write_text(
        "<html><body><article class='ltx_document'><h1 class='ltx_title ltx_title_document'>"
        "Probe</h1><section class='ltx_section' id='S1'><h2 class='ltx_title'>1 Images</h2>"
        "<figure class='ltx_figure' id='S1.F1'>"
        f"<img class='ltx_graphics' src='{probe}/intranet.png' alt='far'/>"
        "<figcaption class='ltx_caption'>Figure 1: a picture elsewhere</figcaption></figure>"
        "<div class='ltx_para'><p class='ltx_p'>Text.</p></div></section></article></body></html>"
    )
    with live_server(settings_for(replay_server, tmp_path / "cache", local_dir=papers)) as live:
        with httpx.Client(base_url=live.url, trust_env=False) as client:
            html = client.get("/local/probe/sections/S1").text
        assert f"{probe}/intranet.png" in html  # the page names it: only the policy stops it
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"{live.url}/local/probe/sections/S1")
            page.wait_for_load_state("networkidle")
        finally:
            context.close()
    assert _Probe.asked == []
