"""LaTeXML HTML -> a frozen `Document`. Pure: no web, cache or network imports."""

from __future__ import annotations

import codecs
import re
import threading
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import etree

from paperanchor.errors import ParseError, TooLarge
from paperanchor.parse.bibliography import entry_numbers
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
from paperanchor.parse.version import parser_version
from paperanchor.tree import Block, Document, Inline, Paragraph, Section, Text, walk

# Cached papers of another version are rebuilt; it follows the parser's code (parse/version.py).
PARSER_VERSION = parser_version()

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
# Bounds on what a page may become: the tree, its renderings and its search units grow with
# the page's elements and text (a 50 MB page of 700k paragraphs, 1.4 M tags: 21 s to parse,
# 1.5 GB). The largest of the 54 corpus pages has 44,761 opening tags (1311.0066, 13,500 a MB)
# and 1.0 M characters of text (1808.08002, 0.4 a byte); the bounds are 22 and 20 times those,
# what a page of the largest size read (PAPERANCHOR_MAX_HTML_BYTES, 50 MB) holds at the
# densest corpus page's rate. Tags are counted in the bytes, before libxml2 builds anything;
# the text once libxml2 has, before the paper's tree is built.
MAX_TAGS = 1_000_000
MAX_TEXT_CHARS = 20_000_000
_XML_DECL = re.compile(rb"^\s*<\?xml[^>]*\?>")
__all__ = ["PARSER_VERSION", "parse_document"]


# LaTeXML writes UTF-8; a plain etree parser skips lxml.html's per-element Python classes,
# which cost as much as the parse itself (profiled on 2501.11120v1: 88k lookups).
# huge_tree: without it libxml2 silently drops a text node over 10 MB (a fuzz case found it).
# collect_ids=False: libxml2 otherwise files every `id` attribute in a hash table (a LaTeXML
# page gives one to nearly every element, MathML's included) for `id()` lookups the parser
# never makes; without it libxml2's parse costs a third less (0.65 of a bare
# `lxml.html.fromstring` over the corpus pages, against 1.0).
# A parser is not to be shared between threads (pages are parsed in worker threads, and each
# parse's error log is read after it): one pair per thread.
_PARSERS = threading.local()


def _parsers() -> tuple[etree.HTMLParser, etree.HTMLParser]:
    pair: tuple[etree.HTMLParser, etree.HTMLParser] | None = getattr(_PARSERS, "pair", None)
    if pair is None:
        options = {"no_network": True, "huge_tree": True, "collect_ids": False}
        pair = (etree.HTMLParser(encoding="utf-8", **options), etree.HTMLParser(**options))
        _PARSERS.pair = pair
    return pair


# Pieces of the page decoded at a time to check that it is UTF-8: one string of the whole page
# cost half as much again (its memory, four bytes a character on a page of math symbols).
_UTF8_CHECK_BYTES = 1 << 16


def _is_utf8(html: bytes) -> bool:
    if html.isascii():  # stops at the first byte that is not
        return True
    decode = codecs.getincrementaldecoder("utf-8")().decode
    view = memoryview(html)
    try:
        for start in range(0, len(html), _UTF8_CHECK_BYTES):
            decode(view[start : start + _UTF8_CHECK_BYTES])
        decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def _root(html: bytes) -> tuple[HtmlElement, bool]:
    """The page's root element, and whether the page is UTF-8."""
    # anchored at the start: `sub` would try the pattern at every byte of the page
    declaration = _XML_DECL.match(html)
    if declaration is not None:
        html = html[declaration.end() :]
    if not html or html.isspace():  # no copy of the page, as `strip` makes
        raise ParseError("the page is empty")
    utf8, guess = _parsers()
    # not UTF-8: let libxml2 follow the page's meta charset
    parser = utf8 if _is_utf8(html) else guess
    try:
        root = etree.fromstring(html, parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
        raise ParseError(f"the page is not HTML ({exc})") from None
    if root is None:
        raise ParseError("the page is not HTML")
    for error in parser.error_log:
        # libxml2 stops at 2,048 levels of nesting and silently drops the rest of the page
        if error.type_name == "ERR_RESOURCE_LIMIT":
            raise ParseError(f"the page could not be read to its end ({error.message})")
    return root, parser is utf8


def parse_document(html: bytes | str, base_url: str = "") -> Document:
    """Parse one LaTeXML page; raise `ParseError` when it is not one."""
    raw = html.encode("utf-8") if isinstance(html, str) else html
    # every element opens with "<" (text has &lt;): an upper bound, paid in C scans, and only
    # by a page that could pass the bound (a byte, then a "<", is needed for each tag)
    if len(raw) > MAX_TAGS and raw.count(b"<") > MAX_TAGS:
        tags = raw.count(b"<") - raw.count(b"</")
        if tags > MAX_TAGS:
            raise TooLarge(f"the page has {tags:,} tags: at most {MAX_TAGS:,} are read")
    root, utf8 = _root(raw)
    # UTF-8 takes a byte at least for each character, and an entity more than it stands for:
    # a UTF-8 page of fewer bytes than the bound holds fewer characters, and is not counted
    # (the count cost a third of libxml2's parse)
    if not utf8 or len(raw) > MAX_TEXT_CHARS:
        text = sum(map(len, root.itertext()))
        if text > MAX_TEXT_CHARS:
            raise TooLarge(
                f"the page has {text:,} characters of text: at most {MAX_TEXT_CHARS:,} are read"
            )
    page = scan(root, raw)
    document = page.document
    if document is None:
        raise ParseError("the page is not a LaTeXML document (no ltx_document element)")
    effective_base = _effective_base(base_url, page.base_href)
    if not page.base_href:
        effective_base = _own_site(page.page_url, page.ar5iv_styles) or effective_base
    labels: dict[Any, str] = {}
    ctx = ParseContext(
        base_url=effective_base,
        section_errors=count_section_errors(page.errors),
        bib_numbers=_bib_numbers(page.biblists, labels),
        bib_labels=labels,
        abstract=page.abstract,
    )
    try:
        return _document(page, document, ctx, effective_base)
    except RecursionError:
        # LaTeXML nests a few dozen levels; thousands mean a broken or hostile page
        raise ParseError("the page nests its elements too deeply to read") from None


def _bib_numbers(biblists: list[HtmlElement], labels: dict[Any, str]) -> dict[str, tuple[str, str]]:
    """Each bibliography entry's number and printed label, read before the body."""
    numbers: dict[str, tuple[str, str]] = {}
    for biblist in biblists:
        for entry_id, number in entry_numbers(biblist, labels).items():
            numbers.setdefault(entry_id, number)
    return numbers


# arXiv's own pages say `<base href="/html/2501.11120v1/">`: site-relative, on arXiv's site.
_ARXIV_BASE = re.compile(r"^/html/[\w./\-]{1,80}v[1-9]\d{0,3}/?$", re.ASCII)
ARXIV_SITE = "https://arxiv.org"


def _effective_base(base_url: str, base_href: str | None) -> str:
    """What the page's relative URLs resolve against (contract §3): its `<base href>` against
    where it was read, but a site-relative base of an arXiv rendering against arXiv's site,
    wherever the page was read from (a saved file, the local directory, a mirror), so that a
    saved page's images are arXiv's and its Markdown the same wherever the file sits."""
    if not base_href:
        return base_url
    href = base_href.strip()[:2000]
    if _ARXIV_BASE.match(href):
        return ARXIV_SITE + href
    try:
        return urljoin(base_url, href)
    except ValueError:
        return base_url


# The public sites whose pages name themselves (`og:url`, canonical link): a page saved from
# one keeps that site's images wherever it is read from (a local directory, a mirror).
_OWN_SITES = frozenset({"ar5iv.labs.arxiv.org", "ar5iv.org", "arxiv.org", "www.arxiv.org"})
AR5IV_SITE = "https://ar5iv.labs.arxiv.org/"


def _own_site(page_url: str | None, ar5iv_styles: bool) -> str | None:
    """The page's own address when it names one of `_OWN_SITES` (ar5iv writes images as
    `/html/ID/assets/x1.png`, site-relative); ar5iv's site when only its stylesheets say so."""
    if page_url:
        try:
            parts = urlsplit(page_url.strip()[:2000])
        except ValueError:
            parts = None
        if parts is not None and parts.scheme == "https" and parts.hostname in _OWN_SITES:
            return parts.geturl()
    return AR5IV_SITE if ar5iv_styles else None


def _document(page: PageScan, document: HtmlElement, ctx: ParseContext, base: str) -> Document:
    title = parse_title(page.title, document, ctx)
    abstract = parse_abstract(page.abstract, ctx, blocks_of)
    blocks = tuple(_body(document, ctx))
    errors = len(page.errors) + ctx.residue
    if _died_before_the_body(abstract, blocks, document):
        # what is left of the page is error residue, not the paper: nothing to offer as text
        quality, blocks = "failed", ()
    elif _abstract_only(abstract, blocks):
        # the abstract is kept (the library serves it when no source has better), but the
        # body is missing: another source is asked for the paper (contract §3, Quality)
        quality = "failed"
    else:
        quality = "degraded" if errors else "ok"
    return Document(
        title=title,
        authors=parse_authors(page.authors),
        abstract=abstract,
        keywords=parse_keywords(page.keywords, ctx),
        blocks=blocks,
        footnotes=dict(ctx.footnotes),
        errors=errors,
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


# What a paper's body is not: a bibliography or acknowledgements alone, the conversion's body
# runs of furniture (a date, an empty table), or text outside any paragraph.
_NOT_BODY = frozenset({"body", "bibliography", "acknowledgements"})


def _abstract_only(abstract: Section | None, blocks: tuple[Block, ...]) -> bool:
    """An abstract and no section or paragraph of the body (a title page's date or an empty
    table is no body: fewer than FAILED_TEXT_CHARS of text outside sections): a conversion
    that stopped after the abstract, not the paper."""
    if abstract is None:
        return False
    size = 0
    for visit in walk(blocks):
        node = visit.node
        if isinstance(node, Section) and node.kind not in _NOT_BODY:
            return False
        if isinstance(node, Text) and visit.section is not None and visit.section.kind == "body":
            size += len(node.content.text)
            if size >= FAILED_TEXT_CHARS:
                return False
    return True


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
    residue = ctx.residue

    def flush() -> None:
        nonlocal runs, residue
        if any(not isinstance(b, Paragraph) or b.blocks for b in loose):
            # a run of empty paragraphs (what is left once debris is left out) is no text
            runs += 1
            section_id = "body" if runs == 1 else f"body.{runs}"
            title = Inline("Main text", "Main text")
            errors = ctx.residue - residue
            out.append(Section(section_id, "body", None, "", title, 1, tuple(loose), errors))
        loose.clear()
        residue = ctx.residue

    for child in children(document):
        cls = classes(child)
        if cls & _FRONT or (tag_of(child) == "h1" and "ltx_title" in cls):
            continue
        if section_kind(child) is not None:
            flush()
            out.extend(blocks_of(child, ctx, ""))
            flush()  # the section counted its own debris
        else:
            loose.extend(blocks_of(child, ctx, "body"))
    flush()
    return out
