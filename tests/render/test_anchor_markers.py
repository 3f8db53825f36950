"""Anchor markers (contract §11): every citable block a read shows opens with `<!--¶N-->`, which
`cite` takes verbatim, at a few o200k tokens a block, over every corpus page."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from paperanchor.paper import LoadedPaper, Paper
from paperanchor.service import cite
from paperanchor.tokens import count
from paperanchor.tree import (
    Equation,
    EquationGroup,
    Figure,
    ListBlock,
    Paragraph,
    Section,
    Table,
    Theorem,
    walk,
)
from tests.conftest import ROOT
from tests.corpus_pages import PAPER_PAGES, fixture_path, parsed

MARKER = re.compile(r"<!--(¶[0-9]+)-->")
MARKER_LINE = re.compile(r"<!--¶[0-9]+-->\n\n")
TOKENS_A_BLOCK = 6  # contract §11: at most six tokens a block on average


def _paper(name: str) -> Paper:
    return Paper.open(LoadedPaper(parsed(name), "local/x", "local/x"))


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_marker_of_a_corpus_page_is_cited_verbatim_at_a_few_tokens(name: str) -> None:
    paper = _paper(name)
    plain, marked = paper.markdown(), paper.markdown(anchors=True)
    labels = MARKER.findall(marked)
    assert labels, name
    # each marks a block of its own, and cite takes it as it is written
    cited = [cite(paper, label, "")["anchor"] for label in labels]
    assert len(set(cited)) == len(labels)
    extra = count(marked) - count(plain)
    assert extra / len(labels) <= TOKENS_A_BLOCK
    assert MARKER_LINE.sub("", marked) == plain  # the markers are all that was added


FLOW = (Paragraph, Equation, EquationGroup, Figure, Table, Theorem, ListBlock)


@pytest.mark.parametrize("name", ["html/1808.08002.ar5iv.html", "html/2501.11120v1.arxiv.html"])
def test_every_block_of_a_sections_flow_is_marked(name: str) -> None:
    paper = _paper(name)
    shown = set(MARKER.findall(paper.markdown(anchors=True)))
    in_flow = [
        visit.node.id
        for visit in walk(paper.document.roots())
        if isinstance(visit.parent, Section) and isinstance(visit.node, FLOW)
        and paper.markdown(visit.node.id).strip()  # a block that renders to nothing shows none
    ]  # fmt: skip
    assert len(in_flow) > 50
    assert [node_id for node_id in in_flow if paper.index.marks[node_id] not in shown] == []


def test_the_command_line_marks_blocks_when_asked() -> None:
    page = str(fixture_path("full"))
    run = [sys.executable, "-m", "paperanchor.cli", "read", page, "S2"]
    plain = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    marked = subprocess.run(
        [*run, "--anchors"], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    assert not MARKER.search(plain) and len(MARKER.findall(marked)) >= 8
