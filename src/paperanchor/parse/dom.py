"""Small helpers over lxml elements; LaTeXML class names live in the parse package only."""

from __future__ import annotations

from typing import Any, TypeVar

from lxml import etree

HtmlElement = Any  # lxml's element type; kept loose because lxml ships no stable stubs

TEX = "application/x-tex"


_NO_CLASSES: frozenset[str] = frozenset()
# The walks' decisions are cached per (tag, class attribute), a few hundred pairs a page, at most
# 8,192 in all: a class attribute longer than this is decided each time, so that what the caches
# keep stays small whatever pages they have met.
CACHED_CLASS_CHARS = 256
CACHED_DECISIONS = 8192

K = TypeVar("K")
V = TypeVar("V")


def keep_decision(cache: dict[K, V], key: K, value: V, text: str | None) -> V:
    """`value`, kept in `cache` under `key` while the cache holds fewer than CACHED_DECISIONS
    entries and `text` (the class attribute or TeX it was decided from) is at most
    CACHED_CLASS_CHARS long: the one bound of the walks' decision caches."""
    if len(cache) < CACHED_DECISIONS and len(text or "") <= CACHED_CLASS_CHARS:
        cache[key] = value
    return value


# A class attribute's split, bounded as the decisions are: a dict, where functools.lru_cache's
# call cost more than the split it saved on a short attribute, and kept any attribute's length
_CLASS_SETS: dict[str, frozenset[str]] = {}


def _class_set(value: str) -> frozenset[str]:
    found = _CLASS_SETS.get(value)
    if found is None:
        found = keep_decision(_CLASS_SETS, value, frozenset(value.split()), value)
    return found


def classes(el: HtmlElement) -> frozenset[str]:
    """An element's classes; pages repeat a few hundred class strings, so splits are cached."""
    value = el.get("class")
    if not value:
        return _NO_CLASSES
    return _CLASS_SETS.get(value) or _class_set(value)


_LOCAL_TAGS: dict[str, str] = {}


def tag_of(el: HtmlElement) -> str:
    """The local tag name, lowercased, with any namespace dropped; '' for comments."""
    tag = el.tag
    if type(tag) is not str:
        return ""
    local = _LOCAL_TAGS.get(tag)
    if local is None:
        local = tag.rpartition("}")[2].rpartition(":")[2].lower()
        if len(_LOCAL_TAGS) < 4096:  # a page has a few dozen tag names; a hostile one, more
            _LOCAL_TAGS[tag] = local
    return local


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space (LaTeXML output is often re-indented)."""
    if "  " not in text and text.isprintable():
        return text  # the common case
    return squashed(text)


def squashed(text: str) -> str:
    """`squash` of a text that failed its test for the common case."""
    if text.isspace():
        return " "  # the indentation between elements, most of what comes here
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
        if semantics.tag != "semantics" and tag_of(semantics) != "semantics":  # the first test
            continue  # is the HTML parser's tag, the second any namespace or case
        for node in reversed(semantics):
            if node.get("encoding") == TEX and (
                node.tag == "annotation" or tag_of(node) == "annotation"
            ):
                return (node.text or "").strip()
    return (el.get("alttext") or "").strip()


def children(el: HtmlElement) -> list[HtmlElement]:
    # the element children only (no comments, processing instructions or entities), picked in C
    return list(el.iterchildren(etree.Element))


# What arXiv's site and scripts add to a page, wherever it sits: headers and footers, the
# navigation TOC, the licence/watermark infobox, dialogs and announcement banners, the
# "Report issue" buttons a browser-saved page carries inside the text (`sr-only`), the
# bibliography's "back to reference" arrows and the keyboard glossary. LaTeXML writes none of
# these tags inside a document, and its own page furniture has `ltx_page_*` classes.
CHROME_TAGS = frozenset(
    {
        "script",
        "style",
        "nav",
        "header",
        "footer",
        "button",
        "dialog",
        "form",
        "input",
        "select",
        "textarea",
        "noscript",
        "template",
        "link",
        "meta",
        "iframe",
    }
)
CHROME_CLASSES = frozenset(
    {
        "ltx_page_navbar",
        "ltx_page_header",
        "ltx_page_footer",
        "ltx_page_logo",
        "ltx_TOC",
        "sr-only",
        "package-alerts",
        "keyboard-glossary",
        "infobox",
        "ds-announcement",
        "ds-site-footer",
        "modal",
        "back-to-reference-btn",
        "html-header-message",
        "html-header-nav",
    }
)
CHROME_IDS = frozenset({"license-tr", "watermark-tr", "infobox", "target-section", "footer"})


def is_chrome(el: HtmlElement) -> bool:
    """Whether an element is site chrome (see CHROME_TAGS) rather than the paper's."""
    if tag_of(el) in CHROME_TAGS:
        return True
    value = el.get("class")
    if value and not _class_set(value).isdisjoint(CHROME_CLASSES):
        return True
    element_id = el.get("id")
    return element_id is not None and element_id in CHROME_IDS


def text_of(el: HtmlElement, limit: int = 1 << 20) -> str:
    """An element's text without chrome, squashed; at most `limit` characters are gathered.

    Iterative, so a hostile page's nesting costs no recursion.
    """
    if len(el) == 0 and limit > 0 and type(el.tag) is str:
        return squash(el.text or "")[:limit].strip()  # the walk's result for text alone
    out: list[str] = []
    size = 0
    stack: list[tuple[HtmlElement, bool]] = [(el, True)]
    while stack and size < limit:
        node, opening = stack.pop()
        if not opening:
            if node.tail:
                out.append(node.tail)
                size += len(node.tail)
            continue
        if node is not el and type(node.tag) is str and is_chrome(node):
            if node.tail:
                out.append(node.tail)
                size += len(node.tail)
            continue
        if node.text and type(node.tag) is str:
            out.append(node.text)
            size += len(node.text)
        if node is not el:
            stack.append((node, False))
        for child in reversed(node):
            if type(child.tag) is str:
                stack.append((child, True))
            elif child.tail:
                stack.append((child, False))
    return squash("".join(out))[:limit].strip()


_MATH_FURNITURE = frozenset({"annotation", "annotation-xml"})
# MathML's invisible operators (function application, times, separator, plus), dropped from
# printed text (front.py marks the ends of author names with them)
INVISIBLE = dict.fromkeys(range(0x2061, 0x2065))


def printed_text(el: HtmlElement) -> str:
    """An element's plain text as printed: math as its characters (`HNA` + `{}^{+}` + `17` is
    `HNA+17`), never its annotations (the llamapun `start_FLOATSUPERSCRIPT` words)."""
    # an element without children (most labels) holds no math: no iterator is built for it
    # (`{*}` takes no namespace too; the search is made in C)
    if not len(el) or next(el.iterdescendants("{*}math"), None) is None:
        return text_of(el)
    out: list[str] = []
    stack: list[tuple[HtmlElement, bool]] = [(el, True)]
    while stack and len(out) < 4096:
        node, opening = stack.pop()
        if not opening:
            out.append(node.tail or "")
            continue
        if node is not el:
            stack.append((node, False))
            if type(node.tag) is not str or tag_of(node) in _MATH_FURNITURE or is_chrome(node):
                continue
        out.append(node.text or "")
        stack.extend((child, True) for child in reversed(node))
    return squash("".join(out).translate(INVISIBLE)).strip()
