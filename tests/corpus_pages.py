"""The corpus pages the tests run over, read in place from ../shared/corpus (never copied)."""

from __future__ import annotations

import csv
import functools
import re
from pathlib import Path

from lxml import html as lxml_html

from paperanchor.parse import parse_document
from paperanchor.tree import Document
from tests.conftest import CORPUS

HTML_PAGES = sorted(p.name for p in (CORPUS / "html").glob("*.html"))
GENERATED_PAGES = sorted(p.name for p in (CORPUS / "generated").glob("*.html"))
ALL_PAGES = [f"html/{n}" for n in HTML_PAGES] + [f"generated/{n}" for n in GENERATED_PAGES]
PAIR_PAGES = sorted(f"pairs/{p.name}" for p in (CORPUS / "pairs").glob("*.html"))
# Conversions that died before the body, as the corpus README names them: failed renderings
# (contract §2), never papers. Every other page is a paper.
FAILED_PAGES = ["html/2608.30667v1.arxiv.html"]
PAPER_PAGES = [name for name in ALL_PAGES if name not in FAILED_PAGES]
HTML_PAPER_PAGES = [name.removeprefix("html/") for name in PAPER_PAGES if name.startswith("html/")]


def manifest() -> dict[str, dict[str, str]]:
    with (CORPUS / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        return {row["file"]: row for row in csv.DictReader(handle, delimiter="\t")}


def page_bytes(name: str) -> bytes:
    return (CORPUS / name).read_bytes()


@functools.cache
def parsed(name: str) -> Document:
    return parse_document(page_bytes(name), f"https://example.org/{name}")


@functools.cache
def page_root(name: str) -> lxml_html.HtmlElement:
    return lxml_html.fromstring(re.sub(rb"^\s*<\?xml[^>]*\?>", b"", page_bytes(name)))


def has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def fixture_path(name: str) -> Path:
    return Path(__file__).resolve().parent.parent / "fixtures" / "html" / f"{name}.html"


def section_page(body: str) -> bytes:
    """A crafted LaTeXML page: a title and section S1 ("1 A") holding `body`."""
    return (
        "<!DOCTYPE html><html><head></head><body><article class='ltx_document'>"
        "<h1 class='ltx_title ltx_title_document'>T</h1><section class='ltx_section' id='S1'>"
        f"<h2 class='ltx_title'>1 A</h2>{body}</section></article></body></html>"
    ).encode()
