"""Work done once when a server starts, so that its first request does not pay it.

A fresh `paperanchor serve` answered its first cold outline in 51-68 ms where the next ones
took 12-17 ms (fixtures/html/xss.html through the loopback replay, 2 shared cores): lazy
imports, the parser's first lxml parser and regular expressions, the codec's first encoders,
the default executor's first thread. One built-in page (data/warmup.html, a link to the
fixture fixtures/html/full.html, which a wheel carries as the file: sections, theorems,
equations, figures, tables, lists, footnotes, a bibliography) is run through the parser,
every operation of the table with the sample arguments it declares (operations.py), the section
page's drawing and the cache codec, and one key is written to the store and deleted.
Nothing it makes is kept: no store entry, nothing in the library's memory, no view in the
service.
"""

from __future__ import annotations

import os
import time
from importlib import resources

from paperanchor import operations
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.papers import paper_codec
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.render import html
from paperanchor.store import Store

WARM_IDV = "0000.00000v1"
WARM_URL = f"https://arxiv.org/html/{WARM_IDV}"


def warm_page() -> bytes:
    """The built-in page the warm-up reads (package data)."""
    return (resources.files("paperanchor") / "data" / "warmup.html").read_bytes()


# A first write to the store costs more than the next ones (a fresh diskcache: 6-8 ms against
# 0.7-1.9 ms for the second, measured in-process on fixtures/html/xss.html); a Redis store
# connects on its first command. The warm-up writes this key and deletes it at once.
WARM_KEY_BYTES = 64 << 10


def warm_up(page: bytes | None = None, store: Store | None = None) -> float:
    """Parse, serve and encode one page the way a first request would, and write and delete
    one key in `store`; the seconds it took."""
    started = time.perf_counter()
    document = parse_document(warm_page() if page is None else page, WARM_URL)
    loaded = LoadedPaper(document, WARM_IDV[:-2], WARM_IDV, 1, True, "arxiv", WARM_URL)
    codec = paper_codec()
    codec.decode(codec.encode(loaded, PARSER_VERSION), PARSER_VERSION)
    paper = Paper.open(loaded)
    context = operations.Context("http://127.0.0.1", "rest")
    for operation in operations.commands():
        if operation.on_paper is None:
            continue  # a discovery command: it asks an upstream, not the page
        for sample in operation.samples(paper):
            operation.on_paper(paper, operation.check({"paper": WARM_IDV, **sample}), context)
    for section in paper.document.sections[:2]:
        # the section page's drawing (api/pages.py), which no operation of the table does
        html.article(section, document, permalink=lambda _id: None, section_href=lambda _id: "")
    if store is not None:
        key = f"warm-up:{os.getpid()}"
        store.set(key, b"\0" * WARM_KEY_BYTES, 60)
        store.delete(key)
    return time.perf_counter() - started
