"""Sections of every kind, found by LaTeXML's class whatever the element's tag."""

from __future__ import annotations

import re
from typing import Any

from paperanchor.parse.bibliography import parse_bibliography
from paperanchor.parse.context import MAX_BLOCK_DEPTH, BlocksOf, ContainerOf, ParseContext
from paperanchor.parse.dom import (
    HtmlElement,
    classes,
    keep_decision,
    tag_of,
    text_of,
)
from paperanchor.parse.inline import inline_of
from paperanchor.tree import Block, Inline, Section

_KINDS = (
    ("ltx_bibliography", "bibliography"),
    ("ltx_appendix", "appendix"),
    ("ltx_part", "part"),
    ("ltx_chapter", "chapter"),
    ("ltx_section", "section"),
    ("ltx_subsection", "subsection"),
    ("ltx_subsubsection", "subsubsection"),
    ("ltx_paragraph", "paragraph"),
    ("ltx_subparagraph", "subparagraph"),
    ("ltx_index", "index"),
    ("ltx_glossary", "glossary"),
    ("ltx_acknowledgement", "acknowledgements"),
    ("ltx_acknowledgements", "acknowledgements"),
)
_LEVELS = {
    "part": 1,
    "chapter": 1,
    "section": 1,
    "appendix": 1,
    "bibliography": 1,
    "index": 1,
    "glossary": 1,
    "acknowledgements": 1,
    "subsection": 2,
    "subsubsection": 3,
}
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_UNNUMBERED_ID = re.compile(r"(?:^|\.)S*x\d+$")


def count_section_errors(errors: list[HtmlElement]) -> dict[Any, int]:
    """`ltx_ERROR` elements in each section element that encloses them.

    lxml keeps one Python proxy per element while it is referenced, so the section elements
    held as keys here are the very objects the section walk meets later.
    """
    per_section: dict[Any, int] = {}
    # The sections above each element met so far: an error climbs only until it meets one
    # (nested errors on a hostile page would otherwise climb through each other: quadratic).
    above: dict[Any, tuple[Any, ...]] = {}
    for error in errors:
        path: list[Any] = []
        node = error.getparent()
        while node is not None and node not in above:
            path.append(node)
            node = node.getparent()
        sections = above[node] if node is not None else ()
        for element in reversed(path):
            if section_kind(element) is not None:
                # deeper sections than the walk reads are flattened: keep the outermost
                sections = (element, *sections)[-MAX_BLOCK_DEPTH:]
            above[element] = sections
        for section in sections:
            per_section[section] = per_section.get(section, 0) + 1
    return per_section


_TAG_PREFIX = re.compile(r"^(?:appendix|chapter|part|section|§)\s*", re.IGNORECASE)


def section_kind(el: HtmlElement) -> str | None:
    """The kind of section an element is, or None; decided once per tag and class attribute."""
    raw_tag = el.tag
    if type(raw_tag) is not str:
        return None
    key = (raw_tag, el.get("class"))
    kind = _SECTION_KINDS.get(key, "")  # no kind is ""
    if kind == "":
        kind = keep_decision(_SECTION_KINDS, key, section_kind_of(tag_of(el), classes(el)), key[1])
    return kind


_SECTION_KINDS: dict[tuple[str, str | None], str | None] = {}


def section_kind_of(tag: str, cls: frozenset[str]) -> str | None:
    """`section_kind` of an element of this tag and classes."""
    if tag not in ("section", "div", "article"):
        return None
    for name, kind in _KINDS:
        if name in cls:
            return kind
    return None


def section_number(tag_text: str) -> str | None:
    """The printed number: `2.1 ` -> `2.1`, `Appendix A ` -> `A`, `1. ` -> `1`."""
    text = _TAG_PREFIX.sub("", tag_text.strip()).strip().rstrip(".:").strip()
    return text or None


def parse_section(
    el: HtmlElement,
    ctx: ParseContext,
    parent_id: str,
    blocks_of: BlocksOf,
    container: ContainerOf,
) -> Section:
    kind = section_kind(el) or "section"
    section_id = el.get("id") or ctx.positional_id(parent_id or "S", "sec")
    if kind in ("section", "subsection", "subsubsection") and _UNNUMBERED_ID.search(section_id):
        base_level = _LEVELS[kind]
        kind = "unnumbered"
    else:
        base_level = _LEVELS.get(kind, 0)
    # the children read from lxml once, for the heading, the loose text and the walk (each read
    # of the C tree costs several times the Python around it)
    nodes = list(el)
    elements = [c for c in nodes if type(c.tag) is str]
    title_el = next(
        (c for c in elements if tag_of(c) in _HEADINGS and "ltx_title" in classes(c)), None
    )
    errors = ctx.section_errors.get(el, 0)
    residue_before = ctx.residue

    def own(child: HtmlElement) -> list[Block] | None:
        if child is title_el:
            return []
        if (
            kind == "bibliography"
            and tag_of(child) in ("ul", "ol")
            and "ltx_biblist" in classes(child)
        ):
            return [parse_bibliography(child, ctx, section_id)]
        return None

    content: list[Block] = []
    if _has_loose_text(el, nodes):
        # text written straight into the section (AASTeX's \acknowledgments, a run-in unit):
        # read as a container so that it stays with the inline markup around it
        content = container(el, ctx, section_id, own)
    else:
        for child in elements:
            taken = own(child)
            content.extend(taken if taken is not None else blocks_of(child, ctx, section_id))
    tag_text = ""
    title = Inline("", "")
    if title_el is not None:
        for node in title_el.iter():
            if "ltx_tag" in (node.get("class") or "").split():
                tag_text = text_of(node)
                break
        title = inline_of(title_el, ctx, skip=frozenset({"ltx_tag", "ltx_note"}))[0]
    if kind == "acknowledgements":
        title = _acknowledgements_title(title)
    level = base_level or 1
    return Section(
        section_id,
        kind,
        section_number(tag_text),
        tag_text,
        title,
        level,
        tuple(_relevel(content, level)),
        errors + ctx.residue - residue_before,
    )


def _has_loose_text(el: HtmlElement, nodes: list[HtmlElement]) -> bool:
    text = el.text
    if text and text.strip():
        return True
    return any((tail := child.tail) and tail.strip() for child in nodes)


_ACKNOWLEDGEMENTS = Inline("Acknowledgements", "Acknowledgements")


def _acknowledgements_title(title: Inline) -> Inline:
    """The heading as printed, without the run-in period ("Acknowledgements."); the usual
    word when the page prints none (AASTeX's \\acknowledgments in some classes)."""
    if not title.text.strip(" .:"):
        return _ACKNOWLEDGEMENTS
    return Inline(title.markdown.rstrip(" .:"), title.text.rstrip(" .:"))


def _relevel(blocks: list[Block], level: int) -> list[Block]:
    """Run-in units (`\\paragraph`) sit one level below whatever encloses them."""
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, Section) and block.kind in ("paragraph", "subparagraph"):
            new_level = min(level + 1, 6)
            if block.level != new_level:
                block = Section(
                    block.id,
                    block.kind,
                    block.number,
                    block.tag,
                    block.title,
                    new_level,
                    tuple(_relevel(list(block.blocks), new_level)),
                    block.errors,
                )
        out.append(block)
    return out
