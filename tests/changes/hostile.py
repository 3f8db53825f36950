"""Hostile pairs of editions, generated: each makes comparing two editions costly in one way.

`python -m tests.changes.hostile NAME` compares the pair in this process and prints its time
and peak memory as JSON (the tests run it in a fresh process each)."""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable

from tests.reliability.hostile_pages import HEAD


def _page(paragraphs: list[str], table: str = "") -> bytes:
    body = "".join(
        f"<div class='ltx_para' id='S1.p{i}'><p class='ltx_p'>{text}</p></div>"
        for i, text in enumerate(paragraphs, start=1)
    )
    section = (
        "<section class='ltx_section' id='S1'><h2 class='ltx_title ltx_title_section'>"
        f"<span class='ltx_tag ltx_tag_section'>1 </span>Body</h2>{body}{table}</section>"
    )
    return HEAD.format(head="", body=section).encode()


def _words(i: int, n: int = 40) -> str:
    return " ".join(f"w{(i * 7919 + k) % 100_003}" for k in range(n))


def many_edits() -> tuple[bytes, bytes]:
    """20,000 paragraphs; the new edition drops every second and edits every third."""
    old = [_words(i) for i in range(20_000)]
    new = [text + " more" if i % 3 == 0 else text for i, text in enumerate(old) if i % 2]
    return _page(old), _page(new)


def twins() -> tuple[bytes, bytes]:
    """20,000 identical paragraphs, and the same less one with a word changed in each half."""
    old = ["the same words again"] * 20_000
    new = ["the same words again"] * 9_999 + ["the same words anew"] * 10_000
    return _page(old), _page(new)


def _table(rows: int, columns: int, value: Callable[[int, int], str]) -> str:
    cells = "".join(
        "<tr class='ltx_tr'>"
        + "".join(f"<td class='ltx_td'>{value(r, c)}</td>" for c in range(columns))
        + "</tr>"
        for r in range(rows)
    )
    return (
        "<figure class='ltx_table' id='S1.T1'><figcaption class='ltx_caption'>"
        "<span class='ltx_tag ltx_tag_table'>Table 1: </span>Numbers</figcaption>"
        f"<table class='ltx_tabular' id='S1.T1.1'>{cells}</table></figure>"
    )


def big_table() -> tuple[bytes, bytes]:
    """A table of 100,000 cells (the parser's cap) with a number changed in every row."""
    old = _table(10_000, 10, lambda r, c: f"{r}.{c}")
    new = _table(10_000, 10, lambda r, c: f"{r}.{c}" if c != 5 else f"{r}.{c}1")
    return _page(["a paragraph"], old), _page(["a paragraph"], new)


PAIRS: dict[str, Callable[[], tuple[bytes, bytes]]] = {
    "many_edits": many_edits,
    "twins": twins,
    "big_table": big_table,
}


def measure(name: str) -> dict[str, float]:
    """Parse both editions, then time aligning them (editions.py) and comparing them, the
    `.md` included (changes.py), and the memory both take."""
    from paperanchor import changes, editions
    from paperanchor.paper import LoadedPaper, Paper
    from paperanchor.parse import parse_document

    old_page, new_page = PAIRS[name]()
    old = Paper.open(LoadedPaper(parse_document(old_page, "https://x/a"), "p", "pv1"))
    new = Paper.open(LoadedPaper(parse_document(new_page, "https://x/b"), "p", "pv2"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    alignment = editions.align(old, new)
    aligned = time.perf_counter()
    result = changes.compare(old, new, alignment)
    markdown = changes.whole_markdown(result)
    done = time.perf_counter()
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    return {
        "align_s": aligned - started,
        "compare_s": done - aligned,
        "mb": grown,
        "md_chars": len(markdown),
    }


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
