"""The selectors of a Cite (SPEC §10): independent descriptions of where a passage sits, so that
a saved citation is found again when one of them fails.

`prefix` and `suffix` are up to CONTEXT_CHARS of the text before and after the node in reading
order (the paper's passages: paragraphs, captions, footnotes), cut at word boundaries;
`sectionPath` the printed numbers and titles of the sections holding it, outermost first;
`textFragment` the permalink with a text directive (`:~:text=start,end`) that a browser
highlights. A browser matches a directive's terms as whole words, case-blind, against the
rendered text, and each term within one block; math renders as MathML, not as its TeX, so
the terms are drawn from the passage's words outside math, grown until the first place in the
paper that holds them is this passage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from paperanchor.search import Unit
from paperanchor.tree import Document, Paragraph, Section, walk

CONTEXT_CHARS = 32
# A passage this short and free of math is its own directive; a longer one is start,end.
WHOLE_FRAGMENT_CHARS = 80
FRAGMENT_WORDS = (4, 12)
# Passages scanned for an earlier holder of a start term, per length tried: a page of 50,000
# passages that share their first words costs at most this many finds a length.
SCAN_PASSAGES = 20_000
_MATH = re.compile(r"\$[^$]*\$")
# Words a directive may hold: letters, digits and inner punctuation; anything a browser might
# render otherwise (brackets of citations, footnote marks, symbols) ends a run of words.
_WORD = re.compile(r"^[\w][\w'’.,;:()-]*$")


def tail(text: str, limit: int = CONTEXT_CHARS) -> str:
    """The last `limit` characters of `text` at most, starting at a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    piece = text[-limit:]
    if not text[-limit - 1].isspace():
        space = piece.find(" ")
        piece = piece[space + 1 :] if space >= 0 else ""
    return piece.strip()


def head(text: str, limit: int = CONTEXT_CHARS) -> str:
    """The first `limit` characters of `text` at most, ending at a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    piece = text[:limit]
    if not text[limit].isspace():
        space = piece.rfind(" ")
        piece = piece[:space] if space >= 0 else ""
    return piece.strip()


@dataclass
class Reading:
    """A paper's passages in reading order, and where each node and section falls among them."""

    units: list[Unit]
    spans: dict[str, tuple[int, int]]
    """node id -> the first and last passage it covers (a section: all of its passages)"""
    parents: dict[str, str]
    """section id -> the id of the section holding it"""
    sections: dict[str, Section]
    lowered: list[str]

    @classmethod
    def build(cls, document: Document, units: list[Unit]) -> Reading:
        """Where every node sits among `units` (Paper.units), in one walk of the tree."""
        position = {unit.anchor: at for at, unit in enumerate(units)}
        spans: dict[str, tuple[int, int]] = {}
        parents: dict[str, str] = {}
        sections: dict[str, Section] = {}
        for visit in walk(document.roots()):
            node = visit.node
            if isinstance(node, Section):
                sections.setdefault(node.id, node)
                if isinstance(visit.parent, Section):
                    parents.setdefault(node.id, visit.parent.id)
            holder: Paragraph | None = visit.paragraph
            at = position.get(holder.id if holder is not None else node.id)
            if at is None:
                continue
            spans.setdefault(node.id, (at, at))
        # a section covers its passages and its subsections' ones
        for at, unit in enumerate(units):
            section_id: str | None = unit.section_id
            hops = 0
            while section_id and hops < 64:
                first, _last = spans.get(section_id, (at, at))
                spans[section_id] = (min(first, at), at)
                section_id = parents.get(section_id)
                hops += 1
        lowered = [" ".join(_MATH.sub(" ", unit.text).lower().split()) for unit in units]
        return cls(units, spans, parents, sections, lowered)

    def context(self, node_id: str) -> tuple[str, str]:
        """The prefix and suffix of a node: the text just before and after it."""
        span = self.spans.get(node_id)
        if span is None:
            return "", ""
        first, last = span
        before = tail(self.units[first - 1].text) if first > 0 else ""
        after = head(self.units[last + 1].text) if last + 1 < len(self.units) else ""
        return before, after

    def section_path(self, section_id: str | None) -> list[str]:
        """The printed number and title of each section from the outermost to `section_id`."""
        path: list[str] = []
        hops = 0
        while section_id and hops < 64:
            section = self.sections.get(section_id)
            if section is None:
                break
            title = section.title.text.strip()
            number = (section.number or "").strip()
            shown = f"{number} {title}".strip() if number and number not in title else title
            if section.kind not in ("body",) and shown:
                path.append(shown)
            section_id = self.parents.get(section_id)
            hops += 1
        return path[::-1]

    def fragment(self, permalink: str | None, node_id: str, text: str) -> str | None:
        """The permalink with a text directive a browser highlights the passage by."""
        if permalink is None:
            return None
        directive = self._directive(node_id, text)
        if directive is None:
            return permalink
        joiner = ":~:" if "#" in permalink else "#:~:"
        return f"{permalink}{joiner}text={directive}"

    def _directive(self, node_id: str, text: str) -> str | None:
        runs = _runs(text)
        if not runs:
            return None
        span = self.spans.get(node_id)
        at = span[0] if span is not None else None
        first_run, last_run = runs[0], runs[-1]
        whole = " ".join(text.split())
        if len(runs) == 1 and len(whole) <= WHOLE_FRAGMENT_CHARS and whole == " ".join(first_run):
            return _encode(whole)
        low, high = FRAGMENT_WORDS
        for count in range(low, high + 1):
            start = " ".join(first_run[:count])
            if at is None or self._first_holder(start.lower()) in (at, None):
                break
        end_words = last_run[-min(len(last_run), low) :]
        end = " ".join(end_words)
        if len(runs) == 1 and len(first_run) <= 2 * low:
            return _encode(" ".join(first_run))
        return f"{_encode(start)},{_encode(end)}"

    def _first_holder(self, words: str) -> int | None:
        for at, lowered in enumerate(self.lowered[:SCAN_PASSAGES]):
            if _holds(lowered, words):
                return at
        return None


def _holds(text: str, words: str) -> bool:
    """Whether `words` occur in `text` as whole words (as a browser matches a term)."""
    start = text.find(words)
    while start >= 0:
        end = start + len(words)
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        if not before.isalnum() and not after.isalnum():
            return True
        start = text.find(words, start + 1)
    return False


def _runs(text: str) -> list[list[str]]:
    """The passage's runs of plain words, math and odd tokens cutting them."""
    runs: list[list[str]] = []
    for piece in _MATH.split(text):
        run: list[str] = []
        for word in piece.split():
            if _WORD.match(word) and "$" not in word:
                run.append(word)
            else:
                if run:
                    runs.append(run)
                run = []
        if run:
            runs.append(run)
    return [run for run in runs if run]


def _encode(term: str) -> str:
    """A directive term percent-encoded, with the directive's own syntax (`-`, `,`, `&`) too."""
    return quote(term, safe="").replace("-", "%2D")
