"""The seven operations (SPEC §4): the one place that combines tree, anchors, render, search
and inference. It imports no web, MCP or HTTP library; adapters call it and a loader feeds it."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from paperanchor import infer
from paperanchor.anchors import AnchorIndex, Located
from paperanchor.errors import BadRequest, NotFound
from paperanchor.refs import PaperRef, parse_ref, shown
from paperanchor.render.json import JSON, equation_json, float_json, reference_json
from paperanchor.render.markdown import (
    document_chunks,
    join,
    node_chunks,
    tokens_of,
    truncate,
)
from paperanchor.render.text import plain_text
from paperanchor.search import Unit, search, units
from paperanchor.tree import (
    Document,
    Equation,
    EquationGroup,
    Figure,
    Paragraph,
    Section,
    Table,
    Text,
    walk,
)

SCHEMA = 1
MAX_TOKENS_RANGE = (100, 100_000)
DEFAULT_MAX_TOKENS = 8000
LIMIT_RANGE = (1, 50)
DEFAULT_LIMIT = 5
WAIT_RANGE = (0.0, 60.0)
# Rendered paper views kept per process, as many as the library keeps papers in memory;
# BENCHMARKS.md measures 1.8 MB per held paper.
DEFAULT_MEMORY_PAPERS = 64


class LoadedLike(Protocol):
    """What a loader hands over: the tree and where it came from."""

    @property
    def document(self) -> Any: ...
    @property
    def paper(self) -> str: ...
    @property
    def idv(self) -> str: ...
    @property
    def version(self) -> int | None: ...
    @property
    def version_confirmed(self) -> bool: ...
    @property
    def source(self) -> str: ...
    @property
    def source_url(self) -> str: ...


class Loader(Protocol):
    async def load(self, ref: PaperRef) -> LoadedLike: ...


@dataclass(frozen=True, slots=True)
class LocalPaper:
    """A paper read from a file by the command line."""

    document: Document
    paper: str
    idv: str
    version: int | None = None
    version_confirmed: bool = False
    source: str = "local"
    source_url: str = ""


@dataclass(frozen=True, slots=True)
class ReadResult:
    paper: str
    idv: str
    id: str
    title: str
    tokens: int
    truncated: bool
    markdown: str

    def to_json(self) -> JSON:
        return {
            "paper": self.paper,
            "idv": self.idv,
            "id": self.id,
            "title": self.title,
            "tokens": self.tokens,
            "truncated": self.truncated,
            "markdown": self.markdown,
        }


@dataclass
class Paper:
    """A loaded paper with its anchor index and the renderings computed so far."""

    meta: LoadedLike
    document: Document
    index: AnchorIndex
    _markdown: dict[str, str] = field(default_factory=dict)
    _units: list[Unit] | None = None
    _cited_in: dict[str, list[str]] | None = None
    _inferred: tuple[str | None, list[str] | None] | None = None

    @classmethod
    def open(cls, loaded: LoadedLike) -> Paper:
        document: Document = loaded.document
        return cls(loaded, document, AnchorIndex.build(document, loaded.idv))

    def markdown(self, node_id: str | None = None) -> str:
        key = node_id or ""
        cached = self._markdown.get(key)
        if cached is None:
            cached = join(self.chunks(node_id))
            self._markdown[key] = cached
        return cached

    def chunks(self, node_id: str | None) -> list[str]:
        if node_id is None:
            return document_chunks(self.document)
        return node_chunks(self.index.nodes[node_id].node, self.document)

    def rendered(self, anchor: str | None) -> bool:
        """Whether `anchor` names, without fuzzy matching, a node whose Markdown is ready."""
        if anchor is None:
            return "" in self._markdown
        node_id = self.index.quick(anchor)
        return node_id is not None and node_id in self._markdown

    def tokens(self, node_id: str | None = None) -> int:
        return tokens_of(self.markdown(node_id))

    def units(self) -> list[Unit]:
        if self._units is None:
            self._units = units(self.document)
        return self._units

    def inferred(self) -> tuple[str | None, list[str] | None]:
        if self._inferred is None:
            self._inferred = (infer.tldr(self.document), infer.contributions(self.document))
        return self._inferred

    def cited_in(self) -> dict[str, list[str]]:
        """Bibliography id -> anchors of the paragraphs citing it, in document order."""
        if self._cited_in is None:
            found: dict[str, dict[str, None]] = {}
            for located in self.index.nodes.values():
                node = located.node
                if isinstance(node, Text) and node.cites:
                    holder = self._paragraph_of(node.id) or node.id
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


def _check_range(name: str, value: float, bounds: tuple[float, float]) -> None:
    low, high = bounds
    if not low <= value <= high:
        raise BadRequest(f"{name}={value:g} is out of range: give {low:g}–{high:g}")


def _int_arg(name: str, value: object, default: int, bounds: tuple[int, int]) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BadRequest(f"{name} must be an integer, got {shown(str(value))}")
    try:
        number = int(value)
    except ValueError:
        raise BadRequest(f"{name} must be an integer, got {shown(str(value))}") from None
    _check_range(name, number, bounds)
    return number


def check_wait(wait: object, default: float) -> float:
    if wait is None:
        return default
    try:
        seconds = float(wait)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise BadRequest(f"wait must be a number of seconds, got {shown(str(wait))}") from None
    if seconds != seconds:  # NaN
        raise BadRequest("wait must be a number of seconds, got NaN")
    _check_range("wait", seconds, WAIT_RANGE)
    return seconds


def _section_json(paper: Paper, section: Section) -> JSON:
    index = paper.index
    return {
        "id": section.id,
        "alias": index.alias_of.get(section.id),
        "slug": index.slug_of.get(section.id, ""),
        "number": section.number,
        "title": section.title.text,
        "level": section.level,
        "tokens": paper.tokens(section.id),
        "errors": section.errors,
        "children": [_section_json(paper, child) for child in section.children],
    }


def counts(document: Document) -> JSON:
    """Counts of SPEC §5; `sections` counts structural sections, paragraph units included."""
    tally = {"sections": 0, "paragraphs": 0, "figures": 0, "tables": 0, "equations": 0}
    for visit in walk(document.roots()):
        node = visit.node
        if isinstance(node, Section):
            if node.kind not in ("body", "bibliography", "abstract", "acknowledgements"):
                tally["sections"] += 1
        elif isinstance(node, Paragraph):
            tally["paragraphs"] += 1
        elif isinstance(node, Equation):
            tally["equations"] += 1  # a group's rows are equations each
        elif isinstance(node, Table):
            tally["tables"] += 1 if node.is_float else 0  # a table float's sub-tables count
        elif isinstance(node, Figure):
            # a figure's panels are parts of it, not figures of their own
            panel = isinstance(visit.parent, Figure | Table)
            tally["figures"] += 1 if node.kind == "figure" and not panel else 0
    return {**tally, "references": len(document.references), "errors": document.errors}


def outline(paper: Paper) -> JSON:
    meta = paper.meta
    document = paper.document
    tldr, contributions = paper.inferred()
    abstract = plain_text(document.abstract) if document.abstract is not None else ""
    if document.abstract is not None and abstract.startswith(document.abstract.title.text):
        abstract = abstract[len(document.abstract.title.text) :].strip()
    return {
        "schema": SCHEMA,
        "paper": meta.paper,
        "idv": meta.idv,
        "version": meta.version,
        "versionConfirmed": meta.version_confirmed,
        "source": meta.source,
        "sourceUrl": meta.source_url,
        "title": document.title.text,
        "authors": list(document.authors),
        "abstract": abstract,
        "tldr": tldr,
        "contributions": contributions,
        "inferred": "ready",
        "tokens": paper.tokens(),
        "counts": counts(document),
        "sections": [_section_json(paper, s) for s in document.sections],
        "quality": document.quality,
        "license": document.license,
    }


def read(paper: Paper, anchor: str | None, max_tokens: object = None) -> ReadResult:
    limit = _int_arg("maxTokens", max_tokens, DEFAULT_MAX_TOKENS, MAX_TOKENS_RANGE)
    meta = paper.meta
    if anchor is None:
        node_id = None
        title = paper.document.title.text
        # a cut whole paper points at the outline, whose sections can each be read whole
        fetch = f"/{meta.idv}/outline.json"
        shown_id = ""
    else:
        located = paper.index.resolve(anchor)
        node_id = located.node.id
        node = located.node
        title = node.title.text if isinstance(node, Section) else ""
        fetch = f"/{meta.idv}/sections/{paper.index.alias_of.get(node_id, node_id)}.md"
        shown_id = node_id
    full = paper.markdown(node_id)
    if len(full) <= limit * 4:
        markdown, truncated = full, False
    else:
        markdown, truncated = truncate(paper.chunks(node_id), limit * 4, fetch)
    return ReadResult(
        meta.paper, meta.idv, shown_id, title, tokens_of(markdown), truncated, markdown
    )


def cite(paper: Paper, anchor: str, public_url: str) -> JSON:
    located = paper.index.resolve(anchor)
    section_id = located.section_id or located.top_id or located.node.id
    return {
        "text": plain_text(located.node),
        "url": f"{public_url.rstrip('/')}/{paper.meta.idv}/sections/{section_id}.md",
        "anchor": located.node.id,
    }


def references(paper: Paper, reference_id: str | None = None) -> JSON:
    entries = paper.document.references
    if reference_id is None:
        return {"idv": paper.meta.idv, "references": [reference_json(r) for r in entries]}
    key = reference_id.strip()
    number = key.strip("[] ")
    for entry in entries:
        if key == entry.id or number == entry.number or key == entry.label:
            return reference_json(entry, paper.cited_in().get(entry.id, []))
    raise NotFound(
        f'No reference "{shown(reference_id)}" in {paper.meta.idv} '
        f"(it has {len(entries)}: give bib.bibN, N or [N])"
    )


def _resolve_kind(paper: Paper, anchor: str, kinds: tuple[type, ...], what: str) -> Located:
    located = paper.index.resolve(anchor)
    if not isinstance(located.node, kinds):
        kind = type(located.node).__name__.lower()
        raise NotFound(
            f'No {what} "{shown(anchor)}" in {paper.meta.idv}: {located.node.id} is a {kind}'
        )
    return located


def figure(paper: Paper, anchor: str) -> JSON:
    located = _resolve_kind(paper, anchor, (Figure, Table), "figure or table")
    node = located.node
    assert isinstance(node, Figure | Table)
    return float_json(node, located.section_id)


def equation(paper: Paper, anchor: str) -> JSON:
    located = _resolve_kind(paper, anchor, (Equation, EquationGroup), "equation")
    node = located.node
    assert isinstance(node, Equation | EquationGroup)
    return equation_json(node)


def search_paper(paper: Paper, query: str, limit: object = None) -> list[JSON]:
    count = _int_arg("limit", limit, DEFAULT_LIMIT, LIMIT_RANGE)
    if not isinstance(query, str):
        raise BadRequest("query must be a string")
    hits = search(paper.units(), query, count)
    return [{"anchor": h.anchor, "sectionId": h.section_id, "snippet": h.snippet} for h in hits]


class PaperService:
    """The seven operations by paper reference, over a loader and a bounded in-memory cache."""

    def __init__(
        self, loader: Loader, public_url: str, *, memory_papers: int = DEFAULT_MEMORY_PAPERS
    ):
        self.loader = loader
        self.public_url = public_url.rstrip("/")
        self.memory_papers = memory_papers
        self._papers: OrderedDict[str, Paper] = OrderedDict()

    async def paper(self, reference: str) -> Paper:
        ref = parse_ref(reference)
        loaded = await self.loader.load(ref)
        key = f"{loaded.source}:{loaded.idv}"
        cached = self._papers.get(key)
        if cached is not None and cached.meta.document is loaded.document:
            self._papers.move_to_end(key)
            return cached
        # Building a paper's index walks its whole tree (144 ms for a 3.3 MB page, seconds for
        # a hostile one): never on the event loop, where every other request waits for it.
        view = await asyncio.to_thread(Paper.open, loaded)
        self._papers[key] = view
        while len(self._papers) > self.memory_papers:
            self._papers.popitem(last=False)
        return view

    def recent(self, limit: int = 20) -> list[tuple[str, str]]:
        """(idv, title) of the papers read most recently, newest first: the views this process
        keeps in memory (at most `memory_papers`), nothing read from the cache."""
        views = list(reversed(self._papers.values()))[:limit]
        return [(view.meta.idv, view.document.title.text) for view in views]

    # Each operation runs in a worker thread: the first outline renders the whole paper, a
    # search scans it, an unknown anchor is matched fuzzily against every section. Only a read
    # of a node already rendered stays on the event loop: it is a dictionary lookup.

    async def outline(self, paper: str, wait: object = None, *, default_wait: float = 0.0) -> JSON:
        check_wait(wait, default_wait)
        return await asyncio.to_thread(outline, await self.paper(paper))

    async def read(self, paper: str, anchor: str | None, max_tokens: object = None) -> ReadResult:
        _int_arg("maxTokens", max_tokens, DEFAULT_MAX_TOKENS, MAX_TOKENS_RANGE)
        view = await self.paper(paper)
        if view.rendered(anchor):
            return read(view, anchor, max_tokens)
        return await asyncio.to_thread(read, view, anchor, max_tokens)

    async def cite(self, paper: str, anchor: str) -> JSON:
        return await asyncio.to_thread(cite, await self.paper(paper), anchor, self.public_url)

    async def references(self, paper: str, reference_id: str | None = None) -> JSON:
        return await asyncio.to_thread(references, await self.paper(paper), reference_id)

    async def figure(self, paper: str, anchor: str) -> JSON:
        return await asyncio.to_thread(figure, await self.paper(paper), anchor)

    async def equation(self, paper: str, anchor: str) -> JSON:
        return await asyncio.to_thread(equation, await self.paper(paper), anchor)

    async def search_paper(self, paper: str, query: str, limit: object = None) -> list[JSON]:
        _int_arg("limit", limit, DEFAULT_LIMIT, LIMIT_RANGE)
        return await asyncio.to_thread(search_paper, await self.paper(paper), query, limit)
