"""One pass over a page that finds what the parser needs to start: the document element,
front matter, conversion errors, `<base>` and the generator comment.

Profiled on the corpus: libxml2's XPath `contains(@class, …)` costs more than this walk in
Python with cached class sets, and five separate XPath scans cost five walks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from paperanchor.parse.dom import HtmlElement, classes

_GENERATOR = re.compile(r"by LaTeXML \(version ([^)]+)\)")


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


def scan(root: HtmlElement) -> PageScan:
    found = PageScan()
    for el in root.iter():
        tag = el.tag
        if type(tag) is not str:
            if found.generator is None and tag is etree.Comment:
                match = _GENERATOR.search(el.text or "")
                if match:
                    found.generator = match.group(1)
            continue
        value = el.get("class")
        if value is None:
            if tag == "base" and found.base_href is None:
                found.base_href = el.get("href")
            elif tag == "title" and found.title is None:
                found.title = el
            continue
        cls = classes(el)
        if found.document is None:
            if "ltx_document" in cls:
                found.document = el
            continue
        if "ltx_ERROR" in cls:
            found.errors.append(el)
        if "ltx_creator" in cls and "ltx_role_author" in cls:
            found.authors.append(el)
        elif found.abstract is None and "ltx_abstract" in cls:
            found.abstract = el
        elif found.keywords is None and "ltx_keywords" in cls:
            found.keywords = el
    return found
