"""Block-level content: paragraphs, lists, theorem-like blocks, code, and the dispatcher."""

from __future__ import annotations

import re

from lxml import etree

from paperanchor.parse.context import MAX_BLOCK_DEPTH, OwnChild, ParseContext
from paperanchor.parse.dom import (
    CHROME_CLASSES,
    CHROME_IDS,
    CHROME_TAGS,
    HtmlElement,
    children,
    classes,
    is_chrome,
    math_tex,
    squash,
    tag_of,
    text_of,
)
from paperanchor.parse.equations import parse_equation, parse_group
from paperanchor.parse.floats import is_float, is_tabular, parse_float, parse_tabular
from paperanchor.parse.inline import NOTE_FURNITURE, inline_of, inline_of_elements
from paperanchor.parse.pictures import PICTURE_BLOCKS, picture_blocks
from paperanchor.parse.sections import parse_section, section_kind
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
_HAS_STRUCTURE = etree.XPath(
    "boolean(.//section | .//h1 | .//h2 | .//div[contains(concat(' ', @class, ' '), ' ltx_para ')])"
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


def blocks_of(el: HtmlElement, ctx: ParseContext, parent_id: str) -> list[Block]:
    """The blocks an element stands for: itself if it is a block, else its children's."""
    tag = tag_of(el)
    cls = classes(el)
    element_id = el.get("id")
    # skipped furniture and chrome (dom.is_chrome's test, its lookups made once here)
    if tag in _SKIP_TAGS or tag in CHROME_TAGS or not cls.isdisjoint(_SKIP_OR_CHROME):
        return []
    if "ltx_ERROR" in cls:
        # a conversion error standing alone holds the undefined macro's name only (counted by
        # the outline); inside a run of text the inline walk leaves it out (inline.py)
        return []
    if element_id is not None and (element_id in CHROME_IDS or not ctx.first_reading(element_id)):
        return []
    if el is ctx.abstract:
        return []  # read on its own; a broken page nests it in the body
    if ctx.block_depth >= MAX_BLOCK_DEPTH:
        return _flattened(el, ctx, parent_id)
    ctx.block_depth += 1
    try:
        if tag == "svg":
            return picture_blocks(el, ctx, parent_id, container_blocks)
        block = block_of(el, ctx, parent_id)
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

    if el.text and el.text.strip():
        loose.append(el.text)
    for child in el:
        if isinstance(child.tag, str):
            taken = own(child) if own is not None else None
            if taken is not None:
                flush()
                out.extend(taken)
            elif _is_block_element(child, ctx):
                flush()
                out.extend(blocks_of(child, ctx, parent_id))
            elif tag_of(child) == "svg":
                # a box of text is blocks in place; a drawing's labels are not read (pictures.py)
                boxed = blocks_of(child, ctx, parent_id)
                if boxed:
                    flush()
                    out.extend(boxed)
            else:  # not skipped: `_is_block_element` takes what is skipped as a block
                loose.append(child)
        if child.tail and child.tail.strip():
            loose.append(child.tail)
    flush()
    return out


def _loose_text(parts: list[HtmlElement | str], ctx: ParseContext, parent_id: str) -> Text | None:
    content, cites, notes = inline_of_elements(parts, ctx)
    if not content.markdown:
        return None
    return Text(ctx.positional_id(parent_id, "t"), content, cites, notes)


def _is_block_element(el: HtmlElement, ctx: ParseContext) -> bool:
    tag = tag_of(el)
    if tag in _SKIP_TAGS or is_chrome(el):
        return True
    cls = classes(el)
    if cls & _SKIP:
        return True
    if tag == "span":
        # a tabular among blocks is a table whatever its tags; in a picture, spans are blocks
        return "ltx_tabular" in cls or (
            ctx.picture_depth > 0 and not cls.isdisjoint(PICTURE_BLOCKS)
        )
    if cls & _TRANSPARENT and tag in ("div", "figure", "section"):
        return True
    if tag in (
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
    ):
        return True
    return (
        tag == "math"
        and el.get("display") == "block"
        and "ltx_para" in (el.getparent().get("class") or "")
    )


def block_of(el: HtmlElement, ctx: ParseContext, parent_id: str) -> Block | None:
    """One element as a block, or None when it is a container to look into."""
    tag = tag_of(el)
    cls = classes(el)
    if is_section(el):
        return parse_section(el, ctx, parent_id, blocks_of, container_blocks)
    if "ltx_para" in cls:
        para_id = el.get("id") or ctx.positional_id(parent_id, "p")
        return Paragraph(para_id, tuple(container_blocks(el, ctx, para_id)))
    if tag == "p" or "ltx_p" in cls:
        content, cites, notes = inline_of(el, ctx)
        return Text(el.get("id") or ctx.positional_id(parent_id, "t"), content, cites, notes)
    if tag == "table" and "ltx_equationgroup" in cls:
        if _EQUATION_ID.search(el.get("id") or ""):
            # a numbered multi-line equation: one number, rows that merely continue it
            return parse_equation(el, ctx, parent_id)
        return parse_group(el, ctx, parent_id)
    if tag == "table" and "ltx_equation" in cls:
        return parse_equation(el, ctx, parent_id)
    if is_float(el) and (tag == "figure" or not cls & {"ltx_flex_figure", "ltx_figure_panel"}):
        return parse_float(el, ctx, parent_id, blocks_of)
    if is_tabular(tag, cls):
        return parse_tabular(el, ctx, parent_id)
    if "ltx_theorem" in cls or "ltx_proof" in cls:
        return _theorem(el, cls, ctx, parent_id)
    if tag in ("ul", "ol", "dl") and (
        cls & {"ltx_itemize", "ltx_enumerate", "ltx_description"}
        or tag != "ul"
        or el.find("li") is not None
    ):
        return _list(el, tag, cls, ctx, parent_id)
    if "ltx_listing" in cls or tag == "pre" or ("ltx_verbatim" in cls and tag != "span"):
        if _HAS_STRUCTURE(el):
            return None  # a broken conversion swallowed the document into a listing
        return _code(el, ctx, parent_id)
    if tag == "blockquote" or "ltx_quote" in cls:
        quote_id = el.get("id") or ctx.positional_id(parent_id, "q")
        return Quote(quote_id, tuple(container_blocks(el, ctx, quote_id)))
    if tag == "math":
        return Equation(el.get("id") or ctx.positional_id(parent_id, "eq"), None, math_tex(el))
    if "ltx_note" in cls and cls & _FOOTNOTE_ROLES:
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
        if (
            label_el is None
            and tag_of(child) in ("h2", "h3", "h4", "h5", "h6")
            and "ltx_title" in classes(child)
        ):
            label_el = child
            continue
        rest.extend(blocks_of(child, ctx, block_id))
    label = inline_of(label_el, ctx)[0] if label_el is not None else Inline("", "")
    return Theorem(block_id, kind, label, tuple(rest))


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
            if not item_tag and "ltx_tag" in classes(part) and tag_of(part) == "span":
                item_tag = text_of(part)
                continue
            content.extend(blocks_of(part, ctx, item_id))
        if child.text and child.text.strip():
            content.insert(
                0,
                Text(
                    ctx.positional_id(item_id, "t"),
                    Inline(
                        escape_line_start(escape_text(squash(child.text).strip())),
                        squash(child.text).strip(),
                    ),
                ),
            )
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
