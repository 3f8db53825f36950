"""Tree -> HTML for the section page (SPEC §6): the walk and rules of render/markdown.py, for a
person in a browser, with math as MathML and no JavaScript.

Inline content is kept in the tree as Markdown in which every metacharacter of the paper's text
is escaped (render/escape.py), so that a CommonMark renderer reads back exactly the paper's
words (tests/render/test_escape.py). That is how it becomes HTML here: markdown-it-py with raw
HTML off and links limited to http(s), its `$…$` read by the dollar-math rule and drawn by
render/mathml.py. Everything else (ids, figures, tables, lists, theorems, footnotes) comes from
the tree, and every string is escaped on the way out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from paperanchor.render.escape import note_label, safe_url
from paperanchor.render.markdown import block_chunks, notes_in
from paperanchor.render.mathml import MathBudget, mathml
from paperanchor.tree import (
    Bibliography,
    Code,
    Document,
    Equation,
    EquationGroup,
    Figure,
    Footnote,
    ListBlock,
    Node,
    Paragraph,
    Quote,
    Reference,
    Section,
    Table,
    Text,
    Theorem,
    child_nodes,
)

# A page stops adding blocks past this many characters of HTML and says where the rest is (the
# Markdown route). The largest corpus section, 1311.0066's section 4, is 260,000 characters as
# HTML (its MathML is most of it); a page of a hostile paper stays a few megabytes.
MAX_PAGE_CHARS = 4_000_000

_BULLETS = ("•", "∙", "◦", "–", "-", "*", "▪", "⋅")
# Markdown that needs the renderer: anything else is the paper's words, escaped as they are.
_MARKUP_CHARS = frozenset("\\`*_[]!<>&$")


# -- inline Markdown -> HTML -----------------------------------------------------------------


def _footnote_ref(state: StateInline, silent: bool) -> bool:
    """`[^label]` of a footnote this page shows (the paper's own `[^` is escaped as `\\[^`)."""
    src, pos = state.src, state.pos
    if not src.startswith("[^", pos):
        return False
    end = src.find("]", pos + 2)
    if end < 0 or end - pos > 40:
        return False
    label = src[pos + 2 : end]
    notes = state.env.get("notes", {})
    if label not in notes:
        return False
    if not silent:
        token = state.push("footnote_ref", "", 0)
        token.meta = {"label": label}
    state.pos = end + 1
    return True


def _render_footnote_ref(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    note: Footnote = env["notes"][tokens[idx].meta["label"]]
    mark = escape(note.mark or "*")
    return f'<sup class="note-mark"><a href="#{escape(note.id)}">{mark}</a></sup>'


def _render_math(display: bool) -> Callable[..., str]:
    def render(
        self: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
    ) -> str:
        return mathml(tokens[idx].content, display=display, budget=env["math"])

    return render


def _render_link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    token = tokens[idx]
    href = safe_url(str(token.attrGet("href") or ""))
    if href is None:
        return "<a>"
    return f'<a href="{escape(href)}" rel="nofollow noopener noreferrer">'


def _render_image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    token = tokens[idx]
    src = safe_url(str(token.attrGet("src") or ""))
    alt = self.renderInlineAsText(token.children or [], options, env)
    if src is None:
        return escape(alt)
    return f'<img src="{escape(src)}" alt="{escape(alt)}" loading="lazy">'


def _only_web_links(url: str) -> bool:
    return safe_url(url) is not None


def _markdown_it() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = _only_web_links  # type: ignore[method-assign]
    dollarmath_plugin(md, allow_labels=False, double_inline=True)
    md.inline.ruler.before("link", "footnote_ref", _footnote_ref)
    md.add_render_rule("footnote_ref", _render_footnote_ref)
    md.add_render_rule("math_inline", _render_math(display=False))
    md.add_render_rule("math_inline_double", _render_math(display=True))
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    md.renderInline("*a* $b$ [c](https://example.org)", {"math": MathBudget(), "notes": {}})
    return md  # compiled once above, so that threads only read it


_MD = _markdown_it()


# -- the walk --------------------------------------------------------------------------------


@dataclass
class _Page:
    """What one rendering carries: links out, the footnotes it shows, and its budgets."""

    permalink: Callable[[str], str | None]
    section_href: Callable[[str], str]
    top_level: int
    notes: dict[str, Footnote] = field(default_factory=dict)
    math: MathBudget = field(default_factory=MathBudget)
    size: int = 0
    cut: bool = False

    def inline(self, markdown: str) -> str:
        if not _MARKUP_CHARS.intersection(markdown):
            html = escape(markdown, quote=False)
        else:
            html = _MD.renderInline(markdown, {"math": self.math, "notes": self.notes})
        self.size += len(html)
        return html

    def full(self) -> bool:
        if self.size > MAX_PAGE_CHARS:
            self.cut = True
        return self.cut


@dataclass(frozen=True, slots=True)
class Article:
    """A node as HTML, with the footnotes it references at its end."""

    html: str
    title: str
    """The node's heading as plain text, for the page's `<title>`."""
    cut: bool
    """Whether the page stopped early (MAX_PAGE_CHARS); the Markdown route has the rest."""


def article(
    node: Node,
    document: Document,
    *,
    permalink: Callable[[str], str | None],
    section_href: Callable[[str], str],
) -> Article:
    """`node` as HTML; `permalink(id)` is the public address of a paragraph (None: no link),
    `section_href(id)` the page of a section."""
    note_ids = notes_in([node])
    notes = {
        note_label(note.mark): note
        for note in (document.footnotes.get(n) for n in note_ids)
        if note is not None
    }
    level = node.level if isinstance(node, Section) else 1
    page = _Page(permalink, section_href, level, notes)
    parts: list[str] = []
    if not isinstance(node, Section):
        parts.append(f'<h1 class="node-title">{escape(node_title(node))}</h1>')
    parts.append(_block(node, page))
    parts.append(_footnotes(list(notes.values()), page))
    return Article("".join(parts), node_title(node), page.cut)


def node_title(node: Node) -> str:
    """A node's heading as a reader sees it: "2.1 Paragraph representation", "Figure 1"."""
    if isinstance(node, Section):
        tag = node.tag.strip()
        return f"{tag} {node.title.text}".strip() if tag else node.title.text or node.id
    if isinstance(node, Figure | Table):
        kind = "Table" if isinstance(node, Table) else node.kind.capitalize() or "Figure"
        return node.tag.strip().rstrip(":") or f"{kind} {node.id}"
    if isinstance(node, Equation):
        return f"Equation ({node.number})" if node.number else f"Equation {node.id}"
    if isinstance(node, Theorem):
        return node.label.text.strip().rstrip(".") or f"{node.kind.capitalize()} {node.id}"
    if isinstance(node, Reference):
        return f"Reference {node.label or node.number}"
    kinds = {Paragraph: "Paragraph", Text: "Paragraph", ListBlock: "List", Code: "Code"}
    return f"{kinds.get(type(node), type(node).__name__)} {node.id}"


def heading_html(section: Section, page: _Page | None = None) -> str:
    """A section's number and title as inline HTML (math drawn), for headings and links."""
    page = page or _Page(lambda _: None, lambda _: "", section.level)
    tag = section.tag.strip()
    number = f'<span class="number">{escape(tag)}</span> ' if tag else ""
    return number + page.inline(section.title.markdown)


def _blocks(blocks: Sequence[Node], page: _Page, lead: str = "") -> str:
    out: list[str] = []
    for position, block in enumerate(blocks):
        if page.full():
            break
        out.append(_block(block, page, lead if position == 0 else ""))
    if lead and not blocks:
        out.append(f"<p>{lead}</p>")
    return "".join(out)


def _block(block: Node, page: _Page, lead: str = "", *, in_paragraph: bool = False) -> str:
    """One node; `lead` is HTML that opens its first line (a theorem's label)."""
    if isinstance(block, Text):
        tail = "" if in_paragraph else _permalink(block.id, page)
        return _text(block, page, lead, tail)
    if isinstance(block, Paragraph):
        return _paragraph(block, page, lead, nested=in_paragraph)
    prefix = f"<p>{lead}</p>" if lead else ""
    if isinstance(block, Section):
        return prefix + _section(block, page)
    if isinstance(block, Equation):
        return prefix + _equation(block, page)
    if isinstance(block, EquationGroup):
        return prefix + _group(block, page)
    if isinstance(block, Figure | Table):
        return prefix + _float(block, page)
    if isinstance(block, Theorem):
        return _theorem(block, page, prefix)
    if isinstance(block, ListBlock):
        return prefix + _list(block, page)
    if isinstance(block, Code):
        page.size += len(block.text)
        code = escape(block.text, quote=False)
        return f'{prefix}<pre class="code" id="{escape(block.id)}"><code>{code}</code></pre>'
    if isinstance(block, Quote):
        inner = _blocks(block.blocks, page)
        return f'{prefix}<blockquote id="{escape(block.id)}">{inner}</blockquote>'
    if isinstance(block, Bibliography):
        return prefix + _references(block.references, page, block.id)
    if isinstance(block, Reference):
        return prefix + _references((block,), page, "")
    # any kind without a rendering of its own: its children
    return prefix + _blocks(child_nodes(block), page)


def _text(text: Text, page: _Page, lead: str, tail: str) -> str:
    body = page.inline(text.content.markdown)
    if not (body or lead):
        return ""
    return f'<p id="{escape(text.id)}">{lead}{body}{tail}</p>'


def _paragraph(paragraph: Paragraph, page: _Page, lead: str, *, nested: bool) -> str:
    """Its runs of text, displays and nested blocks; the permalink ends its last line of text
    (only the outermost paragraph has one: LaTeXML nests paragraphs in lists and theorems)."""
    blocks = paragraph.blocks
    last_text = max((i for i, b in enumerate(blocks) if isinstance(b, Text)), default=-1)
    link = "" if nested else _permalink(paragraph.id, page)
    out: list[str] = []
    for position, block in enumerate(blocks):
        if page.full():
            break
        first = lead if position == 0 else ""
        if isinstance(block, Text):
            out.append(_text(block, page, first, link if position == last_text else ""))
        else:
            out.append(_block(block, page, first, in_paragraph=True))
    if link and last_text < 0:
        out.append(f'<p class="permalink-line">{link}</p>')
    return f'<div class="para" id="{escape(paragraph.id)}">{"".join(out)}</div>'


def _permalink(node_id: str, page: _Page) -> str:
    url = page.permalink(node_id)
    safe = safe_url(url) if url else None
    if safe is None:
        return ""
    return (
        f' <a class="permalink" href="{escape(safe)}" title="Permalink: {escape(safe)}"'
        ' rel="noopener noreferrer">¶</a>'
    )


def _section(section: Section, page: _Page) -> str:
    depth = max(1, min(6, 1 + section.level - page.top_level))
    title = heading_html(section, page)
    if depth > 1:
        title = (
            f'<a class="section-link" href="{escape(page.section_href(section.id))}">{title}</a>'
        )
    heading = f"<h{depth}>{title}{_permalink(section.id, page)}</h{depth}>"
    body = _blocks(section.blocks, page)
    return f'<section id="{escape(section.id)}">{heading}{body}</section>'


def _equation(equation: Equation, page: _Page) -> str:
    if not equation.latex:
        if not equation.text:
            return ""
        # a PDF's display equation: its extracted text, as text (there is no TeX to draw)
        number = f'<span class="eqno">({escape(equation.number)})</span>' if equation.number else ""
        return (
            f'<div class="equation" id="{escape(equation.id)}">'
            f'<div class="display">{escape(equation.text)}</div>{number}</div>'
        )
    math = mathml(equation.latex, display=True, budget=page.math)
    page.size += len(math)
    number = f'<span class="eqno">({escape(equation.number)})</span>' if equation.number else ""
    return (
        f'<div class="equation" id="{escape(equation.id)}">'
        f'<div class="display">{math}</div>{number}</div>'
    )


def _group(group: EquationGroup, page: _Page) -> str:
    """An align or eqnarray display as a grid of its cells, so that the rows stay aligned at
    their `&`, each row with its number at the right (what Markdown gives row by row)."""
    rows = [row for row in group.rows if row.latex]
    width = max((len(row.cells) for row in rows), default=0)
    # align pairs its columns right-left, eqnarray reads right-centre-left
    sides = ["r", "c", "l"] if width == 3 else ["r" if i % 2 == 0 else "l" for i in range(width)]
    lines: list[str] = []
    for row in rows:
        cells = list(row.cells) if row.cells else []
        if not cells:
            math = mathml(row.latex or "", display=False, budget=page.math)
            columns = f'<td class="c" colspan="{max(width, 1)}">{math}</td>'
        else:
            cells += [""] * (width - len(cells))
            columns = "".join(
                f'<td class="{side}">{mathml(cell, display=False, budget=page.math)}</td>'
                for cell, side in zip(cells, sides, strict=True)
            )
        number = f"({escape(row.number)})" if row.number else ""
        lines.append(
            f'<tr id="{escape(row.id)}"><td class="pad"></td>{columns}<td class="pad"></td>'
            f'<td class="eqno">{number}</td></tr>'
        )
    body = "".join(lines)
    page.size += len(body)
    return (
        f'<div class="equation-group scroll" id="{escape(group.id)}">'
        f'<table class="display"><tbody>{body}</tbody></table></div>'
    )


def _image(url: str, alt: str) -> str:
    src = safe_url(url)
    if src is None:
        return ""
    return f'<img src="{escape(src)}" alt="{escape(" ".join(alt.split()))}" loading="lazy">'


def _float(node: Figure | Table, page: _Page, *, panel: bool = False) -> str:
    """A figure or table as `render/markdown.py`'s figure_chunks lays it out: a panel's
    images are the panel's, pictures laid out in the float's body are not shown twice."""
    tag = node.tag.strip()
    label = f"{node.tag} {node.caption.text}".strip() if node.tag else node.caption.text
    caption_html = page.inline(node.caption.markdown) if node.caption else ""
    tag_html = f'<span class="float-tag">{escape(tag)}</span> ' if tag else ""
    link = "" if panel else _permalink(node.id, page)
    caption = (
        f"<figcaption>{tag_html}{caption_html}{link}</figcaption>" if tag or caption_html else ""
    )
    panel_images = {url for panel in node.panels for url in panel.images}
    own = [url for url in node.images if url not in panel_images]
    parts: list[str] = []
    if isinstance(node, Table):
        kind = "table"
        if node.markdown_rows:
            parts.append(_grid(node, page))
            if node.cut:
                kept = len(node.markdown_rows)
                parts.append(f'<p class="muted">Table cut: the first {kept} rows are kept.</p>')
        else:
            parts.extend(_image(url, label or "Table") for url in own)
        body = "".join(parts)
        panels = "".join(_float(part, page, panel=True) for part in node.panels)
        # a table's caption is read before its grid, as papers print it
        return f'<figure class="{kind}" id="{escape(node.id)}">{caption}{body}{panels}</figure>'
    shown_in_body = "\n".join(c for block in node.blocks for c in block_chunks(block))
    own = [url for url in own if (safe_url(url) or url) not in shown_in_body]
    alts = ([label] + [tag or "Figure"] * (len(own) - 1))[: len(own)]
    images = "".join(_image(url, alt) for url, alt in zip(own, alts, strict=True))
    page.size += len(images)
    if images:
        parts.append(f'<div class="images">{images}</div>')
    parts.append(_blocks(node.blocks, page))
    if node.panels:
        panels = "".join(_float(part, page, panel=True) for part in node.panels)
        parts.append(f'<div class="panels">{panels}</div>')
    kind = "figure panel" if panel else "figure"
    return f'<figure class="{kind}" id="{escape(node.id)}">{"".join(parts)}{caption}</figure>'


def _spanned(
    table: Table, width: int
) -> tuple[dict[tuple[int, int], tuple[int, int]], set[tuple[int, int]]]:
    """The spanning cells a page draws once: (row, column) -> (rows, columns) where each starts,
    and the positions they cover besides. The tree repeats such a cell in every position (SPEC
    §5); a reader's page spans it, as the paper does. A span stays inside its row group (the
    header or the body, as HTML's rowspan does), and one that overlaps another is left repeated."""
    origins: dict[tuple[int, int], tuple[int, int]] = {}
    covered: set[tuple[int, int]] = set()
    total = len(table.markdown_rows)
    for span in table.spans:
        end = table.header_rows if span.row < table.header_rows else total
        rows, cols = min(span.rows, end - span.row), min(span.cols, width - span.col)
        if rows < 1 or cols < 1:
            continue
        area = {(span.row + dr, span.col + dc) for dr in range(rows) for dc in range(cols)}
        if area & covered or not area.isdisjoint(origins):
            continue
        origins[(span.row, span.col)] = (rows, cols)
        covered |= area - {(span.row, span.col)}
    return origins, covered


def _grid(table: Table, page: _Page) -> str:
    rows = table.markdown_rows
    width = max(len(row) for row in rows)
    origins, covered = _spanned(table, width)
    head: list[str] = []
    body: list[str] = []
    for position, row in enumerate(rows):
        if page.full():
            break
        cell = "th" if position < table.header_rows else "td"
        cells: list[str] = []
        for column in range(width):
            if (position, column) in covered:
                continue  # drawn by the spanning cell that reaches here
            shown = page.inline(row[column]) if column < len(row) else ""
            span = origins.get((position, column))
            attributes = ""
            if span is not None:
                attributes += f' rowspan="{span[0]}"' if span[0] > 1 else ""
                attributes += f' colspan="{span[1]}"' if span[1] > 1 else ""
            cells.append(f"<{cell}{attributes}>{shown}</{cell}>")
        (head if position < table.header_rows else body).append(f"<tr>{''.join(cells)}</tr>")
    thead = f"<thead>{''.join(head)}</thead>" if head else ""
    return f'<div class="scroll"><table>{thead}<tbody>{"".join(body)}</tbody></table></div>'


def _theorem(theorem: Theorem, page: _Page, prefix: str) -> str:
    label = escape(theorem.label.text.strip())
    kind = "proof" if theorem.kind == "proof" else "theorem"
    lead = f'<span class="theorem-label">{label}</span> ' if label else ""
    inner = _blocks(theorem.blocks, page, lead)
    classes = f"{kind} {escape(theorem.kind)}" if theorem.kind != kind else kind
    return f'{prefix}<div class="{classes}" id="{escape(theorem.id)}">{inner}</div>'


def _list(block: ListBlock, page: _Page) -> str:
    element = "ol" if block.ordered else "ul"
    items: list[str] = []
    for item in block.items:
        if page.full():
            break
        tag = item.tag.strip()
        number = tag.rstrip(".")
        body = "".join(_block(b, page, in_paragraph=True) for b in item.blocks)
        if block.ordered and number.isdigit() and len(number) < 10:
            items.append(f'<li id="{escape(item.id)}" value="{int(number)}">{body}</li>')
        elif tag and tag not in _BULLETS and not (block.ordered and number.isdigit()):
            mark = f'<span class="item-tag">{escape(tag)}</span>'
            items.append(f'<li class="tagged" id="{escape(item.id)}">{mark}{body}</li>')
        else:
            items.append(f'<li id="{escape(item.id)}">{body}</li>')
    return f'<{element} id="{escape(block.id)}">{"".join(items)}</{element}>'


def _references(references: Sequence[Reference], page: _Page, list_id: str) -> str:
    items: list[str] = []
    for reference in references:
        if page.full():
            break
        label = escape(reference.label or f"[{reference.number}]")
        body = page.inline(reference.markdown)
        items.append(
            f'<li id="{escape(reference.id)}"><span class="ref-label">{label}</span> {body}</li>'
        )
    list_attr = f' id="{escape(list_id)}"' if list_id else ""
    return f'<ul class="references"{list_attr}>{"".join(items)}</ul>'


def _footnotes(notes: list[Footnote], page: _Page) -> str:
    if not notes:
        return ""
    items = "".join(
        f'<li id="{escape(note.id)}"><span class="note-mark">{escape(note.mark)}</span> '
        f"{page.inline(note.content.markdown)}</li>"
        for note in notes
    )
    return f'<section class="footnotes"><h2>Notes</h2><ul>{items}</ul></section>'


# -- where a section sits --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Neighbours:
    """The sections a reader goes to from one: the one before and after it at its own level or
    above (a section's page holds its subsections), and the section holding it."""

    previous: Section | None
    next: Section | None
    parent: Section | None


def neighbours(document: Document, section_id: str) -> Neighbours:
    """Where `section_id` sits among the abstract and the outline's sections."""
    top: list[Section] = [] if document.abstract is None else [document.abstract]
    top.extend(document.sections)
    # (siblings, position, parent) of every section, found without recursion
    found: tuple[list[Section], int, Section | None] | None = None
    chain: dict[str, tuple[list[Section], int, Section | None]] = {}
    stack: list[tuple[list[Section], Section | None]] = [(top, None)]
    while stack and found is None:
        siblings, parent = stack.pop()
        for position, section in enumerate(siblings):
            chain[section.id] = (siblings, position, parent)
            if section.id == section_id:
                found = chain[section.id]
                break
            children = list(section.children)
            if children:
                stack.append((children, section))
    if found is None:
        return Neighbours(None, None, None)
    siblings, position, parent = found
    previous = siblings[position - 1] if position > 0 else parent
    following: Section | None = None
    here: tuple[list[Section], int, Section | None] | None = found
    while here is not None:
        row, at, above = here
        if at + 1 < len(row):
            following = row[at + 1]
            break
        here = chain.get(above.id) if above is not None else None
    return Neighbours(previous, following, parent)


# -- what changed: CriticMarkup -> <ins>/<del> ------------------------------------------------

# Our marks (render/critic.py) and the HTML each becomes; the paper's own `{++`, `~>` … reach
# here escaped (`\{++`), which markdown-it's escape rule turns back into text.
_CRITIC_TAGS = {
    "{++": "<ins>",
    "++}": "</ins>",
    "{--": "<del>",
    "--}": "</del>",
    "{~~": "<del>",
    "~~}": "</ins>",
    "{>>": '<span class="critic-note">',
    "<<}": "</span>",
    "~>": "</del><ins>",
}


def _critic_mark(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    mark = src[pos : pos + 3]
    if mark not in _CRITIC_TAGS:
        mark = src[pos : pos + 2]
        if mark != "~>":
            return False
    if not silent:
        token = state.push("html_inline", "", 0)
        token.content = _CRITIC_TAGS[mark]
    state.pos += len(mark)
    return True


def _critic_markdown_it() -> MarkdownIt:
    md = _markdown_it()
    md.enable("table")
    md.inline.ruler.before("emphasis", "critic", _critic_mark)
    md.render("{++a++} | b\n---|---\n{~~$c$~>d~~} | e", {"math": MathBudget(), "notes": {}})
    return md


_CRITIC_MD = _critic_markdown_it()


def critic_html(
    markdown: str, math: MathBudget | None = None, notes: dict[str, Footnote] | None = None
) -> str:
    """Our CriticMarkup (render/critic.py) as HTML: blocks as blocks, `<ins>`/`<del>` for the
    marks, math as MathML, footnote marks of `notes`, raw HTML off as everywhere else."""
    env = {"math": math or MathBudget(), "notes": notes or {}}
    rendered: str = _CRITIC_MD.render(markdown, env)
    return rendered


def footnotes_by_label(document: Document) -> dict[str, Footnote]:
    """A paper's footnotes by the label its Markdown references them with (`[^3]`)."""
    return {note_label(note.mark): note for note in document.footnotes.values()}


def inline_critic_html(markdown: str, math: MathBudget | None = None) -> str:
    """One line of our CriticMarkup (a title) as inline HTML."""
    rendered: str = _CRITIC_MD.renderInline(markdown, {"math": math or MathBudget(), "notes": {}})
    return rendered
