"""Fuzzing the parser: mutated corpus pages give a tree or the project's own error, never
anything else, and each case ends within a generous deadline. `make soak` runs many more."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperanchor.errors import PaperAnchorError
from paperanchor.paper import LoadedPaper
from paperanchor.parse import parse_document
from paperanchor.service import Paper, outline, read
from tests.conftest import CORPUS, FIXTURES
from tests.parse.mutations import KINDS, huge_paragraph, mutate

# Small pages of three LaTeXML generations keep a case fast. `make soak` sets
# PAPERANCHOR_FUZZ_PAGES=small (the fixtures and the synthetic page, 5-124 KB: about twice as
# many cases a second) or `all` (every corpus page; PAPERANCHOR_FUZZ_ALL_PAGES=1 says the same).
PAGES = [
    CORPUS / "generated" / "synthetic.html",
    CORPUS / "html" / "2307.00235.ar5iv.html",
    CORPUS / "html" / "astronomical-data-ml-techniques.latexml.html",
]
_WHICH = os.environ.get(
    "PAPERANCHOR_FUZZ_PAGES", "all" if os.environ.get("PAPERANCHOR_FUZZ_ALL_PAGES") else ""
)
if _WHICH == "small":
    PAGES = [*sorted((FIXTURES / "html").glob("*.html")), CORPUS / "generated" / "synthetic.html"]
elif _WHICH == "all":
    PAGES = sorted((CORPUS / "html").glob("*.html")) + sorted((CORPUS / "generated").glob("*.html"))
EXAMPLES = int(os.environ.get("PAPERANCHOR_FUZZ_EXAMPLES", "150"))
# Where to write the number of cases run, by outcome, for docs/reliability.md (`make soak`).
REPORT = os.environ.get("PAPERANCHOR_FUZZ_REPORT")
CASES: Counter[str] = Counter()
_CACHE: dict[int, bytes] = {}


@pytest.fixture(scope="module", autouse=True)
def _report_cases() -> Iterator[None]:
    yield
    if REPORT:
        Path(REPORT).write_text(json.dumps({"pages": len(PAGES), **CASES}, indent=2) + "\n")


def _page(index: int) -> bytes:
    if index not in _CACHE:
        _CACHE[index] = PAGES[index].read_bytes()
    return _CACHE[index]


def _exercise(data: bytes) -> None:
    """Parse, then use the tree the way the service does; only our errors may escape."""
    CASES["cases"] += 1
    try:
        document = parse_document(data, "https://example.org/fuzz.html")
    except PaperAnchorError:
        CASES["our-error"] += 1
        return
    CASES["tree"] += 1
    paper = Paper.open(LoadedPaper(document, "local/fuzz", "local/fuzz"))
    outline(paper)
    for section in document.sections[:3]:
        read(paper, section.id, 500)


@settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=20),
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    page=st.integers(0, len(PAGES) - 1), kind=st.sampled_from(KINDS), seed=st.integers(0, 2**32 - 1)
)
def test_a_mutated_page_gives_a_tree_or_our_own_error(page: int, kind: str, seed: int) -> None:
    _exercise(mutate(_page(page), kind, random.Random(seed)))


@settings(max_examples=max(20, EXAMPLES // 5), deadline=timedelta(seconds=10))
@given(data=st.binary(max_size=4096))
def test_random_bytes_give_a_tree_or_our_own_error(data: bytes) -> None:
    _exercise(data)


@pytest.mark.parametrize("depth", [200, 1000, 20_000])
def test_deep_nesting_gives_a_tree_or_our_own_error(depth: int) -> None:
    body = b'<div class="ltx_para" id="S1.p1">' * depth + b"deep" + b"</div>" * depth
    page = (
        b'<html><body><article class="ltx_document"><section class="ltx_section" id="S1">'
        b'<h2 class="ltx_title">1 Deep</h2>' + body + b"</section></article></body></html>"
    )
    _exercise(page)


def test_a_ten_megabyte_paragraph_parses_whole() -> None:
    page = huge_paragraph(10)
    document = parse_document(page)
    paper = Paper.open(LoadedPaper(document, "local/huge", "local/huge"))
    # nothing is lost: every word of the paragraph is in its Markdown
    assert paper.markdown("S1.p1").count("lorem") == page.count(b"lorem")
    assert read(paper, "S1.p1", 100_000).truncated
