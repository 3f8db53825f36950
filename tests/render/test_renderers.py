"""Our Markdown stays text in the renderers people use on their defaults (issue 21, #1):
markdown-it-py with dollar math, and node's marked and commonmark.js, which know no math and
pass raw HTML and any link scheme through. Over every corpus page, and over a hostile page
served by `paperanchor serve` (REST and MCP, whole, cut, and not found), no renderer makes an
element, attribute or URL scheme the paper did not put there.

The two JavaScript renderers are pinned in tests/render/js/package-lock.json and installed
with `npm ci` into that folder the first time a test needs them.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import httpx
from lxml import etree, html
from markdown_it import MarkdownIt

from paperanchor.paper import LoadedPaper, Paper
from paperanchor.render.escape import safe_url
from paperanchor.service import read
from tests.api.live import ServeProcess
from tests.api.test_mcp import call, text_of
from tests.conftest import ROOT, require_program
from tests.corpus_pages import PAPER_PAGES, parsed
from tests.reliability.report import SOAK
from tests.render import hostile_markdown
from tests.render.test_escape import ALLOWED, RENDERER

JS = Path(__file__).resolve().parent / "js"
ANSWER_S = 10.0  # each answer of the hostile page; they take milliseconds
SERVER_PEAK_MB = 600.0
# A renderer without math reads TeX's `_`, `*` and `~` as emphasis and (GFM) strikethrough:
# formatting, never a tag or a link, and escaping them would change the TeX for every renderer
# that has math. marked also links the e-mail addresses a paper writes (GFM autolinks).
SHOWN = ALLOWED | {"del"}


@functools.cache
def _installed() -> Path:
    """tests/render/js/node_modules as the lockfile pins it, installed once."""
    require_program(shutil.which("npm") is not None, "npm is not installed")
    stamp = JS / "node_modules" / ".package-lock.json"
    lock = JS / "package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=JS,
            check=True,
            timeout=300,
            capture_output=True,
        )
    return JS


def render_js(documents: list[str]) -> list[dict[str, str]]:
    """Each document rendered by marked and by commonmark.js, in one node process."""
    folder = _installed()
    result = subprocess.run(
        ["node", "render.js"],
        cwd=folder,
        input=json.dumps(documents).encode(),
        capture_output=True,
        check=True,
        timeout=300,
    )
    rendered: list[dict[str, str]] = json.loads(result.stdout)
    return rendered


# The one comment our Markdown writes: an anchor marker (contract §11), `<!--¶12-->`.
MARKER_COMMENT = re.compile(r"^¶[0-9]+$")


def markup_faults(rendered: str) -> list[str]:
    """Elements, event handlers and URLs in rendered HTML that our Markdown never makes."""
    root = html.fromstring(f"<html><body>{rendered}</body></html>")
    faults: list[str] = []
    for element in root.iter():
        if isinstance(element, etree._Comment) and MARKER_COMMENT.match(element.text or ""):
            continue  # an anchor marker, which a renderer that passes HTML hides
        if not isinstance(element.tag, str):
            faults.append(etree.tostring(element).decode()[:120])  # a comment or an instruction
            continue
        shown = etree.tostring(element).decode()[:120]
        if element.tag not in SHOWN:
            faults.append(shown)
        faults.extend(shown for name in element.attrib if name.startswith("on"))
        for name in ("href", "src"):
            url = element.get(name)
            if url is None or url.startswith("#") or safe_url(url) is not None:
                continue
            if name == "href" and url == f"mailto:{element.text_content()}":
                continue  # the paper's own e-mail address, shown as it wrote it
            faults.append(shown)
    return faults


def all_faults(documents: dict[str, str]) -> dict[str, list[str]]:
    """Each named Markdown document's faults in each of the three renderers."""
    names = list(documents)
    faults: dict[str, list[str]] = {}
    for name, js in zip(names, render_js([documents[n] for n in names]), strict=True):
        for renderer, rendered in [("markdown-it", RENDERER.render(documents[name])), *js.items()]:
            found = markup_faults(rendered)
            if found:
                faults[f"{name} in {renderer}"] = found[:3]
    return faults


def test_every_corpus_page_renders_to_no_element_or_scheme_in_marked_and_commonmark() -> None:
    documents = {
        name: Paper.open(LoadedPaper(parsed(name), "local/x", "local/x")).markdown()
        for name in PAPER_PAGES
    }
    assert all_faults(documents) == {}


def test_every_corpus_page_with_anchor_markers_renders_to_no_element_but_its_markers() -> None:
    documents = {
        name: Paper.open(LoadedPaper(parsed(name), "local/x", "local/x")).markdown(anchors=True)
        for name in PAPER_PAGES
    }
    assert all_faults(documents) == {}
    # the markers are hidden where raw HTML passes, plain text where it is escaped
    marked = render_js([documents["html/2501.11120v1.arxiv.html"]])[0]["marked"]
    assert "<!--¶1-->" in marked and "¶1" not in html.fromstring(marked).text_content()
    escaping = MarkdownIt("commonmark", {"html": False})
    assert "&lt;!--¶1--&gt;" in escaping.render(documents["html/2501.11120v1.arxiv.html"])


def test_the_hostile_page_renders_to_text_in_three_renderers() -> None:
    from paperanchor.parse import parse_document

    document = parse_document(hostile_markdown.page())
    paper = Paper.open(LoadedPaper(document, "local/x", "local/x"))
    markdown = paper.markdown()
    anchored = paper.markdown(anchors=True)
    assert all_faults({"hostile": markdown, "hostile anchored": anchored}) == {}
    assert anchored.count("<!--¶") >= 10  # its paragraphs, equations, list, theorems, figure
    # the payloads are still there, as text a reader can see
    text = html.fromstring(render_js([markdown])[0]["marked"]).text_content()
    for number in (2, 9, 12):
        assert f"alert({number})" in text, number


# Generated pages: payloads spliced at random from the marks that open Markdown, HTML and math
# (hostile_markdown.generated); a few dozen in `make test`, many more in `make soak`.
GENERATED_PAGES = 600 if SOAK else 40


def test_generated_payloads_stay_text_in_three_renderers() -> None:
    from paperanchor.parse import parse_document

    documents: dict[str, str] = {}
    started = time.perf_counter()
    for seed in range(GENERATED_PAGES):
        page = hostile_markdown.page(4, hostile_markdown.generated(seed))
        paper = Paper.open(LoadedPaper(parse_document(page), "local/x", "local/x"))
        # the whole page, and a cut one (its truncation line names the hostile section id)
        documents[f"seed {seed}"] = paper.markdown()
        # with anchor markers: a hostile id never reaches one (the label is a number of ours)
        documents[f"seed {seed} anchored"] = paper.markdown(anchors=True)
        documents[f"seed {seed} cut"] = read(paper, paper.document.roots()[0].id, 100).markdown
    assert all_faults(documents) == {}
    assert time.perf_counter() - started < 30 * max(1, GENERATED_PAGES // 40)


def test_a_server_answers_the_hostile_page_with_markdown_that_stays_text(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "hostile.html").write_bytes(hostile_markdown.page())
    env = {
        **os.environ,
        "PAPERANCHOR_LOCAL_DIR": str(papers),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": str(tmp_path / "cache"),
        "PAPERANCHOR_RATE_LIMIT": "0",
    }
    section = quote(hostile_markdown.SECTION_ID, safe="")
    server = ServeProcess(env, cwd=ROOT).wait_ready()
    answers: dict[str, str] = {}
    slowest = 0.0
    try:
        with httpx.Client(base_url=server.url, timeout=60, trust_env=False) as client:
            for name, path in [
                ("whole", "/local/hostile.md"),
                ("cut", "/local/hostile.md?maxTokens=100"),
                ("section cut", f"/local/hostile/sections/{section}.md?maxTokens=100"),
                ("section anchored", f"/local/hostile/sections/{section}.md?anchors=1"),
                ("not found", "/local/hostile/sections/S1%3Cimg%20src%3Dx.md"),
            ]:
                started = time.perf_counter()
                response = client.get(path)
                slowest = max(slowest, time.perf_counter() - started)
                assert response.headers["content-type"].startswith("text/markdown"), path
                answers[f"REST {name}"] = response.text
        for name, arguments in [
            ("read", {"paper": "local/hostile"}),
            ("read cut", {"paper": "local/hostile", "maxTokens": 100}),
            ("read section cut", {"paper": "local/hostile", "anchor": hostile_markdown.SECTION_ID,
                                  "maxTokens": 100}),
            ("read not found", {"paper": "local/hostile", "anchor": "S1<img src=x"}),
        ]:  # fmt: skip
            started = time.perf_counter()
            answers[f"MCP {name}"] = text_of(call(f"{server.url}/mcp", "read", arguments))
            slowest = max(slowest, time.perf_counter() - started)
        peak_mb = server.memory_mb("VmHWM")
    finally:
        server.stop()
    # the hostile id is in the cut answers' lines and in the suggestions, as text
    assert "truncated" in answers["REST cut"] and "alert(17)" in answers["REST section cut"]
    assert "did you mean" in answers["MCP read not found"], answers["MCP read not found"]
    assert all_faults(answers) == {}
    assert slowest < ANSWER_S and peak_mb < SERVER_PEAK_MB, (slowest, peak_mb)
