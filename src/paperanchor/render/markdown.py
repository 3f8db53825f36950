"""Tree -> Markdown (contract §3), as a list of block chunks so `read` can cut between blocks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from paperanchor import tokens
from paperanchor.parse.equations import aligned
from paperanchor.render.escape import (
    destination,
    escape_label,
    escape_line_start,
    escape_text,
    image_url,
    math_markdown,
    note_label,
    safe_url,
    tex_text,
)
from paperanchor.tree import (
    Code,
    Document,
    Equation,
    EquationGroup,
    Figure,
    Footnote,
    ListBlock,
    Node,
    Quote,
    Reference,
    Section,
    Table,
    Text,
    Theorem,
    child_nodes,
)

_NUMBERED_ITEM = re.compile(r"^\d+\.?$")

Mark = Callable[[Node], str | None]
"""A block's anchor marker label (`¶12`, anchors.AnchorIndex.marks), or None: not marked."""
# The only text a marker holds: the label is ours, never the paper's, so no page can close the
# comment early or put markup in it (a LaTeXML id may hold anything a hostile page writes).
_MARK_LABEL = re.compile(r"^¶[0-9]{1,9}$")


def marker(label: str) -> str:
    """The line that marks the block after it (contract §11): an HTML comment, hidden by a
    CommonMark renderer that passes HTML and plain text in one that escapes it."""
    if not _MARK_LABEL.match(label):
        raise ValueError(f"not an anchor marker label: {label!r}")
    return f"<!--{label}-->"


def _marked(chunks: list[str], label: str | None) -> list[str]:
    if label is None or not chunks:
        return chunks
    return [f"{marker(label)}\n\n{chunks[0]}", *chunks[1:]]


def tokens_of(markdown: str) -> int:
    """contract §3: the o200k_base tokens of the Markdown."""
    return tokens.count(markdown)


def heading(section: Section) -> str:
    hashes = "#" * max(1, min(section.level, 6))
    label = escape_text(section.tag.strip()) if section.tag else ""
    title = section.title.markdown
    return f"{hashes} {label} {title}".replace("  ", " ").rstrip() if label else f"{hashes} {title}"


def equation_line(equation: Equation) -> str:
    if equation.latex is None:
        # read from a PDF: the extracted text is the paper's words, not TeX, so it is escaped
        # like any other text and never set as math
        number = f" ({escape_text(equation.number)})" if equation.number else ""
        return escape_line_start(escape_text(equation.text)) + number
    # the TeX and its number are the paper's: neither may close the `$$` or open markup
    tex = math_markdown(equation.latex)
    tag = f" \\tag{{{tex_text(equation.number)}}}" if equation.number else ""
    return f"$${tex}{tag}$$" if tex or tag else ""


def group_markdown(group: EquationGroup) -> str:
    """Each row on its own display line so every row keeps its number."""
    lines = (equation_line(row) for row in group.rows if row.latex or row.text)
    return "\n".join(line for line in lines if line)


def group_latex(group: EquationGroup) -> str:
    return aligned(group)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def pipe_table(rows: tuple[tuple[str, ...], ...]) -> str:
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    padded = [tuple(_cell(c) for c in row) + ("",) * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + "---|" * width]
    lines.extend("| " + " | ".join(row) + " |" for row in padded[1:])
    return "\n".join(lines)


def _image(alt: str, url: str) -> str | None:
    safe = image_url(url)
    return f"![{escape_label(alt)}]({destination(safe)})" if safe else None


def _images(alts: list[str], urls: list[str]) -> str:
    lines = [_image(alt, url) for alt, url in zip(alts, urls, strict=True)]
    return "\n".join(line for line in lines if line)


def figure_chunks(figure: Figure | Table) -> list[str]:
    caption = figure.caption.markdown
    tag = escape_text(figure.tag.strip())
    # an image's alt text is plain: a caption's own markup (an inline icon) cannot nest in it
    label = f"{figure.tag} {figure.caption.text}".strip() if figure.tag else figure.caption.text
    chunks: list[str] = []
    panel_images = {url for panel in figure.panels for url in panel.images}
    own = [url for url in figure.images if url not in panel_images]
    if isinstance(figure, Table):
        title = f"**{tag}** {caption}".strip() if tag else caption
        if title:
            chunks.append(title)
        if figure.markdown_rows:
            chunks.append(pipe_table(figure.markdown_rows))
            if figure.cut:
                chunks.append(f"*[table cut: the first {len(figure.markdown_rows)} rows are kept]*")
        elif own:
            chunks.append(_images([label or "Table"] * len(own), own))
    else:
        body = [c for block in figure.blocks for c in block_chunks(block)]
        # pictures laid out in a tabular are shown in its cells, not twice
        shown_in_body = "\n".join(body)
        own = [url for url in own if (safe_url(url) or url) not in shown_in_body]
        alts = [label] + [figure.tag.strip() or "Figure"] * (len(own) - 1)
        shown = _images(alts, own) if own else ""
        if shown:
            chunks.append(shown)
        elif label:
            chunks.append(f"**{tag}** {caption}".strip() if tag else caption)
        chunks.extend(body)
    for panel in figure.panels:
        chunks.extend(figure_chunks(panel))
    return chunks


def reference_line(reference: Reference) -> str:
    label = escape_text(reference.label) if reference.label else f"[{reference.number}]"
    return f"- {label} {reference.markdown}".rstrip()


def _indent(text: str, prefix: str) -> str:
    """Indent a list item's continuation lines; TeX lines inside `$$…$$` stay verbatim
    (a display is a paragraph, which a list item continues lazily)."""
    pad = " " * len(prefix)
    out = [prefix + text.split("\n", 1)[0]]
    in_display = text.split("\n", 1)[0].count("$$") % 2 == 1
    for line in text.split("\n")[1:]:
        out.append(line if in_display or not line else pad + line)
        if line.count("$$") % 2 == 1:
            in_display = not in_display
    return "\n".join(out)


def list_markdown(block: ListBlock) -> str:
    lines: list[str] = []
    for position, item in enumerate(block.items, start=1):
        tag = item.tag.strip()
        if block.ordered and _NUMBERED_ITEM.match(tag):
            marker = f"{tag.rstrip('.')}. "
        elif block.ordered and not tag:
            marker = f"{position}. "
        elif tag and tag not in ("•", "∙", "◦", "–", "-", "*", "▪", "⋅"):
            marker = f"- {escape_text(tag)} "
        else:
            marker = "- "
        body = "\n\n".join(c for b in item.blocks for c in block_chunks(b)) or ""
        lines.append(_indent(body, marker) if body else marker.rstrip())
    return "\n".join(lines)


def block_chunks(block: Node, mark: Mark | None = None) -> list[str]:
    """The Markdown of one node as chunks; blank lines go between chunks. With `mark`, each
    citable block (`mark` gives its label) opens with its anchor marker (contract §11)."""
    if mark is None:
        return _block_chunks(block, None)
    return _marked(_block_chunks(block, mark), mark(block))


def _block_chunks(block: Node, mark: Mark | None) -> list[str]:
    if isinstance(block, Text):
        return [block.content.markdown] if block.content.markdown else []
    if isinstance(block, Equation):
        line = equation_line(block) if block.latex or block.text else ""
        return [line] if line else []
    if isinstance(block, EquationGroup):
        text = group_markdown(block)
        return [text] if text else []
    if isinstance(block, Figure | Table):
        return figure_chunks(block)
    if isinstance(block, Theorem):
        # the first block runs in after the label: its marker would split them, so the
        # theorem's own marker stands for it
        inner = [
            c
            for position, b in enumerate(block.blocks)
            for c in block_chunks(b, mark if position else None)
        ]
        label = escape_text(block.label.text.strip())
        if not label:
            return inner
        marker = f"*{label}*" if block.kind == "proof" else f"**{label}**"
        if inner and not inner[0].startswith(("$$", "|", "- ", "![", "```", "#")):
            return [f"{marker} {inner[0]}", *inner[1:]]
        return [marker, *inner]
    if isinstance(block, ListBlock):
        return [list_markdown(block)] if block.items else []
    if isinstance(block, Code):
        fence = "```"
        while fence in block.text:
            fence += "`"
        return [f"{fence}\n{block.text}\n{fence}"]
    if isinstance(block, Quote):
        quoted = "\n\n".join(c for b in block.blocks for c in block_chunks(b))
        lines = quoted.split("\n")
        return ["\n".join("> " + line if line else ">" for line in lines)] if quoted else []
    if isinstance(block, Reference):
        return [reference_line(block)]
    if isinstance(block, Section):
        return section_chunks(block, None if mark is None else lambda b: block_chunks(b, mark))
    # paragraphs, bibliographies and any kind without a rendering of its own: its children
    return [c for child in child_nodes(block) for c in block_chunks(child, mark)]


def section_chunks(
    section: Section, chunks_of: Callable[[Node], list[str]] | None = None
) -> list[str]:
    """A section's heading, then its blocks' chunks (`chunks_of`: a caller's memo of them)."""
    of = chunks_of or block_chunks
    chunks = [heading(section)]
    for block in section.blocks:
        chunks.extend(of(block))
    return chunks


def notes_in(blocks: Iterable[Node]) -> list[str]:
    """Footnote ids referenced inside blocks, in order, once each."""
    # tree.walk's order without its Visit records (where each node sits, unused here): an
    # outline asks this of every block, and building those took a third of its rendering
    found: dict[str, None] = {}
    stack = list(blocks)[::-1]
    while stack:
        node = stack.pop()
        if isinstance(node, Text):  # a run of text holds no nodes
            if node.notes:
                found.update(dict.fromkeys(node.notes))
            continue
        if isinstance(node, Figure | Table) and node.notes:
            found.update(dict.fromkeys(node.notes))
        stack.extend(child_nodes(node)[::-1])
    return list(found)


def footnote_chunks(note_ids: list[str], footnotes: dict[str, Footnote]) -> list[str]:
    lines = [
        f"[^{note_label(footnotes[n].mark)}]: {footnotes[n].content.markdown}"
        for n in note_ids
        if n in footnotes
    ]
    return ["\n".join(lines)] if lines else []


def node_chunks(block: Node, document: Document, mark: Mark | None = None) -> list[str]:
    """A node's Markdown with the footnotes it references at its end."""
    chunks = block_chunks(block, mark)
    return chunks + footnote_chunks(notes_in([block]), document.footnotes)


def document_chunks(
    document: Document, chunks_of: Callable[[Node], list[str]] | None = None
) -> list[str]:
    """The whole paper: title, authors, abstract, then every top-level block (`chunks_of`:
    a caller's memo of `node_chunks`)."""
    of = chunks_of or (lambda node: node_chunks(node, document))
    chunks = [f"# {document.title.markdown}".rstrip()]
    if document.authors:
        chunks.append(escape_line_start(escape_text(", ".join(document.authors))))
    if document.abstract is not None:
        chunks.extend(of(document.abstract))
    if document.keywords:
        chunks.append(f"**Keywords:** {escape_text(document.keywords)}")
    for block in document.blocks:
        chunks.extend(of(block))
    return chunks


def join(chunks: list[str]) -> str:
    return "\n\n".join(c for c in chunks if c) + "\n"


def truncate(
    chunks: list[str],
    max_tokens: int,
    more: Callable[[int], str],
    *,
    front: int = 0,
    whole: int | None = None,
) -> tuple[str, bool]:
    """The chunks within `max_tokens` tokens, the line `more(remaining tokens)` included
    (`whole`: the tokens of the joined chunks, when the caller has counted them).

    The cut is at a block boundary; when not one block of content fits (only headings, or the
    first `front` chunks of front matter, before it), the first block is cut inside, at a
    sentence or word boundary, so that a cut answer always carries text (contract §4).
    """
    if whole is None:
        whole = tokens_of(join(chunks))
    if whole <= max_tokens:
        return join(chunks), False
    # `remaining` is at most `whole`, so the line it ends up in costs no more than this one
    budget = max_tokens - tokens_of(f"\n\n{more(whole)}\n")
    kept: list[str] = []
    size = 0  # an estimate: each chunk counted alone, each blank line between them one token
    content = 0  # characters of content kept (not headings, not front matter)
    for index, chunk in enumerate(c for c in chunks if c):
        extra = tokens_of(chunk) + (1 if kept else 0)
        if size + extra <= budget:
            kept.append(chunk)
            size += extra
            content += len(chunk) if index >= front and not chunk.startswith("#") else 0
            continue
        if content < 2 * MIN_PIECE_CHARS:  # no block of text worth the name yet: cut this one
            piece = cut_to_tokens(chunk, budget - size - (1 if kept else 0))
            if piece:
                kept.append(piece)
        break

    def answer() -> str:
        shown = "\n\n".join(kept)
        line = more(max(0, whole - tokens_of(shown)))
        return f"{shown}\n\n{line}\n" if shown else f"{line}\n"

    text = answer()
    # the estimate can be a token or two short where chunks merge across a blank line
    while kept and (over := tokens_of(text) - max_tokens) > 0:
        last = kept.pop()
        if not kept:
            piece = cut_to_tokens(last, tokens_of(last) - over - 2)
            kept.extend([piece] if piece else [])
        text = answer()
    return text, True


def cut_to_tokens(chunk: str, limit: int) -> str | None:
    """cut_block within `limit` tokens rather than characters."""
    chars = tokens.prefix_chars(chunk, limit)
    for _ in range(8):  # a cut's " …" and its boundary may cost a token or two more
        piece = cut_block(chunk, chars)
        if piece is None:
            return None
        over = tokens_of(piece) - limit
        if over <= 0:
            return piece
        chars = min(len(piece), chars) - 4 * over
    return None


# What a cut inside a block must not split: math, code spans, links and images, autolinks.
_PROTECTED = re.compile(
    r"(?<!\\)\$\$.*?(?<!\\)\$\$|(?<!\\)\$(?:[^$\\]|\\.)*\$|`[^`]*`|!?\[(?:\\.|[^\]\\])*\]\([^)]*\)|<[^>\s]*>",
    re.DOTALL,
)
_SENTENCE_END = re.compile(r"[.!?][)\]”\"']?(?=\s)")
# A piece shorter than this says too little to be worth sending before the "more" line.
MIN_PIECE_CHARS = 40


def cut_block(chunk: str, limit: int) -> str | None:
    """The start of one block of Markdown within `limit` characters, ending at a sentence or
    word boundary (never inside math, code or a link), with `…`; None when nothing fits."""
    limit -= 2  # " …"
    if limit < MIN_PIECE_CHARS:
        return None
    if chunk.startswith("!["):
        return _cut_image(chunk, limit)
    if chunk.startswith(("$$", "|", "```")):
        return _cut_lines(chunk, limit)
    window = chunk[: limit + 1]
    protected = [
        (m.start(), m.end()) for m in _PROTECTED.finditer(chunk, 0, min(len(chunk), limit * 2))
    ]

    def free(at: int) -> bool:
        return not any(start < at < end for start, end in protected)

    ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() <= limit and free(m.end())]
    if ends and ends[-1] >= limit // 3:
        return chunk[: ends[-1]] + " …"
    spaces = [i for i, ch in enumerate(window[:limit]) if ch == " " and free(i)]
    if spaces and spaces[-1] >= MIN_PIECE_CHARS // 2:
        return chunk[: spaces[-1]].rstrip() + " …"
    return None


_IMAGE_LINE = re.compile(r"^!\[((?:\\.|[^\]\\])*)\](\((?:<[^>]*>|[^)\s]*)\))")


def _cut_image(chunk: str, limit: int) -> str | None:
    """An image line whose alt text (a caption) is too long: the alt cut at a word boundary."""
    match = _IMAGE_LINE.match(chunk)
    if match is None:
        return None
    alt, destination = match.group(1), match.group(2)
    room = limit - len(destination) - 5
    if room < MIN_PIECE_CHARS:
        return None
    cut = alt[:room].rsplit(" ", 1)[0].rstrip("\\")
    return f"![{cut} …]{destination}"


def _cut_lines(chunk: str, limit: int) -> str | None:
    """Whole lines of a table or code block within `limit`; a fence is closed again."""
    lines = chunk.split("\n")
    if chunk.startswith("|"):
        kept = lines[:2]  # a table needs its header and separator rows
        if len("\n".join(kept)) > limit:
            return None
        for line in lines[2:]:
            if len("\n".join([*kept, line])) > limit:
                break
            kept.append(line)
        return "\n".join(kept) if len(kept) > 2 else None
    if chunk.startswith("```"):
        fence = lines[0]
        kept = [fence]
        for line in lines[1:-1]:
            if len("\n".join([*kept, line, fence])) > limit:
                break
            kept.append(line)
        return "\n".join([*kept, fence]) if len(kept) > 1 else None
    return None  # display math and images are not cut
