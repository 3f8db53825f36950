"""LaTeXML HTML -> a frozen `Document`. Pure: no web, cache or network imports."""

from __future__ import annotations

import re
from urllib.parse import urljoin

from lxml import etree

from paperanchor.errors import ParseError
from paperanchor.parse.blocks import blocks_of
from paperanchor.parse.context import ParseContext
from paperanchor.parse.dom import HtmlElement, children, classes, is_chrome, tag_of
from paperanchor.parse.front import (
    page_idv,
    parse_abstract,
    parse_authors,
    parse_keywords,
    parse_license,
    parse_title,
)
from paperanchor.parse.scan import PageScan, scan
from paperanchor.parse.sections import count_section_errors, section_kind
from paperanchor.tree import Block, Document, Inline, Section

# Bump when the tree or its rendering changes: cached papers of another version are rebuilt.
PARSER_VERSION = "2"  # 2: Equation.latex may be None, with the text beside it (a PDF)

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
__all__ = ["PARSER_VERSION", "parse_document"]


# LaTeXML writes UTF-8; a plain etree parser skips lxml.html's per-element Python classes,
# which cost as much as the parse itself (profiled on 2501.11120v1: 88k lookups).
# huge_tree: without it libxml2 silently drops a text node over 10 MB (a fuzz case found it).
_UTF8_PARSER = etree.HTMLParser(encoding="utf-8", no_network=True, huge_tree=True)
_GUESS_PARSER = etree.HTMLParser(no_network=True, huge_tree=True)


def _root(html: bytes) -> HtmlElement:
    html = _XML_DECL.sub(b"", html, count=1)
    if not html.strip():
        raise ParseError("the page is empty")
    try:
        html.decode("utf-8")
        parser = _UTF8_PARSER
    except UnicodeDecodeError:
        parser = _GUESS_PARSER  # not UTF-8: let libxml2 follow the page's meta charset
    try:
        root = etree.fromstring(html, parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
        raise ParseError(f"the page is not HTML ({exc})") from None
    if root is None:
        raise ParseError("the page is not HTML")
    return root


def parse_document(html: bytes | str, base_url: str = "") -> Document:
    """Parse one LaTeXML page; raise `ParseError` when it is not one."""
    raw = html.encode("utf-8") if isinstance(html, str) else html
    root = _root(raw)
    page = scan(root, raw)
    document = page.document
    if document is None:
        raise ParseError("the page is not a LaTeXML document (no ltx_document element)")
    effective_base = urljoin(base_url, page.base_href) if page.base_href else base_url
    ctx = ParseContext(base_url=effective_base, section_errors=count_section_errors(page.errors))
    try:
        return _document(page, document, ctx, effective_base)
    except RecursionError:
        # LaTeXML nests a few dozen levels; thousands mean a broken or hostile page
        raise ParseError("the page nests its elements too deeply to read") from None


def _document(page: PageScan, document: HtmlElement, ctx: ParseContext, base: str) -> Document:
    abstract = parse_abstract(page.abstract, ctx)
    blocks = tuple(_body(document, ctx))
    if _died_before_the_body(abstract, blocks, document):
        # what is left of the page is error residue, not the paper: nothing to offer as text
        quality, blocks = "failed", ()
    else:
        quality = "degraded" if page.errors else "ok"
    return Document(
        title=parse_title(page.title, document, ctx),
        authors=parse_authors(page.authors),
        abstract=abstract,
        keywords=parse_keywords(page.keywords, ctx),
        blocks=blocks,
        footnotes=dict(ctx.footnotes),
        errors=len(page.errors),
        base_url=base,
        generator=page.generator,
        quality=quality,
        license=parse_license(page.license),
        page_idv=page_idv(page.base_href, page.watermark),
    )


# Fewer characters of text than this outside LaTeXML's error marks, with no section and no
# abstract, is not a paper but a conversion that died before the body (2608.30667v1 keeps 14
# characters: "long … longfalse"); the shortest real paper in the corpus keeps thousands.
FAILED_TEXT_CHARS = 200


def _died_before_the_body(
    abstract: Section | None, blocks: tuple[Block, ...], document: HtmlElement
) -> bool:
    if abstract is not None or any(
        isinstance(b, Section) and b.kind not in ("body",) for b in blocks
    ):
        return False
    return _text_without_errors(document, FAILED_TEXT_CHARS) < FAILED_TEXT_CHARS


def _text_without_errors(document: HtmlElement, enough: int) -> int:
    """Characters of text outside `ltx_ERROR` elements and chrome, counted up to `enough`."""
    size = 0
    stack = [document]
    while stack and size < enough:
        node = stack.pop()
        if node is not document:
            size += len((node.tail or "").strip())
        if type(node.tag) is not str:
            continue
        if node is not document and (is_chrome(node) or "ltx_ERROR" in classes(node)):
            continue
        size += len((node.text or "").strip())
        stack.extend(node)
    return size


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
