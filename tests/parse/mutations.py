"""Mutations of LaTeXML pages for fuzzing the parser (hypothesis here, atheris in `make soak`)."""

from __future__ import annotations

import copy
import random

from lxml import etree

_PARSER = etree.HTMLParser(encoding="utf-8")
KINDS = (
    "delete",
    "duplicate",
    "reorder",
    "truncate",
    "random-bytes",
    "deep-nesting",
    "drop-ids",
    "duplicate-ids",
    "splice-bytes",
    "strip-classes",
)


def mutate(page: bytes, kind: str, rng: random.Random) -> bytes:
    """One mutation of `page`; every kind keeps some of the page, so the parser has work."""
    if kind == "truncate":
        return page[: rng.randrange(len(page) + 1)]
    if kind == "random-bytes":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096)))
    if kind == "splice-bytes":
        at = rng.randrange(len(page) + 1)
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 256)))
        return page[:at] + noise + page[at + rng.randrange(64) :]
    root = etree.fromstring(page, _PARSER)
    elements = [el for el in root.iter() if isinstance(el.tag, str) and el.getparent() is not None]
    if not elements:
        return page
    for _ in range(rng.randrange(1, 6)):
        el = rng.choice(elements)
        parent = el.getparent()
        if parent is None:
            continue
        if kind == "delete":
            parent.remove(el)
        elif kind == "duplicate":
            parent.insert(parent.index(el), copy.deepcopy(el))
        elif kind == "reorder":
            siblings = list(parent)
            rng.shuffle(siblings)
            for child in siblings:
                parent.remove(child)
                parent.append(child)
        elif kind == "deep-nesting":
            depth = rng.randrange(50, 3000)
            wrapper = etree.Element(rng.choice(["div", "section", "span"]))
            wrapper.set("class", rng.choice(["ltx_para", "ltx_section", "ltx_block", "ltx_text"]))
            inner = wrapper
            for _ in range(depth):
                inner = etree.SubElement(
                    inner,
                    rng.choice(["div", "span", "section"]),
                    {
                        "class": rng.choice(
                            ["ltx_para", "ltx_section", "ltx_text ltx_font_bold", ""]
                        )
                    },
                )
            inner.text = "deep"
            parent.insert(parent.index(el), wrapper)
        elif kind == "drop-ids":
            for node in el.iter():
                if isinstance(node.tag, str):
                    node.attrib.pop("id", None)
        elif kind == "duplicate-ids":
            other = rng.choice(elements)
            if other.get("id"):
                el.set("id", other.get("id"))
        elif kind == "strip-classes":
            for node in el.iter():
                if isinstance(node.tag, str):
                    node.attrib.pop("class", None)
    return etree.tostring(root, encoding="utf-8", method="html")


def huge_paragraph(megabytes: int = 10) -> bytes:
    """A LaTeXML page with one paragraph of `megabytes` MB of text."""
    words = (b"lorem ipsum dolor sit amet " * (megabytes * 1024 * 1024 // 27 + 1))[
        : megabytes * 1024 * 1024
    ]
    return (
        b'<html><body><article class="ltx_document"><h1 class="ltx_title ltx_title_document">'
        b'Huge</h1><section class="ltx_section" id="S1"><h2 class="ltx_title">1 Big</h2>'
        b'<div class="ltx_para" id="S1.p1"><p class="ltx_p" id="S1.p1.1">'
        + words
        + b"</p></div></section></article></body></html>"
    )
