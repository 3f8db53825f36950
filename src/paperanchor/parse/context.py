"""State shared while one page is parsed: footnotes found, base URL, positional ids."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from paperanchor.parse.dom import HtmlElement
from paperanchor.render.escape import local_image_url, safe_url
from paperanchor.tree import Block, Footnote

# How deep the walks may nest before what is below is read as plain text (contract §3, Limits).
# The corpus nests blocks at most 15 deep (agd's broken conversion) and its whole DOM 42 deep
# with MathML; a hostile page of 250 nested lists or 10,000 nested spans is flattened below
# these, so that the tree, and every walk and rendering of it, stays far from Python's
# recursion limit.
MAX_BLOCK_DEPTH = 64
MAX_INLINE_DEPTH = 64


@dataclass
class ParseContext:
    base_url: str = ""
    footnotes: dict[str, Footnote] = field(default_factory=dict)
    # conversion errors inside each section element, counted once per page
    section_errors: dict[Any, int] = field(default_factory=dict)
    bib_numbers: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Bibliography entry id -> (its number, its printed label without brackets)."""
    bib_labels: dict[Any, str] = field(default_factory=dict)
    """Bibliography entry element -> the text of its first label, read with `bib_numbers`."""
    cite_bracketed: bool = False
    """Whether the citation being read has brackets or parentheses of its own."""
    residue: int = 0
    """Pieces of LaTeX conversion debris met so far (inline.py): counted as errors."""
    block_depth: int = 0
    inline_depth: int = 0
    picture_depth: int = 0
    """How many pictures' foreignObjects are being read, where spans are blocks."""
    abstract: HtmlElement | None = None
    """The abstract element, read on its own: where a broken page nests it in the body, the
    body's walk does not read it again."""
    _read_ids: set[str] = field(default_factory=set)
    _positional: dict[str, int] = field(default_factory=dict)

    def first_reading(self, element_id: str) -> bool:
        """Whether the element with this id is met for the first time: an id is held by one
        node, so an element met again (a float LaTeXML rendered twice, an id repeated on a
        badly nested page) is not read a second time."""
        if element_id in self._read_ids:
            return False
        self._read_ids.add(element_id)
        return True

    def positional_id(self, parent_id: str, marker: str = "b") -> str:
        """A stable id for an element LaTeXML left without one: `<parent>.<marker><n>`."""
        key = f"{parent_id}.{marker}"
        count = self._positional.get(key, 0) + 1
        self._positional[key] = count
        return f"{key}{count}"

    def absolute(self, url: str) -> str:
        """An image's `url` resolved against the page, when that is an http(s) URL, or a file
        beside a local page read from its `file:` URL (contract §7); else "" (contract §3)."""
        url = url.strip()
        if not url:
            return ""
        try:
            resolved = urljoin(self.base_url, url) if self.base_url else url
        except ValueError:  # a malformed URL on a hostile page
            return ""
        return safe_url(resolved) or local_image_url(resolved, self.base_url) or ""


# The block walk (`blocks.blocks_of`), handed to the modules it calls into (sections, floats, the
# abstract), so that they need not import it back: the parser's modules import one way only.
BlocksOf = Callable[[HtmlElement, "ParseContext", str], list[Block]]
# A caller's reading of one child of a container (None: read it as any other child), and the
# container walk that takes it (`blocks.container_blocks`).
OwnChild = Callable[[HtmlElement], list[Block] | None]
ContainerOf = Callable[[HtmlElement, "ParseContext", str, OwnChild | None], list[Block]]
