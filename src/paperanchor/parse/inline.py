"""Inline LaTeXML markup -> Markdown and plain text (math as `$TeX$`) in one walk."""

from __future__ import annotations

import re

from paperanchor.parse.context import MAX_INLINE_DEPTH, ParseContext
from paperanchor.parse.dom import (
    CHROME_CLASSES,
    CHROME_TAGS,
    HtmlElement,
    keep_decision,
    math_tex,
    printed_text,
    squash,
    squashed,
    text_of,
)
from paperanchor.parse.pictures import text_boxes
from paperanchor.render.escape import (
    ESCAPE_MAY_CHANGE,
    destination,
    escape_label,
    escape_line_start,
    escape_text,
    math_markdown,
    may_need_escape,
    note_label,
    safe_url,
)
from paperanchor.tree import EMPTY, Footnote, Inline

_SKIP_TAGS = CHROME_TAGS
_SPAN_CELLS = frozenset({"ltx_td", "ltx_th"})
_EMPHASIS = (
    ("ltx_font_bold", "**"),
    ("ltx_font_italic", "*"),
    ("ltx_font_typewriter", "`"),
)
_TAG_EMPHASIS = {"b": "**", "strong": "**", "i": "*", "em": "*", "code": "`", "tt": "`"}
_SPACES = re.compile(r" {2,}")


class InlineResult:
    """The pieces of one run of inline content, as Markdown and as plain text."""

    # A plain class, not a dataclass: a page makes one for each run, link and emphasis (25,000
    # over the corpus), and the generated __init__ with its default factories cost twice this.
    __slots__ = ("cell", "cites", "code", "markup", "md", "notes", "opens_with_text", "text")

    def __init__(
        self, cell: bool = False, code: bool = False, outer: InlineResult | None = None
    ) -> None:
        self.md: list[str] = []
        self.text: list[str] = []
        # a nested result (a link's text, an emphasis) adds its citations and notes to its outer
        # result's lists, in the order they are met, as if they were the outer's own
        self.cites: list[str] = outer.cites if outer is not None else []
        self.notes: list[str] = outer.notes if outer is not None else []
        self.cell = cell
        self.code = code
        """Inside a code span: a backslash there is the page's text, not conversion debris."""
        self.markup = False
        """Whether a piece is our markup (math, an image, a link, a note mark), not the page's."""
        self.opens_with_text: bool | None = None
        """Whether the first piece that is not blank is the page's words, which may need
        escaping where they start a line of Markdown."""

    def add(self, md: str, text: str | None = None) -> None:
        if md and not md.isspace():  # md.strip(), without the copy
            self.markup = True
            if self.opens_with_text is None:
                self.opens_with_text = False
        self.md.append(md)
        self.text.append(md if text is None else text)

    def add_text(self, raw: str) -> None:
        """Words of the page, escaped in Markdown so that they stay text (render/escape.py)."""
        words = raw if "  " not in raw and raw.isprintable() else squashed(raw)  # squash's test
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
        # two results in three have the same pieces in both (no escape, emphasis or link): the
        # lists compare by identity of their strings first, so the test costs less than a join
        text = markdown if self.md == self.text else tidy("".join(self.text))
        if self.opens_with_text:
            markdown = escape_line_start(markdown)
        return Inline(markdown, text)


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
    if len(el) == 0 and not include_tail:
        return _text_only(el.text, ctx), (), ()
    out = InlineResult(cell=cell)
    _content(el, ctx, out, skip)
    if include_tail and el.tail:
        _words(el.tail, ctx, out)
    return out.inline(), _unique(out.cites), _unique(out.notes)


def _text_only(raw: str | None, ctx: ParseContext) -> Inline:
    """What the walk makes of an element that holds text and no element (most table cells,
    a third of all inline content), made without it."""
    if not raw:
        return EMPTY
    if "\\" in raw or "@" in raw:
        cleaned = _cleaned(raw, ctx)
        if cleaned is None:
            return EMPTY
        raw = cleaned
    words = squash(raw)
    if _plain(words):  # nothing to escape; squashed, so tidy only strips
        text = words.strip()
        return Inline(escape_line_start(text), text) if text else EMPTY
    markdown = tidy(escape_text(words))
    if words.strip():  # the page's words open it (InlineResult.opens_with_text)
        markdown = escape_line_start(markdown)
    return Inline(markdown, tidy(words))


def _unique(ids: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids)) if ids else ()


def inline_of_elements(
    parts: list[HtmlElement | str], ctx: ParseContext
) -> tuple[Inline, tuple[str, ...], tuple[str, ...]]:
    """Render a run of sibling elements and text, each element with its own markup."""
    out = InlineResult()
    after_error = False
    for part in parts:
        if isinstance(part, str):
            _words(without_error_arguments(part) if after_error else part, ctx, out)
            after_error = False
        else:
            after_error = _element(part, ctx, out, frozenset())
    return out.inline(), _unique(out.cites), _unique(out.notes)


def _content(el: HtmlElement, ctx: ParseContext, out: InlineResult, skip: frozenset[str]) -> None:
    # the walk's innermost loop (most of a page's elements pass here): `_element` written out,
    # the element's kind looked up without a call
    text = el.text
    if text:
        _words(text, ctx, out)
    for child in el:
        tail = child.tail
        tag = child.tag
        if type(tag) is str:
            class_value = child.get("class")
            kind, marker, cls = _KINDS.get((tag, class_value)) or _kind(tag, class_value)
            if kind == _ERROR:
                if tail:
                    tail = without_error_arguments(tail)
            elif kind != _SKIPPED and not (skip and not cls.isdisjoint(skip)):
                if ctx.inline_depth >= MAX_INLINE_DEPTH:
                    out.add_text(text_of(child))  # deeper than any real page: its words
                elif kind == _PLAIN and marker is None and not len(child):
                    if child.text:  # a span of text alone, a fifth of the elements here
                        _words(child.text, ctx, out)
                elif kind == _MATH:
                    _math(child, out)  # nothing nests below it
                else:
                    ctx.inline_depth += 1
                    try:
                        if kind == _PLAIN and marker is None:
                            _content(child, ctx, out, skip)  # a span of text: its content
                        else:
                            _markup(child, kind, marker, cls, ctx, out, skip)
                    finally:
                        ctx.inline_depth -= 1
        if tail:
            _words(tail, ctx, out)


# LaTeX conversion debris: a control word left as text (`\@slowromancapi@` in a title,
# `\hdashline` in a cell), outside math and code, where a word starts. Two letters at least,
# and not inside a word: prose quotes escapes such as "\n" (2401.16380v1, 2304.08177) and
# paths such as "C:\path". Linear: one pass, no nested quantifier.
_CONTROL_WORD = re.compile(r"(?<![^\s{(])\\@?[A-Za-z@]{2,}")
# The optional argument an undefined macro leaves behind it (`\printindex[columns=2, intoc]`
# prints "[columns=2, intoc]"; `\cellcolor[HTML]{E19898}` prints "[HTML]E19898", 1,990 times on
# 2604.15597v1): bounded, so that a hostile tail costs one short match.
_ERROR_OPTIONS = re.compile(r"\s*\[(?:HTML\]\s*[0-9A-Fa-f]{6}(?![0-9A-Za-z])|[^\[\]]{0,200}\])")
# ... or the internal name it was given (`\pdfcolInitStack{tcb@breakable}` prints
# "tcb@breakable", 2401.16380v1): a word with an "@" inside, no address (no dot after it).
_ERROR_INTERNAL = re.compile(r"\s*[A-Za-z]{1,40}@[A-Za-z@]{1,40}(?![.\w])")


# What escape_text or the debris rules (a backslash, an "@") may act on in a squashed run of text
_PLAIN_RUN = re.compile(f"{ESCAPE_MAY_CHANGE}|@")


# the characters the patterns begin with, as one set: the alternatives above scan four times
# slower than a set, and most runs hold none of these characters
_MARK_CHARS = re.compile(r"[\\`*~$<&_@\[\]]")
_SHORT_RUN = 48  # escape._LONG_TEXT: a longer run is asked character by character


def _plain(words: str) -> bool:
    """Whether a squashed run of text is its own Markdown and holds no conversion debris."""
    if len(words) < _SHORT_RUN:
        if _MARK_CHARS.search(words) is None:  # one scan, without the calls below
            return True
    elif "@" not in words and not may_need_escape(words):
        return True
    return _PLAIN_RUN.search(words) is None


# the characters that would open a link after a "]" (add_text)
_OPENERS = frozenset("([")


def _words(raw: str, ctx: ParseContext, out: InlineResult) -> None:
    """The page's words, conversion debris left out and counted as errors where it stands."""
    # add_text's work, done here for a run that needs no escape and holds no debris (nine runs
    # in ten): its squashed words are its Markdown
    if "  " not in raw and raw.isprintable():
        words = raw
    elif raw.isspace():  # the indentation between elements (half the runs squash changes)
        out.md.append(" ")
        out.text.append(" ")
        return
    else:
        words = squashed(raw)
    if _plain(words):
        if out.opens_with_text is None and words and not words.isspace():
            out.opens_with_text = True
        md = out.md
        if words[:1] in _OPENERS and md and md[-1].endswith("]"):
            md.append("\\" + words)  # as add_text does
        else:
            md.append(words)
        out.text.append(words)
        return
    if not out.code and ("\\" in raw or "@" in raw):
        cleaned = _cleaned(raw, ctx)
        if cleaned is None:
            return
        raw = cleaned
    out.add_text(raw)


def _cleaned(raw: str, ctx: ParseContext) -> str | None:
    """A run of text outside code without conversion debris, each piece counted; None when
    the run is an internal name standing alone, where an undefined macro left its argument."""
    if "\\" in raw:
        raw, found = _CONTROL_WORD.subn("", raw)
        ctx.residue += found
    if "@" in raw and _ERROR_INTERNAL.fullmatch(raw.strip()) is not None:
        ctx.residue += 1
        return None
    return raw


def is_internal_name(text: str) -> bool:
    """Whether a run of text is only an internal name an undefined macro left (`tcb@breakable`)."""
    return "@" in text and _ERROR_INTERNAL.fullmatch(text.strip()) is not None


def without_error_arguments(tail: str) -> str:
    """The text after an `ltx_ERROR` element without the undefined macro's arguments."""
    match = (_ERROR_OPTIONS if tail.lstrip().startswith("[") else _ERROR_INTERNAL).match(tail)
    return tail[match.end() :] if match else tail


# What an element is to the inline walk, by its tag and class attribute (a page repeats a few
# hundred of those pairs: the decision is cached, not remade for each element).
_PLAIN, _SKIPPED, _MATH, _NOTE, _BR, _IMG, _CITE, _LINK, _CELL, _PICTURE, _ERROR = range(11)


# (kind, emphasis marker, classes): the classes too, so that no reading asks lxml for them again
_Kind = tuple[int, str | None, frozenset[str]]
_KINDS: dict[tuple[str, str | None], _Kind] = {}


def _kind(raw_tag: str, class_value: str | None) -> _Kind:
    found = _KINDS.get((raw_tag, class_value))
    if found is None:
        key = (raw_tag, class_value)
        found = keep_decision(_KINDS, key, _decide_kind(raw_tag, class_value), class_value)
    return found


def _decide_kind(raw_tag: str, class_value: str | None) -> _Kind:
    tag = raw_tag.rpartition("}")[2].rpartition(":")[2].lower()
    cls = frozenset(class_value.split()) if class_value else frozenset()
    kind, marker = _kind_of(tag, cls)
    return kind, marker, cls


def _kind_of(tag: str, cls: frozenset[str]) -> tuple[int, str | None]:
    if tag in _SKIP_TAGS or not cls.isdisjoint(CHROME_CLASSES):
        return _SKIPPED, None
    if "ltx_ERROR" in cls:
        # a conversion error holds the undefined macro's name (`\\cellcolor`, `{titemize}`,
        # every one in the corpus): counted by the outline, never the paper's text
        return _ERROR, None
    if tag == "math":
        return _MATH, None
    if tag == "svg":
        return _PICTURE, None
    if "ltx_note" in cls:
        return _NOTE, None
    simple = {"br": _BR, "img": _IMG, "cite": _CITE, "a": _LINK, "td": _CELL, "th": _CELL}
    if tag in simple:
        return simple[tag], None
    if tag == "span" and not cls.isdisjoint(_SPAN_CELLS):
        return _CELL, None  # a cell of a tabular written in spans (floats._SPAN_CELLS)
    marker = _TAG_EMPHASIS.get(tag)
    if marker is None:
        marker = next((candidate for name, candidate in _EMPHASIS if name in cls), None)
    return _PLAIN, marker


def _element(el: HtmlElement, ctx: ParseContext, out: InlineResult, skip: frozenset[str]) -> bool:
    """Render one element into `out`; whether it was a conversion error."""
    kind, marker, cls = _kind(el.tag, el.get("class"))
    if kind == _ERROR:
        return True
    if kind == _SKIPPED or (skip and not cls.isdisjoint(skip)):
        return False
    if ctx.inline_depth >= MAX_INLINE_DEPTH:
        out.add_text(text_of(el))  # deeper than any real page: its words, without recursion
        return False
    ctx.inline_depth += 1
    try:
        _markup(el, kind, marker, cls, ctx, out, skip)
    finally:
        ctx.inline_depth -= 1
    return False


def _markup(
    el: HtmlElement,
    kind: int,
    marker: str | None,
    cls: frozenset[str],
    ctx: ParseContext,
    out: InlineResult,
    skip: frozenset[str],
) -> None:
    if kind == _MATH:
        _math(el, out)
        return
    if kind == _NOTE:
        _note(el, cls, ctx, out)
        return
    if kind == _BR:
        out.add(" ")
        return
    if kind == _IMG:
        src = ctx.absolute(el.get("src") or "")
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
        _link(el, cls, ctx, out, skip)
        return
    if kind == _CELL:
        out.add(" ")
        _content(el, ctx, out, skip)
        out.add(" ")
        return
    if kind == _PICTURE:
        # a box of text inside a line or a cell keeps its words there; a drawing has none
        for box in text_boxes(el):
            out.add(" ")
            _content(box, ctx, out, skip)
            out.add(" ")
        return
    if marker is None:
        _content(el, ctx, out, skip)
        return
    inner = InlineResult(out.cell, out.code or marker == "`", out)
    _content(el, ctx, inner, skip)
    md = "".join(inner.md)
    text = md if inner.md == inner.text else "".join(inner.text)  # as InlineResult.inline
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


# math_markdown of each TeX string met, bounded: a page repeats its symbols (9k formulas, 3k
# distinct TeX strings over the corpus)
_MATH_MARKDOWN: dict[str, str] = {}


def _math(el: HtmlElement, out: InlineResult) -> None:
    tex = math_tex(el)
    if not tex:
        return
    # LaTeXML keeps text-mode `$…$` inside some annotations (units, \text{…$x$…}); inside
    # our math they would close it (render/escape.py math_markdown drops them)
    markdown = _MATH_MARKDOWN.get(tex)
    if markdown is None:
        markdown = keep_decision(_MATH_MARKDOWN, tex, math_markdown(tex), tex)
    if not markdown:  # `$$` would open a display
        return
    if not out.cell and el.get("display") == "block":
        out.add(f" $${markdown}$$ ", f"${markdown}$")
    else:
        out.add(f"${markdown}$")


def _edges(text: str) -> tuple[str, str]:
    return text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]


def _link(
    el: HtmlElement, cls: frozenset[str], ctx: ParseContext, out: InlineResult, skip: frozenset[str]
) -> None:
    href = (el.get("href") or "").strip()
    inner = InlineResult(out.cell, out.code, out)
    _content(el, ctx, inner, skip)
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
    if (
        entry is not None
        and inner.markup
        and _alnum(printed := printed_text(el)) == _alnum(entry[1])
    ):
        # an alphabetic label with math in it ("HNA" + `{}^{+}` + "17") prints as the
        # bibliography prints it: its characters, "HNA+17"
        label = escape_text(printed)
        out.add_inner(label, printed, inner)
        return
    url = None if internal else safe_url(href)
    md = tidy("".join(inner.md)) if url is not None else ""
    if url is None or not md:
        out.add_inner(text if inner.md == inner.text else "".join(inner.md), text, inner)
        return
    out.markup = True
    if text.strip() == href and not inner.markup:
        out.add_inner(f"<{url}>", text, inner)
    else:
        out.add_inner(f"[{md}]({destination(url)})", text, inner)


def _alnum(text: str) -> str:
    return "".join(filter(str.isalnum, text.lower()))


def _is_key(link_text: str, printed: str) -> bool:
    """Whether a citation's link text is a BibTeX key rather than its entry's printed label:
    one word (DBLP:journals/corr/SzegedyVISW15, vaswani2017attention, 9762843) that is no
    part of the label the bibliography prints for the entry ("[12]", "Vaswani et al. (2017a)"),
    maybe with the ", " of an empty year after it."""
    word = link_text.strip().rstrip(",").strip()
    if not word or len(word) > 200 or len(word.split()) > 1:  # empty, long, or words
        return False
    core = _alnum(word)
    return bool(core) and core not in _alnum(printed)


# What LaTeXML prints inside a note besides its text: the mark, the tag and the note's type
# ("footnotetext: "), none of them the paper's words.
NOTE_FURNITURE = frozenset({"ltx_note_mark", "ltx_tag_note", "ltx_note_type"})


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
        content = Inline("", "")
        cites: tuple[str, ...] = ()
        if content_el is not None:
            content, cites, _notes = inline_of(content_el, ctx, skip=NOTE_FURNITURE)
        ctx.footnotes[note_id] = Footnote(note_id, mark, content)
        # its citations are the paragraph's where it is read, once (a mark repeated a thousand
        # times costs no thousand copies of them)
        out.cites.extend(cites)
    out.notes.append(note_id)
    out.add(f"[^{note_label(mark)}]", "")
