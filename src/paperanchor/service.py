"""The operations (contract §4): the one place that combines tree, anchors, render, search,
inference and discovery. It imports no web, MCP or HTTP library; adapters call it, a loader
feeds it papers and a discovery client (discovery/client.py) arXiv's metadata, searches,
citations and trends."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import sys
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Final, Generic, Literal, Protocol, TypeVar, cast, overload
from urllib.parse import quote

from rapidfuzz import fuzz, process, utils

from paperanchor import changes, editions, licence, quotes, refs, selectors, shapes
from paperanchor.anchors import WHOLE_PAPER, Located
from paperanchor.discovery import bibtex, categories, query, s2
from paperanchor.errors import (
    BadRequest,
    Forbidden,
    NotFound,
    PaperAnchorError,
    RateLimited,
    Unavailable,
    UpstreamError,
)
from paperanchor.images import MAX_IMAGES, Image, Images

# Paper lives in paper.py; importable from here too, as it long was
from paperanchor.paper import LoadedPaper
from paperanchor.paper import Paper as Paper
from paperanchor.refs import PaperRef, parse_ref, shown
from paperanchor.render.escape import markdown_line
from paperanchor.render.json import equation_json, float_json, reference_json
from paperanchor.render.markdown import (
    join,
    tokens_of,
    truncate,
)
from paperanchor.render.text import plain_text
from paperanchor.search import search
from paperanchor.shapes import Citations, Metadata, SearchPage, Taxonomy, Trends
from paperanchor.tree import (
    Document,
    Equation,
    EquationGroup,
    Figure,
    Node,
    Paragraph,
    Reference,
    Section,
    Table,
    Text,
    child_nodes,
)

log = logging.getLogger(__name__)

SCHEMA: Final = 1
MAX_TOKENS_RANGE = (100, 100_000)
DEFAULT_MAX_TOKENS = 8000
WHOLE_NODE = object()
"""`max_tokens` of a read that is never cut (contract §6: the Markdown routes answer the whole
node); no argument that comes in over a wire is this object."""
LIMIT_RANGE = (1, 50)
DEFAULT_LIMIT = 5
WAIT_RANGE = (0.0, 60.0)


class Loader(Protocol):
    """Where papers come from (papers.Papers): each with its view, and the views held."""

    async def get(
        self,
        ref: PaperRef,
        prepare: Callable[[Paper], object] | None = None,
        alongside: Callable[[], object] | None = None,
    ) -> Paper: ...
    async def edition(self, ref: PaperRef, source: str | None) -> Paper: ...
    def views(self) -> list[Paper]: ...


class DiscoveryLike(Protocol):
    """What the discovery client (discovery/client.py) answers."""

    @property
    def asks_arxiv(self) -> bool: ...
    def kept_metadata(self, ref: PaperRef) -> bytes | None: ...
    async def outline_metadata(
        self, ref: PaperRef, within: float = ..., kept: tuple[bytes | None] | None = ...
    ) -> Metadata | None: ...
    async def metadata(self, refs: Sequence[PaperRef]) -> dict[str, Metadata]: ...
    async def metadata_of(self, ref: PaperRef) -> Metadata: ...
    def missing_error(self, refs: Sequence[PaperRef]) -> NotFound: ...
    async def search(self, asked: query.ArxivQuery) -> SearchPage: ...
    async def citations(self, ref: PaperRef, limit: int | str | None = None) -> Citations: ...
    async def trends(self, category: str, days: int | str | None = None) -> Trends: ...
    async def listing_licence(self, ref: PaperRef) -> str | None: ...
    async def cited_papers(
        self, ref: PaperRef, within: float = ...
    ) -> tuple[s2.CitedPapers | None, bool]: ...


# How long an outline waits for its metadata once the paper is ready (the two are asked for
# at once). The arXiv API answers one id in 0.3-1.5 s when it is well, and a cached paper's
# outline takes milliseconds: a second catches most answers, and an API that is slow or down
# costs an outline at most this. An outline whose API turn is further off than this (the 3 s
# gap after another paper's request) does not wait at all. The fetch goes on without it, in one
# request with the other papers queued for that turn, and is kept for the next outline.
OUTLINE_METADATA_WAIT_S = 1.0
# How long `references` waits for Semantic Scholar's list of the paper's references when it is
# not kept: S2 answers one in about a second when well. Past it the bibliography answers from
# the page alone (and says a later answer may hold more); the fetch goes on and is kept a day.
REFERENCES_S2_WAIT_S = 1.0
# contract §11: an S2 title matches an entry's at this rapidfuzz ratio or above (of 100)
TITLE_MATCH = 90.0
# Entries matched at most: a real bibliography has hundreds (the corpus's longest 269)
MATCHED_ENTRIES_MAX = 2000


@dataclass(frozen=True, slots=True)
class Figured:
    """A figure or a table with its images as bytes (`figure` with `image: true`)."""

    figure: shapes.Figure | shapes.Table
    images: tuple[Image, ...]
    missing: tuple[str, ...]
    """why each image that is not in `images` is not"""


@dataclass(frozen=True, slots=True)
class ReadResult:
    paper: str
    idv: str
    id: str
    title: str
    tokens: int
    truncated: bool
    markdown: str

    def to_json(self) -> shapes.SectionText:
        """The `SectionText` shape of GET /{paper}/sections/{anchor}.json."""
        return {
            "paper": self.paper,
            "idv": self.idv,
            "id": self.id,
            "title": self.title,
            "tokens": self.tokens,
            "truncated": self.truncated,
            "markdown": self.markdown,
        }


T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class Served(Generic[T]):
    """An operation's answer about one paper, and the facts about that paper each adapter turns
    into its own headers or result: REST and the pages a Cache-Control (contract §6) and an ETag of
    the bytes they send, MCP only the value. Facts, not headers: the service knows which paper
    answered, each front door how to say so."""

    value: T
    asked: PaperRef
    """the reference as it was asked for"""
    idv: str
    """the paper that answered: its id and version, or its bare id when the version is unknown"""
    version_confirmed: bool
    pending: bool = False
    """a later answer may hold more: an outline whose arXiv metadata may still come, references
    whose arXiv ids from Semantic Scholar may"""
    local_file: bool = False
    """the paper is a file of the local directory, which its owner may edit at any time (even
    one named by an arXiv id): never an answer that cannot change"""

    def carrying(self, value: U) -> Served[U]:
        """Another answer about the same paper."""
        return Served(
            value, self.asked, self.idv, self.version_confirmed, self.pending, self.local_file
        )

    @property
    def pinned(self) -> bool:
        """Whether the version asked for answered, confirmed: this answer can never change."""
        asked = self.asked
        if self.local_file:
            return False
        return asked.version is not None and self.version_confirmed and self.idv == asked.idv


def _outlined(view: Paper) -> None:
    """Build the view's outline (run where the paper was opened: no thread hop of its own)."""
    outline(view)


def _served(value: T, asked: PaperRef, view: Paper, *, pending: bool = False) -> Served[T]:
    meta = view.meta
    local = meta.source == "local"
    return Served(value, asked, meta.idv, meta.version_confirmed, pending, local)


def _check_range(name: str, value: float, bounds: tuple[float, float]) -> None:
    low, high = bounds
    if not low <= value <= high:
        raise BadRequest(f"{name}={value:g} is out of range: give {low:g}–{high:g}")


def check_number(name: str, value: object, bounds: tuple[float, float], unit: str = "") -> float:
    """A number argument in its range (`unit` names what it counts in the error message)."""
    what = f"a number of {unit}" if unit else "a number"
    if isinstance(value, bool):  # float(True) is 1.0: true is no number
        raise BadRequest(f"{name} must be {what}, got {shown(str(value).lower())}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise BadRequest(f"{name} must be {what}, got {shown(str(value))}") from None
    if number != number:  # NaN
        raise BadRequest(f"{name} must be {what}, got NaN")
    _check_range(name, number, bounds)
    return number


def check_integer(name: str, value: object, bounds: tuple[float, float]) -> int:
    """A whole-number argument in its range (an integer, or its digits)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BadRequest(f"{name} must be an integer, got {shown(str(value))}")
    try:
        number = int(value)
    except ValueError:
        raise BadRequest(f"{name} must be an integer, got {shown(str(value))}") from None
    _check_range(name, number, bounds)
    return number


def _section_json(paper: Paper, section: Section) -> shapes.Section:
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


def counts(document: Document) -> shapes.Counts:
    """Counts of contract §5; `sections` counts structural sections, paragraph units included."""
    tally = {"sections": 0, "paragraphs": 0, "figures": 0, "tables": 0, "equations": 0}
    tally["algorithms"] = tally["references"] = 0
    # One walk of every node with its parent (tree.walk's records of where each node sits
    # cost more than the counting, and Document.references is another walk): the
    # bibliography entries are those under the top-level blocks, as Document.references has.
    for position, root in enumerate(document.roots()):
        references = position > 0 or document.abstract is None  # not the abstract's
        stack: list[tuple[Node, Node | None]] = [(root, None)]
        while stack:
            node, parent = stack.pop()
            if isinstance(node, Text):
                continue  # a run of text holds no nodes and is not counted
            stack.extend((child, node) for child in child_nodes(node))
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
                panel = isinstance(parent, Figure | Table)
                tally["figures"] += 1 if node.kind == "figure" and not panel else 0
                tally["algorithms"] += 1 if node.kind == "algorithm" and not panel else 0
            elif isinstance(node, Reference):
                tally["references"] += 1 if references else 0
    return {
        "sections": tally["sections"],
        "paragraphs": tally["paragraphs"],
        "figures": tally["figures"],
        "tables": tally["tables"],
        "equations": tally["equations"],
        "references": tally["references"],
        "errors": document.errors,
        "algorithms": tally["algorithms"],
    }


def outline(paper: Paper) -> shapes.Outline:
    """The outline of contract §4 without its arXiv metadata (PaperService.outline adds it),
    computed once per held paper: a copy of its top level, so that adding metadata is the
    caller's (a page at the parse bounds costs seconds an outline)."""
    kept = paper.outline
    if kept is None:
        kept = _outline(paper)
        paper.counted()
        paper.outline = kept  # two first asks in two threads may both build it: the same
    return cast(shapes.Outline, dict(kept))


def _outline(paper: Paper) -> shapes.Outline:
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
        # the four names sources.py and papers.py give a paper's source
        "source": cast(shapes.Source, meta.source),
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
        "quality": cast(shapes.Quality, document.quality),  # parse/ sets one of the three
        "license": document.license,
        "metadata": None,  # the service's to fill in (PaperService.outline)
    }


Door = Literal["rest", "mcp", "cli"]
"""The front door a reader came in by: a cut answer says how to get the rest there."""


def _more(door: Door, remaining: int, whole: int, fetch_path: str) -> str:
    """The truncation line of contract §4, in the reader's own front door."""
    if door == "mcp":
        how = f"call read with maxTokens={min(whole, MAX_TOKENS_RANGE[1])}"
    elif door == "cli":
        how = f"rerun with --max-tokens {min(whole, MAX_TOKENS_RANGE[1])}"
    else:
        how = f"fetch {fetch_path}"
    return f"…[truncated: {remaining} more tokens; {markdown_line(how)}]"


def _limit(max_tokens: int | object) -> int:
    """The token bound of a read: `maxTokens` as checked by the operations table, the default
    for None, no bound for WHOLE_NODE."""
    if max_tokens is WHOLE_NODE:
        return sys.maxsize
    if max_tokens is None:
        return DEFAULT_MAX_TOKENS
    return cast(int, max_tokens)


def _cut(
    full: str,
    whole: int,
    limit: int,
    chunks: Callable[[], list[str]],
    door: Door,
    fetch: str,
    front: int,
) -> tuple[str, bool, int]:
    """`full` (of `whole` tokens) as a read answers it: whole within `limit`, else cut at a
    block boundary of `chunks` with the line that says how to get the rest."""
    if whole <= limit:
        return full, False, whole
    markdown, truncated = truncate(
        chunks(),
        limit,
        lambda remaining: _more(door, remaining, whole, fetch),
        front=front,
        whole=whole,
    )
    return markdown, truncated, tokens_of(markdown)


def read(
    paper: Paper,
    anchor: str | None,
    max_tokens: int | object = None,
    door: Door = "rest",
    *,
    anchors: bool = False,
) -> ReadResult:
    """A node's Markdown (contract §4 read), the whole paper for no anchor; a cut answer says how
    to get the rest in the reader's door; `anchors` marks each citable block (contract §11).
    `max_tokens` is in MAX_TOKENS_RANGE (the operations table checks it), None for the
    default, or WHOLE_NODE."""
    limit = _limit(max_tokens)
    meta = paper.meta
    if anchor is not None and anchor.strip() == WHOLE_PAPER:
        anchor = None
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
    full = paper.markdown(node_id, anchors=anchors)
    # counted once per node and kept (a marked read's: the markers count too)
    whole = paper.marked_tokens(node_id) if anchors else paper.tokens(node_id)
    # the whole paper opens with its title and author line: front matter, not content
    front = 2 if node_id is None and paper.document.authors else 1 if node_id is None else 0
    markdown, truncated, count = _cut(
        full, whole, limit, lambda: paper.chunks(node_id, anchors=anchors), door, fetch, front
    )
    return ReadResult(meta.paper, meta.idv, shown_id, title, count, truncated, markdown)


def read_since(
    result: changes.Comparison,
    anchor: str | None,
    max_tokens: int | object = None,
    door: Door = "rest",
) -> ReadResult:
    """A node's changes since another edition as CriticMarkup (contract §10 read since): its
    blocks with their marks, unchanged blocks folded; the whole paper's changes for no anchor;
    cut at `maxTokens` as any read (checked by the operations table, as `read`'s)."""
    limit = _limit(max_tokens)
    paper = result.new
    meta = paper.meta
    since = quote_path(result.old.meta.idv)
    if anchor is not None and anchor.strip() == WHOLE_PAPER:
        anchor = None
    if anchor is None:
        chunks = changes.whole_markdown(result).rstrip("\n").split("\n\n")
        title, shown_id = paper.document.title.text, ""
        fetch = f"/{meta.idv}/changes/{since}.md"
    else:
        node = paper.index.resolve(anchor).node
        chunks = changes.node_chunks(result, node.id)
        title = node.title.text if isinstance(node, Section) else ""
        alias = paper.index.alias_of.get(node.id, node.id)
        fetch = f"/{meta.idv}/sections/{alias}.md?since={since}"
        shown_id = node.id
    full = join(chunks)
    whole = tokens_of(full)
    markdown, truncated, count = _cut(full, whole, limit, lambda: chunks, door, fetch, front=0)
    return ReadResult(meta.paper, meta.idv, shown_id, title, count, truncated, markdown)


def quote_path(text: str) -> str:
    """A reference as it goes in a path or query of ours (a legacy id keeps its slash)."""
    return quote(text, safe="/")


def permalink(meta: LoadedPaper, anchor: str | None) -> str | None:
    """The public address a person can quote for a node of this paper (refs.permalink)."""
    return refs.permalink(meta.paper, meta.idv, meta.source, anchor)


def text_hash(text: str) -> str:
    """The first 16 hex digits of the SHA-256 of the text (NFC, whitespace squashed)."""
    normal = " ".join(unicodedata.normalize("NFC", text).split())
    return hashlib.sha256(normal.encode()).hexdigest()[:16]


def _cite_answer(paper: Paper, located: Located, public_url: str) -> shapes.Cite:
    node = located.node
    text = plain_text(node)
    section_id = located.section_id or located.top_id or node.id
    reading = paper.reading()
    prefix, suffix = reading.context(node.id)
    link = permalink(paper.meta, node.id)
    holder = node.id if isinstance(node, Section) else located.section_id
    return {
        "text": text,
        # no URL of this service where none is served (stdio, contract §7)
        "url": f"{public_url.rstrip('/')}/{paper.meta.idv}/sections/{section_id}.md"
        if public_url
        else None,
        "anchor": node.id,
        "permalink": link,
        "hash": text_hash(text),
        "prefix": prefix,
        "suffix": suffix,
        "sectionPath": reading.section_path(holder),
        "textFragment": reading.fragment(link, node.id, text),
    }


def cite(paper: Paper, anchor: str, public_url: str) -> shapes.Cite:
    """The exact text of a node, with the URLs to quote it by (contract §4)."""
    return _cite_answer(paper, paper.index.resolve(anchor), public_url)


def reanchor(
    new: Paper, old: Paper, alignment: editions.Alignment, anchor: str, public_url: str
) -> shapes.Cite:
    """A node of the edition `old` found in `new` through their alignment (contract §10): its text
    there with `status`, `confidence` and `was`; `not-found` naming the closest passage when
    it is gone."""
    located = old.index.resolve(anchor)
    node = located.node
    pair = alignment.of_old(node.id)
    if pair is None:
        # a node inside a block (a text run, a list item): the passage holding it
        span = old.reading().spans.get(node.id)
        if span is not None:
            pair = alignment.of_old(old.reading().units[span[0]].anchor)
    text = plain_text(node)
    was: shapes.Was = {"idv": old.meta.idv, "anchor": node.id, "hash": text_hash(text)}
    if pair is None or pair.new is None or pair.status not in ("same", "moved", "edited"):
        where = f"{old.meta.idv} ({old.meta.source})"
        detail = f"{node.id} of {where} is not in {new.meta.idv} ({new.meta.source})"
        raise NotFound(detail + _closest(new, text))
    answer = _cite_answer(new, new.index.nodes[pair.new], public_url)
    answer["status"] = pair.status
    answer["confidence"] = round(pair.confidence, 3)
    answer["was"] = was
    return answer


def _closest(paper: Paper, text: str) -> str:
    """`; the closest passage is <anchor> (score N): "…"`, or nothing for a text too short.

    The closest by similarity (rapidfuzz ratio) of their first CLOSEST_CHARS characters, over
    at most CLOSEST_PASSAGES passages: a hint that costs a few milliseconds (a partial search of
    the whole quote took 66 ms on 2401.10225v1)."""
    wanted = quotes.comparable(text)[:CLOSEST_CHARS]
    if len(wanted) < quotes.QUOTE_RANGE[0]:
        return ""
    passages = paper.quotable()[:CLOSEST_PASSAGES]
    found = process.extractOne(
        wanted, [normal[:CLOSEST_CHARS] for _unit, normal in passages], scorer=fuzz.ratio
    )
    if found is None:
        return ""
    unit = passages[found[2]][0]
    return f'; the closest passage is {unit.anchor} (score {int(found[1])}): "{shown(unit.text)}"'


# What naming the closest passage of a gone one compares: passages and characters of each.
CLOSEST_PASSAGES = 20_000
CLOSEST_CHARS = 1_000


def cite_text(
    paper: Paper,
    quote: object,
    public_url: str,
    prefix: object = None,
    suffix: object = None,
    *,
    reveal: bool = True,
) -> shapes.Cite:
    """The paragraph that contains `quote` (contract §4, cite by text): exact after normalisation,
    else the best fuzzy match of at least FUZZY_MIN_SCORE, else not-found naming the closest
    (quotes.py, which bounds the cost). `prefix` and `suffix`, the text a stored Cite had
    before and after the quote, tell apart passages that hold the same quote (contract §10). Without
    `reveal` (a paper whose text a public server may not serve, contract §12) no more text than the
    quote is answered: `text` is the quote as given, `url` (a route refused there) null, and the
    closest passage is named by its anchor only."""
    wanted = quotes.checked_quote(quote)
    before, after = _context_argument("prefix", prefix), _context_argument("suffix", suffix)
    passages = paper.quotable()
    normals = [normal for _unit, normal in passages]
    found = quotes.find(wanted, normals)
    if found is not None and found.match != "none":
        index, confidence = found.index, _quote_confidence(found)
        if found.match == "exact" and (before or after):
            index, confidence = _by_context(wanted, normals, before, after)
        unit = passages[index][0]
        answer = _cite_answer(paper, paper.index.resolve(unit.anchor), public_url)
        answer["match"] = "exact" if found.match == "exact" else "fuzzy"
        if found.match == "fuzzy":
            answer["score"] = int(found.score)
        if not reveal:
            # the quote and where it is; the passage's context is the paper's text, and its
            # section's Markdown is refused here: no url of it (the permalink is where to read)
            answer["text"] = " ".join(str(quote).split())
            answer["prefix"], answer["suffix"], answer["textFragment"] = "", "", None
            answer["url"] = None
        answer["status"] = "same" if found.match == "exact" else "edited"
        answer["confidence"] = confidence
        return answer
    detail = f'No passage of {paper.meta.idv} contains "{shown(str(quote))}"'
    if found is not None:
        unit = passages[found.index][0]
        detail += f"; the closest is {unit.anchor} (score {int(found.score)})"
        detail += f': "{shown(unit.text)}"' if reveal else ""
    raise NotFound(detail)


# Passages holding the same quote compared by their context: at most this many.
TWIN_CANDIDATES = 50


def _context_argument(name: str, value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be text")
    if len(value) > 4 * selectors.CONTEXT_CHARS:
        raise BadRequest(
            f"{name} is {len(value)} characters long: give at most {4 * selectors.CONTEXT_CHARS}"
        )
    return quotes.comparable(value)


def _quote_confidence(found: quotes.Found) -> float:
    """How likely a quote's passage is the right one: an exact match almost surely, a fuzzy one
    less so the further its score is from 100."""
    if found.match == "exact":
        return 0.99
    return round(max(0.5, min(0.97, 0.5 + (found.score - quotes.FUZZY_MIN_SCORE) / 20)), 3)


def _by_context(wanted: str, normals: list[str], before: str, after: str) -> tuple[int, float]:
    """Among the passages holding `wanted`, the one whose surrounding text is likest the stored
    prefix and suffix, and a confidence from how far ahead of the next one it is."""
    scored: list[tuple[float, int]] = []
    for index, passage in enumerate(normals):
        at = passage.find(wanted)
        if at < 0:
            continue
        previous = normals[index - 1] if index > 0 else ""
        following = normals[index + 1] if index + 1 < len(normals) else ""
        left = selectors.tail(f"{previous} {passage[:at]}", max(len(before), 1))
        right = selectors.head(f"{passage[at + len(wanted) :]} {following}", max(len(after), 1))
        score = 0.0
        if before:
            score += fuzz.ratio(before, left) / 100
        if after:
            score += fuzz.ratio(after, right) / 100
        scored.append((score, index))
        if len(scored) >= TWIN_CANDIDATES:
            break
    scored.sort(key=lambda row: (-row[0], row[1]))
    if len(scored) == 1:
        return scored[0][1], 0.99
    parts = (1 if before else 0) + (1 if after else 0)
    margin = (scored[0][0] - scored[1][0]) / max(1, parts)
    confidence = 0.97 if margin >= 0.3 else 0.9 if margin >= 0.1 else 0.5
    return scored[0][1], confidence


@overload
def references(paper: Paper, reference_id: None = None) -> shapes.References: ...
@overload
def references(paper: Paper, reference_id: str) -> shapes.Reference: ...
def references(
    paper: Paper, reference_id: str | None = None
) -> shapes.References | shapes.Reference:
    """The bibliography, or the one entry `reference_id` names with the paragraphs citing it."""
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


def fill_arxiv(entries: list[shapes.Reference], cited: list[s2.CitedPaper]) -> int:
    """Set `arxiv` on the entries without one from the cited paper whose title is at least
    TITLE_MATCH similar to the entry's (rapidfuzz ratio of the lower-cased words); how many."""
    titles = [utils.default_process(paper["title"]) for paper in cited[: s2.REFERENCES_MAX]]
    filled = 0
    # a hostile page's 50,000 entries against 1,000 titles would be 50 million comparisons
    unmatched = [entry for entry in entries if not entry["arxiv"] and entry["title"]]
    for entry in unmatched[:MATCHED_ENTRIES_MAX]:
        title = utils.default_process((entry["title"] or "")[: s2.MAX_TITLE_CHARS])
        found = process.extractOne(title, titles, scorer=fuzz.ratio, score_cutoff=TITLE_MATCH)
        if found is not None:
            entry["arxiv"] = cited[found[2]]["arxiv"]
            entry["arxivFrom"] = "semantic-scholar"
            filled += 1
    return filled


def _resolve_kind(paper: Paper, anchor: str, kinds: tuple[type, ...], what: str) -> Located:
    located = paper.index.resolve(anchor)
    if not isinstance(located.node, kinds):
        kind = type(located.node).__name__.lower()
        raise NotFound(
            f'No {what} "{shown(anchor)}" in {paper.meta.idv}: {located.node.id} is a {kind}'
        )
    return located


def figure(paper: Paper, anchor: str) -> shapes.Figure | shapes.Table:
    """A figure or a table (contract §4)."""
    located = _resolve_kind(paper, anchor, (Figure, Table), "figure or table")
    node = located.node
    assert isinstance(node, Figure | Table)
    return float_json(node, located.section_id)


def equation(paper: Paper, anchor: str) -> shapes.Equation:
    """An equation, a row of a group, or a whole group (contract §4)."""
    located = _resolve_kind(paper, anchor, (Equation, EquationGroup), "equation")
    node = located.node
    assert isinstance(node, Equation | EquationGroup)
    return equation_json(node)


def search_paper(paper: Paper, query: str, limit: int | None = None) -> list[shapes.SearchHit]:
    """The paragraphs with the most of the query's terms, best first (contract §4); `limit` is in
    LIMIT_RANGE (the operations table checks it), None for the default."""
    count = DEFAULT_LIMIT if limit is None else limit
    if not isinstance(query, str):
        raise BadRequest("query must be a string")

    def answer() -> list[shapes.SearchHit]:
        hits = search(paper.units(), query, count, paper.lowered())
        return [{"anchor": h.anchor, "sectionId": h.section_id, "snippet": h.snippet} for h in hits]

    # a copy: the answer kept is the paper's, the list returned the caller's
    return list(paper.recent(f"search {count} {query}", answer))


def _arxiv_ref(paper: str) -> PaperRef:
    ref = parse_ref(paper)
    if ref.is_local:
        raise BadRequest(
            f"{ref.paper} is a local document: arXiv and Semantic Scholar know arXiv papers"
        )
    return ref


def _bare_arxiv(arxiv: str | None) -> str | None:
    """A reference's arXiv id as a bare id, or None (it is the parser's reading of the text)."""
    if not arxiv:
        return None
    try:
        ref = parse_ref(arxiv)
    except BadRequest:
        return None
    return None if ref.is_local else ref.paper


class PaperService:
    """The operations by paper reference, over a loader and (for discovery) a discovery client.

    A paper's view (anchor index, rendered Markdown) is the loader's, kept in the same memory
    entry as the paper (papers.py, PAPERANCHOR_MEMORY_MB): one memory of papers, one bound.
    """

    def __init__(
        self,
        loader: Loader,
        public_url: str,
        discovery: DiscoveryLike | None = None,
        images: Images | None = None,
        *,
        public: bool = False,
    ) -> None:
        """The operations over `loader` (papers.Papers); discovery's over `discovery`,
        the figures' image bytes over `images` (images.py); `public`: serve a paper's text only
        where its licence allows (contract §12)."""
        self.loader = loader
        self.public_url = public_url.rstrip("/")
        self.discovery = discovery
        self.images = images
        self.public = public

    # -- licences (contract §12) ----------------------------------------------------------------

    async def licence(self, view: Paper) -> str | None:
        """The paper's licence: its page's furniture, else its arXiv listing, else None."""
        if view.document.license:
            return view.document.license
        if self.discovery is None or view.meta.paper.startswith("local/"):
            return None
        return await self.discovery.listing_licence(parse_ref(view.meta.idv))

    async def _text_allowed(self, view: Paper) -> tuple[bool, str | None]:
        """Whether this server may serve the paper's text, and its licence (looked up only in
        public mode)."""
        if not self.public:
            return True, view.document.license
        found = await self.licence(view)
        return licence.allows_serving(found), found

    async def _check_text(self, view: Paper, what: str, anchor: str | None = None) -> None:
        """`forbidden` naming the licence and where to read the paper (the node `anchor` names,
        by its permalink), when its text may not be served here (contract §12)."""
        allowed, found = await self._text_allowed(view)
        if allowed:
            return
        meta = view.meta
        named = found or licence.UNKNOWN
        if meta.paper.startswith("local/"):
            where = "it is a local document"
        elif anchor is not None:
            node_id = (await asyncio.to_thread(view.index.resolve, anchor)).node.id
            where = f"read it at {permalink(meta, node_id)} (https://arxiv.org/abs/{meta.idv})"
        else:
            where = f"read it at https://arxiv.org/abs/{meta.idv}"
        raise Forbidden(
            f"{what} of {meta.idv} is not served by this public server: the paper's licence "
            f"({named}) does not allow redistribution; {where}"
        )

    async def check_text(self, reference: str, what: str) -> None:
        """`forbidden` when the text of the paper `reference` names may not be served here
        (`what` of it: its images, for the local directory's files)."""
        if self.public:
            await self._text(parse_ref(reference), what)

    async def _text(self, ref: PaperRef, what: str) -> Paper:
        """The paper `ref` names, checked to be one whose text may be served here."""
        view = await self.paper(ref)
        await self._check_text(view, what)
        return view

    async def paper(
        self,
        reference: str | PaperRef,
        prepare: Callable[[Paper], object] | None = None,
        alongside: Callable[[], object] | None = None,
    ) -> Paper:
        """The `Paper` a reference names, with its view: the loader's, kept with the paper.
        `prepare` runs on a paper opened just now in the worker thread that opened it,
        `alongside` in the worker that looks the paper up in the store, when one does."""
        ref = reference if isinstance(reference, PaperRef) else parse_ref(reference)
        return await self.loader.get(ref, prepare, alongside)

    @property
    def views(self) -> int:
        """How many papers have a view open."""
        return len(self.loader.views())

    def recent(self, limit: int = 20) -> list[tuple[str, str]]:
        """(idv, title) of the papers opened most recently, newest first: the views this
        process holds, nothing read from a cache."""
        views = self.loader.views()[::-1][:limit]
        return [(view.meta.idv, view.document.title.text) for view in views]

    # Each operation runs in a worker thread: the first outline renders the whole paper, a
    # search scans it, an unknown anchor is matched fuzzily against every section. Only a read
    # of a node already rendered stays on the event loop: it is a dictionary lookup.

    async def outline(self, paper: str) -> Served[shapes.Outline]:
        """The outline, with the paper's arXiv metadata when it comes within
        OUTLINE_METADATA_WAIT_S of the paper (asked for at once with the paper), else null.
        Its inferred fields are extractive, ready with the paper: a `wait` for them (contract §4)
        has nothing to wait for."""
        ref = parse_ref(paper)
        early: asyncio.Future[Metadata | None] | None = None
        discovery = self.discovery if not ref.is_local else None
        alongside: Callable[[], None] | None = None
        if discovery is not None:
            loop = asyncio.get_running_loop()

            def start(kept: tuple[bytes | None] | None) -> None:
                nonlocal early
                if early is None:
                    wait_s = OUTLINE_METADATA_WAIT_S
                    early = asyncio.ensure_future(discovery.outline_metadata(ref, wait_s, kept))

            def alongside() -> None:
                # In the paper's store lookup: both store reads of a cold outline in one hop.
                # Its result is handed back before the lookup's, so the metadata is asked for
                # before the paper is fetched.
                loop.call_soon_threadsafe(start, (discovery.kept_metadata(ref),))

        try:
            view = await self.paper(ref, _outlined, alongside)
            if discovery is not None:
                start(None)  # no lookup was needed: the paper is held in memory
            # a copy either way: its metadata is this answer's
            held = view.outline is not None
            answer = outline(view) if held else await asyncio.to_thread(outline, view)
        except BaseException:
            if early is not None:
                early.cancel()  # its fetch goes on, and is kept (outline_metadata)
            raise
        if early is not None:
            try:
                answer["metadata"] = await asyncio.wait_for(early, OUTLINE_METADATA_WAIT_S)
            except TimeoutError:
                log.info("the outline of %s answers before its metadata", ref.idv)
        if self.public:
            allowed, answer["license"] = await self._text_allowed(view)
            if not allowed:
                # the introduction's sentences are the paper's text; the abstract (and the
                # TL;DR made of it) is arXiv's metadata, CC0
                answer["contributions"] = None
        metadata = answer["metadata"]
        if metadata is not None and metadata["latestVersion"] >= 1:
            # contract §10: the editions available, from the arXiv API's latest version
            answer["versions"] = list(range(1, min(metadata["latestVersion"], 999) + 1))
        # an outline without metadata may have it later, when arXiv is asked at all
        pending = answer["metadata"] is None and early is not None and self._asks_arxiv()
        return _served(answer, ref, view, pending=pending)

    def _asks_arxiv(self) -> bool:
        return self.discovery is not None and self.discovery.asks_arxiv

    # -- discovery (contract §4) ----------------------------------------------------------------

    def _discovery(self) -> DiscoveryLike:
        if self.discovery is None:
            raise NotFound("Discovery (arXiv metadata, search, citations) is not served here")
        return self.discovery

    async def metadata(self, paper: str) -> Metadata:
        """The paper's arXiv metadata (a versioned reference: that version's)."""
        return await self._discovery().metadata_of(_arxiv_ref(paper))

    async def search_arxiv(
        self,
        q: str | None,
        *,
        category: str | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
        sort: str | None = None,
        start: int | str | None = None,
        limit: int | str | None = None,
    ) -> SearchPage:
        """One page of an arXiv search: `{query, total, start, hits}`."""
        asked = query.search_query(
            q,
            category=category,
            date_from=date_from,
            date_to=date_to,
            sort=sort,
            start=start,
            limit=limit,
        )
        return await self._discovery().search(asked)

    async def bibtex(self, papers: Sequence[str]) -> str:
        """The BibTeX of 1-20 arXiv papers, in the order given (one API request)."""
        if isinstance(papers, str) or not isinstance(papers, Sequence):
            raise BadRequest("papers must be a list of 1-20 paper references")
        if not all(isinstance(paper, str) for paper in papers):
            raise BadRequest("papers must be a list of paper references (text)")
        refs = query.id_list(list(papers))
        discovery = self._discovery()
        found = await discovery.metadata(refs)
        missing = [ref for ref in refs if ref.idv not in found]
        if missing:
            raise discovery.missing_error(missing)
        return bibtex.papers_bibtex([found[ref.idv] for ref in refs])

    async def references_bibtex(self, paper: str) -> Served[str]:
        """The paper's bibliography as BibTeX: arXiv papers from the API, the rest as parsed; an
        entry's arXiv id the page's, else S2's (as `references` answers it, contract §11),
        `pending` while S2's may still come. An arXiv API that fails or is down costs its
        entries their API fields, not the bibliography: they keep their parsed fields and the
        answer is `pending` (revalidated, never kept as final)."""
        discovery = self._discovery()
        asked = parse_ref(paper)
        view = await self.paper(asked)
        references, pending = await self._merged_references(view)
        arxiv_ids = list(dict.fromkeys(ref for r in references if (ref := _bare_arxiv(r.arxiv))))
        found: dict[str, Metadata] = {}
        for first in range(0, len(arxiv_ids), query.ID_LIST_MAX):
            chunk = [
                parse_ref(paper_id) for paper_id in arxiv_ids[first : first + query.ID_LIST_MAX]
            ]
            try:
                found.update(await discovery.metadata(chunk))
            except BadRequest as exc:
                # arXiv refused an id the reference list printed (its words): those references
                # keep their parsed fields rather than the whole bibliography failing
                log.info("references of %s: %s", view.meta.idv, exc.wire_text())
            except (UpstreamError, Unavailable, RateLimited) as exc:
                # the API failed, is down or is out of turns: the same, and a later answer may
                # hold the API's fields, so this one is not kept as final
                log.warning("references of %s: %s", view.meta.idv, exc.wire_text())
                pending = True
        text = await asyncio.to_thread(bibtex.references_bibtex, references, found)
        return _served(text, asked, view, pending=pending)

    async def citations(self, paper: str, limit: object = None) -> Citations:
        """Who cites the paper (Semantic Scholar): `{paper, count, citations}`."""
        if limit is not None and not isinstance(limit, int | str):
            raise BadRequest(f"limit must be a whole number from 1 to 100 (got {limit!r})")
        return await self._discovery().citations(_arxiv_ref(paper), limit)

    def categories(self) -> Taxonomy:
        """arXiv's taxonomy: groups, archives, categories, aliases."""
        return categories.categories()

    async def category_trends(self, category: str, days: object = None) -> Trends:
        """Submissions per day and the top title terms of an arXiv category."""
        if not isinstance(category, str):
            raise BadRequest("category must be text")
        if days is not None and not isinstance(days, int | str):
            raise BadRequest(f"days must be a whole number from 1 to 30 (got {days!r})")
        return await self._discovery().trends(category, days)

    async def edition(self, paper: str | PaperRef, edition: str) -> Paper:
        """Another edition of `paper` (contract §10): any reference of the same paper,
        `local/<name>`, or relative to `paper`: `vN`, `arxiv`, `ar5iv`, `pdf`, fetched from that
        one source only and cached as any paper."""
        ref = paper if isinstance(paper, PaperRef) else parse_ref(paper)
        edition_ref, source = editions.edition_of(ref, edition)
        return await self.loader.edition(edition_ref, source)

    async def aligned(
        self, paper: str, since: str
    ) -> tuple[Paper, Paper, editions.Alignment, PaperRef]:
        """`paper`'s view, the edition `since`'s, and their alignment (kept with `paper`'s
        view: a second call on the pair is a lookup), and the reference asked for."""
        ref = parse_ref(paper)
        new, old = await asyncio.gather(self.paper(ref), self.edition(ref, since))
        key = editions.edition_key(old)
        alignment = await asyncio.to_thread(new.aligned, key, lambda: editions.align(old, new))
        return new, old, alignment, ref

    async def compared(self, paper: str, since: str) -> Served[changes.Comparison]:
        """`paper` compared with the edition `since` (contract §10), once per pair: kept with
        `paper`'s view beside their alignment."""
        new, old, alignment, ref = await self.aligned(paper, since)
        key = f"changes:{editions.edition_key(old)}"
        result = await asyncio.to_thread(
            new.aligned, key, lambda: changes.compare(old, new, alignment)
        )
        # an answer about two editions lasts as long as the shorter-lived: pinned only when the
        # edition `since` is a confirmed version too (ar5iv's one rendering may be redone)
        lasting = old.meta.version_confirmed and old.meta.version is not None
        local = "local" in (new.meta.source, old.meta.source)
        confirmed = new.meta.version_confirmed and lasting
        return Served(result, ref, new.meta.idv, confirmed, local_file=local)

    async def compared_text(self, paper: str, since: str, what: str) -> Served[changes.Comparison]:
        """`compared`, for an answer that shows the paper's text: refused in public mode where
        the licence does not allow serving it (contract §12)."""
        compared = await self.compared(paper, since)
        await self._check_text(await self.paper(compared.asked), what)
        return compared

    async def outline_since(self, paper: str, since: str) -> Served[shapes.Outline]:
        """The outline with each section's change since the edition `since`, and `changes`."""
        found, compared = await asyncio.gather(self.outline(paper), self.compared(paper, since))
        marked = changes.marked_outline(found.value, compared.value)
        return Served(marked, found.asked, found.idv, found.version_confirmed, found.pending)

    async def read_since(
        self,
        paper: str,
        anchor: str | None,
        since: str,
        max_tokens: int | object = None,
        door: Door = "rest",
    ) -> Served[ReadResult]:
        """A node's changes since the edition `since` as CriticMarkup (contract §10)."""
        compared = await self.compared_text(paper, since, "The changes of its text")
        result = await asyncio.to_thread(read_since, compared.value, anchor, max_tokens, door)
        return compared.carrying(result)

    async def references_since(self, paper: str, since: str) -> Served[shapes.ReferenceAnswer]:
        """The bibliography entries added and removed since the edition `since`."""
        compared = await self.compared(paper, since)
        return compared.carrying(changes.references_shape(compared.value))

    async def changes(self, paper: str, since: str) -> Served[shapes.Changes]:
        """`Changes` with every section's change (GET /{paper}/changes/{since}.json)."""
        compared = await self.compared(paper, since)
        return compared.carrying(changes.changes_shape(compared.value, per_section=True))

    async def changes_markdown(self, paper: str, since: str) -> Served[str]:
        """The whole paper's changes as CriticMarkup (GET /{paper}/changes/{since}.md)."""
        compared = await self.compared_text(paper, since, "The changes of its text")
        text = await asyncio.to_thread(changes.whole_markdown, compared.value)
        return compared.carrying(text)

    async def on_paper(self, paper: str, pure: Callable[[Paper], T]) -> Served[T]:
        """Any operation on one paper: the paper loaded, `pure` run on it in a worker thread."""
        ref = parse_ref(paper)
        view = await self.paper(ref)
        return _served(await asyncio.to_thread(pure, view), ref, view)

    async def view(self, paper: str) -> Served[Paper]:
        """The paper's view itself (anchor index, renderings), for an adapter that draws its
        text (a section's page)."""
        ref = parse_ref(paper)
        view = await self._text(ref, "The text")
        return _served(view, ref, view)

    async def read(
        self,
        paper: str,
        anchor: str | None,
        max_tokens: int | object = None,
        door: Door = "rest",
        *,
        anchors: bool = False,
    ) -> Served[ReadResult]:
        """A node's Markdown (contract §4 read); the whole paper for no anchor; `anchors` marks
        each citable block with its anchor (contract §11)."""
        ref = parse_ref(paper)
        view = await self._text(ref, "The text")
        if view.rendered(anchor, anchors=anchors):
            return _served(read(view, anchor, max_tokens, door, anchors=anchors), ref, view)
        result = await asyncio.to_thread(
            partial(read, anchors=anchors), view, anchor, max_tokens, door
        )
        return _served(result, ref, view)

    async def cite(self, paper: str, anchor: str) -> Served[shapes.Cite]:
        """A node's exact text and the URLs to quote it by (contract §4 cite)."""
        ref = parse_ref(paper)
        view = await self.paper(ref)
        # refused with the node's permalink: where to quote it from
        await self._check_text(view, f"The text of {shown(anchor)}", anchor)
        return _served(await asyncio.to_thread(cite, view, anchor, self.public_url), ref, view)

    async def cite_text(
        self, paper: str, text: object, prefix: object = None, suffix: object = None
    ) -> Served[shapes.Cite]:
        """The paragraph that holds a quote (contract §4, cite by text), told apart from others
        holding it by `prefix` and `suffix` (contract §10)."""
        quotes.checked_quote(text)  # before the paper is fetched, and before any normalising
        _context_argument("prefix", prefix)
        _context_argument("suffix", suffix)
        ref = parse_ref(paper)
        view = await self.paper(ref)
        reveal, _ = await self._text_allowed(view)
        found = await asyncio.to_thread(
            functools.partial(cite_text, reveal=reveal), view, text, self.public_url, prefix, suffix
        )
        return _served(found, ref, view)

    async def reanchor(self, paper: str, anchor: str, since: str) -> Served[shapes.Cite]:
        """The node `anchor` of the edition `since`, found in `paper` (contract §10)."""
        view, old, alignment, ref = await self.aligned(paper, since)
        await self._check_text(view, f"The text of {shown(anchor)} of {since}")
        answer = await asyncio.to_thread(reanchor, view, old, alignment, anchor, self.public_url)
        # the answer is as lasting as the less lasting of the two editions (REST's caching)
        lasting = old.meta.version is not None and old.meta.version_confirmed
        meta = view.meta
        local = "local" in (meta.source, old.meta.source)
        return Served(answer, ref, meta.idv, meta.version_confirmed and lasting, local_file=local)

    async def references(self, paper: str) -> Served[shapes.References]:
        """The paper's bibliography, parsed, with the arXiv ids S2 knows for entries without."""
        ref = parse_ref(paper)
        view = await self.paper(ref)
        answer = await asyncio.to_thread(references, view)
        pending = await self._fill_arxiv(view, answer["references"])
        return _served(answer, ref, view, pending=pending)

    async def reference(self, paper: str, reference_id: str) -> Served[shapes.Reference]:
        """One bibliography entry (`bib.bib12`, `12`, `[12]`) with the paragraphs citing it."""
        ref = parse_ref(paper)
        view = await self.paper(ref)
        answer = await asyncio.to_thread(references, view, reference_id)
        pending = await self._fill_arxiv(view, [answer])
        return _served(answer, ref, view, pending=pending)

    async def _merged_references(self, view: Paper) -> tuple[list[Reference], bool]:
        """The parsed bibliography with the arXiv ids S2 fills in (`references`' merge), so
        the BibTeX of an entry names the id its JSON does; whether S2's may still come."""
        answer = await asyncio.to_thread(references, view)
        pending = await self._fill_arxiv(view, answer["references"])
        # reference_json keeps the order of document.references: entry i is reference i
        merged = [
            replace(parsed, arxiv=entry["arxiv"])
            if entry["arxivFrom"] == "semantic-scholar"
            else parsed
            for parsed, entry in zip(view.document.references, answer["references"], strict=True)
        ]
        return merged, pending

    async def _fill_arxiv(self, view: Paper, entries: list[shapes.Reference]) -> bool:
        """Give entries without an arXiv id the one of S2's references whose title matches
        (contract §11); whether S2's list may still come (not had within the wait, or S2 failed:
        the next call asks again)."""
        if self.discovery is None or all(entry["arxiv"] for entry in entries):
            return False
        cited, pending = await self.discovery.cited_papers(
            parse_ref(view.meta.paper), REFERENCES_S2_WAIT_S
        )
        if cited is not None and cited["cited"]:
            await asyncio.to_thread(fill_arxiv, entries, cited["cited"])
        return pending

    async def reference_answer(
        self, paper: str, reference_id: str | None
    ) -> Served[shapes.ReferenceAnswer]:
        """`references` as one object of one shape: `{idv, references}` for the bibliography,
        `{idv, reference}` for the entry asked for (MCP's structured content)."""
        if reference_id is None:
            whole = await self.references(paper)
            answer: shapes.ReferenceAnswer = {
                "idv": whole.value["idv"],
                "references": whole.value["references"],
            }
            return whole.carrying(answer)
        one = await self.reference(paper, reference_id)
        answer = {"idv": one.idv, "reference": one.value}
        return one.carrying(answer)

    async def figure(self, paper: str, anchor: str) -> Served[shapes.Figure | shapes.Table]:
        """A figure or a table (contract §4 figure)."""
        ref = parse_ref(paper)
        view = await self._text(ref, f"The caption of {shown(anchor)}")
        return _served(await asyncio.to_thread(figure, view, anchor), ref, view)

    async def figure_with_images(self, paper: str, anchor: str) -> Served[Figured]:
        """A figure or a table with its first MAX_IMAGES images as bytes (contract §11); an image
        that cannot be had is said in `missing` instead."""
        found = await self.figure(paper, anchor)
        view = await self.paper(found.asked)
        images: list[Image] = []
        missing: list[str] = []
        for number, url in enumerate(found.value["images"][:MAX_IMAGES], start=1):
            try:
                images.append(await self._images().image(view.meta, url, f"image {number}"))
            except PaperAnchorError as exc:
                missing.append(f"image {number} is not included: {exc.wire_text()}")
        answer = Figured(found.value, tuple(images), tuple(missing))
        return Served(answer, found.asked, found.idv, found.version_confirmed)

    async def figure_image(self, paper: str, anchor: str, number: int) -> Served[Image]:
        """The `number`th image of a figure or a table (from 1), as bytes (contract §11)."""
        found = await self.figure(paper, anchor)
        urls = found.value["images"]
        if not 1 <= number <= len(urls):
            has = f"has {len(urls)} image{'s' if len(urls) != 1 else ''}"
            raise NotFound(f"{found.value['id']} of {found.idv} {has}, no image {number}")
        view = await self.paper(found.asked)
        image = await self._images().image(view.meta, urls[number - 1], f"image {number}")
        return Served(image, found.asked, found.idv, found.version_confirmed)

    def _images(self) -> Images:
        if self.images is None:
            raise NotFound("Figures' images are not served here")
        return self.images

    async def equation(self, paper: str, anchor: str) -> Served[shapes.Equation]:
        """An equation or a group of them (contract §4 equation)."""
        ref = parse_ref(paper)
        view = await self._text(ref, f"The equation {shown(anchor)}")
        return _served(await asyncio.to_thread(equation, view, anchor), ref, view)

    async def search_paper(
        self, paper: str, query: str, limit: int | None = None
    ) -> Served[list[shapes.SearchHit]]:
        """Paragraphs of the paper holding the query's words (contract §4 search_paper)."""
        ref = parse_ref(paper)
        view = await self._text(ref, "Search snippets")
        return _served(await asyncio.to_thread(search_paper, view, query, limit), ref, view)
