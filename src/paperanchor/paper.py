"""One parsed paper and everything derived from it, built lazily and kept with it: the anchor
index, each section's rendered chunks and token counts, its section HTML pages, the quotable
passages, where each reference is cited and the inferred TL;DR and contributions; and
`LoadedPaper`, the one name of a paper's tree with its header (where it came from).

A `Paper` is what every operation (operations.py, service.py) answers from; it holds no I/O
and imports no web library.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from paperanchor import infer, quotes, shapes, tokens
from paperanchor.anchors import AnchorIndex
from paperanchor.render.markdown import (
    block_chunks,
    document_chunks,
    footnote_chunks,
    join,
    node_chunks,
    notes_in,
    section_chunks,
    tokens_of,
)
from paperanchor.search import Unit, units
from paperanchor.selectors import Reading
from paperanchor.tree import (
    Document,
    Figure,
    Inline,
    Node,
    Paragraph,
    Section,
    Table,
    Text,
    Theorem,
)


@dataclass(frozen=True, slots=True)
class LoadedPaper:
    """A parsed paper's tree and its header (the fields of contract §5's Outline header): the one
    name for where a paper came from, stored as a cache entry (papers.py) and held by its
    `Paper`. Two are equal when their headers are; `same` also asks for the very same tree."""

    document: Document = field(compare=False)
    paper: str
    idv: str
    version: int | None = None
    version_confirmed: bool = False
    source: str = "local"
    source_url: str = ""

    def same(self, other: LoadedPaper) -> bool:
        """Whether `other` is this header over this very tree."""
        return self == other and self.document is other.document

    def header(self) -> LoadedPaper:
        """This header without its tree, to remember where a paper came from without holding it."""
        return replace(self, document=NO_TREE)


NO_TREE = Document(Inline("", ""), (), None, None, ())
"""The tree of a header kept without its paper (`LoadedPaper.header`)."""


T = TypeVar("T")
# Answers of a held paper kept for the next same request (an outline, recent searches): on a
# page at the parse bounds an outline costs seconds and a search about one (issue 21 #5); a
# search answer is at most 50 snippets of ~300 characters.
RECENT_ANSWERS = 64
# Alignments a paper keeps with other editions of it: one is a few kB per hundred blocks.
ALIGNMENTS = 8
# What one matched pair of an alignment holds: its Pair (~100 bytes) and its two index entries.
ALIGNED_PAIR_BYTES = 300


@dataclass
class Paper:
    """A loaded paper with its anchor index and the renderings computed so far.

    Each section is rendered once, into chunks its parent's and the whole paper's chunk lists
    share (the same strings), so an outline's token counts of every section and of the paper
    cost one rendering, and holding them costs about one copy of the paper's Markdown. Only
    what is read is joined into one string and kept (`_markdown`), and so is each section's
    HTML page (`page`). Every memo is keyed by node id; `rendered_bytes` is what the kept
    renderings weigh, so that the memory of papers (papers.py) counts them.
    """

    meta: LoadedPaper
    document: Document
    index: AnchorIndex
    _markdown: dict[str, str] = field(default_factory=dict)
    _anchored: dict[str, str] = field(default_factory=dict)
    """node id ("" the whole paper) -> its Markdown with anchor markers (contract §11)"""
    _anchored_tokens: dict[str, int] = field(default_factory=dict)
    """node id ("" the whole paper) -> the tokens of its Markdown with anchor markers"""
    _sections: dict[str, tuple[Section, list[str], list[str]]] = field(default_factory=dict)
    """section id -> the section, its chunks and the footnote ids they reference, in order
    (the section is kept to tell apart two that a hostile page gave one id)."""
    _pages: dict[str, str] = field(default_factory=dict)
    """node id -> its HTML page (api/pages.py draws it)"""
    _tokens: dict[str, int] = field(default_factory=dict)
    _counts: tokens.Counts | None = None
    _units: list[Unit] | None = None
    _quotable: list[tuple[Unit, str]] | None = None
    _cited_in: dict[str, list[str]] | None = None
    _inferred: tuple[str | None, list[str] | None] | None = None
    _lowered: list[str] | None = None
    _reading: Reading | None = None
    _recent: OrderedDict[str, Any] = field(default_factory=OrderedDict)
    _recent_lock: threading.Lock = field(default_factory=threading.Lock, compare=False)
    _alignments: OrderedDict[str, Any] = field(default_factory=OrderedDict)
    """`<idv>@<source>` of an older edition -> its alignment with this one (editions.py)"""
    outline: shapes.Outline | None = None
    """the outline without its metadata once built (service.outline): a warm outline is a copy
    of it on the event loop, not a walk of the tree in a worker thread"""
    rendered_bytes: int = 0
    """sys.getsizeof of the Markdown chunks, joined Markdown and HTML pages kept so far"""

    @classmethod
    def open(cls, loaded: LoadedPaper) -> Paper:
        """A paper's view: the loaded tree and its anchor index (rendered lazily)."""
        document: Document = loaded.document
        return cls(loaded, document, AnchorIndex.build(document, loaded.idv))

    def markdown(self, node_id: str | None = None, *, anchors: bool = False) -> str:
        """The Markdown of a node (None: the whole paper), joined once and kept; with
        `anchors`, each citable block opens with its anchor marker (contract §11)."""
        key = node_id or ""
        kept = self._anchored if anchors else self._markdown
        cached = kept.get(key)
        if cached is None:
            cached = join(self.chunks(node_id, anchors=anchors))
            kept[key] = cached
            self.rendered_bytes += sys.getsizeof(cached)
        return cached

    def page(self, node_id: str, draw: Callable[[Paper, str], str]) -> str:
        """The HTML page of a node, drawn by `draw(self, node_id)` once and kept."""
        page = self._pages.get(node_id)
        if page is None:
            page = draw(self, node_id)
            if self._pages.setdefault(node_id, page) is page:
                self.rendered_bytes += sys.getsizeof(page)
        return page

    def chunks(self, node_id: str | None, *, anchors: bool = False) -> list[str]:
        """The Markdown chunks of a node (None: the whole paper), footnotes at the end; with
        `anchors`, rendered afresh with the markers (only what is read is: it is kept joined)."""
        if anchors:
            mark, document = self.index.mark, self.document
            if node_id is None:
                return document_chunks(document, lambda node: node_chunks(node, document, mark))
            return node_chunks(self.index.nodes[node_id].node, document, mark)
        if node_id is None:
            return document_chunks(self.document, self._node_chunks)
        return self._node_chunks(self.index.nodes[node_id].node)

    def _node_chunks(self, node: Node) -> list[str]:
        if not isinstance(node, Section):
            return node_chunks(node, self.document)
        chunks, notes = self._section(node)
        return chunks + footnote_chunks(notes, self.document.footnotes)

    def _section(self, section: Section) -> tuple[list[str], list[str]]:
        kept = self._sections.get(section.id)
        if kept is not None and kept[0] is section:
            return kept[1], kept[2]
        notes: dict[str, None] = {}
        own = 0  # the bytes of the chunks this section adds (its subsections count theirs)

        def inner(block: Node) -> list[str]:
            nonlocal own
            if isinstance(block, Section):
                chunks, inner_notes = self._section(block)
                notes.update(dict.fromkeys(inner_notes))
                return chunks
            notes.update(dict.fromkeys(notes_in([block])))
            chunks = block_chunks(block)
            own += sum(sys.getsizeof(chunk) for chunk in chunks)
            return chunks

        chunks = section_chunks(section, inner)
        if kept is None:
            self._sections[section.id] = (section, chunks, list(notes))
            self.rendered_bytes += own + sys.getsizeof(chunks) + sys.getsizeof(chunks[0])
        return chunks, list(notes)

    def rendered(self, anchor: str | None, *, anchors: bool = False) -> bool:
        """Whether `anchor` names, without fuzzy matching, a node whose Markdown is ready."""
        kept = self._anchored if anchors else self._markdown
        if anchor is None:
            return "" in kept
        node_id = self.index.quick(anchor)
        return node_id is not None and node_id in kept

    def tokens(self, node_id: str | None = None) -> int:
        """contract §3's tokens of a node's Markdown (None: the whole paper), without keeping it."""
        key = node_id or ""
        count = self._tokens.get(key)
        if count is None:
            kept = self._markdown.get(key)
            if kept is not None:
                count = tokens_of(kept)
            else:
                # an outline counts every section: each chunk is counted once, not once for
                # each section it sits in (the counts of the joined Markdown, seams included)
                if self._counts is None:
                    self._counts = tokens.Counts()
                count = self._counts.joined(self.chunks(node_id))
            self._tokens[key] = count
        return count

    def marked_tokens(self, node_id: str | None = None) -> int:
        """The tokens of a node's Markdown with anchor markers (what an MCP read sends), counted
        once: a warm read over MCP counted its section on every call (two thirds of its cost)."""
        key = node_id or ""
        count = self._anchored_tokens.get(key)
        if count is None:
            count = self._anchored_tokens[key] = tokens_of(self.markdown(node_id, anchors=True))
        return count

    def counted(self) -> None:
        """Drop what counting every section kept (its outline is built)."""
        self._counts = None

    def quotable(self) -> list[tuple[Unit, str]]:
        """Every passage a quote may come from, with its text as quotes are compared."""
        if self._quotable is None:
            self._quotable = [(unit, quotes.comparable(unit.text)) for unit in self.units()]
        return self._quotable

    def units(self) -> list[Unit]:
        """The paper's search units (paragraphs and the like), built once."""
        if self._units is None:
            self._units = units(self.document)
        return self._units

    def reading(self) -> Reading:
        """Where each node sits among the paper's passages (selectors.py), built once."""
        if self._reading is None:
            self._reading = Reading.build(self.document, self.units())
        return self._reading

    def lowered(self) -> list[str]:
        """The search units' texts lower-cased, in their order: what a search scans, built once."""
        if self._lowered is None:
            self._lowered = [unit.text.lower() for unit in self.units()]
        return self._lowered

    def recent(self, key: str, answer: Callable[[], T]) -> T:
        """`answer()`, kept under `key` among this view's RECENT_ANSWERS most recent answers.

        Operations run in worker threads: two first asks of the same key may both compute it
        (the same answer); the lock keeps the table whole, not the computation single.
        """
        with self._recent_lock:
            if key in self._recent:
                self._recent.move_to_end(key)
                kept: T = self._recent[key]
                return kept
        value = answer()
        with self._recent_lock:
            self._recent[key] = value
            while len(self._recent) > RECENT_ANSWERS:
                self._recent.popitem(last=False)
        return value

    def aligned(self, key: str, make: Callable[[], T]) -> T:
        """The alignment of this paper with the edition `key` (`<idv>@<source>`), made once by
        `make()` and kept with this paper (the newer edition: one owner per paper), at most
        ALIGNMENTS of them, least recently used out."""
        with self._recent_lock:
            if key in self._alignments:
                self._alignments.move_to_end(key)
                kept: T = self._alignments[key]
                return kept
        value = make()
        with self._recent_lock:
            self._alignments[key] = value
            # counted with the renderings, so that the memory of papers weighs it
            self.rendered_bytes += ALIGNED_PAIR_BYTES * len(getattr(value, "blocks", ()))
            while len(self._alignments) > ALIGNMENTS:
                self._alignments.popitem(last=False)
        return value

    def inferred(self) -> tuple[str | None, list[str] | None]:
        """The inferred TL;DR and contributions, computed once."""
        if self._inferred is None:
            self._inferred = (infer.tldr(self.document), infer.contributions(self.document))
        return self._inferred

    def cited_in(self) -> dict[str, list[str]]:
        """Bibliography id -> anchors of the paragraphs citing it, in document order; a table,
        figure or theorem that cites it in its caption, cells or label is named by its own
        anchor, and a footnote's citations are its paragraph's."""
        if self._cited_in is None:
            found: dict[str, dict[str, None]] = {}
            for located in self.index.nodes.values():
                node = located.node
                if isinstance(node, Text) and node.cites:
                    holder = self._paragraph_of(node.id) or node.id
                elif isinstance(node, Table | Figure | Theorem) and node.cites:
                    holder = node.id
                else:
                    continue
                for bib_id in node.cites:
                    found.setdefault(bib_id, {})[holder] = None
            self._cited_in = {k: list(v) for k, v in found.items()}
        return self._cited_in

    def _paragraph_of(self, node_id: str) -> str | None:
        """The outermost paragraph whose id prefixes this text's id (LaTeXML nests ids)."""
        parts = node_id.split(".")
        for end in range(1, len(parts)):
            candidate = ".".join(parts[:end])
            located = self.index.nodes.get(candidate)
            if located is not None and isinstance(located.node, Paragraph):
                return candidate
        return None
