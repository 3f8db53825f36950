"""What changed between two editions (contract §10), on their alignment: constructed pairs whose
truth is known by construction, a pair that differs only in rendering, and every corpus pair."""

from __future__ import annotations

import functools
import json
import re
import time
from typing import Any

import pytest

from paperanchor import changes, editions
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from paperanchor.render.markdown import tokens_of
from paperanchor.tree import Figure, Table
from tests.changes.constructed import PAIRS, Constructed, edition_truth
from tests.conftest import FIXTURES
from tests.corpus_pages import PAIR_PAGES, page_bytes
from tests.render.critic_reader import sides

# each pair's arXiv id: `pairs/2401.10225v1.arxiv.html` and `pairs/2401.10225.ar5iv.html`
CORPUS_PAIRS = sorted({re.sub(r"v\d+$", "", n.split("/")[1].split(".ar")[0]) for n in PAIR_PAGES})


def _paper(page: bytes, idv: str) -> Paper:
    return Paper.open(LoadedPaper(parse_document(page, f"https://example.org/{idv}"), "p", idv))


def _compared(pair: Constructed) -> changes.Comparison:
    old, new = _paper(pair.old, "pv1"), _paper(pair.new, "pv2")
    return changes.compare(old, new, editions.align(old, new))


@functools.cache
def _corpus(stem: str) -> tuple[Paper, Paper]:
    names = [
        n
        for n in PAIR_PAGES
        if n.split("/")[1].startswith(f"{stem}.") or n.split("/")[1].startswith(f"{stem}v")
    ]
    old = next(n for n in names if ".ar5iv." in n)
    new = next(n for n in names if ".arxiv." in n)
    return _paper(page_bytes(old), f"{stem}.ar5iv"), _paper(page_bytes(new), f"{stem}.arxiv")


@pytest.mark.parametrize("make", PAIRS, ids=lambda make: make.__name__)
def test_every_scripted_edit_is_counted_with_its_kind_and_nothing_else(make) -> None:
    pair = make()
    shape = changes.changes_shape(_compared(pair))
    for kind, truth in pair.counts.items():
        said = {change: shape[kind][change] for change in truth}  # type: ignore[literal-required]
        assert said == truth, kind
    assert shape["numbers"] == pair.numbers


@pytest.mark.parametrize("make", PAIRS, ids=lambda make: make.__name__)
def test_every_scripted_edit_is_reported_in_its_own_section(make) -> None:
    pair = make()
    result = _compared(pair)
    changed = {
        section: change for section, (change, _n) in result.sections.items() if change != "same"
    }
    assert changed == pair.sections


def test_the_changes_of_a_handful_of_edits_cost_a_few_hundred_tokens_not_the_paper() -> None:
    pair = PAIRS[0]()
    result = _compared(pair)
    markdown = changes.whole_markdown(result)
    assert tokens_of(markdown) < 600 < tokens_of(result.new.markdown()) / 4
    # the numbers come first, then the counts
    assert markdown.index("0.50 → 0.55") < markdown.index("paragraphs: 1 edited")
    for mark in ("{~~Earlier~>Prior~~}", "{~~0.50~>0.55~~}", "{++We repeated", "{--All exp"):
        assert mark in markdown
    assert "moved here from 1 Introduction (S1.p3)" in markdown


def test_a_changed_equation_shows_both_its_tex_and_a_moved_paragraph_says_where_it_was() -> None:
    result = _compared(PAIRS[0]())
    section = "\n\n".join(changes.node_chunks(result, "S2.SS1"))
    old, new = sides(section)
    assert "w_{f}}{\\sum" in old and "v_{f}}{\\sum" in new
    conclusion = "\n\n".join(changes.node_chunks(result, "S5"))
    assert "{>>moved here from 1 Introduction (S1.p3)<<}" in conclusion
    assert "The rest of the paper is organised as follows" in conclusion


@pytest.mark.parametrize("stem", CORPUS_PAIRS)
def test_an_edition_compared_with_itself_has_no_change(stem: str) -> None:
    paper = _corpus(stem)[1]
    again = _paper(
        page_bytes(next(n for n in PAIR_PAGES if f"/{stem}" in n and ".arxiv." in n)), "x"
    )
    shape = changes.changes_shape(changes.compare(paper, again, editions.align(paper, again)))
    for kind in ("sections", "paragraphs", "equations", "tables", "figures"):
        counts = shape[kind]  # type: ignore[literal-required]
        assert counts["edited"] == counts["added"] == counts["moved"] == counts["removed"] == 0
    assert shape["numbers"] == []


def _recovered(marked: list[str]) -> tuple[list[str], list[str]]:
    both = [sides(chunk) for chunk in marked]
    return [o for o, _n in both if o], [n for _o, n in both if n]


@pytest.mark.parametrize("stem", CORPUS_PAIRS)
def test_each_edited_block_of_a_corpus_pair_reads_back_as_both_editions(stem: str) -> None:
    old, new = _corpus(stem)
    started = time.perf_counter()
    result = changes.compare(old, new, editions.align(old, new))
    assert time.perf_counter() - started < 2.0
    checked = 0
    for pieces in result.pieces.values():
        for piece in pieces:
            if piece.change != "edited" or piece.old_id is None:
                continue
            old_node = result.old_layout.nodes[piece.old_id]
            new_node = result.new_layout.nodes[piece.node_id]
            if isinstance(new_node, Table | Figure):
                continue  # drawn cell by cell and image by image, not as a plain read
            merged = [result.old_layout.nodes[i] for i in result.merged.get(piece.node_id, [])]
            olds = sorted([old_node, *merged], key=lambda n: result.old_layout.order[n.id])
            old_side = (
                changes.merged_side(olds, new_node) if merged else changes.escaped_chunks(old_node)
            )
            assert _recovered(list(piece.markdown)) == (
                old_side,
                changes.escaped_chunks(new_node),
            ), piece.node_id
            checked += 1
    counted = sum(result.counts["paragraphs"][c] for c in ("edited",))
    assert checked >= min(counted, 1)


@functools.cache
def _edition_cases() -> dict[str, Any]:
    from bench.anchor_truth import constructed

    return {case.name: case for case in constructed()}


EDITION_CASES = sorted(
    json.loads((FIXTURES / "editions" / "cases.json").read_text(encoding="utf-8"))
)


@pytest.mark.parametrize("name", EDITION_CASES)
def test_each_scripted_edit_of_the_latex_edition_pairs_is_counted_with_its_kind(name: str) -> None:
    # fixtures/editions: one paper in LaTeX, eight scripted changes, both editions converted
    case = _edition_cases()[name]
    old = Paper.open(LoadedPaper(case.old, "p", "pv1"))
    new = Paper.open(LoadedPaper(case.new, "p", "pv2"))
    shape = changes.changes_shape(changes.compare(old, new, editions.align(old, new)))
    for kind, truth in edition_truth(case).items():
        said = {change: shape[kind][change] for change in truth}  # type: ignore[literal-required]
        assert said == truth, kind
