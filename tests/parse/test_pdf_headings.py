"""Headings as physics and engineering classes print them: roman numbers on a line of their
own (REVTeX), faked small capitals (IEEEtran in Times), lettered subsections under roman
sections; and the first page's author and affiliation lines, which are never a section."""

from __future__ import annotations

import time

import pytest

from paperanchor.parse.pdf import parse_pdf
from paperanchor.parse.pdf.extract import read_pdf
from paperanchor.parse.pdf.structure import _front_matter
from paperanchor.render.markdown import document_chunks, join
from paperanchor.tree import Section, walk
from tests.conftest import FIXTURES
from tests.parse import pdf_samples as samples


def _sections(pdf: bytes) -> list[tuple[str, str | None, str]]:
    document = parse_pdf(pdf)
    return [
        (v.node.id, v.node.number, v.node.title.text)
        for v in walk(document.blocks)
        if isinstance(v.node, Section)
    ]


def test_a_roman_number_on_a_line_of_its_own_heads_the_title_under_it() -> None:
    assert _sections(samples.roman_headings_pdf())[0] == ("S1", "I", "INTRODUCTION")


def test_faked_small_capitals_are_read_as_whole_words() -> None:
    result, _ = read_pdf(samples.roman_headings_pdf())
    assert not isinstance(result, Exception)
    texts = [line.text for page in result for line in page.lines]
    assert "II. RELATED WORK" in texts and "REFERENCES" in texts
    assert not any("R ELATED" in text or "R EFERENCES" in text for text in texts)


def test_small_capital_headings_are_sections_and_their_bibliography_is_read() -> None:
    document = parse_pdf(samples.roman_headings_pdf())
    assert [(s.id, s.title.text) for s in document.sections] == [
        ("S1", "INTRODUCTION"),
        ("S2", "RELATED WORK"),
        ("bib", "REFERENCES"),
    ]
    assert [r.label for r in document.references] == ["[1]", "[2]", "[3]"]


def test_the_first_pages_author_and_affiliation_lines_are_never_a_section() -> None:
    document = parse_pdf(samples.roman_headings_pdf())
    assert document.authors == ("I. Ivanova", "A. Petrov", "K. Sato")
    titles = " ".join(title for _, _, title in _sections(samples.roman_headings_pdf()))
    assert "Ivanova" not in titles and "Department" not in titles
    # the lines stay in the paper's text: the front matter is read, not dropped
    assert "Part 10 runs on across the column" in join(document_chunks(document))


def test_a_word_of_one_capital_keeps_its_space_when_the_next_word_is_full_size() -> None:
    # REVTeX's "IV. A MODEL OF BOUNDARY SCATTERING": "A" is a word, not a small-caps split
    sections = _sections((FIXTURES / "pdf" / "revtex.pdf").read_bytes())
    assert ("S4", "IV", "A MODEL OF BOUNDARY SCATTERING") in sections


def test_lettered_subsections_under_roman_sections_take_latexmls_ids() -> None:
    revtex = _sections((FIXTURES / "pdf" / "revtex.pdf").read_bytes())
    assert ("S3.SS1", "A", "Thin spacers") in revtex and ("S5", "V", "DISCUSSION") in revtex
    # IEEEtran's subsections are italic at the body size, neither bold nor larger
    ieeetran = _sections((FIXTURES / "pdf" / "ieeetran.pdf").read_bytes())
    assert ("S3.SS2", "B", "Switching the rate") in ieeetran


def test_a_pdf_of_heading_bait_costs_time_in_proportion_to_its_lines() -> None:
    costs = []
    for pages in (10, 40):
        data = samples.roman_pile_pdf(pages)
        started = time.perf_counter()
        document = parse_pdf(data)
        seconds = time.perf_counter() - started
        costs.append(seconds / pages)
        print(f"{pages} pages of heading bait: {seconds:.2f} s, {len(document.sections)} sections")
    assert costs[1] < 2.5 * costs[0] + 0.05  # linear (loose: a child's start is fixed)
    assert costs[1] * 40 < 20


@pytest.mark.parametrize(
    ("text", "front"),
    [
        ("I. Ivanova,1 A. Petrov,2 and K. Sato1", True),
        ("I. Smith and K. Lee", True),
        ("1 Department of Physics, Harwick University, Oslo", True),
        ("A. Sato†", True),
        ("I. INTRODUCTION", False),
        ("1 Deep Learning, Neural Networks", False),
        ("II. Results and Discussion", False),
        ("2 Related Work", False),
    ],
)
def test_a_first_page_line_is_front_matter_by_its_names_or_institution(
    text: str, front: bool
) -> None:
    assert _front_matter(text) is front


def test_ieeetrans_index_terms_are_the_keywords_with_their_wrapped_line() -> None:
    document = parse_pdf((FIXTURES / "pdf" / "ieeetran.pdf").read_bytes())
    assert document.keywords == (
        "structural health monitoring, wireless sensor networks, adaptive sampling, "
        "energy efficiency"
    )
    assert document.abstract is not None
    assert "adaptive sampling" not in join(document_chunks(document)).split("**Keywords:**")[0]


def test_a_body_line_that_opens_with_keywords_stays_the_papers_text() -> None:
    # 2407.01603v3 lost two paragraphs of page 39 into its keywords this way
    lines = [
        (72.0, 770.0, 12.0, "Abstract"),
        (72.0, 750.0, 10.0, "The abstract says what the paper does in a sentence or two."),
        (72.0, 720.0, 12.0, "1 Introduction"),
        (72.0, 700.0, 10.0, "Searches run over the words of the paper and nothing else."),
        (72.0, 688.0, 10.0, "Keywords that users typed were kept for the study of searches."),
        (72.0, 676.0, 10.0, "The study ends here with a final sentence about searching."),
    ]
    data = samples.pages_pdf([samples.text_content(lines)])
    document = parse_pdf(data)
    assert document.keywords is None
    assert "Keywords that users typed were kept" in join(document_chunks(document))


def test_an_italic_line_of_its_own_is_a_subsection_an_italic_paragraph_is_not() -> None:
    data = samples.italic_subsections_pdf()
    assert _sections(data) == [("S1", "I", "INTRODUCTION"), ("S1.SS1", "A", "Detector")]
    # the italic paragraph stays text, under the subsection before it
    assert "B. Sato demonstrated considerable" in join(document_chunks(parse_pdf(data)))
