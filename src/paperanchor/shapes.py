"""The JSON shapes of contract §5, written once.

Each answer is a TypedDict: the service, render/json.py and discovery build them (plain dicts
at run time, so a warm answer costs no model construction or validation), strict mypy checks
every place that builds one, and api/models.py hands these same classes to pydantic for the
schemas of /openapi.json and of the MCP tools. A field's description is an annotated
`Field(description=…)`, not a docstring under the field: pydantic reads those by parsing the
module's source again for every schema it builds (0.5 ms a shape, on every FastAPI route).
`SHAPE` refuses fields a shape does not name when a test validates an answer.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Field, with_config

# pydantic reads only typing_extensions' TypedDict on Python 3.11, not typing's
from typing_extensions import TypedDict

SHAPE = ConfigDict(extra="forbid")

Source = Literal["local", "arxiv", "ar5iv", "pdf"]
Quality = Literal["ok", "degraded", "failed"]
ErrorCode = Literal[
    "bad-request",
    "not-found",
    "too-large",
    "rate-limited",
    "upstream-error",
    "unavailable",
    "forbidden",
    "unauthorized",
    "internal",
]


# -- reading a paper ---------------------------------------------------------------------------


@with_config(SHAPE)
class Counts(TypedDict):
    sections: int
    paragraphs: int
    figures: int
    tables: int
    equations: int
    references: int
    errors: int
    algorithms: int  # additive: algorithm floats, which `figures` does not count


@with_config(SHAPE)
class Section(TypedDict):
    id: str
    alias: str | None
    slug: str
    number: str | None
    title: str
    level: int
    tokens: int
    errors: int
    children: list[Section]
    change: NotRequired[
        Annotated[
            Literal["same", "edited", "added", "moved"],
            Field(description="with since only: what became of the section (contract §10)"),
        ]
    ]
    changed: NotRequired[
        Annotated[
            int, Field(description="with since only: its blocks (subsections' too) that differ")
        ]
    ]


@with_config(SHAPE)
class Outline(TypedDict):
    schema: Literal[1]
    paper: str
    idv: str
    version: int | None
    versionConfirmed: bool
    source: Source
    sourceUrl: str
    title: str
    authors: list[str]
    abstract: str
    tldr: str | None
    contributions: list[str] | None
    inferred: Literal["ready", "pending"]
    tokens: int
    counts: Counts
    sections: list[Section]
    quality: Annotated[
        Quality,
        Field(
            description="degraded: conversion errors in the text (or read from a PDF); failed: the "
            "conversion died before the body and no source had better"
        ),
    ]
    license: Annotated[
        str | None, Field(description="the licence the page names (arXiv's licence line)")
    ]
    metadata: Annotated[
        Metadata | None,
        Field(
            description="the arXiv API's metadata; null for a local document, or when the API "
            "did not answer in time (a later outline has it)"
        ),
    ]
    changes: NotRequired[
        Annotated[Changes, Field(description="with since only: what changed (contract §10)")]
    ]
    versions: NotRequired[
        Annotated[list[int], Field(description="the paper's versions, from the arXiv API")]
    ]


@with_config(SHAPE)
class ChangeCounts(TypedDict):
    same: int
    edited: int
    added: int
    moved: int
    removed: int


@with_config(SHAPE)
class AddedRemoved(TypedDict):
    added: int
    removed: int


@with_config(SHAPE)
class RemovedSection(TypedDict):
    id: str
    number: str | None
    title: str


@with_config(SHAPE)
class NumberChange(TypedDict):
    anchor: Annotated[str, Field(description="the block of the new edition that says it")]
    old: str
    new: str


@with_config(SHAPE)
class SectionChange(TypedDict):
    id: str
    number: str | None
    title: str
    change: Literal["same", "edited", "added", "moved"]
    changed: int


@with_config(SHAPE)
class Changes(TypedDict):
    """What changed from the edition `since` to `to` (contract §10): counts per kind of block."""

    since: str
    to: str
    sections: ChangeCounts
    paragraphs: ChangeCounts
    equations: ChangeCounts
    tables: ChangeCounts
    figures: ChangeCounts
    references: AddedRemoved
    removed: Annotated[
        list[RemovedSection], Field(description="the sections of since that are gone")
    ]
    numbers: Annotated[
        list[NumberChange],
        Field(description="numbers that changed inside a paragraph or a table cell"),
    ]
    sectionList: NotRequired[
        Annotated[
            list[SectionChange],
            Field(description="REST only: every section of the new edition with its change"),
        ]
    ]


@with_config(SHAPE)
class CompactOutline(TypedDict):
    """The outline the MCP tool sends (contract §11, compact.py): Outline's fields less those
    that are empty or at their default, each section one line of `sectionFields`."""

    schema: Literal[1]
    paper: str
    idv: str
    version: NotRequired[int]
    versionConfirmed: NotRequired[bool]
    source: Source
    sourceUrl: NotRequired[str]
    title: str
    authors: NotRequired[list[str]]
    abstract: NotRequired[str]
    tldr: NotRequired[str]
    contributions: NotRequired[list[str]]
    inferred: NotRequired[Literal["pending"]]
    tokens: int
    counts: dict[str, int]
    sectionFields: Annotated[
        str, Field(description="what each section line holds: tokens id number title")
    ]
    sections: list[str]
    quality: NotRequired[Quality]
    license: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]


@with_config(SHAPE)
class SectionText(TypedDict):
    """GET /{paper}/sections/{anchor}.json"""

    paper: str
    idv: str
    id: str
    title: str
    tokens: int
    truncated: bool
    markdown: str


CiteStatus = Literal["same", "moved", "edited"]


@with_config(SHAPE)
class Was(TypedDict):
    idv: str
    anchor: str
    hash: str


@with_config(SHAPE)
class Cite(TypedDict):
    text: str
    url: Annotated[
        str | None,
        Field(description="this service's Markdown of the section; null over stdio (contract §7)"),
    ]
    anchor: str
    permalink: Annotated[
        str | None,
        Field(
            description="the public, version-pinned address of the node; null for a local document"
        ),
    ]
    hash: Annotated[
        str, Field(description="first 16 hex digits of the SHA-256 of text (NFC, squashed)")
    ]
    match: NotRequired[
        Annotated[
            Literal["exact", "fuzzy"], Field(description="cite by text only: how the quote matched")
        ]
    ]
    score: NotRequired[Annotated[int, Field(description="cite by text, fuzzy only: 90-100")]]
    prefix: Annotated[str, Field(description="<=32 chars of text before it")]
    suffix: Annotated[str, Field(description="<=32 chars of text after it")]
    sectionPath: Annotated[list[str], Field(description="its sections, outermost first")]
    textFragment: Annotated[str | None, Field(description="permalink with a text directive")]
    status: NotRequired[
        Annotated[
            CiteStatus,
            Field(description="re-anchored: same, moved (same text) or edited"),
        ]
    ]
    confidence: NotRequired[
        Annotated[float, Field(description="calibrated probability it is right")]
    ]
    was: NotRequired[Annotated[Was, Field(description="the node it came from")]]


@with_config(SHAPE)
class Reference(TypedDict):
    id: str
    number: str
    text: str
    authors: list[str]
    title: str | None
    year: str | None
    arxiv: str | None
    arxivFrom: Annotated[
        Literal["page", "semantic-scholar"] | None,
        Field(
            description="where `arxiv` comes from: the entry on the page, or Semantic Scholar's "
            "list of the paper's references matched by title (additive)"
        ),
    ]
    doi: str | None
    url: str | None
    citedIn: NotRequired[Annotated[list[str], Field(description="only for one reference")]]


@with_config(SHAPE)
class References(TypedDict):
    idv: str
    references: list[Reference]


@with_config(SHAPE)
class Table(TypedDict):
    kind: Literal["table"]
    id: str
    number: str | None
    caption: str
    rows: list[list[str]]
    headerRows: int
    images: list[str]
    panels: Annotated[
        list[Float], Field(description="sub-tables, and panels of tabulars (additive)")
    ]
    cut: Annotated[
        bool, Field(description="the grid reached 100,000 cells; later rows are left out")
    ]
    sectionId: str


@with_config(SHAPE)
class Figure(TypedDict):
    kind: Literal["figure", "algorithm"]
    id: str
    number: str | None
    caption: str
    images: list[str]
    panels: list[Float]
    sectionId: str


Float = Annotated[Figure | Table, Field(discriminator="kind")]


@with_config(SHAPE)
class Equation(TypedDict):
    id: str
    number: str | None
    latex: Annotated[
        str | None,
        Field(
            description="null for an equation read from a PDF, which has no TeX: its text "
            "comes beside it"
        ),
    ]
    text: NotRequired[
        Annotated[str, Field(description="from a PDF only: the equation's extracted text")]
    ]


@with_config(SHAPE)
class SearchHit(TypedDict):
    anchor: str
    sectionId: str
    snippet: str


@with_config(SHAPE)
class ReferenceAnswer(TypedDict):
    """The MCP `references` result: the bibliography, or the one entry asked for by `id`."""

    idv: str
    references: NotRequired[
        Annotated[list[Reference], Field(description="every entry, when no id was given")]
    ]
    reference: NotRequired[
        Annotated[Reference, Field(description="the entry asked for by id, with citedIn")]
    ]
    since: NotRequired[Annotated[str, Field(description="with since: the older edition's idv")]]
    added: NotRequired[
        Annotated[list[Reference], Field(description="with since: entries only this edition has")]
    ]
    removed: NotRequired[
        Annotated[list[Reference], Field(description="with since: entries only since has")]
    ]


@with_config(SHAPE)
class Hits(TypedDict):
    """The MCP `search_paper` result: structured content is an object, so the list is wrapped."""

    hits: list[SearchHit]


# -- discovery (contract §4) ---------------------------------------------------------------------


@with_config(SHAPE)
class Metadata(TypedDict):
    """A paper as the arXiv API describes it: every field as arXiv wrote it, dates in UTC."""

    paper: str
    title: str
    authors: list[str]
    abstract: str
    published: str
    updated: str
    latestVersion: Annotated[
        int,
        Field(
            description="the version this entry describes: the latest for a bare id, the one "
            "asked for a versioned id"
        ),
    ]
    categories: list[str]
    primaryCategory: str
    doi: str | None
    journalRef: str | None
    comment: str | None
    absUrl: str
    pdfUrl: str


@with_config(SHAPE)
class Hit(TypedDict):
    """One arXiv search result."""

    paper: str
    idv: str
    title: str
    authors: Annotated[list[str], Field(description='the first three, then "et al."')]
    published: str
    primaryCategory: str
    summary: Annotated[str, Field(description="the abstract's first 150 characters, cut at a word")]


@with_config(SHAPE)
class SearchPage(TypedDict):
    query: Annotated[str, Field(description="the search_query sent to arXiv")]
    total: int
    start: int
    hits: list[Hit]


@with_config(SHAPE)
class Citing(TypedDict):
    title: str
    year: int | None
    arxiv: str | None
    doi: str | None
    url: str | None


@with_config(SHAPE)
class Citations(TypedDict):
    paper: str
    count: Annotated[int, Field(description="how many papers cite it (Semantic Scholar)")]
    citations: list[Citing]


@with_config(SHAPE)
class DayCount(TypedDict):
    date: str
    count: int


@with_config(SHAPE)
class TermCount(TypedDict):
    term: str
    count: int


@with_config(SHAPE)
class Trends(TypedDict):
    category: str | None
    days: int
    since: str
    until: str
    submissions: Annotated[int, Field(description="submissions in the window")]
    total: Annotated[int, Field(description="arXiv's count of results for the query")]
    complete: Annotated[bool, Field(description="false when the counts are a lower bound")]
    perDay: list[DayCount]
    topTerms: list[TermCount]


@with_config(SHAPE)
class BibTeX(TypedDict):
    """The MCP `bibtex` result: a .bib, one @misc per paper or bibliography entry."""

    bibtex: str


@with_config(SHAPE)
class Group(TypedDict):
    id: str
    name: str


@with_config(SHAPE)
class Archive(TypedDict):
    id: str
    name: str
    group: str
    active: bool


@with_config(SHAPE)
class Category(TypedDict):
    id: str
    name: str
    archive: str
    group: str
    active: bool
    aliasOf: str | None
    description: str | None


@with_config(SHAPE)
class Taxonomy(TypedDict):
    """GET /categories.json: arXiv's taxonomy (arXiv/arxiv-base, MIT)."""

    source: Annotated[dict[str, str], Field(description="where the taxonomy was converted from")]
    groups: list[Group]
    archives: list[Archive]
    categories: list[Category]
    aliases: dict[str, str]


# -- the rest ----------------------------------------------------------------------------------


@with_config(SHAPE)
class ErrorDetail(TypedDict):
    code: ErrorCode
    status: int
    detail: str


@with_config(SHAPE)
class Error(TypedDict):
    error: ErrorDetail


@with_config(SHAPE)
class Health(TypedDict):
    status: Literal["ok"]
    cache: NotRequired[Literal["unavailable"]]  # the cache could not be opened: none is kept
