"""A real paper grown to any size: its numbered sections repeated under fresh ids.

Memory tests and benchmarks need a page as large as the largest arXiv renders (tens of MB)
with the structure of a real one (sections, paragraphs, math, figures, tables, a
bibliography), not one giant paragraph.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from lxml import etree

from tests.conftest import CORPUS

SOURCE = "2501.11120v1.arxiv.html"
_SECTION_ID = re.compile(r"^S(\d+)(?=\.|$)")


def large_page(megabytes: float, *, title: str = "Large", source: Path | None = None) -> bytes:
    """A LaTeXML page of at least `megabytes` MB: `source`'s numbered sections, repeated."""
    path = source or CORPUS / "html" / SOURCE
    root = etree.fromstring(path.read_bytes(), etree.HTMLParser(encoding="utf-8", huge_tree=True))
    article = root.find(".//article")
    assert article is not None, path
    sections = [s for s in article if s.get("class") == "ltx_section" and _number(s) is not None]
    heading = article.find(".//h1")
    if heading is not None:
        heading.text, heading[:] = title, []
    anchor = sections[-1]
    one = sum(len(etree.tostring(s)) for s in sections)
    count = _number(sections[-1]) or 1
    copies = max(0, int(megabytes * 1024 * 1024 / one))
    for n in range(1, copies):
        for section in sections:
            clone = copy.deepcopy(section)
            for element in clone.iter():
                node_id = element.get("id")
                if node_id is not None:
                    element.set("id", _shifted(node_id, n * count))
            anchor.addnext(clone)
            anchor = clone
    return b"<!DOCTYPE html>\n" + etree.tostring(root, method="html", encoding="utf-8")


def _shifted(node_id: str, shift: int) -> str:
    return _SECTION_ID.sub(lambda m: f"S{int(m[1]) + shift}", node_id)


def _number(section: etree._Element) -> int | None:
    match = _SECTION_ID.match(section.get("id") or "")
    return int(match[1]) if match else None
