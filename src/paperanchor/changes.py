"""What changed between two editions of a paper (SPEC §10), on their alignment (editions.py).

`compare(old, new, alignment)` says, once per pair, what became of each block and section:
`same`, `edited`, `added`, `moved` or `removed`. A block is *moved* when it left its order
among the blocks both editions share (the longest run of them in the same order stays) or its
section; an id that another rendering numbered otherwise is not a change. A paragraph is
*edited* when its own words changed (a changed display equation inside it is the equation's
change). From that: the outline's marks, `Changes` (counts and the numbers that changed), and
each section's *pieces*, its blocks in reading order with their Markdown as CriticMarkup, which
`read … since`, the whole paper's `.md` of changes and the HTML page of changes draw.

Pure: the papers and their alignment come in, shapes and text go out.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Literal

from paperanchor import shapes
from paperanchor.editions import Alignment, Pair
from paperanchor.paper import Paper
from paperanchor.render import critic
from paperanchor.render.escape import markdown_line
from paperanchor.render.html import critic_html, footnotes_by_label, inline_critic_html
from paperanchor.render.json import reference_json
from paperanchor.render.markdown import block_chunks, footnote_chunks, heading, notes_in
from paperanchor.render.mathml import MathBudget
from paperanchor.render.text import plain_text
from paperanchor.tree import (
    Bibliography,
    Document,
    Equation,
    EquationGroup,
    Figure,
    Node,
    Paragraph,
    Reference,
    Section,
    Table,
    walk,
)

Change = Literal["same", "edited", "added", "moved", "removed"]
SectionMark = Literal["same", "edited", "added", "moved"]
Kind = Literal["paragraphs", "equations", "tables", "figures", "references"]
KINDS: tuple[Kind, ...] = ("paragraphs", "equations", "tables", "figures", "references")
ABSTRACT = "abstract"


@dataclass(slots=True)
class _Layout:
    """Where each node of one edition sits: its order, section and top-level block."""

    order: dict[str, int] = field(default_factory=dict)
    section: dict[str, str] = field(default_factory=dict)
    top: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    parent_section: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, document: Document) -> _Layout:
        layout = cls()
        for visit in walk(document.roots()):
            node = visit.node
            node_id = node.id
            if node_id in layout.nodes:
                continue  # a hostile page's repeated id: its first node is the one aligned
            layout.nodes[node_id] = node
            layout.order[node_id] = len(layout.order)
            parent = visit.parent
            if isinstance(node, Section):
                holder = parent.id if isinstance(parent, Section) else ""
                layout.parent_section[node_id] = holder
                continue
            layout.section[node_id] = visit.section.id if visit.section is not None else ""
            if parent is None or isinstance(parent, Section | Bibliography):
                layout.top[node_id] = node_id
            else:
                layout.top[node_id] = layout.top.get(parent.id, node_id)
        return layout

    def is_top(self, node_id: str) -> bool:
        return self.top.get(node_id) == node_id


@dataclass(frozen=True, slots=True)
class Piece:
    """One top-level block of a section as the changes show it."""

    change: Change
    node_id: str
    """its id in the new edition (in the old one when removed)"""
    old_id: str | None
    markdown: tuple[str, ...]
    """its chunks: CriticMarkup where edited, the new (old when removed) Markdown otherwise,
    every chunk escaped for CriticMarkup (render/critic.py)"""
    moved_from: str | None = None


@dataclass(slots=True)
class Comparison:
    """Two editions compared once: statuses, counts, numbers and each section's pieces."""

    old: Paper
    new: Paper
    blocks: dict[str, Change] = field(default_factory=dict)
    """new id -> what became of the block"""
    removed: dict[str, None] = field(default_factory=dict)
    """old ids of the blocks that are gone, in their order (apart from `blocks`: a renumbered
    edition gives another block the id of one that went)"""
    sections: dict[str, tuple[SectionMark, int]] = field(default_factory=dict)
    """new section id -> its change and how many of its blocks differ"""
    removed_sections: list[str] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    numbers: list[shapes.NumberChange] = field(default_factory=list)
    pieces: dict[str, list[Piece]] = field(default_factory=dict)
    """new section id ("abstract" too; "" for blocks outside every section) -> its pieces;
    an old section that is gone -> its removed pieces, under its old id"""
    old_layout: _Layout = field(default_factory=_Layout)
    new_layout: _Layout = field(default_factory=_Layout)
    old_section: dict[str, str] = field(default_factory=dict)
    """new section id -> the old section it continues"""
    merged: dict[str, list[str]] = field(default_factory=dict)
    """new id -> the old blocks merged into it after the first (two paragraphs made one: the
    block is edited, the others count as removed and are shown in its marks)"""


def compare(old: Paper, new: Paper, alignment: Alignment) -> Comparison:
    """Everything that changed from `old` to `new` (module docstring)."""
    result = Comparison(old, new, old_layout=_Layout.of(old.document))
    result.new_layout = _Layout.of(new.document)
    section_of = _section_pairs(alignment, result)
    result.old_section = {new: old for old, new in section_of.items()}
    moved = _moved(alignment.blocks, result, section_of)
    for pair in alignment.blocks:
        if pair.new is None:
            result.removed[pair.old or ""] = None
        elif pair.new in result.blocks:
            result.merged.setdefault(pair.new, []).append(pair.old or "")
            result.blocks[pair.new] = "edited"
        else:
            result.blocks[pair.new] = _block_change(pair, moved, result)
    _pieces(alignment, result, section_of, moved)
    _section_changes(alignment, result, section_of)
    result.counts = _counts(alignment, result)
    return result


def _section_pairs(alignment: Alignment, result: Comparison) -> dict[str, str]:
    """old section id -> its new section id, for the sections both editions have."""
    found = {
        pair.old: pair.new
        for pair in alignment.sections
        if pair.old is not None and pair.new is not None
    }
    if result.old.document.abstract is not None and result.new.document.abstract is not None:
        found[ABSTRACT] = ABSTRACT
    found[""] = ""
    return found


def _in_order(olds: Sequence[int]) -> set[int]:
    """The positions of the longest increasing run of `olds` (patience, n log n)."""
    tails: list[int] = []
    tail_at: list[int] = []
    before: list[int] = [-1] * len(olds)
    for position, value in enumerate(olds):
        place = bisect.bisect_left(tails, value)
        if place == len(tails):
            tails.append(value)
            tail_at.append(position)
        else:
            tails[place] = value
            tail_at[place] = position
        before[position] = tail_at[place - 1] if place else -1
    kept: set[int] = set()
    at = tail_at[-1] if tail_at else -1
    while at >= 0:
        kept.add(at)
        at = before[at]
    return kept


def _moved(pairs: Sequence[Pair], result: Comparison, section_of: dict[str, str]) -> set[str]:
    """New ids of the top-level blocks that left their section, or their order among the
    blocks their section kept (a section that moved takes its blocks with it: only the
    section moved)."""
    old_layout, new_layout = result.old_layout, result.new_layout
    moved: set[str] = set()
    kept_in: dict[str, list[Pair]] = {}
    for pair in pairs:
        if pair.old is None or pair.new is None:
            continue
        if not (old_layout.is_top(pair.old) and new_layout.is_top(pair.new)):
            continue
        new_section = new_layout.section.get(pair.new, "")
        if section_of.get(old_layout.section.get(pair.old, "")) != new_section:
            moved.add(pair.new)
        else:
            kept_in.setdefault(new_section, []).append(pair)
    for matched in kept_in.values():
        kept = _in_order([old_layout.order.get(pair.old or "", 0) for pair in matched])
        moved.update(pair.new or "" for i, pair in enumerate(matched) if i not in kept)
    return moved


def _own_text(node: Node) -> str:
    """A block's own words: a paragraph's without its display equations (each is compared as
    itself), a float's caption and cells without its printed label (renumbering a table
    changes neither)."""
    if isinstance(node, Paragraph):
        return "\n".join(plain_text(b) for b in node.blocks if not _is_display(b))
    if isinstance(node, Table):
        return "\n".join([node.caption.text, *(" | ".join(row) for row in node.rows)])
    if isinstance(node, Figure):
        return "\n".join([node.caption.text, *(plain_text(b) for b in node.blocks)])
    return plain_text(node)


def _is_display(node: Node) -> bool:
    return isinstance(node, Equation | EquationGroup)


def _block_change(pair: Pair, moved: set[str], result: Comparison) -> Change:
    if pair.status in ("added", "removed"):
        return pair.status
    old_node = result.old_layout.nodes.get(pair.old or "")
    new_node = result.new_layout.nodes.get(pair.new or "")
    # the alignment compares a figure by its caption: a new image is an edit too
    compared = pair.status == "edited" or isinstance(new_node, Figure)
    if compared and old_node is not None and new_node is not None:
        if not _reworded(old_node, new_node):
            return "moved" if pair.new in moved else "same"
        return "edited"
    return "moved" if pair.new in moved else "same"


# Two renderings of one text differ in what is not words: a citation in brackets or in
# parentheses, `CO2` or `CO${}_{2}$`, `\displaystyle` or a group's braces around a symbol. Words
# and numbers are compared outside math, and inside it the TeX without its spacing, grouping and
# style commands; a change of punctuation alone reads as no change (the one kind of real edit
# this leaves out: measured on corpus/pairs, it removes the rendering's false changes).
_MATH_SPAN = re.compile(r"(?<!\\)\$(?:[^$\\]|\\.)*\$")
_NOT_WORD = re.compile(r"[\W_]+")
_TEX_NOISE = re.compile(
    r"\\(?:displaystyle|textstyle|scriptstyle|mathrm|mathit|text|mathbf|operatorname|left|right"
    r"|big|Big|bigl|bigr|Bigl|Bigr|quad|qquad)(?![a-zA-Z])|\\[,;!:]|[\s{}_^]"
)


# A TeX comment runs to the end of its line (a `%` and a line break LaTeXML keeps in the TeX).
_TEX_COMMENT = re.compile(r"(?<!\\)%[^\n]*\n?")
# A citation group as printed: its numbers or keys differ between renderings (`[19]` or
# `[nakajima_2024]` when a conversion could not number it); how many works it cites does not.
# A printed citation is a number or a key in brackets (`[19]`, `[xi2023rise]`), or in
# parentheses a number, a year (`(2023b)`) or a key with a `_` or a `:`: a unit in parentheses,
# `(tCO2eq)`, is words.
_KEY = r"(?:\d+[a-z]?|[\w./-]*[_:][\w:./-]*)"
_BRACKETED = r"(?:\d+|[\w:./-]{2,})"
_CITATION = re.compile(
    rf"\[({_BRACKETED}(?:\s*[,;]\s*{_BRACKETED}){{0,40}})\]"
    rf"|\(({_KEY}(?:\s*[,;]\s*{_KEY}){{0,40}})\)"
)


def _tex(tex: str) -> str:
    return _TEX_NOISE.sub("", _TEX_COMMENT.sub("", tex))


def _cited(match: re.Match[str]) -> str:
    # one word a work cited: `[1, 2, 3]` and `[1]; [2]; [3]` say the same
    return " cite" * len(re.split(r"[,;]", match.group(1) or match.group(2))) + " "


def _rendering_free(text: str) -> str:
    out: list[str] = []
    at = 0
    for match in _MATH_SPAN.finditer(text):
        out.append(_words(text[at : match.start()]))
        tex = _tex(match.group()[1:-1])
        # math without a letter or digit (`${}^{*}$` for a `∗`) is punctuation, as outside it
        out.append(tex if _NOT_WORD.sub("", tex) else "")
        at = match.end()
    out.append(_words(text[at:]))
    return "".join(out).casefold()


def _words(text: str) -> str:
    return _NOT_WORD.sub("", _CITATION.sub(_cited, text))


def _reworded(old: Node, new: Node) -> bool:
    """Whether a block's words (a paragraph's own, an equation's TeX, a table's cells and
    caption, a figure's caption and images) changed, beyond what another rendering of the
    same text changes."""
    if isinstance(old, Equation) and isinstance(new, Equation):
        return _tex(old.latex or old.text) != _tex(new.latex or new.text)
    if (
        isinstance(old, Figure)
        and isinstance(new, Figure)
        and old.images
        and new.images
        and _image_names(old) != _image_names(new)
    ):
        return True
    return _rendering_free(_own_text(old)) != _rendering_free(_own_text(new))


def _image_names(figure: Figure) -> list[str]:
    # by file name: another rendering serves them from another host; a rendering that drew a
    # figure as a picture (SVG in the page) has no image to compare (2404.11584's arXiv page),
    # and the names LaTeXML makes up (`x7.png`, numbered in the order it drew them) say
    # nothing: 2402.00838's ar5iv x7-x10 are its arXiv page's x6-x9
    names = (url.rsplit("/", 1)[-1] for url in figure.images)
    return [name for name in names if not _GENERATED.match(name)]


_GENERATED = re.compile(r"x\d+\.\w+$")


# -- the pieces of each section -----------------------------------------------------------------


def escaped_chunks(node: Node) -> list[str]:
    """A block's Markdown chunks as a plain read gives them, escaped for CriticMarkup."""
    return _chunks(node)


def _chunks(node: Node) -> list[str]:
    return [critic.escape(chunk) for chunk in block_chunks(node)]


def _pieces(
    alignment: Alignment, result: Comparison, section_of: dict[str, str], moved: set[str]
) -> None:
    old_layout, new_layout = result.old_layout, result.new_layout
    by_new: dict[str, Pair] = {}
    for matched in alignment.blocks:
        if matched.new is not None:
            by_new.setdefault(matched.new, matched)
    for node_id, node in new_layout.nodes.items():
        if not new_layout.is_top(node_id) or isinstance(node, Bibliography):
            continue
        section = new_layout.section.get(node_id, "")
        piece = _piece(node, by_new.get(node_id), result, moved)
        result.pieces.setdefault(section, []).append(piece)
    # a removed block goes where it stood: after the new place of the block before it in its
    # old section, in that section's counterpart (or under its old section, when that is gone)
    after: dict[str, str | None] = {}
    last_kept: dict[str, str | None] = {}
    for old_id in sorted(old_layout.top, key=lambda i: old_layout.order[i]):
        if not old_layout.is_top(old_id) or isinstance(old_layout.nodes[old_id], Bibliography):
            continue
        old_section = old_layout.section.get(old_id, "")
        pair = alignment.of_old(old_id)
        if pair is not None and pair.new is not None:
            last_kept[old_section] = pair.new
            continue
        after[old_id] = last_kept.get(old_section)
    placed: dict[str, dict[str | None, list[Piece]]] = {}
    for old_id, before in after.items():
        node = old_layout.nodes[old_id]
        old_section = old_layout.section.get(old_id, "")
        target = section_of.get(old_section)
        piece = Piece("removed", old_id, old_id, tuple(critic.deleted(c) for c in _chunks(node)))
        result.removed[old_id] = None
        if target is None:
            result.pieces.setdefault(old_section, []).append(piece)
        else:
            placed.setdefault(target, {}).setdefault(before, []).append(piece)
    for target, by_before in placed.items():
        kept = result.pieces.get(target, [])
        merged = list(by_before.pop(None, []))
        for piece in kept:
            merged.append(piece)
            merged.extend(by_before.pop(piece.node_id, []))
        for rest in by_before.values():  # its neighbour is elsewhere now: at the end
            merged.extend(rest)
        result.pieces[target] = merged


def _piece(node: Node, pair: Pair | None, result: Comparison, moved: set[str]) -> Piece:
    node_id = node.id
    if pair is None:
        # a block the alignment does not match (code, quotes): by its id and Markdown
        old_node = result.old_layout.nodes.get(node_id)
        if old_node is None:
            return Piece("added", node_id, None, tuple(critic.inserted(c) for c in _chunks(node)))
        change: Change = "same" if _chunks(old_node) == _chunks(node) else "edited"
        result.blocks[node_id] = change
        pair = Pair(node_id, node_id, "same" if change == "same" else "edited", 1.0, 1.0)
    change = result.blocks.get(node_id, "same")
    if change == "added" or pair.old is None:
        return Piece("added", node_id, None, tuple(critic.inserted(c) for c in _chunks(node)))
    old_node = result.old_layout.nodes[pair.old]
    moved_from = pair.old if node_id in moved else None
    # a paragraph whose words stayed but whose display equation changed is shown edited
    if change != "edited" and not _inner_edit(node, result):
        return Piece(change, node_id, pair.old, tuple(_chunks(node)), moved_from)
    merged = [result.old_layout.nodes[i] for i in result.merged.get(node_id, [])]
    if merged:
        olds = sorted([old_node, *merged], key=lambda n: result.old_layout.order.get(n.id, 0))
        said = markdown_line("merged here: " + ", ".join(n.id for n in olds))
        note = f"{{>>{critic.escape(said)}<<}}"
        marked: tuple[str, ...] = (note, *chunks_diff(merged_side(olds, node), _chunks(node)))
    else:
        marked = tuple(block_diff(old_node, node))
    if isinstance(node, Paragraph | Table):
        _numbers(old_node, node, result)
    return Piece("edited", node_id, pair.old, marked, moved_from)


def merged_side(olds: Sequence[Node], new: Node) -> list[str]:
    """The old side of a block that several old ones were merged into: paragraphs made one
    read as one run (then compared word by word), anything else chunk by chunk."""
    old_chunks = [c for n in olds for c in _chunks(n)]
    if len(_chunks(new)) == 1 and len(old_chunks) == len(olds):
        return [" ".join(old_chunks)]
    return old_chunks


def _inner_edit(node: Node, result: Comparison) -> bool:
    """Whether a paragraph holds a display equation whose TeX changed."""
    if not isinstance(node, Paragraph):
        return False
    for block in node.blocks:
        rows = block.rows if isinstance(block, EquationGroup) else (block,)
        if any(result.blocks.get(row.id) == "edited" for row in rows if isinstance(row, Equation)):
            return True
    return False


def block_diff(old: Node, new: Node) -> list[str]:
    """The CriticMarkup chunks of one block changed: tables cell by cell, figures by caption
    and images, equations by TeX, anything else chunk by chunk at word level."""
    if isinstance(old, Table) and isinstance(new, Table):
        return _table_diff(old, new)
    if isinstance(old, Figure) and isinstance(new, Figure):
        return _figure_diff(old, new)
    return chunks_diff(_chunks(old), _chunks(new))


def chunks_diff(old: Sequence[str], new: Sequence[str]) -> list[str]:
    """Two lists of escaped chunks as CriticMarkup chunks: equal chunks as they are, changed
    ones word by word in order, the rest inserted or deleted whole."""
    out: list[str] = []
    for same, a0, a1, b0, b1 in critic.runs(list(old), list(new)):
        if same:
            out.extend(new[b0:b1])
            continue
        olds, news = old[a0:a1], new[b0:b1]
        for index in range(max(len(olds), len(news))):
            if index < len(olds) and index < len(news):
                out.append(critic.chunk(olds[index], news[index]))
            elif index < len(olds):
                out.append(critic.deleted(olds[index]))
            else:
                out.append(critic.inserted(news[index]))
    return out


def _caption(node: Figure | Table) -> str:
    tag = markdown_line(node.tag.strip())
    caption = node.caption.markdown
    return critic.escape(f"**{tag}** {caption}".strip() if tag else caption)


def _table_diff(old: Table, new: Table) -> list[str]:
    out = [critic.chunk(_caption(old), _caption(new))] if (old.caption or new.caption) else []
    if not old.markdown_rows and not new.markdown_rows:
        return out + chunks_diff(_chunks(old)[1:], _chunks(new)[1:])
    width = max((len(row) for row in (*old.markdown_rows, *new.markdown_rows)), default=0)

    def cells(rows: tuple[tuple[str, ...], ...]) -> list[tuple[str, ...]]:
        return [
            tuple(critic.escape(_cell(c)) for c in row) + ("",) * (width - len(row)) for row in rows
        ]

    olds, news = cells(old.markdown_rows), cells(new.markdown_rows)
    rows: list[tuple[str, ...]] = []
    for o, n in _paired_rows(olds, news):
        if o is not None and n is not None:
            rows.append(tuple(critic.words(x, y) for x, y in zip(o, n, strict=True)))
        elif o is not None:
            rows.append(tuple(critic.deleted(x) for x in o))
        elif n is not None:
            rows.append(tuple(critic.inserted(y) for y in n))
    out.append(_pipe(rows))
    return out


def _paired_rows(
    olds: Sequence[tuple[str, ...]], news: Sequence[tuple[str, ...]]
) -> list[tuple[tuple[str, ...] | None, tuple[str, ...] | None]]:
    """Two tables' rows paired: equal rows in order, then, among the rows between them, rows
    with the same first cell (the row's label), then by position."""
    paired: list[tuple[tuple[str, ...] | None, tuple[str, ...] | None]] = []
    for same, a0, a1, b0, b1 in critic.runs(olds, news):
        if same:
            paired.extend((n, n) for n in news[b0:b1])
            continue
        # first by label (the first cell), then the rest in order when as many are left
        by_label: dict[str, int] = {}
        for index in range(a0, a1):
            by_label.setdefault(olds[index][0] if olds[index] else "", index)
        match_of: dict[int, int] = {}
        used: set[int] = set()
        for index in range(b0, b1):
            match = by_label.get(news[index][0] if news[index] else "")
            if match is not None and match not in used:
                match_of[index] = match
                used.add(match)
        spare_old = [i for i in range(a0, a1) if i not in used]
        spare_new = [j for j in range(b0, b1) if j not in match_of]
        if len(spare_old) == len(spare_new):
            match_of.update(zip(spare_new, spare_old, strict=True))
            used.update(spare_old)
        for index in range(b0, b1):
            match = match_of.get(index)
            paired.append((olds[match] if match is not None else None, news[index]))
        paired.extend((olds[i], None) for i in range(a0, a1) if i not in used)
    return paired


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def _pipe(rows: list[tuple[str, ...]]) -> str:
    # cells already escaped (pipe_table's own escaping would escape our marks' cells twice)
    if not rows:
        return ""
    width = len(rows[0])
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines.extend("| " + " | ".join(row) + " |" for row in rows[1:])
    return "\n".join(lines)


def _figure_diff(old: Figure, new: Figure) -> list[str]:
    out = [critic.chunk(_caption(old), _caption(new))]
    tag = markdown_line(new.tag.strip() or "Figure")
    images_old = [f"![{tag}]({url})" for url in old.images]
    images_new = [f"![{tag}]({url})" for url in new.images]
    if images_old != images_new:
        out.append(
            " ".join(critic.substituted(" ".join(images_old), " ".join(images_new)).split("\n"))
        )
    return out + chunks_diff(
        [c for b in old.blocks for c in _chunks(b)], [c for b in new.blocks for c in _chunks(b)]
    )


def _numbers(old: Node, new: Node, result: Comparison) -> None:
    if isinstance(old, Table) and isinstance(new, Table):
        for o, n in _paired_rows(old.rows, new.rows):
            for x, y in zip(o or (), n or (), strict=False):
                for change in critic.numbers(x, y):
                    result.numbers.append({"anchor": new.id, "old": change.old, "new": change.new})
        return
    for change in critic.numbers(_own_text(old), _own_text(new)):
        result.numbers.append({"anchor": new.id, "old": change.old, "new": change.new})


# -- sections and counts ---------------------------------------------------------------------


def _section_changes(alignment: Alignment, result: Comparison, section_of: dict[str, str]) -> None:
    new_layout = result.new_layout
    by_new = {pair.new: pair for pair in alignment.sections if pair.new is not None}
    sections = [n for n in new_layout.nodes.values() if isinstance(n, Section)]
    matched = [s for s in sections if s.id in by_new and by_new[s.id].old is not None]
    old_order = result.old_layout.order
    kept = _in_order([old_order.get(by_new[s.id].old or "", 0) for s in matched])
    moved = {s.id for position, s in enumerate(matched) if position not in kept}
    for section in matched:
        pair = by_new[section.id]
        old_parent = result.old_layout.parent_section.get(pair.old or "", "")
        if section_of.get(old_parent) != new_layout.parent_section.get(section.id, ""):
            moved.add(section.id)
    # deepest first, so that a section's count includes its subsections'
    for section in reversed(sections):
        if section.id == ABSTRACT:
            own = sum(1 for p in result.pieces.get(ABSTRACT, []) if p.change != "same")
            result.sections[ABSTRACT] = ("edited" if own else "same", own)
            continue
        own = sum(1 for p in result.pieces.get(section.id, []) if p.change != "same")
        changed = own + sum(result.sections[c.id][1] for c in section.children)
        matched_pair = by_new.get(section.id)
        if matched_pair is None or matched_pair.old is None:
            change: SectionMark = "added"
        elif changed or matched_pair.status == "edited":
            change = "edited"
        elif section.id in moved:
            change = "moved"
        else:
            change = "same"
        result.sections[section.id] = (change, changed)
    result.removed_sections = [
        pair.old for pair in alignment.sections if pair.new is None and pair.old is not None
    ]


def _kind(node: Node) -> Kind | None:
    if isinstance(node, Equation):
        return "equations"
    if isinstance(node, Table):
        return "tables"
    if isinstance(node, Figure):
        return "figures"
    if isinstance(node, Reference):
        return "references"
    if isinstance(node, EquationGroup):
        return None  # its rows are counted
    if isinstance(node, Paragraph) and not _own_text(node).strip():
        return None  # a display standing alone: its equations are counted
    return "paragraphs"


def _counts(alignment: Alignment, result: Comparison) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {
        kind: dict.fromkeys(("same", "edited", "added", "moved", "removed"), 0)
        for kind in ("sections", *KINDS)
    }
    for pair in alignment.blocks:
        layout = result.new_layout if pair.new is not None else result.old_layout
        node_id = pair.new if pair.new is not None else pair.old or ""
        node = layout.nodes.get(node_id)
        if node is None:
            continue
        kind = _kind(node)
        if kind is None or (kind == "paragraphs" and not layout.is_top(node_id)):
            continue
        merged = pair.new is not None and pair.old in result.merged.get(pair.new, ())
        change = "removed" if pair.new is None or merged else result.blocks.get(node_id, "same")
        counts[kind][change] += 1
    for section_id, (change, _changed) in result.sections.items():
        if section_id != ABSTRACT:
            counts["sections"][change] += 1
    counts["sections"]["removed"] = len(result.removed_sections)
    counts["references"] = {
        "added": counts["references"]["added"],
        "removed": counts["references"]["removed"],
    }
    return counts


# -- the shapes ------------------------------------------------------------------------------


def changes_shape(result: Comparison, *, per_section: bool = False) -> shapes.Changes:
    """`Changes` (SPEC §5); with `per_section`, every section's change (the REST answer)."""
    removed: list[shapes.RemovedSection] = []
    for section_id in result.removed_sections:
        node = result.old_layout.nodes.get(section_id)
        if isinstance(node, Section):
            removed.append({"id": section_id, "number": node.number, "title": node.title.text})
    answer: shapes.Changes = {
        "since": result.old.meta.idv,
        "to": result.new.meta.idv,
        "sections": _kind_counts(result.counts["sections"]),
        "paragraphs": _kind_counts(result.counts["paragraphs"]),
        "equations": _kind_counts(result.counts["equations"]),
        "tables": _kind_counts(result.counts["tables"]),
        "figures": _kind_counts(result.counts["figures"]),
        "references": {
            "added": result.counts["references"]["added"],
            "removed": result.counts["references"]["removed"],
        },
        "removed": removed,
        "numbers": list(result.numbers),
    }
    if per_section:
        answer["sectionList"] = [
            {
                "id": node.id,
                "number": node.number,
                "title": node.title.text,
                "change": change,
                "changed": changed,
            }
            for node, (change, changed) in _sections_in_order(result)
        ]
    return answer


def _kind_counts(counts: dict[str, int]) -> shapes.ChangeCounts:
    return {
        "same": counts["same"],
        "edited": counts["edited"],
        "added": counts["added"],
        "moved": counts["moved"],
        "removed": counts["removed"],
    }


def _sections_in_order(result: Comparison) -> Iterator[tuple[Section, tuple[SectionMark, int]]]:
    for node in result.new_layout.nodes.values():
        if isinstance(node, Section) and node.id in result.sections and node.id != ABSTRACT:
            yield node, result.sections[node.id]


def marked_outline(outline: shapes.Outline, result: Comparison) -> shapes.Outline:
    """The outline with each section's change and `changes` (SPEC §10 outline since)."""

    def mark(sections: list[shapes.Section]) -> list[shapes.Section]:
        out: list[shapes.Section] = []
        for section in sections:
            copy = dict(section)
            change, changed = result.sections.get(section["id"], ("same", 0))
            copy["change"] = change
            copy["changed"] = changed
            copy["children"] = mark(section["children"])
            out.append(copy)  # type: ignore[arg-type]
        return out

    answer = dict(outline)
    answer["sections"] = mark(outline["sections"])
    answer["changes"] = changes_shape(result)
    return answer  # type: ignore[return-value]


def references_shape(result: Comparison) -> shapes.ReferenceAnswer:
    """The bibliography entries added and removed since the old edition."""
    added = [
        reference_json(node)
        for key, change in result.blocks.items()
        if change == "added" and isinstance(node := result.new_layout.nodes.get(key), Reference)
    ]
    removed = [
        reference_json(node)
        for key in result.removed
        if isinstance(node := result.old_layout.nodes.get(key), Reference)
    ]
    return {
        "idv": result.new.meta.idv,
        "since": result.old.meta.idv,
        "added": added,
        "removed": removed,
    }


# -- CriticMarkup of a node and of the whole paper -------------------------------------------


def _heading(result: Comparison, section: Section) -> str:
    new = critic.escape(heading(section))
    old = result.old_layout.nodes.get(result.old_section.get(section.id, ""))
    if not isinstance(old, Section):
        return critic.inserted(new)
    return critic.chunk(critic.escape(heading(old)), new)


def piece_chunks(result: Comparison, piece: Piece) -> list[str]:
    """A piece as the read shows it: a moved block says where it was."""
    chunks = list(piece.markdown)
    if piece.moved_from is not None:
        chunks.insert(0, moved_note(result, piece.moved_from))
    return chunks


def moved_note(result: Comparison, old_id: str) -> str:
    """`{>>moved here from 1 Introduction (S1.p3)<<}`: where a moved block stood."""
    old_section = result.old_layout.nodes.get(result.old_layout.section.get(old_id, ""))
    where = ""
    if isinstance(old_section, Section):
        where = f"{old_section.tag.strip()} {old_section.title.text}".strip() + " "
    said = markdown_line(f"moved here from {where}({old_id})")
    return f"{{>>{critic.escape(said)}<<}}"


def _folded(ids: list[str]) -> str:
    shown = ", ".join(markdown_line(i) for i in ids[:3])
    more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
    noun = "block" if len(ids) == 1 else "blocks"
    return f"{{>>{len(ids)} unchanged {noun}: {shown}{more}<<}}"


def node_chunks(result: Comparison, node_id: str, *, fold: bool = True) -> list[str]:
    """The CriticMarkup chunks of one node of the new edition: a section with its blocks
    (unchanged ones folded into one comment line), a block with its marks."""
    node = result.new_layout.nodes.get(node_id)
    if node is None:
        return []
    if isinstance(node, Section):
        body = _section_chunks(result, node, fold=fold)
        old_id = result.old_section.get(node_id)
    else:
        body, old_id = _chunks(node), None
        top = result.new_layout.top.get(node_id, node_id)
        for piece in result.pieces.get(result.new_layout.section.get(node_id, ""), []):
            if piece.node_id == top and top == node_id:
                body, old_id = piece_chunks(result, piece), piece.old_id
                break
    # the footnotes its text references, at its end as in a plain read, compared too
    old_node = result.old_layout.nodes.get(old_id) if old_id is not None else None
    old_notes = _notes(old_node, result.old.document) if old_node is not None else []
    new_notes = _notes(node, result.new.document)
    return body + chunks_diff(old_notes, new_notes)


def _notes(node: Node, document: Document) -> list[str]:
    return [critic.escape(c) for c in footnote_chunks(notes_in([node]), document.footnotes)]


def _section_chunks(result: Comparison, section: Section, *, fold: bool) -> list[str]:
    out = [_heading(result, section)]
    pending: list[str] = []
    pieces = {p.node_id: p for p in result.pieces.get(section.id, []) if p.change != "removed"}
    removed_after: dict[str | None, list[Piece]] = {}
    previous: str | None = None
    for piece in result.pieces.get(section.id, []):
        if piece.change == "removed":
            removed_after.setdefault(previous, []).append(piece)
        else:
            previous = piece.node_id

    def flush() -> None:
        if pending:
            out.append(_folded(pending))
            pending.clear()

    for removed in removed_after.get(None, []):
        out.extend(removed.markdown)
    for block in section.blocks:
        if isinstance(block, Section):
            flush()
            out.extend(_section_chunks(result, block, fold=fold))
            continue
        members = (
            [r.id for r in block.references] if isinstance(block, Bibliography) else [block.id]
        )
        for member in members:
            shown = pieces.get(member)
            if shown is None:
                continue
            if shown.change == "same" and fold:
                pending.append(member)
            else:
                flush()
                out.extend(piece_chunks(result, shown))
            for removed in removed_after.get(member, []):
                flush()
                out.extend(removed.markdown)
    flush()
    return out


def whole_markdown(result: Comparison, *, context: int = 24) -> str:
    """The whole paper's changes as CriticMarkup: the numbers that changed first, the counts,
    then each section that changed with only its changed blocks (SPEC §10 `.md`)."""
    shape = changes_shape(result)
    title = markdown_line(result.new.document.title.text)
    lines = [f"# Changes in {title}", f"{result.old.meta.idv} → {result.new.meta.idv}"]
    if shape["numbers"]:
        said = "; ".join(
            f"{markdown_line(n['old'])} → {markdown_line(n['new'])} ({markdown_line(n['anchor'])})"
            for n in shape["numbers"]
        )
        lines.append(f"**Numbers that changed:** {said}")
    lines.append(_summary(shape))
    for section_id, pieces in _changed_pieces(result):
        node = result.new_layout.nodes.get(section_id) or result.old_layout.nodes.get(section_id)
        if section_id == ABSTRACT:
            head = "## Abstract"
        elif isinstance(node, Section):
            gone = section_id not in result.sections
            head = critic.deleted(critic.escape(heading(node))) if gone else _heading(result, node)
        else:
            head = "## (outside the sections)"
        lines.append(head)
        if result.sections.get(section_id, ("same", 0))[0] == "moved":
            was = markdown_line(result.old_section.get(section_id, section_id))
            lines.append(f"{{>>this section moved here (it was {critic.escape(was)})<<}}")
        for piece in pieces:
            if piece.change == "moved" and piece.moved_from is not None:
                # its words did not change: where it was, and how it starts
                lines.append(moved_note(result, piece.moved_from))
                lines.append(critic.opening(piece.markdown[0], context) if piece.markdown else "")
                continue
            lines.extend(_trimmed(piece_chunks(result, piece), context))
    return "\n\n".join(lines) + "\n"


def _changed_pieces(result: Comparison) -> Iterator[tuple[str, list[Piece]]]:
    order = [n.id for n in result.new_layout.nodes.values() if isinstance(n, Section)]
    seen = set(order)
    order += [key for key in result.pieces if key not in seen]
    for section_id in order:
        pieces = [p for p in result.pieces.get(section_id, []) if p.change != "same"]
        if pieces or result.sections.get(section_id, ("same", 0))[0] in ("moved", "added"):
            yield section_id, pieces


def _trimmed(chunks: list[str], context: int) -> list[str]:
    """A changed block as the summary shows it: its chunks without a mark left out (one `…`
    for a run of them), a table's rows without a mark left out, the rest cut around marks."""
    out: list[str] = []
    for chunk in chunks:
        if not critic.marked(chunk):
            if out and out[-1] != "…":
                out.append("…")
            continue
        if chunk.startswith("|"):
            lines = chunk.split("\n")
            kept = lines[:2] + [line for line in lines[2:] if critic.marked(line)]
            out.append("\n".join(kept))
        else:
            out.append(critic.trimmed(chunk, context))
    while out and out[-1] == "…":
        out.pop()
    return out


def _summary(shape: shapes.Changes) -> str:
    parts = []
    for kind in ("sections", "paragraphs", "equations", "tables", "figures"):
        counts: shapes.ChangeCounts = shape[kind]
        said = [f"{counts[c]} {c}" for c in ("edited", "added", "moved", "removed") if counts[c]]
        if said:
            parts.append(f"{kind}: {', '.join(said)}")
    references = shape["references"]
    if references["added"] or references["removed"]:
        parts.append(f"references: {references['added']} added, {references['removed']} removed")
    return "; ".join(parts) + "." if parts else "No change."


# -- the HTML page of changes --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PageSection:
    """One section as the page of changes shows it (its HTML escaped at render/html.py)."""

    id: str
    label: str
    """its number and title, as text"""
    heading: str
    """its number and title as HTML, a changed title marked"""
    change: str
    changed: int
    body: str


def _label(section: Section) -> str:
    return f"{section.tag.strip()} {section.title.text}".strip()


def _body(result: Comparison, pieces: Sequence[Piece], math: MathBudget) -> str:
    notes = {**footnotes_by_label(result.old.document), **footnotes_by_label(result.new.document)}
    parts: list[str] = []
    same = 0

    def flush() -> None:
        nonlocal same
        if same:
            parts.append(f'<p class="folded">{same} unchanged block{"s" if same > 1 else ""}</p>')
            same = 0

    for piece in pieces:
        if piece.change == "same":
            same += 1
            continue
        flush()
        if piece.change in ("added", "removed"):
            tag = "ins" if piece.change == "added" else "del"
            inner = "\n\n".join(chunk[3:-3] for chunk in piece.markdown)
            parts.append(f'<{tag} class="block">{critic_html(inner, math, notes)}</{tag}>')
            continue
        if piece.moved_from is not None:
            note = moved_note(result, piece.moved_from)[3:-3]
            parts.append(f'<p class="moved">{escape(critic_unescaped(note))}</p>')
        parts.append(critic_html("\n\n".join(piece.markdown), math, notes))
    flush()
    return "".join(parts)


def critic_unescaped(text: str) -> str:
    """Our escaped one-line Markdown (a note) back to its text, for HTML's own escaping."""
    return _BACKSLASH.sub(r"\1", text)


_BACKSLASH = re.compile(r"\\([!-/:-@\[-`{-~])")


def page_sections(result: Comparison) -> tuple[list[PageSection], list[PageSection]]:
    """The sections of the page of changes in reading order (the abstract first), and those
    of the old edition that are gone, each with its changed blocks as HTML."""
    math = MathBudget()
    shown: list[PageSection] = []
    if result.new.document.abstract is not None:
        change, changed = result.sections.get(ABSTRACT, ("same", 0))
        body = _body(result, result.pieces.get(ABSTRACT, []), math) if changed else ""
        shown.append(PageSection(ABSTRACT, "Abstract", "Abstract", change, changed, body))
    for node, (change, changed) in _sections_in_order(result):
        old = result.old_layout.nodes.get(result.old_section.get(node.id, ""))
        new_title = critic.escape(_title_markdown(node))
        title = (
            critic.chunk(critic.escape(_title_markdown(old)), new_title)
            if isinstance(old, Section)
            else new_title
        )
        body = _body(result, result.pieces.get(node.id, []), math) if change != "same" else ""
        heading_html = inline_critic_html(title, math)
        shown.append(PageSection(node.id, _label(node), heading_html, change, changed, body))
    gone: list[PageSection] = []
    for section_id in result.removed_sections:
        removed = result.old_layout.nodes.get(section_id)
        if isinstance(removed, Section):
            body = _body(result, result.pieces.get(section_id, []), math)
            gone.append(PageSection(section_id, _label(removed), "", "removed", 0, body))
    return shown, gone


def _title_markdown(section: Section) -> str:
    tag = markdown_line(section.tag.strip())
    return f"{tag} {section.title.markdown}".strip()


def summary(result: Comparison) -> str:
    """The counts in one sentence: `sections: 6 edited; paragraphs: 1 edited, 1 added …`."""
    return _summary(changes_shape(result))
