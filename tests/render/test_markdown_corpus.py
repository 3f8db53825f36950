"""The whole-paper Markdown of every corpus page keeps everything the page has, counted
against the page itself with lxml (independently of the parser): every body paragraph, every
display equation's TeX inside `$$` (as render/escape.py math_markdown writes it), every table
as a pipe table, every bibliography entry, every top-level section as a heading; and no
MathML text, no page chrome."""

from __future__ import annotations

import re

import pytest

from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse.dom import math_tex
from paperanchor.parse.inline import is_internal_name
from paperanchor.render.escape import math_markdown
from tests.corpus_pages import PAPER_PAGES, has_class, page_root, parsed
from tests.parse.test_corpus import CHROME, MATHML_LEAKS

# Math spans of our Markdown; a `\$` is a dollar of the page's text, never a delimiter.
_MATH_MD = re.compile(r"(?<!\\)\$\$.*?\$\$|(?<!\\)\$(?:[^$\\]|\\.)*\$", re.DOTALL)
# A link's or image's destination, `(url)` or `(<url>)` when the URL has parentheses.
_LINK_TARGET = re.compile(r"\]\((?:<[^>\s]*>|[^)\s]*)\)")
# the `<` our Markdown writes as an entity (render/escape.py), not `\&lt;`, the paper's own text
_LT = re.compile(r"(?<!\\)&lt;")
_IMAGE = re.compile(r"!\[(?:\\.|[^\]\\])*\]\((?:<[^>\s]*>|[^)\s]*)\)")
_NOTE_MARK = re.compile(r"\[\^[^\]]*\]")
# `\$` is a dollar of the page's text: `\$$x$` is that dollar and inline math, not a display.
_DISPLAY_OPEN = re.compile(r"(?<!(?<!\\)\\)\$\$")
_DISPLAY = re.compile(r"(?<!(?<!\\)\\)\$\$(.*?)\$\$", re.DOTALL)
# MathML's text: math-italic letters and the llamapun words a converter leaks.
_MATH_ALPHANUMERIC = re.compile("[\U0001d400-\U0001d7ff]")


def _alnum(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _entry_numbers(root) -> dict[str, tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Bibliography entry id -> (its printed tag, the number contract §5 gives it)."""
    found: dict[str, tuple[str, str]] = {}
    for biblist in root.xpath(f"//*[{has_class('ltx_biblist')}]"):
        for position, item in enumerate(biblist.xpath("./li"), 1):
            tag = "".join(item.xpath(f"./*[{has_class('ltx_tag')}]//text()")).strip()
            numeric = re.fullmatch(r"\[?\s*[\w.\-]{1,8}\s*\]?", tag)
            found[item.get("id") or ""] = (tag, tag.strip("[] ") if numeric else str(position))
    return found


def _page_text(el, entries=None) -> str:  # type: ignore[no-untyped-def]
    """An element's words as a reader sees them, without math, notes or pictures; with
    `entries`, a citation whose link text is not its entry's printed label (a BibTeX key,
    contract §3) reads as the entry's number."""
    out: list[str] = []

    def walk(node) -> None:  # type: ignore[no-untyped-def]
        if node.text:
            out.append(node.text)
        for child in node:
            if isinstance(child.tag, str):
                cls = (child.get("class") or "").split()
                tag = child.tag.rpartition("}")[2].lower()
                target = (child.get("href") or "").rpartition("#")[2]
                if entries and tag == "a" and target in entries:
                    printed, number = entries[target]
                    words = child.text_content().strip().rstrip(",").split()
                    key = len(words) == 1 and _alnum(words[0]) not in _alnum(printed)
                    out.append(number if key else child.text_content())
                elif "ltx_ERROR" in cls:
                    # a conversion error holds the undefined macro's name ("{mdframed}",
                    # "\\xpatchcmd"): counted by the outline, not the paper's text
                    pass
                elif tag not in ("math", "svg", "img") and "ltx_note" not in cls:
                    walk(child)
            if child.tail:
                out.append(child.tail)

    walk(el)
    return "".join(out)


def _markdown_words(markdown: str) -> str:
    text = _IMAGE.sub(" ", _LT.sub("<", markdown))
    text = _NOTE_MARK.sub(" ", text)
    text = _MATH_MD.sub(" ", text)
    text = _LINK_TARGET.sub("]", text)
    return _alnum(text)


def _markdown(name: str) -> str:
    return Paper.open(LoadedPaper(parsed(name), f"local/{name}", f"local/{name}")).markdown()


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_body_paragraph_is_kept(name: str) -> None:
    root = page_root(name)
    words = _markdown_words(_markdown(name))
    paragraphs = root.xpath(
        f"//*[{has_class('ltx_document')}]//p[{has_class('ltx_p')}]"
        f"[not(ancestor::figure)][not(ancestor::*[{has_class('ltx_note')}])]"
        f"[not(ancestor::*[{has_class('ltx_authors')}])]"
    )
    assert paragraphs
    entries = _entry_numbers(root)
    missing = [
        p.get("id") or _page_text(p)[:60]
        for p in paragraphs
        if _alnum(_page_text(p, entries)) not in words and not is_internal_name(_page_text(p))
    ]
    assert not missing, missing[:5]


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_display_equation_keeps_its_tex_verbatim_inside_double_dollars(name: str) -> None:
    root = page_root(name)
    markdown = _markdown(name)
    displays = _DISPLAY.findall(markdown)
    inside = "\n".join(displays)
    equations = root.xpath(
        f"//table[{has_class('ltx_equation')} or {has_class('ltx_equationgroup')}]"
        f"[not(ancestor::table[{has_class('ltx_equationgroup')}])]"
    )
    checked = 0
    for table in equations:
        for math in table.iter("{*}math", "math"):
            # as render/escape.py math_markdown writes it: one line, no tag, link or `$` of its own
            tex = math_markdown(math_tex(math))
            if tex:
                assert tex in inside, (table.get("id"), tex[:80])
                checked += 1
    assert checked >= len(equations) - sum(1 for t in equations if not t.xpath(".//math"))
    page_tex = sorted(
        (math_markdown(math_tex(m)) for t in equations for m in t.iter("{*}math", "math")),
        key=len,
        reverse=True,
    )
    for display in displays:
        # no inline `$` nested inside a display, other than the page's own TeX has
        rest = display
        for tex in page_tex:
            rest = rest.replace(tex, "")
        assert "$" not in rest.replace("\\$", ""), display[:80]


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_table_is_a_pipe_table(name: str) -> None:
    root = page_root(name)
    markdown = _markdown(name)
    tables = [
        t
        for t in root.xpath(f"//figure[{has_class('ltx_table')}]")
        if t.xpath(f".//table[{has_class('ltx_tabular')}]")
        and not t.xpath(f"ancestor::figure[{has_class('ltx_table')}]")
    ]
    separators = re.findall(r"^\|(?:---\|)+$", markdown, flags=re.MULTILINE)
    assert len(separators) >= len(tables)
    for line in markdown.splitlines():
        if line.startswith("|"):
            assert not _DISPLAY_OPEN.search(line)  # equations never become table rows


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_bibliography_entry_is_kept(name: str) -> None:
    root = page_root(name)
    words = _markdown_words(_markdown(name))
    for item in root.xpath(f"//li[{has_class('ltx_bibitem')}]"):
        blocks = item.xpath(f".//*[{has_class('ltx_bibblock')}]") or [item]
        for block in blocks:
            assert _alnum(_page_text(block)) in words, item.get("id")


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_top_level_section_is_a_heading(name: str) -> None:
    root = page_root(name)
    markdown = _markdown(name)
    headings = [_markdown_words(line) for line in markdown.splitlines() if line.startswith("#")]
    document = root.xpath(f"//*[{has_class('ltx_document')}]")[0]
    kinds = ("ltx_section", "ltx_appendix", "ltx_bibliography")
    for child in document:
        if not isinstance(child.tag, str):
            continue
        cls = (child.get("class") or "").split()
        if not any(k in cls for k in kinds):
            continue
        title = child.xpath(f"./*[{has_class('ltx_title')}]")
        words = _alnum(_page_text(title[0])) if title else ""
        assert any(words in h for h in headings), (child.get("id"), words)


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_no_mathml_text_and_no_page_chrome(name: str) -> None:
    markdown = _markdown(name)
    for leak in MATHML_LEAKS + CHROME:
        assert leak not in markdown, leak
    outside_math = _MATH_MD.sub(" ", markdown)
    page_tex = " ".join(math_tex(m) for m in page_root(name).iter("{*}math", "math"))
    if not _MATH_ALPHANUMERIC.search(page_tex):
        assert not _MATH_ALPHANUMERIC.search(outside_math), _MATH_ALPHANUMERIC.findall(
            outside_math
        )[:5]
