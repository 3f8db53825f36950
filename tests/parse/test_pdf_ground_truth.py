"""The same paper twice: the tree read from pdflatex's PDF against LaTeXML's tree of the source.

fixtures/pdf/<name>.pdf and fixtures/html/<name>.html come from the same fixtures/src/<name>;
full-twocolumn is `full` set in two columns, revtex is REVTeX 4.2 (headings "I. INTRODUCTION",
"A. Thin spacers", a bibliography without a title), ieeetran is IEEEtran (small-caps headings,
italic subsections). Figures per paper are printed (pytest -s).
"""

from __future__ import annotations

import re
import unicodedata

import pytest

from paperanchor.parse import parse_document
from paperanchor.parse.pdf import parse_pdf
from paperanchor.render.markdown import document_chunks, join
from paperanchor.tree import Document, Paragraph, Section, Text, walk
from tests.conftest import FIXTURES

PAPERS = [
    ("short", "short"),
    ("full", "full"),
    ("full-twocolumn", "full"),
    ("revtex", "revtex"),
    ("ieeetran", "ieeetran"),
]
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def _paragraphs(blocks: tuple[object, ...]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Section):
            out.extend(_paragraphs(block.blocks))
        elif isinstance(block, Paragraph):
            for inner in block.blocks:
                if isinstance(inner, Text) and "$" not in inner.content.text:
                    out.append(inner.content.text)
    return out


def _subsections(document: Document) -> dict[str, str]:
    """Title words -> id of every subsection and subsubsection (LaTeXML's run-in `\\paragraph`
    units are left out: the PDF prints them as the first words of their paragraph)."""
    return {
        " ".join(_words(v.node.title.text)): v.node.id
        for v in walk(document.blocks)
        if isinstance(v.node, Section) and v.node.kind in ("subsection", "subsubsection")
    }


def _figures(pdf: Document, html: Document) -> dict[str, float]:
    pdf_titles = {" ".join(_words(s.title.text)) for s in pdf.sections}
    html_sections = [s for s in html.sections if s.kind != "body"]
    sections = sum(" ".join(_words(s.title.text)) in pdf_titles for s in html_sections) / len(
        html_sections
    )
    # a subsection counts when found with LaTeXML's id: S3.SS1 for "A. Detector" under "III."
    html_subsections = _subsections(html)
    pdf_subsections = _subsections(pdf)
    subsections = sum(
        pdf_subsections.get(title) == id_ for title, id_ in html_subsections.items()
    ) / max(1, len(html_subsections))
    markdown = " ".join(_words(join(document_chunks(pdf))))
    # paragraphs that open with math are left out: the PDF has no TeX to compare with
    starts = [" ".join(_words(p)[:8]) for p in _paragraphs(html.blocks)]
    starts = [s for s in starts if len(s.split()) == 8]
    paragraphs = sum(s in markdown for s in starts) / len(starts)
    pdf_refs = [" ".join(_words(r.text)) for r in pdf.references]
    found = 0
    for reference in html.references:
        head = " ".join(_words(reference.title or reference.text)[:6])
        found += any(head in text for text in pdf_refs)
    references = found / len(html.references)
    return {
        "sections": sections,
        "subsections": subsections if html_subsections else 1.0,
        "paragraphs": paragraphs,
        "references": references,
    }


@pytest.mark.parametrize(("pdf_name", "html_name"), PAPERS)
def test_the_pdf_tree_finds_what_latexml_found_in_the_same_source(
    pdf_name: str, html_name: str
) -> None:
    pdf = parse_pdf((FIXTURES / "pdf" / f"{pdf_name}.pdf").read_bytes())
    html = parse_document((FIXTURES / "html" / f"{html_name}.html").read_bytes())
    figures = _figures(pdf, html)
    print(f"{pdf_name}: " + ", ".join(f"{k} {v:.0%}" for k, v in figures.items()))
    assert figures["sections"] >= 0.90, figures
    assert figures["subsections"] >= 0.90, figures
    assert figures["paragraphs"] >= 0.85, figures
    assert figures["references"] >= 0.90, figures


@pytest.mark.parametrize(("pdf_name", "html_name"), PAPERS)
def test_the_pdf_tree_has_the_ids_latexml_gave_the_same_sections(
    pdf_name: str, html_name: str
) -> None:
    pdf = parse_pdf((FIXTURES / "pdf" / f"{pdf_name}.pdf").read_bytes())
    html = parse_document((FIXTURES / "html" / f"{html_name}.html").read_bytes())
    by_title = {s.title.text: s.id for s in pdf.sections}
    for section in html.sections:
        if section.title.text in by_title:
            assert by_title[section.title.text] == section.id
    assert pdf.title.text == html.title.text
    assert pdf.quality == "degraded" and pdf.generator and "pdf" in pdf.generator
