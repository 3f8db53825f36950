"""Small helpers over lxml elements; LaTeXML class names live in the parse package only."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

HtmlElement = Any  # lxml's element type; kept loose because lxml ships no stable stubs

_SPACE = re.compile(r"\s+")
TEX = "application/x-tex"


def classes(el: HtmlElement) -> set[str]:
    value = el.get("class")
    return set(value.split()) if value else set()


def has_class(el: HtmlElement, name: str) -> bool:
    value = el.get("class")
    return bool(value) and name in value.split()


def tag_of(el: HtmlElement) -> str:
    """The local tag name, lowercased, with any namespace dropped; '' for comments."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    if tag[0] == "{":
        tag = tag.rpartition("}")[2]
    return tag.rpartition(":")[2].lower()


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space (LaTeXML output is often re-indented)."""
    return _SPACE.sub(" ", text)


def math_tex(el: HtmlElement) -> str:
    """The TeX of a `math` element: its x-tex annotation, else its alttext.

    The annotation sits among the last children of `semantics`, so look there first
    instead of walking the MathML, which is most of a page's elements.
    """
    for semantics in el:
        if tag_of(semantics) != "semantics":
            continue
        for node in reversed(semantics):
            if node.get("encoding") == TEX and tag_of(node) == "annotation":
                return (node.text or "").strip()
    return (el.get("alttext") or "").strip()


def is_element(node: Any) -> bool:
    return isinstance(node, etree._Element) and isinstance(node.tag, str)


def children(el: HtmlElement) -> list[HtmlElement]:
    return [c for c in el if isinstance(c.tag, str)]


def plain_text(el: HtmlElement) -> str:
    return squash("".join(el.itertext())).strip()
