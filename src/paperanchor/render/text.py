"""Tree -> plain text for `cite`: the paper's words, math as `$TeX$`, no Markdown."""

from __future__ import annotations

from paperanchor.render.markdown import group_latex
from paperanchor.tree import (
    Bibliography,
    Block,
    Code,
    Equation,
    EquationGroup,
    Figure,
    ListBlock,
    Paragraph,
    Quote,
    Section,
    Table,
    Text,
    Theorem,
)


def _lines(block: Block) -> list[str]:
    if isinstance(block, Text):
        return [block.content.text] if block.content.text else []
    if isinstance(block, Paragraph):
        return [line for b in block.blocks for line in _lines(b)]
    if isinstance(block, Equation):
        return (
            [f"${block.latex}$" + (f" ({block.number})" if block.number else "")]
            if block.latex
            else []
        )
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
    if isinstance(block, Quote):
        return [line for b in block.blocks for line in _lines(b)]
    if isinstance(block, Bibliography):
        return [f"{r.label} {r.text}".strip() for r in block.references]
    if isinstance(block, Section):
        title = f"{block.tag.strip()} {block.title.text}".strip() if block.tag else block.title.text
        return [title, *[line for b in block.blocks for line in _paragraph_lines(b)]]
    return []


def _paragraph_lines(block: Block) -> list[str]:
    """Inside a section, each paragraph is one chunk separated by a blank line."""
    lines = _lines(block)
    if isinstance(block, Section):
        return ["", *lines]
    return ["\n".join(lines)] if lines else []


def plain_text(block: Block) -> str:
    """A paragraph's lines joined by newlines; a section's paragraphs by blank lines."""
    if isinstance(block, Section):
        parts = _lines(block)
        return "\n\n".join(p for p in parts if p).strip()
    return "\n".join(_lines(block)).strip()
