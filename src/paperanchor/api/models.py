"""The JSON shapes of SPEC §5 as pydantic models.

The service builds plain dicts; these models only describe them: they are the schemas of
/openapi.json and of the MCP tools' output, and the tests validate every answer against them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

ErrorCode = Literal[
    "bad-request",
    "not-found",
    "too-large",
    "rate-limited",
    "upstream-error",
    "unavailable",
    "internal",
]


class Shape(BaseModel):
    """A JSON object of SPEC §5: exactly these fields, nothing else."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Counts(Shape):
    sections: int
    paragraphs: int
    figures: int
    tables: int
    equations: int
    references: int
    errors: int


class Metadata(Shape):
    """A paper as the arXiv API describes it: every field as arXiv wrote it, dates in UTC."""

    paper: str
    title: str
    authors: list[str]
    abstract: str
    published: str
    updated: str
    latestVersion: int = Field(
        description="the version this entry describes: the latest for a bare id, the one "
        "asked for a versioned id"
    )
    categories: list[str]
    primaryCategory: str
    doi: str | None
    journalRef: str | None
    comment: str | None
    absUrl: str
    pdfUrl: str


class Section(Shape):
    id: str
    alias: str | None
    slug: str
    number: str | None
    title: str
    level: int
    tokens: int
    errors: int
    children: list[Section]


class Outline(Shape):
    # "schema" would shadow a BaseModel attribute, hence the alias
    schema_version: Literal[1] = Field(alias="schema")
    paper: str
    idv: str
    version: int | None
    versionConfirmed: bool
    source: Literal["local", "arxiv", "ar5iv", "pdf"]
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
    quality: Literal["ok", "degraded", "failed"] = Field(
        description="degraded: conversion errors in the text (or read from a PDF); failed: "
        "the conversion died before the body and no source had better"
    )
    license: str | None = Field(description="the licence the page names (arXiv's licence line)")
    metadata: Metadata | None = Field(
        description="the arXiv API's metadata; null for a local document, or when the API did "
        "not answer in time (a later outline has it)"
    )


class SectionText(Shape):
    """GET /{paper}/sections/{anchor}.json"""

    paper: str
    idv: str
    id: str
    title: str
    tokens: int
    truncated: bool
    markdown: str


class Cite(Shape):
    text: str
    url: str
    anchor: str
    permalink: str | None = Field(
        description="the public, version-pinned address of the node; null for a local document"
    )
    hash: str = Field(description="first 16 hex digits of the SHA-256 of text (NFC, squashed)")
    match: Literal["exact", "fuzzy"] | None = Field(
        default=None, description="cite by text only: how the quote matched"
    )
    score: int | None = Field(default=None, description="cite by text, fuzzy only: 90-100")


class Reference(Shape):
    id: str
    number: str
    text: str
    authors: list[str]
    title: str | None
    year: str | None
    arxiv: str | None
    doi: str | None
    url: str | None
    citedIn: list[str] = Field(default_factory=list, description="only for one reference")


class References(Shape):
    idv: str
    references: list[Reference]


class Table(Shape):
    kind: Literal["table"]
    id: str
    number: str | None
    caption: str
    rows: list[list[str]]
    headerRows: int
    images: list[str]
    panels: list[Float] = Field(description="sub-tables, and panels of tabulars (additive)")
    cut: bool = Field(description="the grid reached 100,000 cells; later rows are left out")
    sectionId: str


class Figure(Shape):
    kind: Literal["figure"]
    id: str
    number: str | None
    caption: str
    images: list[str]
    panels: list[Float]
    sectionId: str


Float = Annotated[Figure | Table, Field(discriminator="kind")]


class Equation(Shape):
    id: str
    number: str | None
    latex: str


class SearchHit(Shape):
    anchor: str
    sectionId: str
    snippet: str


class ReferenceAnswer(Shape):
    """The MCP `references` result: the bibliography, or the one entry asked for by `id`."""

    idv: str
    references: list[Reference] | None = Field(
        default=None, description="every entry, when no id was given"
    )
    reference: Reference | None = Field(
        default=None, description="the entry asked for by id, with citedIn"
    )


class Hits(Shape):
    """The MCP `search_paper` result: structured content is an object, so the list is wrapped."""

    hits: list[SearchHit]


class Hit(Shape):
    """One arXiv search result."""

    paper: str
    idv: str
    title: str
    authors: list[str] = Field(description='the first three, then "et al."')
    published: str
    primaryCategory: str
    summary: str = Field(description="the abstract's first 150 characters, cut at a word")


class SearchPage(Shape):
    query: str = Field(description="the search_query sent to arXiv")
    total: int
    start: int
    hits: list[Hit]


class Citing(Shape):
    title: str
    year: int | None
    arxiv: str | None
    doi: str | None
    url: str | None


class Citations(Shape):
    paper: str
    count: int = Field(description="how many papers cite it (Semantic Scholar)")
    citations: list[Citing]


class DayCount(Shape):
    date: str
    count: int


class TermCount(Shape):
    term: str
    count: int


class Trends(Shape):
    category: str | None
    days: int
    since: str
    until: str
    submissions: int = Field(description="submissions in the window")
    total: int = Field(description="arXiv's count of results for the query")
    complete: bool = Field(description="false when the counts are a lower bound")
    perDay: list[DayCount]
    topTerms: list[TermCount]


class BibTeX(Shape):
    """The MCP `bibtex` result: a .bib, one @misc per paper or bibliography entry."""

    bibtex: str


class Group(Shape):
    id: str
    name: str


class Archive(Shape):
    id: str
    name: str
    group: str
    active: bool


class Category(Shape):
    id: str
    name: str
    archive: str
    group: str
    active: bool
    aliasOf: str | None
    description: str | None


class Taxonomy(Shape):
    """GET /categories.json: arXiv's taxonomy (arXiv/arxiv-base, MIT)."""

    source: dict[str, str] = Field(description="where the taxonomy was converted from")
    groups: list[Group]
    archives: list[Archive]
    categories: list[Category]
    aliases: dict[str, str]


class ErrorDetail(Shape):
    code: ErrorCode
    status: int
    detail: str


class Error(Shape):
    error: ErrorDetail


class Health(Shape):
    status: Literal["ok"]


Figure.model_rebuild()


def compact_schema(model: Any) -> dict[str, Any]:
    """`model`'s JSON schema without titles and descriptions, `X | None` written as a list of
    types: the same constraints in fewer characters."""
    return compact(TypeAdapter(model).json_schema(by_alias=True), drop=("title", "description"))


def shallow_schema(*models: Any) -> dict[str, Any]:
    """One object schema with the top-level fields of `models` and their JSON types only.

    MCP tool definitions are paid for in tokens on every request (SPEC §7 caps the seven at
    1,500): the nested shapes are in /openapi.json, the tools carry their outline.
    """
    properties: dict[str, Any] = {}
    for model in models:
        schema = compact_schema(model)
        if "$ref" in schema:  # a recursive model is a reference into its own $defs
            schema = schema["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
        for name, field in schema.get("properties", {}).items():
            kind = field.get("type", "object" if "$ref" in field else None)
            properties.setdefault(name, {"type": kind} if kind is not None else {})
    return {"type": "object", "properties": properties}


def compact(schema: dict[str, Any], drop: tuple[str, ...] = ("title",)) -> dict[str, Any]:
    """A JSON schema without the annotations named in `drop` and null defaults, `X | None`
    written as a list of types."""
    compacted: dict[str, Any] = _compact(schema, drop)
    return compacted


def _compact(node: Any, drop: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_compact(item, drop) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in drop and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "properties":
            out[key] = {name: _compact(sub, drop) for name, sub in value.items()}
        else:
            out[key] = _compact(value, drop)
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (other,) = [option for option in options if option != {"type": "null"}]
        if isinstance(other.get("type"), str):
            del out["anyOf"]
            out = {**other, **out, "type": [other["type"], "null"]}
    return out
