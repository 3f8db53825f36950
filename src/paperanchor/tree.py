"""The document model: frozen, slotted dataclasses built by `paperanchor.parse`.

Every node keeps the id LaTeXML gave its element; elements without one get a stable
positional id under their parent. Inline content (paragraph text, captions, titles) is kept
twice, as Markdown and as plain text with math as `$TeX$`, because the parser is the one
place that sees the inline markup and both renderings are needed on every request.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeAlias


@dataclass(frozen=True, slots=True)
class Inline:
    """A run of inline content in both renderings."""

    markdown: str
    text: str

    def __bool__(self) -> bool:
        return bool(self.text or self.markdown)


EMPTY = Inline("", "")


@dataclass(frozen=True, slots=True)
class Text:
    """A run of text: LaTeXML's `p` inside a paragraph, or loose text in a container."""

    id: str
    content: Inline
    cites: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Paragraph:
    """LaTeXML's paragraph unit: text runs, display equations and nested blocks."""

    id: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class Equation:
    """A single display equation, or one row of an equation group."""

    id: str
    number: str | None
    latex: str | None
    cells: tuple[str, ...] = ()
    group_id: str | None = None
    text: str = ""
    """The display as extracted text when there is no TeX (`latex` is None: read from a PDF)."""


@dataclass(frozen=True, slots=True)
class EquationGroup:
    """An align/eqnarray display: its rows are equations with their own ids."""

    id: str
    rows: tuple[Equation, ...]


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure or another float (algorithm, listing); panels are nested figures."""

    id: str
    kind: str
    number: str | None
    tag: str
    caption: Inline
    images: tuple[str, ...]
    panels: tuple[Figure | Table, ...] = ()
    blocks: tuple[Block, ...] = ()
    notes: tuple[str, ...] = ()
    """Footnotes its caption references (a footnote in a caption is printed with its section)."""
    cites: tuple[str, ...] = ()
    """Bibliography ids its caption cites, in order (a reference's `citedIn` names the float)."""


@dataclass(frozen=True, slots=True)
class CellSpan:
    """A cell of a table's grid that covers more than one position: its first row and column,
    and how many rows and columns it covers (clipped to the grid)."""

    row: int
    col: int
    rows: int
    cols: int


@dataclass(frozen=True, slots=True)
class Table:
    """A table float (or a bare tabular): cells as plain text and as Markdown."""

    id: str
    number: str | None
    tag: str
    caption: Inline
    rows: tuple[tuple[str, ...], ...]
    markdown_rows: tuple[tuple[str, ...], ...]
    header_rows: int
    images: tuple[str, ...] = ()
    panels: tuple[Table | Figure, ...] = ()
    is_float: bool = True
    cut: bool = False
    """Whether the grid reached the parser's cap (100,000 cells) and later rows were left out."""
    notes: tuple[str, ...] = ()
    """Footnotes its caption and cells reference."""
    spans: tuple[CellSpan, ...] = ()
    """Its spanning cells: `rows` repeat such a cell in each position it covers (contract §5), a
    page draws it once, spanning them."""
    cites: tuple[str, ...] = ()
    """Bibliography ids its caption and cells cite, in order (a reference's `citedIn` names the
    table: a survey's comparison tables cite what no paragraph does)."""


@dataclass(frozen=True, slots=True)
class Theorem:
    """A theorem-like block (theorem, lemma, definition, proof …)."""

    id: str
    kind: str
    label: Inline
    blocks: tuple[Block, ...]
    cites: tuple[str, ...] = ()
    """Bibliography ids its label cites ("Proposition 2.14 (Holliday and Pacuit [3])")."""


@dataclass(frozen=True, slots=True)
class ListItem:
    id: str
    tag: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class ListBlock:
    id: str
    ordered: bool
    items: tuple[ListItem, ...]


@dataclass(frozen=True, slots=True)
class Code:
    """A code listing or verbatim block."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class Quote:
    id: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class Footnote:
    id: str
    mark: str
    content: Inline


@dataclass(frozen=True, slots=True)
class Reference:
    """A bibliography entry, parsed."""

    id: str
    number: str
    label: str
    text: str
    markdown: str
    authors: tuple[str, ...]
    title: str | None
    year: str | None
    arxiv: str | None
    doi: str | None
    url: str | None


@dataclass(frozen=True, slots=True)
class Bibliography:
    """The list of bibliography entries inside the bibliography section."""

    id: str
    references: tuple[Reference, ...]


@dataclass(frozen=True, slots=True)
class Section:
    """A section of any kind; `blocks` holds its content and child sections in order."""

    id: str
    kind: str
    number: str | None
    tag: str
    title: Inline
    level: int
    blocks: tuple[Block, ...]
    errors: int = 0

    @property
    def children(self) -> tuple[Section, ...]:
        return tuple(b for b in self.blocks if isinstance(b, Section))


Block: TypeAlias = (
    Text
    | Paragraph
    | Equation
    | EquationGroup
    | Figure
    | Table
    | Theorem
    | ListBlock
    | Code
    | Quote
    | Bibliography
    | Section
)


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed paper."""

    title: Inline
    authors: tuple[str, ...]
    abstract: Section | None
    keywords: str | None
    blocks: tuple[Block, ...]
    footnotes: dict[str, Footnote] = field(default_factory=dict)
    errors: int = 0
    base_url: str = ""
    generator: str | None = None
    quality: str = "ok"
    """contract §3: "ok", "degraded" (conversion errors in the text, or read from a PDF) or
    "failed" (no section or paragraph of the paper: the next source is tried)."""
    license: str | None = None
    """The licence the page's furniture names (arXiv's `#license-tr`), as text."""
    page_idv: str | None = None
    """The arXiv id with version that the page names for itself in its furniture only: its
    `<base href>`, arXiv's `arXiv:IDvN [category] date` watermark, or a PDF's margin stamp."""

    @property
    def sections(self) -> tuple[Section, ...]:
        return tuple(b for b in self.blocks if isinstance(b, Section))

    @property
    def references(self) -> tuple[Reference, ...]:
        """Every bibliography entry, in document order, wherever its list sits (broken
        conversions can leave the bibliography nested anywhere)."""
        return tuple(v.node for v in walk(self.blocks) if isinstance(v.node, Reference))

    def roots(self) -> tuple[Block, ...]:
        """The abstract, then the top-level blocks: what `walk` starts from for the paper."""
        return self.blocks if self.abstract is None else (self.abstract, *self.blocks)


Node: TypeAlias = Block | Reference
"""Anything with an id that the tree holds; a list's items are read through their blocks."""


def child_nodes(node: Node) -> tuple[Node, ...]:
    """The nodes directly inside `node`, in document order.

    The one definition of which containers hold what: every walk over the tree (anchors,
    search, counts, footnotes, the renderers' fallback) goes through it, so a new node kind
    is added here and nowhere else.
    """
    if isinstance(node, Section | Paragraph | Theorem | Quote):
        return node.blocks
    if isinstance(node, EquationGroup):
        return node.rows
    if isinstance(node, Figure):
        return (*node.panels, *node.blocks)
    if isinstance(node, Table):
        return node.panels
    if isinstance(node, ListBlock):
        return tuple(block for item in node.items for block in item.blocks)
    if isinstance(node, Bibliography):
        return node.references
    return ()


@dataclass(frozen=True, slots=True)
class Visit:
    """A node met by `walk`, with where it sits."""

    node: Node
    parent: Node | None
    section: Section | None
    """The nearest section holding the node (the node itself when it is a section)."""
    paragraph: Paragraph | None
    """The outermost paragraph holding the node (never the node itself)."""
    top: Node
    """The root it was reached from."""


def walk(roots: Iterable[Node]) -> Iterator[Visit]:
    """Every node under `roots` in document order (pre-order), without recursion."""
    stack: list[Visit] = []
    for root in reversed(tuple(roots)):
        stack.append(Visit(root, None, root if isinstance(root, Section) else None, None, root))
    while stack:
        visit = stack.pop()
        yield visit
        node = visit.node
        holder: Paragraph | None = visit.paragraph
        if holder is None and isinstance(node, Paragraph):
            holder = node
        for child in reversed(child_nodes(node)):
            section = child if isinstance(child, Section) else visit.section
            stack.append(Visit(child, node, section, holder, visit.top))
