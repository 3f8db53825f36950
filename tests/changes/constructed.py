"""Constructed pairs of editions (tests and bench/changes.py): a fixture paper and the same
paper with scripted edits, made with lxml from fixtures/html/full.html, with their truth known by
construction: what each kind of block should count, which sections changed, which numbers."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from lxml import html

from tests.conftest import FIXTURES

SOURCE = FIXTURES / "html" / "full.html"
NEW_PARAGRAPH = (
    "<div class='ltx_para' id='S4.p9'><p class='ltx_p'>We repeated every run on a second "
    "machine; the figures did not move.</p></div>"
)
NEW_REFERENCE = (
    "<li id='bib.bib9' class='ltx_bibitem'><span class='ltx_tag ltx_tag_bibitem'>[9]</span>"
    "<span class='ltx_bibblock'>A. Author. </span><span class='ltx_bibblock'>Revision tracking "
    "for scholarly papers, revisited. </span><span class='ltx_bibblock'>2026.</span></li>"
)
NOTHING = {"edited": 0, "added": 0, "moved": 0, "removed": 0}


@dataclass(frozen=True)
class Constructed:
    """Two editions of one paper as HTML and what comparing them must say."""

    name: str
    old: bytes
    new: bytes
    counts: dict[str, dict[str, int]]
    """per kind of block: how many were edited, added, moved, removed (same is not checked)"""
    sections: dict[str, str] = field(default_factory=dict)
    """section id -> its change, for every section that is not `same`"""
    numbers: list[dict[str, str]] = field(default_factory=list)


def _page() -> Any:
    return html.fromstring(SOURCE.read_bytes())


def _bytes(root: Any) -> bytes:
    return bytes(html.tostring(root, doctype="<!DOCTYPE html>", encoding="utf-8"))


def _first_text(element: Any, old: str, new: str) -> None:
    for node in element.iter():
        for attribute in ("text", "tail"):
            value = getattr(node, attribute)
            if value and old in value:
                setattr(node, attribute, value.replace(old, new, 1))
                return
    raise AssertionError(f"{old!r} is not in {element.get('id')}")


def edited() -> Constructed:
    """A sentence edited, a table cell changed, an equation's TeX changed, a figure's image
    replaced, a paragraph moved to another section, one deleted and one added, a reference
    added."""
    root = _page()
    _first_text(root.get_element_by_id("S1.p2"), "Earlier work", "Prior work")
    _first_text(root.get_element_by_id("S4.T2.4.2.1.2"), "0.50", "0.55")
    equation = root.get_element_by_id("S2.E1")
    annotation = next(
        a for a in equation.iter("annotation") if a.get("encoding") == "application/x-tex"
    )
    annotation.text = annotation.text.replace("w_{f}", "v_{f}", 1)
    moved = root.get_element_by_id("S1.p3")
    moved.getparent().remove(moved)
    target = root.get_element_by_id("S5.p1")
    target.addnext(moved)
    root.get_element_by_id("S4.F2.g1").set("src", "full/fig-overview-v2.png")
    removed = root.get_element_by_id("A2.p1")
    removed.getparent().remove(removed)
    root.get_element_by_id("S4.p1").addnext(html.fragment_fromstring(NEW_PARAGRAPH))
    bibliography = root.get_element_by_id("bib.bib1").getparent()
    bibliography.append(html.fragment_fromstring(NEW_REFERENCE))
    return Constructed(
        "edited",
        SOURCE.read_bytes(),
        _bytes(root),
        {
            "paragraphs": {"edited": 1, "added": 1, "moved": 1, "removed": 1},
            "equations": {**NOTHING, "edited": 1},
            "tables": {**NOTHING, "edited": 1},
            "figures": {**NOTHING, "edited": 1},
            "sections": {**NOTHING, "edited": 7},
            "references": {"added": 1, "removed": 0},
        },
        # S2 holds S2.SS1, whose paragraph's equation changed
        {s: "edited" for s in ("S1", "S2", "S2.SS1", "S4", "S5", "A2", "bib")},
        [{"anchor": "S4.T2", "old": "0.50", "new": "0.55"}],
    )


def rendering() -> Constructed:
    """The same text rendered otherwise: the introduction's paragraphs numbered from 11 and the
    text's whitespace laid out anew."""
    root = _page()
    section = root.get_element_by_id("S1")
    for number, paragraph in enumerate(section.find_class("ltx_para"), start=11):
        paragraph.set("id", f"S1.p{number}")
    for node in root.iter():
        if node.tail and node.tail.strip() == "" and "\n" in node.tail:
            node.tail = "\n  "
    return Constructed(
        "rendering",
        SOURCE.read_bytes(),
        _bytes(copy.deepcopy(root)),
        {
            **{kind: NOTHING for kind in ("paragraphs", "equations", "tables", "figures")},
            "sections": NOTHING,
            "references": {"added": 0, "removed": 0},
        },
    )


_SECTION_ID = re.compile(rb'((?:id|href|xref)="#?)S(\d+)(?=[."])')
NEW_SECTION = (
    b'<section id="S2" class="ltx_section"><h2 class="ltx_title ltx_title_section">'
    b'<span class="ltx_tag ltx_tag_section">2 </span>Background</h2>'
    b'<div id="S2.p1" class="ltx_para"><p id="S2.p1.1" class="ltx_p">Revision control for '
    b"papers has a long history in the humanities.</p></div></section>\n"
)


def inserted_section() -> Constructed:
    """A section inserted before the second: every later section's id (and every id under
    it) is numbered one more, as LaTeXML numbers them; no other word changes."""
    page = SOURCE.read_bytes()

    def shifted(match: re.Match[bytes]) -> bytes:
        number = int(match.group(2))
        return match.group(1) + b"S" + str(number + 1 if number >= 2 else number).encode()

    renumbered = _SECTION_ID.sub(shifted, page)
    at = renumbered.index(b'<section id="S3" class="ltx_section">')
    new = renumbered[:at] + NEW_SECTION + renumbered[at:]
    return Constructed(
        "inserted-section",
        page,
        new,
        {
            "paragraphs": {**NOTHING, "added": 1},
            **{kind: NOTHING for kind in ("equations", "tables", "figures")},
            "sections": {**NOTHING, "added": 1},
            "references": {"added": 0, "removed": 0},
        },
        {"S2": "added"},
    )


def reordered_appendices() -> Constructed:
    """Appendix B put before Appendix A, its words unchanged."""
    root = _page()
    first, second = root.get_element_by_id("A1"), root.get_element_by_id("A2")
    second.getparent().remove(second)
    first.addprevious(second)
    return Constructed(
        "reordered-appendices",
        SOURCE.read_bytes(),
        _bytes(root),
        {
            **{kind: NOTHING for kind in ("paragraphs", "equations", "tables", "figures")},
            "sections": {**NOTHING, "moved": 1},
            "references": {"added": 0, "removed": 0},
        },
        # of the two, the one out of the longest run kept in order: A1 and its subsection stay
        {"A2": "moved"},
    )


def split_and_merged() -> Constructed:
    """The conclusion's paragraph split after its first sentence; the introduction's first two
    paragraphs merged into one (the second's text, markup and all, appended to the first)."""
    root = _page()
    paragraph = root.get_element_by_id("S5.p1")
    text = paragraph.find(".//p")
    first = text.text.split(". ", 1)[0] + "."
    text.text = text.text.split(". ", 1)[1]
    paragraph.addprevious(
        html.fragment_fromstring(
            f"<div class='ltx_para' id='S5.p0'><p class='ltx_p'>{first}</p></div>"
        )
    )
    into, merged = root.get_element_by_id("S1.p1").find(".//p"), root.get_element_by_id("S1.p2")
    moving = merged.find(".//p")
    last = into[-1] if len(into) else None
    if last is not None:
        last.tail = (last.tail or "") + " " + (moving.text or "")
    else:
        into.text = (into.text or "") + " " + (moving.text or "")
    for child in list(moving):
        into.append(child)
    merged.getparent().remove(merged)
    return Constructed(
        "split-and-merged",
        SOURCE.read_bytes(),
        _bytes(root),
        {
            # a split: the paragraph edited and one added; a merge: one edited, one removed
            "paragraphs": {"edited": 2, "added": 1, "moved": 0, "removed": 1},
            **{kind: NOTHING for kind in ("equations", "tables", "figures")},
            "sections": {**NOTHING, "edited": 2},
            "references": {"added": 0, "removed": 0},
        },
        {"S1": "edited", "S5": "edited"},
    )


PAIRS = (edited, rendering, inserted_section, reordered_appendices, split_and_merged)


# -- the constructed edition pairs of fixtures/editions (LaTeX sources converted by latexml) --


def edition_truth(case: Any) -> dict[str, dict[str, int]]:
    """What comparing a pair of fixtures/editions must count, from its truth by construction
    (cases.json, keys turned into node ids by bench/anchor_truth.py): a block whose words
    stayed is the same block (a renumbered id is no change) unless its section is another; a
    block split in n is edited and n - 1 added; n blocks merged into one are one edited and
    n - 1 removed; a block of the new edition that none became is added."""
    from paperanchor.editions import block_units

    kinds = {"text": "paragraphs", "equation": "equations"}
    old_units = {u.id: u for u in block_units(case.old)}
    new_units = {u.id: u for u in block_units(case.new)}
    old_titles = _section_titles(case.old)
    new_titles = _section_titles(case.new)
    counts = {kind: dict(NOTHING) for kind in ("paragraphs", "equations", "tables", "figures")}

    def kind_of(unit: Any, document: Any) -> str:
        if unit.kind == "float":
            return "tables" if unit.id in _table_ids(document) else "figures"
        return kinds[unit.kind]

    became_of: dict[str, list[str]] = {}
    for target in case.forward:
        unit = old_units[target.anchor]
        if unit.kind not in ("text", "equation", "float"):
            continue
        kind = kind_of(unit, case.old)
        for new in target.truth:
            became_of.setdefault(new, []).append(target.anchor)
        if not target.truth:
            counts[kind]["removed"] += 1
        elif len(target.truth) > 1:
            counts[kind]["edited"] += 1
            counts[kind]["added"] += len(target.truth) - 1
        elif target.status == "edited":
            counts[kind]["edited"] += 1
        elif old_titles.get(unit.section) != new_titles.get(new_units[target.truth[0]].section):
            counts[kind]["moved"] += 1
    for new, olds in became_of.items():
        if len(olds) > 1:  # merged: the first is edited (counted above), the rest removed
            kind = kind_of(new_units[new], case.new)
            counts[kind]["edited"] -= len(olds) - 1
            counts[kind]["removed"] += len(olds) - 1
    for target in case.backward:
        unit = new_units[target.anchor]
        if not target.truth and unit.kind in ("text", "equation", "float"):
            counts[kind_of(unit, case.new)]["added"] += 1
    return counts


def _section_titles(document: Any) -> dict[str, str]:
    from paperanchor.tree import Section, walk

    return {
        v.node.id: v.node.title.text for v in walk(document.blocks) if isinstance(v.node, Section)
    }


def _table_ids(document: Any) -> set[str]:
    from paperanchor.tree import Table, walk

    return {v.node.id for v in walk(document.roots()) if isinstance(v.node, Table)}
