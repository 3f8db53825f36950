"""Extractive TL;DR and contributions: every sentence returned appears verbatim in the paper."""

from __future__ import annotations

import re

from paperanchor.render.text import plain_text
from paperanchor.tree import Block, Document, ListBlock, Paragraph, Section, Text

# A sentence ends at . ! or ? followed by space and a capital, a digit or an opening mark;
# common abbreviations and math spans are protected before splitting.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[“\"$])")
_ABBREV = re.compile(
    r"\b(?:e\.g|i\.e|et al|cf|vs|Fig|Figs|Eq|Eqs|Sec|Ref|Refs|resp|approx|etc|Dr|No)\.$"
)
_MATH = re.compile(r"\$[^$]*\$")
_CLAIM = re.compile(
    r"\b(?:we|this (?:paper|work|letter|article)|our (?:work|paper|method|approach|results?))\s+"
    r"(?:propose|present|introduce|show|demonstrate|develop|prove|find|report|provide|derive|"
    r"establish|describe|study|investigate|design|obtain|argue|conduct|evaluate|analy[sz]e|"
    r"formali[sz]e|give|address|solve|extend|measure|quantify|train|compare)",
    re.IGNORECASE,
)
_CONTRIBUTION = re.compile(
    r"contribution|we (?:make|offer) the following|in summary|to summari[sz]e", re.IGNORECASE
)
MAX_CONTRIBUTIONS = 5


def sentences(text: str) -> list[str]:
    """Split text into sentences, never inside `$…$` math or after a known abbreviation."""
    masked = _MATH.sub(lambda m: "$" + "x" * (len(m.group(0)) - 2) + "$", text)
    out: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(masked):
        piece = masked[start : match.start()]
        if _ABBREV.search(piece):
            continue
        out.append(text[start : match.start()].strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


def tldr(document: Document) -> str | None:
    """One sentence of the abstract: its first claim ("we propose / we show …"), else its first.

    One sentence, because the outline is meant to cost a small share of the paper; the
    abstract itself is in the outline too.
    """
    if document.abstract is None:
        return None
    found = sentences(" ".join(_texts(document.abstract)))
    if not found:
        return None
    return next((s for s in found if _CLAIM.search(s)), found[0])


def contributions(document: Document) -> list[str] | None:
    """The introduction's contribution list, else its "we propose / we show" sentences."""
    intro = _introduction(document)
    if intro is None:
        return None
    blocks = _flat(intro)
    for index, block in enumerate(blocks):
        if isinstance(block, ListBlock) and index > 0:
            before = " ".join(plain_text(b) for b in blocks[max(0, index - 2) : index])
            if _CONTRIBUTION.search(before) or _CLAIM.search(before):
                items = [plain_text(Paragraph(item.id, item.blocks)) for item in block.items]
                items = [i for i in items if i]
                if items:
                    return items[:MAX_CONTRIBUTIONS]
    claims = [s for text in _texts(intro) for s in sentences(text) if _CLAIM.search(s)]
    return claims[:MAX_CONTRIBUTIONS] or None


def _introduction(document: Document) -> Section | None:
    sections = [s for s in document.sections if s.kind not in ("bibliography",)]
    for section in sections:
        if (
            "introduction" in section.title.text.lower()
            or section.title.text.lower() == "background"
        ):
            return section
    return next((s for s in sections if s.kind in ("section", "body")), None)


def _flat(section: Section) -> list[Block]:
    """A section's blocks with paragraphs opened up, so a list follows its lead-in text."""
    out: list[Block] = []
    for block in section.blocks:
        if isinstance(block, Paragraph):
            out.extend(block.blocks)
        elif not isinstance(block, Section):
            out.append(block)
    return out


def _texts(section: Section) -> list[str]:
    out: list[str] = []
    for block in _flat(section):
        if isinstance(block, Text):
            out.append(block.content.text)
    return out
