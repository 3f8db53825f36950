"""Figures and tables in a PDF: the text drawn inside them is not running text; captions stay.

The PDFs are written byte by byte (tests/parse/pdf_samples.py), one per rule, each beside the
input that would abuse it: rules of one width without a caption, prose in a framed box, a page
of a hundred thousand paths.
"""

from __future__ import annotations

import time

from paperanchor.parse.pdf import parse_pdf
from paperanchor.parse.pdf.extract import extract_pages
from paperanchor.parse.pdf.regions import float_regions
from paperanchor.render.markdown import document_chunks, join
from paperanchor.tree import Document, Figure, Table, walk
from tests.parse import pdf_samples as samples


def _markdown(document: Document) -> str:
    return join(document_chunks(document))


def _floats(document: Document) -> list[Figure | Table]:
    return [v.node for v in walk(document.blocks) if isinstance(v.node, Figure | Table)]


def test_a_ruled_table_under_its_caption_keeps_the_caption_and_leaves_its_cells_out() -> None:
    document = parse_pdf(samples.table_pdf())
    markdown = _markdown(document)
    (table,) = _floats(document)
    assert isinstance(table, Table) and table.number == "1" and table.rows == ()
    assert table.caption.text == "Scores of the two methods on the test set."
    for cell in ("Recall", "Precision", "Baseline", "0.91", "0.75"):
        assert cell not in markdown
    assert "Running text line 4 about the method" in markdown
    assert "Running text line 1 about the results" in markdown


def test_rules_of_one_width_without_a_caption_do_not_hide_the_text_between_them() -> None:
    page = extract_pages(samples.ruled_text_pdf())[0]
    assert float_regions(page, 10.0) == []
    markdown = _markdown(parse_pdf(samples.ruled_text_pdf()))
    assert all(f"Running text line {n} about the framing" in markdown for n in range(1, 7))


def test_the_labels_drawn_inside_a_figure_are_left_out_and_its_caption_is_the_float() -> None:
    document = parse_pdf(samples.figure_pdf())
    markdown = _markdown(document)
    (figure,) = _floats(document)
    assert isinstance(figure, Figure) and figure.caption.text.startswith("Loss of the model")
    assert "Epoch" not in markdown and "0.5 1.0" not in markdown
    assert "Running text line 4 about the curve" in markdown
    assert "Running text line 3 about the loss" in markdown


def test_prose_in_a_framed_figure_stays_text() -> None:
    markdown = _markdown(parse_pdf(samples.framed_prose_pdf()))
    assert all(f"read the paper and answer {n}." in markdown for n in range(4))
    assert "**Figure 2:** The prompt given to the model." in markdown


def test_a_page_of_a_hundred_thousand_paths_costs_bounded_time() -> None:
    data = samples.many_paths_pdf(100_000, pages=3)
    started = time.perf_counter()
    document = parse_pdf(data)
    seconds = time.perf_counter() - started
    print(f"3 pages of 100,000 paths: {len(data):,} bytes, {seconds:.2f} s")
    markdown = _markdown(document)
    assert all(f"the {word} one." in markdown for word in ("aatext", "batext", "catext"))
    assert seconds < 30  # a loose bound: about 1.5 s on the 2-core test machine
