"""Token benchmarks: what an agent spends, as a share of reading the whole paper.

For every corpus paper: the outline (compact JSON, as a tool result carries it) ÷ the whole
paper's Markdown, and a scripted agent flow — outline, read one section, search, cite two
paragraphs — ÷ the whole paper. Tokens are SPEC's o200k_base tokens (paperanchor.tokens).
"""

from __future__ import annotations

import json

from bench.common import corpus_pages
from paperanchor import tokens
from paperanchor.paper import LoadedPaper
from paperanchor.parse import parse_document
from paperanchor.service import Paper, cite, outline, read, search_paper
from paperanchor.tree import Paragraph, Section


def _tokens(value: object) -> int:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    )
    return tokens.count(text)


def _first_section(paper: Paper) -> Section | None:
    kinds = ("section", "body", "unnumbered", "appendix")
    return next((s for s in paper.document.sections if s.kind in kinds), None)


def flow(paper: Paper) -> int:
    """outline, read the first real section, search its title's words, cite two paragraphs."""
    spent = _tokens(outline(paper))
    section = _first_section(paper)
    if section is None:
        return spent
    spent += _tokens(read(paper, section.id).markdown)
    query = " ".join(section.title.text.split()[:2]) or "the"
    spent += _tokens(search_paper(paper, query, 5))
    paragraphs = [b.id for b in section.blocks if isinstance(b, Paragraph)][:2]
    for anchor in paragraphs:
        spent += _tokens(cite(paper, anchor, "http://127.0.0.1:8000"))
    return spent


def run() -> list[dict[str, object]]:
    rows = []
    for page in corpus_pages():
        document = parse_document(page.read_bytes())
        paper = Paper.open(LoadedPaper(document, "x", "x"))
        whole = paper.tokens()
        rows.append(
            {
                "page": f"{page.parent.name}/{page.name}",
                "whole": whole,
                "outline": _tokens(outline(paper)),
                "flow": flow(paper),
            }
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
