"""Tree -> plain text for `cite`: the paper's words, math as `$TeX$`, no Markdown."""

from __future__ import annotations

from paperanchor.render.markdown import group_latex
from paperanchor.tree import (
    Code,
    Equation,
    EquationGroup,
    Figure,
    ListBlock,
    Node,
    Reference,
    Section,
    Table,
    Text,
    Theorem,
    child_nodes,
)


def _lines(block: Node) -> list[str]:
    if isinstance(block, Text):
        return [block.content.text] if block.content.text else []
    if isinstance(block, Equation):
        number = f" ({block.number})" if block.number else ""
        if block.latex is None:
            return [block.text + number] if block.text else []
        return [f"${block.latex}${number}"] if block.latex else []
    if isinstance(block, EquationGroup):
        return [f"${group_latex(block)}$"] if block.rows else []
    if isinstance(block, Figure | Table):
        head = f"{block.tag} {block.caption.text}".strip()
        lines = [head] if head else []
        if isinstance(block, Table):
            lines.extend(" | ".join(row) for row in block.rows)
        else:
            lines.extend(line for b in block.blocks for line in _lines(b))
        for panel in block.panels:
            lines.extend(_lines(panel))
        return lines
    if isinstance(block, Theorem):
        inner = [line for b in block.blocks for line in _lines(b)]
        label = block.label.text.strip()
        if label and inner:
            return [f"{label} {inner[0]}", *inner[1:]]
        return ([label] if label else []) + inner
    if isinstance(block, ListBlock):
        out = []
        for item in block.items:
            body = " ".join(line for b in item.blocks for line in _lines(b))
            out.append(f"{item.tag} {body}".strip())
        return out
    if isinstance(block, Code):
        return [block.text]
    if isinstance(block, Reference):
        return [f"{block.label} {block.text}".strip()]
    if isinstance(block, Section):
        title = f"{block.tag.strip()} {block.title.text}".strip() if block.tag else block.title.text
        return [title, *[line for b in block.blocks for line in _paragraph_lines(b)]]
    # paragraphs, quotes, bibliographies and any kind without a rendering of its own
    return [line for child in child_nodes(block) for line in _lines(child)]


def _paragraph_lines(block: Node) -> list[str]:
    """Inside a section, each paragraph is one chunk separated by a blank line."""
    lines = _lines(block)
    if isinstance(block, Section):
        return ["", *lines]
    return ["\n".join(lines)] if lines else []


def plain_text(block: Node) -> str:
    """A paragraph's lines joined by newlines; a section's paragraphs by blank lines."""
    if isinstance(block, Section):
        parts = _lines(block)
        return "\n\n".join(p for p in parts if p).strip()
    return "\n".join(_lines(block)).strip()
