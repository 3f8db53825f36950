"""The walks decide once per (tag, class attribute): what they keep stays bounded on any page."""

from __future__ import annotations

from paperanchor.parse import blocks, dom, floats, inline, parse_document, sections
from paperanchor.parse.dom import CACHED_CLASS_CHARS, CACHED_DECISIONS

HEAD = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title></head><body>"
    "<article class='ltx_document'><h1 class='ltx_title ltx_title_document'>Classes</h1>"
    "<section class='ltx_section' id='S1'><h2 class='ltx_title ltx_title_section'>One</h2>"
)
TAIL = "</section></article></body></html>"


def _page(spans: list[str]) -> bytes:
    body = "".join(
        f"<div class='ltx_para {cls}' id='S1.p{i}'><p class='ltx_p {cls}'>"
        f"<span class='ltx_text {cls}'>word {i}</span></p></div>"
        for i, cls in enumerate(spans)
    )
    return (HEAD + body + TAIL).encode()


CACHES = (blocks._SHAPES, inline._KINDS, sections._SECTION_KINDS, floats._PART_KINDS)


def test_a_long_class_attribute_is_decided_each_time_and_never_kept() -> None:
    long_classes = [f"x{i}" + "y" * 2000 for i in range(200)]
    document = parse_document(_page(long_classes))
    assert [b.id for b in document.blocks[0].blocks][:3] == ["S1.p0", "S1.p1", "S1.p2"]
    for cache in CACHES:
        assert all(len(value or "") <= CACHED_CLASS_CHARS for _tag, value in cache)
    assert all(len(value) <= CACHED_CLASS_CHARS for value in dom._CLASS_SETS)


def test_the_caches_stop_growing_at_8192_pairs_whatever_the_pages() -> None:
    for start in range(0, 12_000, 4_000):
        parse_document(_page([f"c{n}" for n in range(start, start + 4_000)]))
    assert all(len(cache) <= CACHED_DECISIONS for cache in (*CACHES, dom._CLASS_SETS))
    # a page met after they are full still reads as it would have
    document = parse_document(_page(["late1", "late2"]))
    texts = [t.content.text for p in document.blocks[0].blocks for t in p.blocks]
    assert texts == ["word 0", "word 1"]
