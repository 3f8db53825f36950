"""Find what the parser needs before the walk: the document element, front matter,
conversion errors, `<base>`, `<title>` and the generator comment.

Profiled on the corpus: a Python walk over every element, or an XPath `contains(@class, …)`
scan, costs about half of libxml2's own parse. So each thing is looked for where LaTeXML puts
it, and a whole-page XPath runs only when the raw bytes show the class exists at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from paperanchor.parse.dom import HtmlElement, classes

_GENERATOR = re.compile(r"by LaTeXML \(version ([^)]+)\)")
# LaTeXML nests the document at most a few containers below <body>.
_DOCUMENT_DEPTH = 6
# Front matter sits in the document's first levels, unless a broken conversion nested it.
_FRONT_DEPTH = 3
_SECTIONS = frozenset(
    {
        "ltx_section",
        "ltx_appendix",
        "ltx_bibliography",
        "ltx_chapter",
        "ltx_part",
        "ltx_subsection",
        "ltx_paragraph",
        "ltx_para",
    }
)


def _by_class(name: str) -> etree.XPath:
    return etree.XPath(f".//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]")


_ANY_DOCUMENT = _by_class("ltx_document")
_ANY_ERROR = _by_class("ltx_ERROR")
_ANY_AUTHOR = etree.XPath(
    ".//*[contains(concat(' ', normalize-space(@class), ' '), ' ltx_creator ')]"
    "[contains(concat(' ', normalize-space(@class), ' '), ' ltx_role_author ')]"
)
_ANY_ABSTRACT = _by_class("ltx_abstract")
_ANY_KEYWORDS = _by_class("ltx_keywords")


@dataclass
class PageScan:
    document: HtmlElement | None = None
    abstract: HtmlElement | None = None
    keywords: HtmlElement | None = None
    authors: list[HtmlElement] = field(default_factory=list)
    errors: list[HtmlElement] = field(default_factory=list)
    base_href: str | None = None
    title: HtmlElement | None = None
    generator: str | None = None


def _shallow(top: HtmlElement, depth: int) -> list[HtmlElement]:
    """Elements at most `depth` levels below `top`, in document order."""
    out: list[HtmlElement] = []
    stack = [(c, 1) for c in reversed(top) if type(c.tag) is str]
    while stack:
        node, level = stack.pop()
        out.append(node)
        if level < depth:
            stack.extend((c, level + 1) for c in reversed(node) if type(c.tag) is str)
    return out


def _first_with_class(top: HtmlElement, name: str, depth: int) -> HtmlElement | None:
    """Breadth first, so the search stops at the level where the element is."""
    level = [c for c in top if type(c.tag) is str]
    for _ in range(depth):
        for el in level:
            if name in classes(el):
                return el
        level = [c for el in level for c in el if type(c.tag) is str]
    return None


def scan(root: HtmlElement, raw: bytes) -> PageScan:
    found = PageScan()
    head = root.find("head")
    if head is not None:
        found.title = head.find("title")
        base = head.find("base")
        found.base_href = base.get("href") if base is not None else None
        for comment in head.iter(etree.Comment):
            match = _GENERATOR.search(comment.text or "")
            if match:
                found.generator = match.group(1)
                break
    body = root.find("body")
    found.document = _first_with_class(
        body if body is not None else root, "ltx_document", _DOCUMENT_DEPTH
    )
    if found.document is None and b"ltx_document" in raw:
        deep = _ANY_DOCUMENT(root)
        found.document = deep[0] if deep else None
    document = found.document
    if document is None:
        return found
    # front matter sits outside the sections: their contents need no look
    front: list[HtmlElement] = []
    for child in document:
        if type(child.tag) is str and not _SECTIONS.intersection(classes(child)):
            front.append(child)
            front.extend(_shallow(child, _FRONT_DEPTH - 1))
    for el in front:
        cls = classes(el)
        if "ltx_creator" in cls and "ltx_role_author" in cls:
            found.authors.append(el)
        elif found.abstract is None and "ltx_abstract" in cls:
            found.abstract = el
        elif found.keywords is None and "ltx_keywords" in cls:
            found.keywords = el
    if not found.authors and b"ltx_role_author" in raw:
        found.authors = list(_ANY_AUTHOR(document))
    if found.abstract is None and b"ltx_abstract" in raw:
        found.abstract = next(iter(_ANY_ABSTRACT(document)), None)
    if found.keywords is None and b"ltx_keywords" in raw:
        found.keywords = next(iter(_ANY_KEYWORDS(document)), None)
    if b"ltx_ERROR" in raw:
        found.errors = list(_ANY_ERROR(document))
    return found
