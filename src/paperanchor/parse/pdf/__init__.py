"""A PDF's text layer -> the same frozen `Document` as LaTeXML HTML gives. Pure: no web, cache
or network imports; PDFium itself runs in a bounded child process (`extract`).

What a PDF tree gives and cannot give is in docs/pdf.md: sections from numbered headings,
paragraphs, captions as floats without cells or images, display equations as text without TeX,
the bibliography split into entries. `quality` is always "degraded".
"""

from __future__ import annotations

from dataclasses import replace

from paperanchor.errors import NotFound, ParseError
from paperanchor.parse.pdf.extract import MAX_CHARS, MAX_PAGES, Page, extract_pages
from paperanchor.parse.pdf.layout import Placed, body_size, drop_furniture, reading_order
from paperanchor.parse.pdf.regions import drop_float_contents
from paperanchor.parse.pdf.structure import (
    TreeBuilder,
    _Builder,
    abstract_start,
    join_split_numbers,
    link_citations,
    title_and_authors,
)
from paperanchor.parse.pdf.text import Vocabulary, inline
from paperanchor.tree import EMPTY, Bibliography, Document, Inline, Section, walk

GENERATOR = "pdf (pypdfium2)"
# An abstract printed without its heading is a block of front matter this long at least: the
# corpus's are 9-17 lines; an affiliation block is two or three short lines.
_ABSTRACT_LINES = 3
_ABSTRACT_WORDS = 40
__all__ = ["GENERATOR", "MAX_CHARS", "MAX_PAGES", "document_from_pages", "parse_pdf"]


def parse_pdf(data: bytes, source_url: str = "") -> Document:
    """Parse a PDF's text layer into a `Document`.

    Raises `ParseError` (not a PDF, cut short, encrypted, unreadable), `TooLarge` (too many
    pages or characters, or more memory or time than the reader is given) and `NotFound`
    (no text layer: a scanned paper).
    """
    return document_from_pages(extract_pages(data), source_url)


def document_from_pages(pages: tuple[Page, ...], source_url: str = "") -> Document:
    """The tree from the pages' lines (the pure half of `parse_pdf`)."""
    if pages and all(not page.lines and page.width == 0 for page in pages):
        raise ParseError("no page of the PDF could be read")
    if not any(page.lines for page in pages):
        raise NotFound("the PDF has no text layer (a scanned paper?): there is no text to read")
    stamp = next((page.stamp for page in pages if page.stamp), None)
    pages = drop_furniture(pages)
    size = body_size(pages)
    pages = drop_float_contents(pages, size)
    lines = join_split_numbers(reading_order(pages, size), size)
    vocabulary = Vocabulary(placed.line for placed in lines)
    builder = TreeBuilder(lines, size, vocabulary)
    start = abstract_start(lines, size)
    if start is not None:
        front_end, rest = start
        builder.abstract = _Builder(
            "abstract", "abstract", None, "", Inline("Abstract", "Abstract"), 1
        )
        if rest:
            first = lines[front_end]
            lines[front_end] = replace(first, line=replace(first.line, text=rest))
            body_start = front_end
        else:
            body_start = front_end + 1
    else:
        front_end, at_heading = _front_end(lines, builder)
        body_start = front_end
        unheaded = _unheaded_abstract(lines, front_end, size) if at_heading else None
        if unheaded is not None:
            # a structural title, as for a headed abstract: the paper printed none
            builder.abstract = _Builder(
                "abstract", "abstract", None, "", Inline("Abstract", "Abstract"), 1
            )
            front_end = body_start = unheaded
    below = (
        lines[front_end].line.y1 if front_end < len(lines) and lines[front_end].page == 1 else 0.0
    )
    first_page = pages[0].lines if pages else ()
    title, authors, _ = title_and_authors(
        [p for p in lines[:front_end] if p.page == 1], size, first_page, below
    )
    blocks = builder.build(body_start)
    abstract = builder.abstract.build() if builder.abstract is not None else None
    if abstract is not None and not abstract.blocks:
        abstract = None
    references = tuple(
        r for v in walk(blocks) if isinstance(v.node, Bibliography) for r in v.node.references
    )
    blocks = list(link_citations(tuple(blocks), references))
    if abstract is not None:
        (linked,) = link_citations((abstract,), references)
        abstract = linked if isinstance(linked, Section) else abstract
    if not title:
        title = _largest_line(lines, builder)
    return Document(
        title=title,
        authors=authors,
        abstract=abstract,
        keywords=" ".join(builder.keywords).strip() or None,
        blocks=tuple(blocks),
        base_url=source_url,
        generator=GENERATOR,
        quality="degraded",
        page_idv=stamp,
    )


def _front_end(lines: list[Placed], builder: TreeBuilder) -> tuple[int, bool]:
    """Without an abstract heading: the front matter runs to the first heading on the first
    page (and True), or to the first full-width body line after the title (and False)."""
    for index, placed in enumerate(lines):
        if placed.page > 1:
            break
        heading = builder.heading(placed)
        if heading is not None and heading.key and builder.numbering.follows(heading):
            return index, True
    title_seen = False
    for index, placed in enumerate(lines):
        if placed.page > 1:
            # no title on the first page: it is all body (a cut from a paper), none is lost
            return (index if title_seen else 0), False
        width = placed.column_right - placed.column_left
        if placed.line.size >= 1.2 * builder.size:
            title_seen = True
        elif title_seen and placed.line.x1 - placed.line.x0 > 0.6 * width:
            return index, False
    return 0, False


def _unheaded_abstract(lines: list[Placed], end: int, size: float) -> int | None:
    """Where an abstract without the word "Abstract" begins (REVTeX, ACM): the longest block
    of front matter before the first heading of page 1, set as running text (three lines and
    forty words at least, smaller than the title); None without such a block."""
    if end == 0:
        return None
    best: tuple[int, int] | None = None  # (words, start)
    start = 0
    for index in range(1, end + 1):
        if index < end:
            before, placed = lines[index - 1].line, lines[index].line
            same_block = (
                abs(before.size - placed.size) < 0.3 and before.y0 - placed.y1 < 0.75 * placed.size
            )
            if same_block:
                continue
        block = lines[start:index]
        words = sum(len(p.line.text.split()) for p in block)
        running = block[0].line.size < 1.2 * size
        long_enough = len(block) >= _ABSTRACT_LINES and words >= _ABSTRACT_WORDS
        if running and long_enough and (best is None or words > best[0]):
            best = (words, start)
        start = index
    return best[1] if best is not None else None


def _largest_line(lines: list[Placed], builder: TreeBuilder) -> Inline:
    """The first page's largest line as the title when none was found where titles sit;
    empty when nothing is set larger than the body or the largest line is a heading (a page
    cut from the middle of a paper has no title, and none is made up)."""
    first_page = [
        p
        for p in lines
        if p.page == 1 and len(p.line.text.strip()) > 3 and p.line.size >= 1.2 * builder.size
    ]
    if not first_page:
        return EMPTY
    largest = max(first_page, key=lambda p: p.line.size)
    if builder.heading(largest) is not None:
        return EMPTY
    return inline(largest.line.text.strip())
