"""Page furniture, tables of contents, bibliographies and accents in a PDF's text layer."""

from __future__ import annotations

import pytest

from paperanchor import service
from paperanchor.paper import LoadedPaper
from paperanchor.parse.pdf import parse_pdf
from paperanchor.parse.pdf.layout import accented
from paperanchor.render.markdown import document_chunks, join
from tests.parse import pdf_samples as samples


def test_a_one_page_cut_loses_its_running_head_and_page_number_not_its_text() -> None:
    markdown = join(document_chunks(parse_pdf(samples.numbered_head_pdf())))
    assert "A Running Title for the Paper" not in markdown
    assert all(f"Running text line {n} about the cut" in markdown for n in range(1, 5))


def test_body_lines_alike_at_the_top_of_two_pages_are_not_running_heads() -> None:
    markdown = join(document_chunks(parse_pdf(samples.look_alike_first_lines_pdf())))
    assert "Step 1 of the method runs here" in markdown
    assert "Step 2 of the method runs here" in markdown


def test_a_table_of_contents_is_not_read_as_the_sections_it_lists() -> None:
    document = parse_pdf(samples.contents_pdf())
    assert [(s.id, s.title.text) for s in document.sections] == [
        ("S1", "Introduction"),
        ("S2", "Method"),
    ]
    markdown = join(document_chunks(document))
    assert ". . ." not in markdown and "Contents" not in markdown
    assert "Running text line 3 about the procedure" in markdown


def test_a_wrapped_line_that_starts_with_a_year_or_a_category_is_no_new_entry() -> None:
    references = parse_pdf(samples.wrapped_bibliography_pdf()).references
    assert [r.number for r in references] == ["1", "2", "3"]
    assert references[0].text.endswith("arXiv:2305.12345 [cs.CL], 2023.")
    assert "2011. assessment of literacy skills" in references[1].text


def test_a_bracketed_citation_links_the_paragraph_to_the_entries_it_names() -> None:
    document = parse_pdf(samples.wrapped_bibliography_pdf())
    paper = service.Paper.open(LoadedPaper(document, "local/cites", "local/cites"))
    assert service.references(paper, "1")["citedIn"] == ["S1.p1", "S1.p2"]
    assert service.references(paper, "2")["citedIn"] == ["S1.p1", "S1.p2"]
    # the hostile range is cut at a hundred numbers: the three entries that exist
    assert service.references(paper, "[3]")["citedIn"] == ["S1.p1", "S1.p2"]


@pytest.mark.parametrize(
    ("layer", "text"),
    [
        ("Teˇsanovi´c", "Tešanović"),
        ("J´erome", "Jérome"),
        ("Erd˝os", "Erdős"),
        ("na¨ıve", "naïve"),
        ("´Ecole", "École"),
        ("Lumi`ere", "Lumière"),
        # a backquote in code is not a grave accent
        ("run `make` now", "run `make` now"),
        ("plain", "plain"),
    ],
)
def test_tex_spacing_accents_join_the_letters_they_sit_on(layer: str, text: str) -> None:
    assert accented(layer) == text
