"""Find what the parser needs before the walk: the document element, front matter,
conversion errors, `<base>`, `<title>` and the generator comment.

Profiled on the corpus: a Python walk over every element, or an XPath `contains(@class, …)`
scan, costs about half of libxml2's own parse. So each thing is looked for where LaTeXML puts
it, and a whole-page XPath runs only when the raw bytes show the class exists at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from paperanchor.parse.dom import HtmlElement, classes, is_chrome, tag_of

# "by LaTeXML (version 0.8.8)" or, since arXiv's 2026 regeneration, "by LaTeXML oxide (version
# 0.7.6)": the generator is "0.8.8" or "oxide 0.7.6".
_GENERATOR = re.compile(r"by LaTeXML (?:(oxide) )?\(version ([^)]{1,40})\)")
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


class _ByClass:
    """Elements with a class, in document order: libxml2's plain substring test first (about
    four times cheaper than normalizing every class attribute in XPath), then the exact class.
    The test is made on the class attributes themselves, whose parents are the elements: half
    the cost of a predicate on every element (`.//*[contains(@class, …)]`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._candidates = etree.XPath(f"descendant::*/@class[contains(., '{name}')]/..")

    def __call__(self, top: HtmlElement) -> list[HtmlElement]:
        return [el for el in self._candidates(top) if self.name in classes(el)]


def _by_class(name: str) -> _ByClass:
    return _ByClass(name)


_ANY_DOCUMENT = _by_class("ltx_document")
_SEARCHES: dict[tuple[str, ...], Any] = {}


def _by_classes(top: HtmlElement, names: tuple[str, ...]) -> dict[str, list[HtmlElement]]:
    """`_ByClass` of several classes in one scan of the page: each class's elements in
    document order (a broken conversion needs three of them, each a scan of the page)."""
    found: dict[str, list[HtmlElement]] = {name: [] for name in names}
    if not names:
        return found
    search = _SEARCHES.get(names)
    if search is None:
        test = " or ".join(f"contains(., '{name}')" for name in names)
        search = _SEARCHES[names] = etree.XPath(f"descendant::*/@class[{test}]/..")
    for el in search(top):
        cls = classes(el)
        for name in names:
            if name in cls:
                found[name].append(el)
    return found


@dataclass
class PageScan:
    document: HtmlElement | None = None
    abstract: HtmlElement | None = None
    keywords: HtmlElement | None = None
    authors: list[HtmlElement] = field(default_factory=list)
    errors: list[HtmlElement] = field(default_factory=list)
    base_href: str | None = None
    page_url: str | None = None
    """The address the page gives for itself: its `og:url`, else its canonical link."""
    ar5iv_styles: bool = False
    """Whether the head links ar5iv's own stylesheets (`/assets/ar5iv….css`): ar5iv served it."""
    title: HtmlElement | None = None
    generator: str | None = None
    license: HtmlElement | None = None
    watermark: HtmlElement | None = None
    biblists: list[HtmlElement] = field(default_factory=list)
    """The bibliography's entry lists (`ul`/`ol.ltx_biblist`), in document order."""


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


# Classes of what a paper's document element holds directly (or one level down in a
# wrapper): its title, front matter, sections or paragraphs. The report-errors footer and
# the package-alerts banner a browser-saved page carries hold none of them.
_PAPER_PARTS = frozenset(
    {
        "ltx_title_document",
        "ltx_authors",
        "ltx_abstract",
        "ltx_section",
        "ltx_chapter",
        "ltx_part",
        "ltx_appendix",
        "ltx_bibliography",
        "ltx_para",
        "ltx_paragraph",
        "ltx_subsection",
    }
)


def _holds_paper(el: HtmlElement) -> bool:
    for child in el:
        if type(child.tag) is not str:
            continue
        if not _PAPER_PARTS.isdisjoint(classes(child)):
            return True
        for grandchild in child:
            if type(grandchild.tag) is str and not _PAPER_PARTS.isdisjoint(classes(grandchild)):
                return True
    return False


def _find_document(top: HtmlElement, raw: bytes, found: PageScan) -> None:
    """The paper's `ltx_document` element, decided by structure, and the page furniture.

    Browser-saved arXiv pages have three elements of class `ltx_document`: a package-alerts
    banner, the article, and a `footer#footer` holding the report-errors help. The paper is
    the one that holds the title and body, not in site chrome; an `article` wins a tie.
    Breadth first over the first levels, looking into chrome only for the licence and
    watermark, so the cost is bounded by the page's top levels.
    """
    candidates: list[HtmlElement] = []
    level = [(c, False) for c in top if type(c.tag) is str]
    for _ in range(_DOCUMENT_DEPTH):
        below: list[tuple[HtmlElement, bool]] = []
        # once both are found, chrome holds nothing more to look for (an arXiv page's
        # header, banners and footer are most of a short page's top levels)
        into_chrome = found.license is None or found.watermark is None
        for el, in_chrome in level:
            element_id = el.get("id")
            if element_id == "license-tr" and found.license is None:
                found.license = el
            elif element_id == "watermark-tr" and found.watermark is None:
                found.watermark = el
            chrome = in_chrome or is_chrome(el)
            if chrome and not into_chrome:
                continue
            if "ltx_document" in classes(el):
                if not chrome:
                    candidates.append(el)
                continue  # a document's inside is the paper's, not furniture
            below.extend((c, chrome) for c in el if type(c.tag) is str)
        level = below
    if not candidates and b"ltx_document" in raw:
        candidates = [el for el in _ANY_DOCUMENT(top) if not _in_chrome(el)]
    if candidates:
        best = max(
            range(len(candidates)),
            key=lambda i: (_holds_paper(candidates[i]), tag_of(candidates[i]) == "article", -i),
        )
        found.document = candidates[best]


def _in_chrome(el: HtmlElement) -> bool:
    return is_chrome(el) or any(is_chrome(a) for a in el.iterancestors())


# A head holds a few dozen elements; a hostile one is read this far and no further.
_HEAD_ELEMENTS = 200


def _own_address(head: HtmlElement, found: PageScan) -> None:
    """Where the page says it came from: `og:url`, the canonical link, ar5iv's stylesheets."""
    og_url = canonical = None
    for index, el in enumerate(head):
        if index >= _HEAD_ELEMENTS:
            break
        tag = tag_of(el)
        if tag == "meta" and og_url is None and el.get("property") == "og:url":
            og_url = el.get("content")
        elif tag == "link":
            rel = (el.get("rel") or "").lower().split()
            href = el.get("href") or ""
            if "canonical" in rel and canonical is None:
                canonical = href
            elif "stylesheet" in rel and href.startswith("/assets/ar5iv"):
                found.ar5iv_styles = True
    found.page_url = og_url or canonical


def scan(root: HtmlElement, raw: bytes) -> PageScan:
    found = PageScan()
    head = root.find("head")
    if head is not None:
        found.title = head.find("title")
        base = head.find("base")
        found.base_href = base.get("href") if base is not None else None
        _own_address(head, found)
        for comment in head.iter(etree.Comment):
            match = _GENERATOR.search((comment.text or "")[:1000])
            if match:
                flavour, number = match.groups()
                found.generator = f"{flavour} {number}" if flavour else number
                break
    body = root.find("body")
    _find_document(body if body is not None else root, raw, found)
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
    names: list[str] = []
    if not found.authors and b"ltx_role_author" in raw:
        names.append("ltx_creator")
    if found.abstract is None and b"ltx_abstract" in raw:
        names.append("ltx_abstract")
    if found.keywords is None and b"ltx_keywords" in raw:
        names.append("ltx_keywords")
    if b"ltx_ERROR" in raw:
        names.append("ltx_ERROR")
    if b"ltx_biblist" in raw:
        # LaTeXML puts the bibliography at the top level: its lists are found without a search
        # of the whole page (which cost as much as a tenth of libxml2's parse); a broken
        # conversion that nested it elsewhere has it searched with the rest, in the same scan
        found.biblists = [
            child
            for section in document
            if type(section.tag) is str and "ltx_bibliography" in classes(section)
            for child in section
            if type(child.tag) is str and "ltx_biblist" in classes(child)
        ]
        if not found.biblists:
            names.append("ltx_biblist")
    anywhere = _by_classes(document, tuple(names))
    if "ltx_biblist" in anywhere:
        found.biblists = [el for el in anywhere["ltx_biblist"] if el.tag in ("ul", "ol")]
    if "ltx_creator" in anywhere:
        found.authors = [el for el in anywhere["ltx_creator"] if "ltx_role_author" in classes(el)]
    if "ltx_abstract" in anywhere:
        found.abstract = next(iter(anywhere["ltx_abstract"]), None)
    if "ltx_keywords" in anywhere:
        found.keywords = next(iter(anywhere["ltx_keywords"]), None)
    found.errors = anywhere.get("ltx_ERROR", [])
    return found
