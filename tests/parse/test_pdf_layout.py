"""Page furniture, tables of contents, bibliographies and accents in a PDF's text layer."""

from __future__ import annotations

import pytest

from paperanchor import service
from paperanchor.paper import LoadedPaper
from paperanchor.parse.pdf import parse_pdf, structure
from paperanchor.parse.pdf.layout import accented
from paperanchor.render.markdown import document_chunks, join
from paperanchor.render.text import plain_text
from paperanchor.tree import Document, Paragraph, walk
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


def test_a_contents_that_runs_past_a_footnote_onto_the_next_page_is_left_out_whole() -> None:
    # 2407.01603v3: the keywords took the second page's entries and the footnote between
    document = parse_pdf(samples.contents_across_pages_pdf())
    assert document.keywords == "Reading, Contents, Footnotes"
    assert [(s.id, s.title.text) for s in document.sections] == [
        ("S1", "Introduction"),
        ("S2", "Method"),
    ]
    markdown = join(document_chunks(document))
    assert ". . ." not in markdown and "Scope" not in markdown
    # the footnote is front matter after the keywords: out, as the rest of the front block
    assert "Footnote line" not in markdown
    assert "Running text line 3 about the procedure" in markdown


def test_a_footnote_a_contents_passes_outside_a_front_block_stays_text() -> None:
    document = parse_pdf(samples.contents_across_pages_pdf(keywords=False))
    assert document.keywords is None
    markdown = join(document_chunks(document))
    assert "Footnote line 1 of the first page" in markdown
    assert ". . ." not in markdown and "Scope" not in markdown


def test_a_contents_ends_at_a_run_of_small_lines_longer_than_a_footnote() -> None:
    # seven lines in smaller type are no footnote: the contents ends at them, and they and
    # what follows them stay the paper's text
    document = parse_pdf(samples.contents_across_pages_pdf(notes=7, keywords=False))
    markdown = join(document_chunks(document))
    assert all(f"Footnote line {n} of the first page" in markdown for n in range(1, 8))
    assert "1.2 Scope" in markdown


def test_a_contents_pile_of_footnote_bait_reads_each_line_at_most_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = 0
    entry = structure.TreeBuilder._contents_entry

    def counted(self: structure.TreeBuilder, index: int, seen: set[str]) -> bool:
        nonlocal calls
        calls += 1
        return entry(self, index, seen)

    monkeypatch.setattr(structure.TreeBuilder, "_contents_entry", counted)
    pages = 40
    document = parse_pdf(samples.contents_note_pile_pdf(pages))
    lines = pages * 8 * 7
    assert 0 < calls <= 2 * lines
    assert document.sections == ()  # every line of the pile is the contents' or a note


def _paragraph_texts(document: Document) -> list[str]:
    return [plain_text(v.node) for v in walk(document.blocks) if isinstance(v.node, Paragraph)]


def test_a_paragraph_runs_onto_the_next_page_past_the_footnotes_at_the_foot() -> None:
    texts = _paragraph_texts(parse_pdf(samples.footnotes_across_pages_pdf()))
    whole = [t for t in texts if t.startswith("Body line 1 ")]
    assert len(whole) == 1 and whole[0].endswith("on to its end on the next page of the paper.")
    # each note is a paragraph of its own, set after the paragraph it interrupted
    notes = [
        "1https://example.org/first-note.",
        "2The second note, which wraps onto a line of its own.",
        "Preprint. Under review.",
    ]
    at = texts.index(whole[0])
    assert texts[at + 1 : at + 4] == notes


def test_a_block_of_small_type_longer_than_the_text_above_it_is_no_footnote() -> None:
    markdown = join(document_chunks(parse_pdf(samples.small_block_at_the_foot_pdf())))
    block = markdown.index("Small block line 1 stays put")
    assert markdown.index("The text before the block") < block < markdown.index("page, where")


def test_a_pile_of_footnotes_is_read_note_by_note_and_whole() -> None:
    pages = 100
    texts = _paragraph_texts(parse_pdf(samples.footnote_pile_pdf(pages)))
    notes = [t for t in texts if " of page " in t and t[:1].isdigit()]
    per_page = samples.NOTES_PER_PAGE
    assert len(notes) == per_page * pages
    assert notes[-1] == f"{per_page}Note {per_page} of page {pages}."


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
