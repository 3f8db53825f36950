"""In-paper search (contract §4): distinct terms first, then occurrences, then document order."""

from __future__ import annotations

from dataclasses import dataclass

from paperanchor.errors import BadRequest
from paperanchor.refs import shown
from paperanchor.render.markdown import notes_in
from paperanchor.render.text import plain_text
from paperanchor.tree import Document, Figure, Paragraph, Table, Text, walk

SNIPPET_RADIUS = 150
# Each distinct word is counted in every paragraph: a 100 kB query of 20,000 words held the
# event loop for 1.6 s on 2501.11120v1 (a bad-input test found it); 1,000 characters is a
# pasted paragraph, and takes milliseconds.
QUERY_MAX_CHARS = 1000


@dataclass(frozen=True, slots=True)
class Unit:
    """A searchable paragraph: its anchor, enclosing section and plain text."""

    anchor: str
    section_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    anchor: str
    section_id: str
    snippet: str


def units(document: Document) -> list[Unit]:
    """Paragraphs in document order; the abstract, captions and footnotes count as paragraphs.

    A paragraph is one unit with everything inside it; a text run outside any paragraph (in a
    list item, a theorem, a letter's body) is a unit of its own.
    """
    found: list[Unit] = []
    note_home: dict[str, str] = {}
    for visit in walk(document.roots()):
        node = visit.node
        section_id = visit.section.id if visit.section is not None else ""
        if isinstance(node, Paragraph | Text) and visit.paragraph is None:
            text = plain_text(node)
            if text:
                found.append(Unit(node.id, section_id, text))
            for note_id in notes_in([node]):
                note_home.setdefault(note_id, section_id)
        elif isinstance(node, Figure | Table) and node.caption.text:
            found.append(Unit(node.id, section_id, f"{node.tag} {node.caption.text}".strip()))
    for note in document.footnotes.values():
        if note.content.text:
            found.append(Unit(note.id, note_home.get(note.id, ""), note.content.text))
    return found


def terms_of(query: str) -> list[str]:
    if len(query) > QUERY_MAX_CHARS:
        raise BadRequest(
            f"The search query is {len(query)} characters long: give at most {QUERY_MAX_CHARS}"
        )
    terms = list(dict.fromkeys(query.lower().split()))
    if not terms:
        raise BadRequest(f'Empty search query "{shown(query)}": give at least one word')
    return terms


def search(
    found: list[Unit], query: str, limit: int, lowered_texts: list[str] | None = None
) -> list[Hit]:
    """The units with the most of the query's terms, best first; `lowered_texts` are the
    units' texts lower-cased (Paper.lowered keeps them, so a search pays no `lower()`)."""
    terms = terms_of(query)
    texts = lowered_texts if lowered_texts is not None else [u.text.lower() for u in found]
    scored: list[tuple[int, int, int, Unit, tuple[int, int]]] = []
    for position, (unit, lowered) in enumerate(zip(found, texts, strict=True)):
        distinct = 0
        total = 0
        first = (len(lowered), 0)
        for term in terms:
            count = lowered.count(term)
            if count:
                distinct += 1
                total += count
                first = min(first, (lowered.find(term), len(term)))
        if distinct:
            scored.append((-distinct, -total, position, unit, first))
    scored.sort(key=lambda row: (row[0], row[1], row[2]))
    return [
        Hit(unit.anchor, unit.section_id, snippet(unit.text, at, length))
        for _d, _t, _p, unit, (at, length) in scored[:limit]
    ]


def snippet(text: str, at: int, length: int, radius: int = SNIPPET_RADIUS) -> str:
    """About `radius` characters either side of `at`, cut at word boundaries."""
    text = text.replace("\n", " ")  # same length, so `at` still points at the match
    start = max(0, at - radius)
    end = min(len(text), at + length + radius)
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < at else start
    if end < len(text):
        space = text.rfind(" ", at + length, end)
        end = space if space > 0 else end
    piece = text[start:end].strip()
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")
