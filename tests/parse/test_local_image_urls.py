"""A local page read from its `file:` URL (stdio, the command line) keeps the images beside it
as `file:` URLs (contract §7), and nothing else of the machine: a hostile page's sources that
leave the page's folder, name a host or hide `..` are dropped."""

from __future__ import annotations

import time

import pytest

from paperanchor.parse import parse_document
from paperanchor.render.markdown import block_chunks
from paperanchor.tree import Figure, walk
from tests.corpus_pages import section_page

BASE = "file:///home/reader/papers/full.html"


def _images(src: str) -> list[str]:
    page = section_page(
        f"<figure class='ltx_figure' id='S1.F1'><img src='{src}' alt='x'/>"
        "<figcaption class='ltx_caption'>Figure 1: A plot.</figcaption></figure>"
    )
    document = parse_document(page, BASE)
    figures = [v.node for v in walk(document.blocks) if isinstance(v.node, Figure)]
    return [url for figure in figures for url in figure.images]


@pytest.mark.parametrize(
    ("src", "kept"),
    [
        ("fig.png", "file:///home/reader/papers/fig.png"),
        ("figs/a%20b.png", "file:///home/reader/papers/figs/a%20b.png"),
        ("https://arxiv.org/html/x/x1.png", "https://arxiv.org/html/x/x1.png"),
        ("file:///etc/passwd", None),  # outside the page's folder
        ("../../../etc/passwd", None),
        ("%2e%2e/%2e%2e/etc/passwd", None),  # `..` spelled in percent-escapes
        ("file://evil.example/share/x.png", None),  # a host: another machine's share
        ("fig.png%00.svg", None),  # a NUL in the file name
        ("javascript:alert(1)", None),
    ],
)
def test_a_local_page_keeps_only_the_images_beside_it(src: str, kept: str | None) -> None:
    assert _images(src) == ([kept] if kept else [])


def test_a_kept_local_image_is_an_image_in_the_markdown() -> None:
    page = section_page(
        "<figure class='ltx_figure' id='S1.F1'><img src='fig.png' alt='x'/>"
        "<figcaption class='ltx_caption'>Figure 1: A plot.</figcaption></figure>"
    )
    (figure,) = [
        v.node for v in walk(parse_document(page, BASE).blocks) if isinstance(v.node, Figure)
    ]
    assert "](file:///home/reader/papers/fig.png)" in "\n".join(block_chunks(figure))


def test_many_hostile_sources_cost_linear_time() -> None:
    sources = "".join(f"<img src='{'../' * 2000}x{i}.png'/>" for i in range(200))
    started = time.perf_counter()
    document = parse_document(section_page(f"<div class='ltx_para'><p>{sources}</p></div>"), BASE)
    assert time.perf_counter() - started < 5.0 and document.sections
