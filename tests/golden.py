"""Golden dumps of the fixtures: a readable tree and the whole-paper Markdown.

`make golden` (python -m tests.golden) rewrites them after a deliberate parser change;
review the diff in the commit. tests/test_golden.py compares against them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from paperanchor.codec import Codec
from paperanchor.paper import LoadedPaper
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.service import Paper, outline
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
# The parser version the golden files were made with, and a digest of the fixtures' trees:
# tests/test_parser_version.py fails when the trees change and the version did not.
VERSION_RECORD = GOLDEN / "parser-version.txt"
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
        out.extend(
            f"{pad}  span at row {span.row} column {span.col}: {span.rows}x{span.cols}"
            for span in block.spans
        )
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
    paper = Paper.open(LoadedPaper(document, f"local/{name}", f"local/{name}"))
    summary = outline(paper)
    return {
        f"{name}.tree.txt": dump_tree(document),
        f"{name}.md": paper.markdown(),
        f"{name}.outline.json": json.dumps(summary, ensure_ascii=False, indent=2) + "\n",
    }


def trees_digest() -> str:
    """A digest of every fixture's whole tree, as the cache would hold it."""
    codec = Codec(Document, max_bytes=1 << 30)
    digest = hashlib.sha256()
    for name in NAMES:
        document = parse_document((HTML / f"{name}.html").read_bytes(), f"{BASE}{name}.html")
        digest.update(codec.encode(document, name))
    return digest.hexdigest()


def recorded_version() -> tuple[str, str] | None:
    """(parser version, trees digest) as of the last `make golden`, if recorded."""
    if not VERSION_RECORD.exists():
        return None
    version, digest = VERSION_RECORD.read_text(encoding="utf-8").split()
    return version, digest


def main() -> int:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        for file_name, text in render(name).items():
            (GOLDEN / file_name).write_text(text, encoding="utf-8")
            print(f"wrote fixtures/golden/{file_name}")
    digest, recorded = trees_digest(), recorded_version()
    if recorded is not None and recorded[0] == PARSER_VERSION and recorded[1] != digest:
        print(
            "the parsed fixtures changed but PARSER_VERSION did not (a change the version's "
            "digest cannot see): bump REVISION in src/paperanchor/parse/version.py, then rerun",
            file=sys.stderr,
        )
        return 1
    VERSION_RECORD.write_text(f"{PARSER_VERSION} {digest}\n", encoding="utf-8")
    print(f"wrote fixtures/golden/{VERSION_RECORD.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
