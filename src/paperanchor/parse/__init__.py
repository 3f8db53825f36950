"""LaTeXML HTML -> a frozen `Document`. Pure: no web, cache or network imports."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from paperanchor.errors import ParseError
from paperanchor.parse.blocks import blocks_of
from paperanchor.parse.context import ParseContext
from paperanchor.parse.dom import HtmlElement, children, classes, tag_of
from paperanchor.parse.front import parse_abstract, parse_authors, parse_keywords, parse_title
from paperanchor.parse.sections import section_kind
from paperanchor.tree import Block, Document, Inline, Section

# Bump when the tree or its rendering changes: cached papers of another version are rebuilt.
PARSER_VERSION = "1"

_FRONT = frozenset(
    {
        "ltx_authors",
        "ltx_abstract",
        "ltx_keywords",
        "ltx_classification",
        "ltx_dates",
        "ltx_date",
        "ltx_TOC",
        "ltx_subtitle",
        "ltx_title_document",
        "ltx_pagination",
    }
)
_XML_DECL = re.compile(rb"^\s*<\?xml[^>]*\?>")
_GENERATOR = re.compile(r"by LaTeXML \(version ([^)]+)\)")
_COUNT_ERRORS = etree.XPath("count(.//*[contains(concat(' ', @class, ' '), ' ltx_ERROR ')])")
_FIND_DOCUMENT = etree.XPath("//*[contains(concat(' ', @class, ' '), ' ltx_document ')]")
__all__ = ["PARSER_VERSION", "parse_document"]


def _decode(html: bytes) -> str:
    html = _XML_DECL.sub(b"", html, count=1)
    try:
        return html.decode("utf-8")
    except UnicodeDecodeError:
        return html.decode("cp1252", errors="replace")


def parse_document(html: bytes | str, base_url: str = "") -> Document:
    """Parse one LaTeXML page; raise `ParseError` when it is not one."""
    text = _decode(html) if isinstance(html, bytes) else html
    if not text.strip():
        raise ParseError("the page is empty")
    try:
        root = lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError) as exc:
        raise ParseError(f"the page is not HTML ({exc})") from None
    found = _FIND_DOCUMENT(root)
    if not found:
        raise ParseError("the page is not a LaTeXML document (no ltx_document element)")
    document: HtmlElement = found[0]
    base = root.find(".//base")
    effective_base = urljoin(base_url, base.get("href") or "") if base is not None else base_url
    ctx = ParseContext(base_url=effective_base)
    title = parse_title(root, document, ctx)
    authors = parse_authors(document)
    abstract = parse_abstract(document, ctx)
    keywords = parse_keywords(document, ctx)
    body = _body(document, ctx)
    generator = None
    for comment in root.iter(etree.Comment):
        match = _GENERATOR.search(comment.text or "")
        if match:
            generator = match.group(1)
            break
    return Document(
        title=title,
        authors=authors,
        abstract=abstract,
        keywords=keywords,
        blocks=tuple(body),
        footnotes=dict(ctx.footnotes),
        errors=int(_COUNT_ERRORS(document)),
        base_url=effective_base,
        generator=generator,
    )


def _body(document: HtmlElement, ctx: ParseContext) -> list[Block]:
    """Top-level sections in order; runs of loose blocks between them become `body` sections."""
    out: list[Block] = []
    loose: list[Block] = []
    runs = 0

    def flush() -> None:
        nonlocal runs
        if loose:
            runs += 1
            section_id = "body" if runs == 1 else f"body.{runs}"
            out.append(
                Section(
                    section_id, "body", None, "", Inline("Main text", "Main text"), 1, tuple(loose)
                )
            )
            loose.clear()

    for child in children(document):
        cls = classes(child)
        if cls & _FRONT or (tag_of(child) == "h1" and "ltx_title" in cls):
            continue
        if section_kind(child) is not None:
            flush()
            out.extend(blocks_of(child, ctx, ""))
        else:
            loose.extend(blocks_of(child, ctx, "body"))
    flush()
    return out
