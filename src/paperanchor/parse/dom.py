"""Small helpers over lxml elements; LaTeXML class names live in the parse package only."""

from __future__ import annotations

import functools
from typing import Any

HtmlElement = Any  # lxml's element type; kept loose because lxml ships no stable stubs

TEX = "application/x-tex"


_NO_CLASSES: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=8192)
def _class_set(value: str) -> frozenset[str]:
    return frozenset(value.split())


def classes(el: HtmlElement) -> frozenset[str]:
    """An element's classes; pages repeat a few hundred class strings, so splits are cached."""
    value = el.get("class")
    return _class_set(value) if value else _NO_CLASSES


def tag_of(el: HtmlElement) -> str:
    """The local tag name, lowercased, with any namespace dropped; '' for comments."""
    tag = el.tag
    if type(tag) is not str:
        return ""
    if "}" in tag or ":" in tag:
        tag = tag.rpartition("}")[2].rpartition(":")[2]
    return tag if tag.islower() else tag.lower()


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space (LaTeXML output is often re-indented)."""
    if "  " not in text and text.isprintable():
        return text  # the common case
    core = " ".join(text.split())  # str.split is several times faster than a regex here
    if not core:
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return f"{lead}{core}{trail}"


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


def children(el: HtmlElement) -> list[HtmlElement]:
    return [c for c in el if isinstance(c.tag, str)]
