"""Block-level content: paragraphs, lists, theorem-like blocks, code, and the dispatcher."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lxml import etree

from paperanchor.parse.context import MAX_BLOCK_DEPTH, OwnChild, ParseContext
from paperanchor.parse.dom import (
    CHROME_CLASSES,
    CHROME_IDS,
    CHROME_TAGS,
    HtmlElement,
    children,
    classes,
    keep_decision,
    math_tex,
    squash,
    tag_of,
    text_of,
)
from paperanchor.parse.equations import parse_equation, parse_group
from paperanchor.parse.floats import is_float_of, is_tabular, parse_float, parse_tabular
from paperanchor.parse.inline import NOTE_FURNITURE, inline_of, inline_of_elements
from paperanchor.parse.pictures import PICTURE_BLOCKS, picture_blocks
from paperanchor.parse.sections import parse_section, section_kind, section_kind_of
from paperanchor.render.escape import escape_line_start, escape_text
from paperanchor.tree import (
    Block,
    Code,
    Equation,
    Inline,
    ListBlock,
    ListItem,
    Paragraph,
    Quote,
    Text,
    Theorem,
)

_EQUATION_ID = re.compile(r"(?:^|\.)Ex?\d+$")
# One scan that stops at the first match (`[1]`), where a union of four searches scanned the
# listing four times whole: agd's swallowed document nests listings, each scanned again (a
# parse's length of libxml2's parse, all in this test).
_HAS_STRUCTURE = etree.XPath(
    "boolean(descendant::*[self::section or self::h1 or self::h2"
    " or (self::div and contains(concat(' ', @class, ' '), ' ltx_para '))][1])"
)
# Containers LaTeXML uses for layout only: their children are read as if they were ours.
_TRANSPARENT = frozenset(
    {
        "ltx_block",
        "ltx_logical-block",
        "ltx_inline-block",
        "ltx_flex_figure",
        "ltx_flex_cell",
        "ltx_minipage",
        "ltx_centering",
        "ltx_figure_panel",
    }
)
# LaTeXML's own furniture that is not content; site chrome is `dom.is_chrome`.
_SKIP = frozenset({"ltx_pagination", "ltx_rdf", "ltx_listing_data", "ltx_role_newpage"})
_SKIP_OR_CHROME = _SKIP | CHROME_CLASSES
_SKIP_TAGS = frozenset({"hr"})


def is_section(el: HtmlElement) -> bool:
    return section_kind(el) is not None


# How `block_of` reads an element, and whether `container_blocks` takes it as a block: decided
# by its tag and class attribute alone, once per pair (a page repeats a few hundred of them),
# not remade at each of the walk's tests.
(
    _SECTION,
    _PARA,
    _TEXT,
    _EQUATION_TABLE,
    _EQUATION,
    _FLOAT,
    _TABULAR,
    _THEOREM,
    _LIST,
    _LIST_IF_ITEMS,
    _CODE,
    _QUOTE,
    _MATH,
    _NOTE,
    _CONTAINER,
) = range(15)
_NOT_BLOCK, _BLOCK, _BLOCK_IN_PICTURE, _BLOCK_IF_DISPLAY = range(4)
_BLOCK_TAGS = frozenset(
    {
        "p",
        "div",
        "section",
        "figure",
        "table",
        "ul",
        "ol",
        "dl",
        "pre",
        "blockquote",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "article",
        "aside",
    }
)
_LIST_CLASSES = frozenset({"ltx_itemize", "ltx_enumerate", "ltx_description"})


@dataclass(frozen=True, slots=True)
class _Shape:
    tag: str
    cls: frozenset[str]
    skipped: bool
    """Furniture, chrome or a conversion error: no blocks at all."""
    reading: int
    fallback: int
    """The reading of a `ul` without list classes that has no `li` (`_LIST_IF_ITEMS`)."""
    block: int
    """Whether a container's walk takes it as a block (`_is_block_element`)."""


_SHAPES: dict[tuple[Any, str | None], _Shape] = {}


def _shape(el: HtmlElement) -> _Shape:
    key = (el.tag, el.get("class"))
    found = _SHAPES.get(key)
    if found is None:
        found = keep_decision(_SHAPES, key, _decide_shape(tag_of(el), classes(el)), key[1])
    return found


def _decide_shape(tag: str, cls: frozenset[str]) -> _Shape:
    # skipped furniture and chrome (dom.is_chrome's test but the id's), and a conversion error
    # standing alone, which holds the undefined macro's name only (counted by the outline);
    # inside a run of text the inline walk leaves it out (inline.py)
    skipped = (
        tag in _SKIP_TAGS
        or tag in CHROME_TAGS
        or not cls.isdisjoint(_SKIP_OR_CHROME)
        or "ltx_ERROR" in cls
    )
    readings = _readings(tag, cls)
    reading = next(readings)
    fallback = next(readings) if reading == _LIST_IF_ITEMS else _CONTAINER
    return _Shape(tag, cls, skipped, reading, fallback, _block_kind(tag, cls))


def _readings(tag: str, cls: frozenset[str]) -> Iterator[int]:
    """`block_of`'s readings of an element in the order it tries them."""
    if section_kind_of(tag, cls) is not None:
        yield _SECTION
    if "ltx_para" in cls:
        yield _PARA
    if tag == "p" or "ltx_p" in cls:
        yield _TEXT
    if tag == "table" and "ltx_equationgroup" in cls:
        yield _EQUATION_TABLE
    if tag == "table" and "ltx_equation" in cls:
        yield _EQUATION
    if is_float_of(tag, cls) and (
        tag == "figure" or not cls & {"ltx_flex_figure", "ltx_figure_panel"}
    ):
        yield _FLOAT
    if is_tabular(tag, cls):
        yield _TABULAR
    if "ltx_theorem" in cls or "ltx_proof" in cls:
        yield _THEOREM
    if tag in ("ul", "ol", "dl"):
        yield _LIST if cls & _LIST_CLASSES or tag != "ul" else _LIST_IF_ITEMS
    if "ltx_listing" in cls or tag == "pre" or ("ltx_verbatim" in cls and tag != "span"):
        yield _CODE
    if tag == "blockquote" or "ltx_quote" in cls:
        yield _QUOTE
    if tag == "math":
        yield _MATH
    if "ltx_note" in cls and cls & _FOOTNOTE_ROLES:
        yield _NOTE
    yield _CONTAINER


def _block_kind(tag: str, cls: frozenset[str]) -> int:
    if tag in _SKIP_TAGS or tag in CHROME_TAGS or not cls.isdisjoint(CHROME_CLASSES) or cls & _SKIP:
        return _BLOCK
    if tag == "span":
        # a tabular among blocks is a table whatever its tags; in a picture, spans are blocks
        if "ltx_tabular" in cls:
            return _BLOCK
        return _NOT_BLOCK if cls.isdisjoint(PICTURE_BLOCKS) else _BLOCK_IN_PICTURE
    if cls & _TRANSPARENT and tag in ("div", "figure", "section"):
        return _BLOCK
    if tag in _BLOCK_TAGS:
        return _BLOCK
    return _BLOCK_IF_DISPLAY if tag == "math" else _NOT_BLOCK


def blocks_of(
    el: HtmlElement, ctx: ParseContext, parent_id: str, shape: _Shape | None = None
) -> list[Block]:
    """The blocks an element stands for: itself if it is a block, else its children's
    (`shape`: its `_shape`, when the caller has it)."""
    if shape is None:
        shape = _shape(el)
    if shape.skipped:
        return []
    element_id = el.get("id")
    if element_id is not None and (element_id in CHROME_IDS or not ctx.first_reading(element_id)):
        return []
    if el is ctx.abstract:
        return []  # read on its own; a broken page nests it in the body
    if ctx.block_depth >= MAX_BLOCK_DEPTH:
        return _flattened(el, ctx, parent_id)
    ctx.block_depth += 1
    try:
        if shape.tag == "svg":
            return picture_blocks(el, ctx, parent_id, container_blocks)
        block = block_of(el, ctx, parent_id, shape, element_id)
        if block is None:
            return container_blocks(el, ctx, parent_id)
    finally:
        ctx.block_depth -= 1
    if isinstance(block, Text) and not block.content:
        return []
    return [block]


def _flattened(el: HtmlElement, ctx: ParseContext, parent_id: str) -> list[Block]:
    """What nests deeper than MAX_BLOCK_DEPTH, as one run of its text (read without recursion)."""
    words = text_of(el)
    if not words:
        return []
    text = Text(
        ctx.positional_id(parent_id, "t"), Inline(escape_line_start(escape_text(words)), words)
    )
    return [text]


def container_blocks(
    el: HtmlElement, ctx: ParseContext, parent_id: str, own: OwnChild | None = None
) -> list[Block]:
    """Blocks of a container's children, loose inline content kept as text runs; `own`
    reads the children its caller treats itself (a section's heading and bibliography)."""
    out: list[Block] = []
    loose: list[HtmlElement | str] = []

    def flush() -> None:
        if loose:
            text = _loose_text(loose, ctx, parent_id)
            if text is not None:
                out.append(text)
            loose.clear()

    # each text, tail and attribute read from lxml once: a read is a trip into the C tree, several
    # times the cost of the Python around it
    text = el.text
    if text and text.strip():
        loose.append(text)
    for child in el:
        if type(child.tag) is str:
            taken = own(child) if own is not None else None
            shape = _shape(child)
            if taken is not None:
                flush()
                out.extend(taken)
            elif _is_block_element(child, ctx, shape):
                flush()
                out.extend(blocks_of(child, ctx, parent_id, shape))
            elif shape.tag == "svg":
                # a box of text is blocks in place; a drawing's labels are not read (pictures.py)
                boxed = blocks_of(child, ctx, parent_id, shape)
                if boxed:
                    flush()
                    out.extend(boxed)
            else:  # not skipped: `_is_block_element` takes what is skipped as a block
                loose.append(child)
        tail = child.tail
        if tail and tail.strip():
            loose.append(tail)
    flush()
    return out


def _loose_text(parts: list[HtmlElement | str], ctx: ParseContext, parent_id: str) -> Text | None:
    content, cites, notes = inline_of_elements(parts, ctx)
    if not content.markdown:
        return None
    return Text(ctx.positional_id(parent_id, "t"), content, cites, notes)


def _is_block_element(el: HtmlElement, ctx: ParseContext, shape: _Shape) -> bool:
    kind = shape.block
    if kind == _BLOCK:
        return True
    element_id = el.get("id")
    if element_id is not None and element_id in CHROME_IDS:
        return True  # chrome by its id (dom.is_chrome): skipped as a block
    if kind == _BLOCK_IN_PICTURE:
        return ctx.picture_depth > 0
    return (
        kind == _BLOCK_IF_DISPLAY
        and el.get("display") == "block"
        and "ltx_para" in (el.getparent().get("class") or "")
    )


def block_of(
    el: HtmlElement, ctx: ParseContext, parent_id: str, shape: _Shape, element_id: str | None
) -> Block | None:
    """One element as a block, or None when it is a container to look into; `element_id` is
    its id attribute, read by the caller."""
    tag = shape.tag
    cls = shape.cls
    reading = shape.reading
    if reading == _LIST_IF_ITEMS:
        reading = _LIST if el.find("li") is not None else shape.fallback
    if reading == _SECTION:
        return parse_section(el, ctx, parent_id, blocks_of, container_blocks)
    if reading == _PARA:
        para_id = element_id or ctx.positional_id(parent_id, "p")
        return Paragraph(para_id, tuple(container_blocks(el, ctx, para_id)))
    if reading == _TEXT:
        content, cites, notes = inline_of(el, ctx)
        return Text(element_id or ctx.positional_id(parent_id, "t"), content, cites, notes)
    if reading == _EQUATION_TABLE:
        if _EQUATION_ID.search(element_id or ""):
            # a numbered multi-line equation: one number, rows that merely continue it
            return parse_equation(el, ctx, parent_id)
        return parse_group(el, ctx, parent_id)
    if reading == _EQUATION:
        return parse_equation(el, ctx, parent_id)
    if reading == _FLOAT:
        return parse_float(el, ctx, parent_id, blocks_of)
    if reading == _TABULAR:
        return parse_tabular(el, ctx, parent_id)
    if reading == _THEOREM:
        return _theorem(el, cls, ctx, parent_id)
    if reading == _LIST:
        return _list(el, tag, cls, ctx, parent_id)
    if reading == _CODE:
        if _HAS_STRUCTURE(el):
            return None  # a broken conversion swallowed the document into a listing
        return _code(el, ctx, parent_id)
    if reading == _QUOTE:
        quote_id = element_id or ctx.positional_id(parent_id, "q")
        return Quote(quote_id, tuple(container_blocks(el, ctx, quote_id)))
    if reading == _MATH:
        return Equation(element_id or ctx.positional_id(parent_id, "eq"), None, math_tex(el))
    if reading == _NOTE:
        return _loose_note(el, ctx, parent_id)
    return None


# A `\footnotetext` outside any paragraph (a title page's "These authors contributed
# equally") stands alone in LaTeXML's output: its mark and "footnotetext:" type are furniture
# that read as "11footnotetext: …" (2410.00260v2), its text is the paper's.
_FOOTNOTE_ROLES = frozenset({"ltx_role_footnotetext", "ltx_role_footnote"})


def _loose_note(el: HtmlElement, ctx: ParseContext, parent_id: str) -> Text:
    content_el = next(
        (n for n in el.iter() if "ltx_note_content" in (n.get("class") or "").split()), el
    )
    content, cites, notes = inline_of(content_el, ctx, skip=NOTE_FURNITURE)
    return Text(el.get("id") or ctx.positional_id(parent_id, "t"), content, cites, notes)


def _theorem(el: HtmlElement, cls: frozenset[str], ctx: ParseContext, parent_id: str) -> Theorem:
    block_id = el.get("id") or ctx.positional_id(parent_id, "thm")
    kind = (
        "proof"
        if "ltx_proof" in cls
        else next(
            (c.removeprefix("ltx_theorem_") for c in cls if c.startswith("ltx_theorem_")), "theorem"
        )
    )
    label_el = None
    rest: list[Block] = []
    for child in children(el):
        shape = _shape(child)
        if (
            label_el is None
            and shape.tag in ("h2", "h3", "h4", "h5", "h6")
            and "ltx_title" in shape.cls
        ):
            label_el = child
            continue
        rest.extend(blocks_of(child, ctx, block_id, shape))
    label = Inline("", "")
    cites: tuple[str, ...] = ()
    if label_el is not None:
        label, cites, _notes = inline_of(label_el, ctx)
    return Theorem(block_id, kind, label, tuple(rest), cites)


def _list(
    el: HtmlElement, tag: str, cls: frozenset[str], ctx: ParseContext, parent_id: str
) -> ListBlock:
    list_id = el.get("id") or ctx.positional_id(parent_id, "l")
    items: list[ListItem] = []
    pending_tag = ""
    for child in children(el):
        ctag = tag_of(child)
        if ctag == "dt":
            pending_tag = text_of(child)
            continue
        if ctag not in ("li", "dd"):
            continue
        item_id = child.get("id") or ctx.positional_id(list_id, "i")
        item_tag = pending_tag
        pending_tag = ""
        content: list[Block] = []
        for part in children(child):
            shape = _shape(part)
            if not item_tag and "ltx_tag" in shape.cls and shape.tag == "span":
                item_tag = text_of(part)
                continue
            content.extend(blocks_of(part, ctx, item_id, shape))
        lead = squash(child.text or "").strip()
        if lead:
            lead_id = ctx.positional_id(item_id, "t")
            content.insert(0, Text(lead_id, Inline(escape_line_start(escape_text(lead)), lead)))
        items.append(ListItem(item_id, item_tag, tuple(content)))
    ordered = tag == "ol" or "ltx_enumerate" in cls
    return ListBlock(list_id, ordered, tuple(items))


_LAYOUT_NEWLINE = re.compile(r"(?<=\S)\n(?=[ \t\n]*\S)")


def _code(el: HtmlElement, ctx: ParseContext, parent_id: str) -> Code:
    code_id = el.get("id") or ctx.positional_id(parent_id, "code")
    lines = [n for n in el.iter() if "ltx_listingline" in (n.get("class") or "").split()]
    if lines:
        # a listing line is one line: the source's own newlines inside it are layout, and one
        # between two words is a space (2410.00260v2's "training data\n<b>return</b>")
        rendered = [
            _LAYOUT_NEWLINE.sub(" ", "".join(_text_without_line_numbers(line)))
            .replace("\u00a0", " ")
            .replace("\n", "")
            .rstrip()
            for line in lines
        ]
        return Code(code_id, "\n".join(rendered))
    text = "".join(_text_without_line_numbers(el)).replace("\u00a0", " ")
    return Code(code_id, text.strip("\n"))


def _text_without_line_numbers(el: HtmlElement) -> list[str]:
    """A listing line's text as printed (spacing kept), math as `$TeX$`, line numbers dropped.

    Iterative: a listing is verbatim, and a hostile one may nest as deep as it likes.
    """
    out: list[str] = []
    # (element, True) opens it: its text, then its children; (element, False) gives its tail
    stack: list[tuple[HtmlElement, bool]] = [(el, True)]
    while stack:
        node, opening = stack.pop()
        if not opening:
            if node.tail:
                out.append(node.tail)
            continue
        if node is not el:
            stack.append((node, False))
            if type(node.tag) is not str:
                continue
            if tag_of(node) == "math":
                tex = math_tex(node)
                out.append(f"${tex}$" if tex else "")
                continue
            if tag_of(node) == "svg" or "ltx_tag_listingline" in (node.get("class") or ""):
                continue
        if node.text:
            out.append(node.text)
        stack.extend((child, True) for child in reversed(node))
    return out
