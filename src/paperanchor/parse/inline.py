"""Inline LaTeXML markup -> Markdown and plain text (math as `$TeX$`) in one walk."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from paperanchor.parse.context import MAX_INLINE_DEPTH, ParseContext
from paperanchor.parse.dom import (
    CHROME_CLASSES,
    CHROME_TAGS,
    HtmlElement,
    classes,
    math_tex,
    squash,
    text_of,
)
from paperanchor.render.escape import (
    destination,
    escape_label,
    escape_line_start,
    escape_text,
    math_markdown,
    note_label,
    safe_url,
)
from paperanchor.tree import Footnote, Inline

_SKIP_TAGS = CHROME_TAGS | {"svg"}
_EMPHASIS = (
    ("ltx_font_bold", "**"),
    ("ltx_font_italic", "*"),
    ("ltx_font_typewriter", "`"),
)
_TAG_EMPHASIS = {"b": "**", "strong": "**", "i": "*", "em": "*", "code": "`", "tt": "`"}
_SPACES = re.compile(r" {2,}")


@dataclass
class InlineResult:
    md: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    cites: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cell: bool = False
    markup: bool = False
    """Whether a piece is our markup (math, an image, a link, a note mark), not the page's."""
    opens_with_text: bool | None = None
    """Whether the first piece that is not blank is the page's words, which may need escaping
    where they start a line of Markdown."""

    def add(self, md: str, text: str | None = None) -> None:
        if self.opens_with_text is None and md.strip():
            self.opens_with_text = False
        self.markup = self.markup or bool(md.strip())
        self.md.append(md)
        self.text.append(md if text is None else text)

    def add_text(self, raw: str) -> None:
        """Words of the page, escaped in Markdown so that they stay text (render/escape.py)."""
        words = squash(raw)
        if self.opens_with_text is None and words.strip():
            self.opens_with_text = True
        escaped = escape_text(words)
        if escaped[:1] in ("(", "[") and self.md and self.md[-1].endswith("]"):
            # "[x]" then "(javascript:…)" in two runs of text (or after a note mark) would
            # join into a link: the opening bracket is escaped where the runs meet
            escaped = "\\" + escaped
        self.md.append(escaped)
        self.text.append(words)

    def add_inner(self, md: str, text: str, inner: InlineResult) -> None:
        """Pieces built from a nested result: the page's words stay words."""
        if self.opens_with_text is None and inner.opens_with_text is not None:
            self.opens_with_text = inner.opens_with_text
        self.markup = self.markup or inner.markup
        self.md.append(md)
        self.text.append(text)

    def inline(self) -> Inline:
        markdown = tidy("".join(self.md))
        if self.opens_with_text:
            markdown = escape_line_start(markdown)
        return Inline(markdown, tidy("".join(self.text)))


def tidy(text: str) -> str:
    """Trim the whitespace that joining runs leaves behind, without touching TeX."""
    return (_SPACES.sub(" ", text) if "  " in text else text).strip()


def inline_of(
    el: HtmlElement,
    ctx: ParseContext,
    *,
    skip: frozenset[str] = frozenset(),
    include_tail: bool = False,
    cell: bool = False,
) -> tuple[Inline, tuple[str, ...], tuple[str, ...]]:
    """Render an element's content; `skip` names classes whose elements are left out.

    In a table `cell`, display math stays inline so the row stays one line.
    """
    out = InlineResult(cell=cell)
    _content(el, ctx, out, skip)
    if include_tail and el.tail:
        out.add_text(el.tail)
    return out.inline(), tuple(dict.fromkeys(out.cites)), tuple(dict.fromkeys(out.notes))


def inline_of_elements(
    parts: list[HtmlElement | str], ctx: ParseContext
) -> tuple[Inline, tuple[str, ...], tuple[str, ...]]:
    """Render a run of sibling elements and text, each element with its own markup."""
    out = InlineResult()
    for part in parts:
        if isinstance(part, str):
            out.add_text(part)
        else:
            _element(part, ctx, out, frozenset())
    return out.inline(), tuple(dict.fromkeys(out.cites)), tuple(dict.fromkeys(out.notes))


def _content(el: HtmlElement, ctx: ParseContext, out: InlineResult, skip: frozenset[str]) -> None:
    if el.text:
        out.add_text(el.text)
    for child in el:
        if type(child.tag) is str:
            _element(child, ctx, out, skip)
        if child.tail:
            out.add_text(child.tail)


# What an element is to the inline walk, by its tag and class attribute (a page repeats a few
# hundred of those pairs: the decision is cached, not remade for each element).
_PLAIN, _SKIPPED, _MATH, _NOTE, _BR, _IMG, _CITE, _LINK, _CELL = range(9)


@functools.lru_cache(maxsize=8192)
def _kind(raw_tag: str, class_value: str | None) -> tuple[int, str | None]:
    tag = raw_tag.rpartition("}")[2].rpartition(":")[2].lower()
    cls = frozenset(class_value.split()) if class_value else frozenset()
    if tag in _SKIP_TAGS or not cls.isdisjoint(CHROME_CLASSES):
        return _SKIPPED, None
    if tag == "math":
        return _MATH, None
    if "ltx_note" in cls:
        return _NOTE, None
    simple = {"br": _BR, "img": _IMG, "cite": _CITE, "a": _LINK, "td": _CELL, "th": _CELL}
    if tag in simple:
        return simple[tag], None
    marker = _TAG_EMPHASIS.get(tag)
    if marker is None:
        marker = next((candidate for name, candidate in _EMPHASIS if name in cls), None)
    return _PLAIN, marker


def _element(el: HtmlElement, ctx: ParseContext, out: InlineResult, skip: frozenset[str]) -> None:
    kind, marker = _kind(el.tag, el.get("class"))
    if kind == _SKIPPED or (skip and not classes(el).isdisjoint(skip)):
        return
    if ctx.inline_depth >= MAX_INLINE_DEPTH:
        out.add_text(text_of(el))  # deeper than any real page: its words, without recursion
        return
    ctx.inline_depth += 1
    try:
        _markup(el, kind, marker, ctx, out, skip)
    finally:
        ctx.inline_depth -= 1


def _markup(
    el: HtmlElement,
    kind: int,
    marker: str | None,
    ctx: ParseContext,
    out: InlineResult,
    skip: frozenset[str],
) -> None:
    if kind == _MATH:
        tex = math_tex(el)
        if not tex:
            return
        # LaTeXML keeps text-mode `$…$` inside some annotations (units, \text{…$x$…}); inside
        # our math they would close it (render/escape.py math_markdown drops them)
        tex = math_markdown(tex)
        if not tex:  # `$$` would open a display
            return
        if el.get("display") == "block" and not out.cell:
            out.add(f" $${tex}$$ ", f"${tex}$")
        else:
            out.add(f"${tex}$")
        return
    if kind == _NOTE:
        _note(el, classes(el), ctx, out)
        return
    if kind == _BR:
        out.add(" ")
        return
    if kind == _IMG:
        src = safe_url(ctx.absolute(el.get("src") or ""))
        if src:
            out.add(f"![{escape_label(el.get('alt') or '')}]({destination(src)})", "")
        return
    if kind == _CITE:
        for ref in el.iter("a"):
            href = ref.get("href") or ""
            anchor = href.rpartition("#")[2]
            if anchor.startswith("bib."):
                out.cites.append(anchor)
        own = "".join([el.text or "", *(child.tail or "" for child in el)])
        outer, ctx.cite_bracketed = ctx.cite_bracketed, "[" in own or "(" in own
        try:
            _content(el, ctx, out, skip)
        finally:
            ctx.cite_bracketed = outer
        return
    if kind == _LINK:
        _link(el, classes(el), ctx, out, skip)
        return
    if kind == _CELL:
        out.add(" ")
        _content(el, ctx, out, skip)
        out.add(" ")
        return
    if marker is None:
        _content(el, ctx, out, skip)
        return
    inner = InlineResult(cell=out.cell)
    _content(el, ctx, inner, skip)
    out.cites.extend(inner.cites)
    out.notes.extend(inner.notes)
    md = "".join(inner.md)
    text = "".join(inner.text)
    if marker == "`":
        # A code span shows its content literally, so it holds the page's raw words; when
        # they hold a backtick or there is markup inside, the words stay escaped text.
        core = text.strip()
        if not core or inner.markup or "`" in core:
            out.add_inner(md, text, inner)
            return
        lead, trail = _edges(text)
        out.add(f"{lead}`{core}`{trail}", text)
        return
    core = md.strip()
    if not core:
        out.add_inner(md, text, inner)
        return
    lead, trail = _edges(md)
    out.add_inner(f"{lead}{marker}{core}{marker}{trail}", text, inner)


def _edges(text: str) -> tuple[str, str]:
    return text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]


def _link(
    el: HtmlElement, cls: frozenset[str], ctx: ParseContext, out: InlineResult, skip: frozenset[str]
) -> None:
    href = (el.get("href") or "").strip()
    inner = InlineResult(cell=out.cell)
    _content(el, ctx, inner, skip)
    out.cites.extend(inner.cites)
    out.notes.extend(inner.notes)
    md = tidy("".join(inner.md))
    text = "".join(inner.text)
    internal = "ltx_ref" in cls and "ltx_url" not in cls and "ltx_href" not in cls
    entry = ctx.bib_numbers.get(href.rpartition("#")[2]) if internal else None
    if entry is not None and _is_key(text, entry[1]):
        # A citation LaTeXML could not label prints the entry's key (and the comma of a missing
        # year): "(DBLP:journals/corr/SzegedyVISW15, )". The reader gets the entry's number,
        # in brackets when the citation has none of its own.
        number = entry[0] if ctx.cite_bracketed else f"[{entry[0]}]"
        out.add_inner(number, number, inner)
        return
    url = None if internal else safe_url(href)
    if url is None or not md:
        out.add_inner("".join(inner.md), text, inner)
        return
    out.markup = True
    if text.strip() == href and not inner.markup:
        out.add_inner(f"<{url}>", text, inner)
    else:
        out.add_inner(f"[{md}]({destination(url)})", text, inner)


def _alnum(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _is_key(link_text: str, printed: str) -> bool:
    """Whether a citation's link text is a BibTeX key rather than its entry's printed label:
    one word (DBLP:journals/corr/SzegedyVISW15, vaswani2017attention, 9762843) that is no
    part of the label the bibliography prints for the entry ("[12]", "Vaswani et al. (2017a)"),
    maybe with the ", " of an empty year after it."""
    word = link_text.strip().rstrip(",").strip()
    if not word or any(ch.isspace() for ch in word) or len(word) > 200:
        return False
    core = _alnum(word)
    return bool(core) and core not in _alnum(printed)


def _note(el: HtmlElement, cls: frozenset[str], ctx: ParseContext, out: InlineResult) -> None:
    """Footnotes become `[^mark]` with their text kept for the end of the section."""
    if "ltx_role_footnote" not in cls and "ltx_role_endnote" not in cls:
        return  # thanks, affiliations and margin notes are not body text
    mark = ""
    content_el = None
    for node in el.iter():
        if not isinstance(node.tag, str):
            continue
        ncls = node.get("class") or ""
        if not mark and "ltx_note_mark" in ncls:
            mark = text_of(node)
        elif content_el is None and "ltx_note_content" in ncls:
            content_el = node
    note_id = el.get("id") or ctx.positional_id("note", "n")
    mark = mark or note_id.removeprefix("footnote")
    if note_id not in ctx.footnotes:
        content = (
            inline_of(content_el, ctx, skip=frozenset({"ltx_note_mark", "ltx_tag_note"}))[0]
            if content_el is not None
            else Inline("", "")
        )
        ctx.footnotes[note_id] = Footnote(note_id, mark, content)
    out.notes.append(note_id)
    out.add(f"[^{note_label(mark)}]", "")
