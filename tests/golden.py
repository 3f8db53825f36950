"""Golden dumps of the fixtures: a readable tree and the whole-paper Markdown.

`make golden` (python -m tests.golden) rewrites them after a deliberate parser change;
review the diff in the commit. tests/test_golden.py compares against them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from paperanchor.parse import parse_document
from paperanchor.service import LocalPaper, Paper, outline
from paperanchor.tree import (
    Bibliography,
    Block,
    Code,
    Document,
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

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "fixtures" / "html"
GOLDEN = ROOT / "fixtures" / "golden"
NAMES = sorted(p.stem for p in HTML.glob("*.html"))
# A fixed base so that image URLs do not depend on where the checkout lives.
BASE = "https://paperanchor.invalid/fixtures/"


def _short(text: str, width: int = 70) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _dump(block: Block, depth: int, out: list[str]) -> None:
    pad = "  " * depth
    if isinstance(block, Section):
        out.append(
            f"{pad}section[{block.kind}] {block.id} level={block.level} "
            f"number={block.number!r} title={block.title.text!r} errors={block.errors}"
        )
        children = block.blocks
    elif isinstance(block, Paragraph):
        out.append(f"{pad}paragraph {block.id}")
        children = block.blocks
    elif isinstance(block, Text):
        extra = f" cites={list(block.cites)}" if block.cites else ""
        extra += f" notes={list(block.notes)}" if block.notes else ""
        out.append(f"{pad}text {block.id}{extra}: {_short(block.content.text)}")
        return
    elif isinstance(block, Equation):
        out.append(f"{pad}equation {block.id} number={block.number!r}: {_short(block.latex)}")
        return
    elif isinstance(block, EquationGroup):
        out.append(f"{pad}equation-group {block.id}")
        children = block.rows
    elif isinstance(block, Figure):
        out.append(
            f"{pad}figure[{block.kind}] {block.id} number={block.number!r} "
            f"caption={_short(block.caption.text)!r} images={list(block.images)}"
        )
        children = (*block.panels, *block.blocks)
    elif isinstance(block, Table):
        out.append(
            f"{pad}table {block.id} number={block.number!r} header_rows={block.header_rows} "
            f"caption={_short(block.caption.text)!r}"
        )
        out.extend(f"{pad}  | " + " | ".join(row) for row in block.rows)
        children = block.panels
    elif isinstance(block, Theorem):
        out.append(f"{pad}theorem[{block.kind}] {block.id} label={block.label.text!r}")
        children = block.blocks
    elif isinstance(block, ListBlock):
        out.append(f"{pad}list {block.id} ordered={block.ordered}")
        for item in block.items:
            out.append(f"{pad}  item {item.id} tag={item.tag!r}")
            for child in item.blocks:
                _dump(child, depth + 2, out)
        return
    elif isinstance(block, Code):
        out.append(f"{pad}code {block.id}: {_short(block.text)}")
        return
    elif isinstance(block, Quote):
        out.append(f"{pad}quote {block.id}")
        children = block.blocks
    elif isinstance(block, Bibliography):
        out.append(f"{pad}bibliography {block.id}")
        for ref in block.references:
            out.append(
                f"{pad}  reference {ref.id} number={ref.number!r} label={ref.label!r} "
                f"year={ref.year!r} arxiv={ref.arxiv!r} doi={ref.doi!r} url={ref.url!r}"
            )
            out.append(f"{pad}    authors={list(ref.authors)} title={ref.title!r}")
        return
    else:  # pragma: no cover - a new node kind must be added here
        raise TypeError(type(block).__name__)
    for child in children:
        _dump(child, depth + 1, out)


def dump_tree(document: Document) -> str:
    out = [
        f"title: {document.title.text!r}",
        f"authors: {list(document.authors)}",
        f"errors: {document.errors}",
        f"keywords: {document.keywords!r}",
    ]
    if document.abstract is not None:
        _dump(document.abstract, 0, out)
    for block in document.blocks:
        _dump(block, 0, out)
    for note in document.footnotes.values():
        out.append(f"footnote {note.id} mark={note.mark!r}: {_short(note.content.text)}")
    return "\n".join(out) + "\n"


def render(name: str) -> dict[str, str]:
    """The golden files of one fixture, by file name."""
    document = parse_document((HTML / f"{name}.html").read_bytes(), f"{BASE}{name}.html")
    paper = Paper.open(LocalPaper(document, f"local/{name}", f"local/{name}"))
    summary = outline(paper)
    return {
        f"{name}.tree.txt": dump_tree(document),
        f"{name}.md": paper.markdown(),
        f"{name}.outline.json": json.dumps(summary, ensure_ascii=False, indent=2) + "\n",
    }


def main() -> int:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        for file_name, text in render(name).items():
            (GOLDEN / file_name).write_text(text, encoding="utf-8")
            print(f"wrote fixtures/golden/{file_name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
