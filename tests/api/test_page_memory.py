"""A section's HTML page is kept on its Paper (paper.py): drawn once, counted in what the paper
weighs, and never an old page for a paper parsed again."""

from __future__ import annotations

import sys

from paperanchor.api.pages import section_html
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from tests.corpus_pages import fixture_path


def _view() -> Paper:
    document = parse_document(fixture_path("short").read_bytes())
    return Paper.open(LoadedPaper(document, "local/short", "local/short"))


def test_a_section_page_is_drawn_once_and_kept_with_its_paper() -> None:
    view = _view()
    drawn: list[str] = []

    def draw(paper: Paper, node_id: str) -> str:
        drawn.append(node_id)
        return section_html(paper, node_id)

    first = view.page("S1", draw)
    again = view.page("S1", draw)

    assert again is first and drawn == ["S1"]


def test_a_kept_page_counts_in_what_its_paper_weighs() -> None:
    view = _view()
    view.tokens("S1")  # the page shows its tokens: its Markdown is rendered and counted first
    before = view.rendered_bytes
    page = view.page("S1", section_html)
    assert view.rendered_bytes - before == sys.getsizeof(page)


def test_a_paper_parsed_again_never_gets_the_old_paper_s_page() -> None:
    old = _view()
    old.page("S1", lambda paper, node_id: "the old page")
    assert old.page("S1", section_html) == "the old page"
    assert _view().page("S1", section_html) != "the old page"
