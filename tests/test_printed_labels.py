"""Printed labels as printed (contract §11): whatever the outline or a page prints for a node
resolves to it, over every corpus page; a suggestion only when it is close."""

from __future__ import annotations

import pytest

from paperanchor.anchors import printed_key
from paperanchor.errors import NotFound
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.tree import Equation, Figure, Node, Section, Table, Theorem, walk
from tests.corpus_pages import PAPER_PAGES, parsed


def _paper(name: str) -> Paper:
    return Paper.open(LoadedPaper(parsed(name), "x", "x"))


def shown(node: Node, parent: Node | None) -> list[str]:
    """What the outline (`number title`, the CLI's `3.1 Design (S3.SS1.SSS1, 243 tokens)`)
    and the pages (headings, a float's tag, a theorem's run-in label, `(4)`) print for a node,
    as a reader copies it."""
    if isinstance(node, Section):
        title = node.title.text.strip()
        if node.kind in ("body", "abstract", "bibliography") or not title:
            return []
        heading = [f"{node.number} {title}"] if node.number else []
        tagged = [f"{node.tag.strip()} {title}"] if node.tag.strip() else []
        return [title, *heading, *tagged, *([node.number] if node.number else [])]
    if isinstance(node, Figure | Table) and not isinstance(parent, Figure | Table):
        return [node.tag.strip().rstrip(":.")] if node.tag.strip() else []
    if isinstance(node, Theorem):
        label = node.label.text.strip()
        # a bare `Proof.` names no one proof
        return [label] if any(ch.isdigit() for ch in label) else []
    if isinstance(node, Equation) and node.number:
        return [f"({node.number})"]
    return []


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_label_the_outline_or_a_page_prints_resolves_to_its_node(name: str) -> None:
    paper = _paper(name)
    first: dict[str, str] = {}  # a label printed twice names the first node that prints it
    wrong = []
    for visit in walk(paper.document.roots()):
        for label in shown(visit.node, visit.parent):
            expected = first.setdefault(printed_key(label), visit.node.id)
            try:
                found = paper.index.resolve(label).node.id
            except NotFound:
                found = None
            if found != expected and paper.index.resolve(expected).node.id == expected:
                wrong.append((label, expected, found))
    assert wrong == []


def test_a_paragraph_heading_resolves_by_the_title_the_outline_prints() -> None:
    paper = _paper("html/1808.08002.ar5iv.html")
    assert paper.index.resolve("Theorem 3.1").node.id == "S3.SS1.SSS0.Px3"
    assert paper.index.resolve("theorem  3.1.").node.id == "S3.SS1.SSS0.Px3"


@pytest.mark.parametrize(
    ("anchor", "suggested"),
    [
        ("S9", []),  # the paper has no section 9: references (bib) is no answer
        ("nope", []),
        ("intro", ["introduction (S1)"]),
        ("introdution", ["introduction (S1)"]),
        # a paragraph id guessed under a section: the section, whose read shows the anchors
        ("S3.SS1.p99", ["stability-of-stochastic-dynamical-systems (S3.SS1)"]),
        ("theorem 9.9", []),  # one number off is another theorem
    ],
)
def test_a_suggestion_is_only_a_close_one(anchor: str, suggested: list[str]) -> None:
    assert _paper("html/1808.08002.ar5iv.html").index.suggest(anchor) == suggested
