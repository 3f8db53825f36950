"""Text drawn inside pictures: the boxes LaTeXML draws as an `svg.ltx_picture` (tcolorbox-like
boxes, `\\fbox`ed minipages, prompt and chat transcripts) hold their paragraphs, equations and
lists in `foreignObject`s, written with spans where a page would use `div` and `p`."""

from __future__ import annotations

from collections.abc import Callable

from paperanchor.parse.context import ParseContext
from paperanchor.parse.dom import HtmlElement, classes, tag_of
from paperanchor.tree import Block

# Spans that are blocks inside a picture's foreignObject; outside one, LaTeXML's spans are
# inline content. The minipage and container classes are layout: their children are read.
PICTURE_BLOCKS = frozenset(
    {
        "ltx_para",
        "ltx_p",
        "ltx_inline-para",
        "ltx_inline-block",
        "ltx_minipage",
        "ltx_foreignobject_container",
        "ltx_foreignobject_content",
    }
)
# What makes a picture a box of text: a paragraph, a display, a list, code or a tabular in one
# of its foreignObjects. A picture whose foreignObjects hold only math or a few words is a
# drawing (a graph's node names, a diagram's axis labels): those are the drawing's, as the words
# in an image are, and are not read as the paper's text.
_TEXT_CLASSES = frozenset(
    {
        "ltx_p",
        "ltx_para",
        "ltx_equation",
        "ltx_equationgroup",
        "ltx_itemize",
        "ltx_enumerate",
        "ltx_description",
        "ltx_verbatim",
        "ltx_listing",
        "ltx_tabular",
    }
)
_TEXT_TAGS = frozenset({"p", "pre", "ul", "ol", "dl"})
_FOREIGN = "foreignobject"

ContainerBlocks = Callable[[HtmlElement, ParseContext, str], list[Block]]


def foreign_objects(picture: HtmlElement) -> list[HtmlElement]:
    """The picture's foreignObjects in document order; a picture inside one is that one's.

    libxml2 finds them (a drawing is thousands of paths, a Python walk of them costs more than
    the rest of its figure); one is the picture's own when the nearest foreignObject above it
    is the one above the picture itself.
    """
    found = list(picture.iter(_FOREIGN))
    if len(found) < 2:
        return found
    above = next(picture.iterancestors(_FOREIGN), None)
    return [f for f in found if next(f.iterancestors(_FOREIGN), None) is above]


def _holds_text(foreign: HtmlElement) -> bool:
    for node in foreign.iter():
        if type(node.tag) is not str:
            continue
        if tag_of(node) in _TEXT_TAGS or not classes(node).isdisjoint(_TEXT_CLASSES):
            return True
    return False


def text_boxes(picture: HtmlElement) -> list[HtmlElement]:
    """The foreignObjects to read when the picture is a box of text; none for a drawing."""
    found = foreign_objects(picture)
    return found if any(_holds_text(f) for f in found) else []


def picture_blocks(
    picture: HtmlElement, ctx: ParseContext, parent_id: str, container: ContainerBlocks
) -> list[Block]:
    """A box of text's blocks in reading order (`container` reads one foreignObject)."""
    boxes = text_boxes(picture)
    if not boxes:
        return []
    picture_id = picture.get("id") or parent_id
    out: list[Block] = []
    ctx.picture_depth += 1
    try:
        for box in boxes:
            out.extend(container(box, ctx, picture_id))
    finally:
        ctx.picture_depth -= 1
    return out
