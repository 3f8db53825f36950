"""The section pages kept in memory (api/pages.py PageMemory): bounded in bytes, and never an old
page for a paper parsed again."""

from __future__ import annotations

import gc
import sys

from paperanchor.api.pages import PageMemory
from paperanchor.parse import parse_document
from paperanchor.service import LocalPaper, Paper
from tests.corpus_pages import fixture_path


def _view() -> Paper:
    document = parse_document(fixture_path("short").read_bytes())
    return Paper.open(LocalPaper(document, "local/short", "local/short"))


def test_pages_are_kept_within_their_bytes_oldest_first() -> None:
    page = "x" * 10_000
    memory = PageMemory(max_bytes=5 * sys.getsizeof(page))
    view = _view()
    for i in range(8):
        memory.put(view, f"S{i}", page)

    kept = [i for i in range(8) if memory.get(view, f"S{i}") is not None]

    assert kept == [3, 4, 5, 6, 7]


def test_a_page_larger_than_a_quarter_of_the_memory_is_not_kept() -> None:
    memory = PageMemory(max_bytes=40_000)
    view = _view()
    memory.put(view, "S1", "x" * 20_000)
    assert memory.get(view, "S1") is None


def test_a_paper_parsed_again_never_gets_the_old_view_s_page() -> None:
    memory = PageMemory(max_bytes=1_000_000)
    old = _view()
    memory.put(old, "S1", "the old page")
    assert memory.get(old, "S1") == "the old page"
    del old
    gc.collect()
    # a new view may even get the freed object's id: its serial number tells them apart
    for _ in range(50):
        assert memory.get(_view(), "S1") is None
