"""Front matter: title without footnote marks, authors as names, abstract, keywords."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from paperanchor.errors import BadRequest
from paperanchor.parse.context import BlocksOf, ParseContext
from paperanchor.parse.dom import (
    INVISIBLE,
    HtmlElement,
    children,
    classes,
    squash,
    tag_of,
    text_of,
)
from paperanchor.parse.inline import inline_of
from paperanchor.refs import parse_ref
from paperanchor.render.escape import escape_text
from paperanchor.tree import Block, Inline, Section

# publication notes (ACM's conference, DOI, ISBN, CCS lines) sit inside the title element
_TITLE_SKIP = frozenset({"ltx_note", "ltx_note_mark", "ltx_tag", "ltx_pubnotes", "ltx_pubnote"})
_NAME_NOISE = frozenset(
    {
        "ltx_note",
        "ltx_contact",
        "ltx_role_email",
        "ltx_role_affiliation",
        "ltx_role_address",
        "ltx_author_notes",
        "ltx_note_mark",
        "ltx_ERROR",
    }
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# The page's own author separators: `\And` (NeurIPS, ICLR) prints "&" straight before the next
# name ("…cmu.edu &Skyler Seto") or opens a line ("& Mehreen Ahmed", 2510.11260v1), or is an
# undefined macro (`ltx_ERROR`) that `_lines` marks with _BREAK. Inside a line after the names,
# an "&" with a space after it is the affiliation's own ("Cosmo-Ufes & Universidade Federal").
_BREAK = "\u2063"
# What else of the markup ends a name, as `_lines` marks it in the text (invisible operators,
# which no name holds; the page's own are dropped): a superscript mark (`sup`, math) after it
# (_MARK), a top-level span or an en or em space (`\enspace`, `\quad`: "Laban \u2003Tobias
# Schnabel", 2604.15597v1) (_PIECE), an author's own tabular, whose first row is the name
# (_TABLE, agd).
_TABLE = "\u2061"
_PIECE = "\u2062"
_MARK = "\u2064"
_TEXT = {
    **INVISIBLE,
    0x2002: _PIECE,
    0x2003: _PIECE,
}
_AUTHOR_BREAK = re.compile(r"^\s*&|(?<!\S)&(?=\S)|\u2063|\\AND|\\And")
_NAME_SPLIT = re.compile(r"\s*(?:,|;|\band\b|&|[\u2061-\u2064]|\\AND|\\And|\\and)\s*")
_SEPARATOR_MACROS = frozenset({"\\And", "\\AND", "\\and"})
_NOT_A_NAME = re.compile(
    r"[@{}\\]|https?:|university|institute|department|school|college|"
    r"laboratory|lab\b|inc\.|corp|usa|china",
    re.IGNORECASE,
)
# A line of names ends each with a mark; an affiliation line opens with its mark.
_OPENS_WITH_MARK = re.compile(r"[\s,\u2061\u2062]*\u2064")
_NAME_THEN_MARK = re.compile(r"[^\s,\u2061-\u2064]\s*\u2064")
# IEEEtran's `\IEEEmembership{Member, IEEE}` between the names (2404.09516v1) is no name
_IEEE_GRADE = re.compile(
    r"(?:(?:life|senior|student|graduate|associate)\s+)*(?:member|fellow),?\s*ieee",
    re.IGNORECASE,
)


# How many elements of the document's first levels are looked through in Python for its title
_TITLE_LOOK = 256


def _h1s(document: HtmlElement) -> Iterator[HtmlElement]:
    """`document.iter("h1")` without lxml's look-ahead: an iterator with a tag finds its next
    match before it hands out the current one, so taking the title, the page's only `h1`,
    walked the whole page (3 to 5 ms on the large ones). The first elements are looked
    through here, which ends at the title; what is left of the page, by lxml, in order."""
    stack = [document]
    budget = _TITLE_LOOK
    while stack and budget:
        node = stack.pop()
        budget -= 1
        if node.tag == "h1":
            yield node
        stack.extend(c for c in reversed(node) if type(c.tag) is str)
    for node in reversed(stack):
        yield from node.iter("h1")


def parse_title(head_title: HtmlElement | None, document: HtmlElement, ctx: ParseContext) -> Inline:
    for el in _h1s(document):
        if "ltx_title_document" in classes(el) or "ltx_title" in classes(el):
            title = inline_of(el, ctx, skip=_TITLE_SKIP)[0]
            if title:
                return Inline(title.markdown, title.text)
    if head_title is not None:
        text = re.sub(r"^\[[^\]]+\]\s*", "", squash("".join(head_title.itertext())).strip())
        return Inline(escape_text(text), text)  # the page's words stay text
    return Inline("", "")


def parse_authors(creators: list[HtmlElement]) -> tuple[str, ...]:
    """Names only: affiliations after a line break, marks, notes and e-mails are dropped."""
    names: list[str] = []
    for creator in creators:
        for person in creator.iter():
            if isinstance(person.tag, str) and "ltx_personname" in classes(person):
                lines = _lines(person)
                if not lines:
                    break
                # The first line holds names, and so does each next line written like it;
                # after them a line starts another author only after an author separator
                # (`\And` prints as `&`), the rest being affiliations.
                shape = (_NAME_THEN_MARK.search(lines[0]) is not None, _TABLE in lines[0])
                count = 1
                while count < len(lines) and _more_names(lines[count - 1], lines[count], shape):
                    count += 1
                candidates = lines[:count]
                for line in lines[count:]:
                    candidates.extend(_AUTHOR_BREAK.split(line)[1:])
                for candidate in candidates:
                    names.extend(_names(candidate))
                break
    return tuple(dict.fromkeys(names))


def _more_names(previous: str, line: str, shape: tuple[bool, bool]) -> bool:
    """Whether a line after a break, following lines of names, holds names too: it is written
    like the first (its names end with marks, or it holds authors' tabulars, as the first line
    does: `shape`), or the list of names before the break goes on after a comma; an affiliation
    opens with its mark."""
    marked, tabular = shape
    if _OPENS_WITH_MARK.match(line):
        return False
    if tabular and _TABLE in line:
        return True
    if marked and _NAME_THEN_MARK.search(line):
        return True
    return previous.rstrip(f" {_PIECE}{_MARK}").endswith(",") and len(_names(previous)) > 1


# Bounds of what is read of one author's block; the largest in the corpus is 9 levels deep,
# 28 lines and 2,536 characters (an author block that lists every affiliation).
_NAME_DEPTH = 16
_NAME_LINES = 64
_NAME_CHARS = 4000
# An author's tabular finds its first row in its first few elements (tabular, tbody, row)
_ROW_LOOK = 8


def _lines(person: HtmlElement) -> list[str]:
    """The person-name text split at its own line breaks, with notes and contacts dropped and
    the ends of names marked (_MARK, _PIECE, _TABLE).

    Of an author's tabular only the first row is read, its name; the later rows are the
    affiliation.
    """
    lines: list[str] = [""]

    def add(text: str) -> None:
        text = text[:_NAME_CHARS]
        lines[-1] += text if text.isascii() else text.translate(_TEXT)

    def walk(node: HtmlElement, depth: int) -> None:
        if depth > _NAME_DEPTH:
            return  # no author's name is this deep: a hostile page's is cut here
        if node.text:
            add(node.text)
        for child in node:
            if len(lines) > _NAME_LINES or len(lines[-1]) > _NAME_CHARS:
                return  # nor this long
            if isinstance(child.tag, str):
                ccls = classes(child)
                tag = tag_of(child)
                if tag == "br" or "ltx_break" in ccls:
                    lines.append("")
                elif "ltx_ERROR" in ccls and (child.text or "").strip() in _SEPARATOR_MACROS:
                    lines[-1] += f" {_BREAK}"
                elif tag in ("sup", "math"):
                    lines[-1] += _MARK
                elif ccls & _NAME_NOISE or _is_grade(child):
                    pass
                elif "ltx_tabular" in ccls:
                    lines[-1] += _TABLE
                    row = _first_row(child)
                    if row is not None:
                        walk(row, depth + 1)
                    lines[-1] += _TABLE
                else:
                    walk(child, depth + 1)
                    if depth == 0:
                        lines[-1] += _PIECE
            if child.tail:
                add(child.tail)

    walk(person, 0)
    return [squash(line).strip() for line in lines if line.strip(" ,\n\t\u2061\u2062")]


def _first_row(table: HtmlElement) -> HtmlElement | None:
    for count, element in enumerate(table.iter()):
        if count > _ROW_LOOK:
            break
        if element.tag == "tr" or "ltx_tr" in classes(element):
            return element
    return None


def _is_grade(element: HtmlElement) -> bool:
    text = element.text
    return (
        len(element) == 0
        and text is not None
        and len(text) < 64
        and _IEEE_GRADE.fullmatch(text.strip()) is not None
    )


def _names(line: str) -> list[str]:
    out = []
    for part in _NAME_SPLIT.split(line):
        name = part.strip(" .,*†‡§¶∗")
        if not name or _NOT_A_NAME.search(name) or len(name.split()) > 5 or len(name) < 2:
            continue
        out.append(name)
    return out


def parse_abstract(
    element: HtmlElement | None, ctx: ParseContext, blocks_of: BlocksOf
) -> Section | None:
    if element is None:
        return None
    title = Inline("Abstract", "Abstract")
    blocks: list[Block] = []
    for child in children(element):
        if tag_of(child) in _HEADINGS and "ltx_title" in classes(child):
            heading = inline_of(child, ctx)[0]
            if heading:
                title = Inline(heading.markdown.rstrip(".:"), heading.text.rstrip(".:"))
            continue
        blocks.extend(blocks_of(child, ctx, "abstract"))
    return Section("abstract", "abstract", None, "", title, 1, tuple(blocks))


# Furniture is short; a hostile page's furniture is cut before any pattern looks at it.
_FURNITURE_CHARS = 2000
_WATERMARK = re.compile(r"^arXiv:\s*(\S{1,60}v[1-9]\d{0,3})\b", re.IGNORECASE | re.ASCII)
_BASE_IDV = re.compile(r"/html/(\S{1,60}v[1-9]\d{0,3})/?$", re.ASCII)


def parse_license(element: HtmlElement | None) -> str | None:
    """arXiv's licence line (`License: CC BY 4.0`) as the licence's name."""
    if element is None:
        return None
    text = text_of(element, _FURNITURE_CHARS)
    text = re.sub(r"^license\s*:\s*", "", text, flags=re.IGNORECASE).strip()
    return text or None


def page_idv(base_href: str | None, watermark: HtmlElement | None) -> str | None:
    """The arXiv idv a page names in its furniture: `<base href="/html/IDvN/">`, else the
    `arXiv:IDvN [category] date` watermark; never text of the body (contract §2, Versions)."""
    candidates: list[str] = []
    if base_href:
        path = urlsplit(base_href[:_FURNITURE_CHARS].strip()).path
        match = _BASE_IDV.search(path)
        if match:
            candidates.append(match[1])
    if watermark is not None:
        match = _WATERMARK.match(text_of(watermark, _FURNITURE_CHARS))
        if match:
            candidates.append(match[1])
    for candidate in candidates:
        try:
            ref = parse_ref(candidate)
        except BadRequest:
            continue
        if ref.version is not None:
            return ref.idv
    return None


def parse_keywords(element: HtmlElement | None, ctx: ParseContext) -> str | None:
    if element is None:
        return None
    return inline_of(element, ctx, skip=frozenset({"ltx_title"}))[0].text or None
