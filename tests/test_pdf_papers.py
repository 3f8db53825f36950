"""Every corpus PDF read into the tree and served by the operations (contract §3 "From a PDF").

Each paper of ../shared/corpus/pdf (and its one-page excerpts) is parsed from its bytes and
opened as a local paper; then outline, a `read` of each top-level section, `cite`,
`search_paper` and `references` run on it. The expectations were checked by eye against the
PDF (pdftotext and the pages themselves): title words, an author, how the abstract opens, the
top-level section ids, the bibliography's size and the section a distinctive word is in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

from paperanchor import service
from paperanchor.paper import LoadedPaper
from paperanchor.parse.pdf import parse_pdf
from paperanchor.render.text import plain_text
from paperanchor.tree import Paragraph, walk
from tests.conftest import CORPUS

PDFS = CORPUS / "pdf"
_ARTICLE = [f"S{n}" for n in range(1, 10)]


@dataclass(frozen=True)
class Expected:
    file: str
    title: str
    author: str | None
    abstract: str
    sections: list[str]
    references: tuple[int, int]
    query: str
    found_in: str


PAPERS = [
    Expected(
        "1111.2011v2.pdf",
        "Quantum Criticality for Extended Nodes on a Bethe Lattice",
        "Zlatko Tešanović",  # TeX's spacing accents joined to their letters
        "Theoretical description of anisotropic systems",
        [*_ARTICLE[:5], "Sx1", "bib"],  # REVTeX: roman headings, no References heading
        (20, 20),
        "Bethe lattice",
        "S1",
    ),
    Expected(
        "1201.3077v1.pdf",  # printed from a browser: every glyph set at size 1 and scaled
        "A Bijective String Sorting Transform",
        "David Allen Scott",
        "Given a string of characters, the Burrows-Wheeler Transform rearranges",
        _ARTICLE[:7],
        (0, 0),  # the paper has no bibliography: its citations print as [?]
        "Lyndon",
        "S4",
    ),
    Expected(
        "1804.07821v1.pdf",
        "Aggregated Multicolumn Dilated Convolution Network",
        "Jonathan Ventura",
        "We propose the use of dilated filters",
        [*_ARTICLE[:5], "Sx1", "bib"],
        (28, 28),
        "TRANCOS",
        "S3.SS2",
    ),
    Expected(
        "2203.00130v1.pdf",  # ACM: the abstract has no heading
        "Paper Plain: Making Medical Research Papers Approachable",
        "MARTI A. HEARST",
        "When seeking information not covered in patient-friendly documents",
        [*_ARTICLE, "Sx1", "bib", "A1", "A2", "A3", "A4"],
        (111, 111),
        "gists",
        "S7.SS3",
    ),
    Expected(
        "2206.10883v3.pdf",
        "Multi-LexSum: Real-World Summaries of Civil Rights Lawsuits",
        "Margo Schlanger",
        "With the advent of large language models",
        [*_ARTICLE[:6], "Sx1", "bib", "A1", "A2", "A3", "A4", "A5", "A6"],
        (64, 64),
        "Clearinghouse",
        "S1",
    ),
    Expected(
        "2302.07302v1.pdf",  # authors in a grid of three columns
        "CiteSee: Augmenting Citations in Scientific Papers",
        "Amy X. Zhang",
        "When reading a scholarly article, inline citations help researchers",
        [*_ARTICLE[:8], "Sx1", "bib"],
        (65, 65),
        "CiteSee",
        "S4.SS3",  # "4.3 [D1] Discover …": a heading that opens with a bracket
    ),
    Expected(
        "2304.02623v1.pdf",
        "Beyond Summarization: Designing AI Support",
        "David Sontag",
        "Large language models have introduced exciting new opportunities",
        [*_ARTICLE[:4], "Sx1", "bib"],
        (35, 35),
        "expository",
        "S1",
    ),
    Expected(
        "2407.01603v3.pdf",  # 79 pages, a table of contents, 577 numbered entries
        "LARGE LANGUAGE MODELS AND AUTONOMOUS AGENTS IN CHEMISTRY",
        "Andrew D. White",
        "Large language models (LLMs) have emerged as powerful tools in chemistry",
        [*_ARTICLE[:7], "Sx1", "bib"],
        (577, 577),
        "SMILES",
        "S3.SS2.SSS2",
    ),
    Expected(
        "2501.10120v1.pdf",  # author-year: wrapped entry lines start with a year
        "PaSa: An LLM Agent for Comprehensive Academic Paper Search",
        "Weinan E",
        "We introduce PaSa, an advanced Paper Search agent",
        [*_ARTICLE[:6], "bib", "A1", "A2", "A3", "A4", "A5"],
        (37, 37),
        "AutoScholarQuery",
        "S5.SS4",
    ),
    Expected(
        "excerpts/1903.10676-1page.pdf",  # a page from the middle: no title, no sections
        "",
        None,
        "",
        ["body"],
        (0, 0),
        "SCIBERT",
        "body",
    ),
    Expected(
        "excerpts/2305.03393v1-pg9.pdf",
        "",
        None,
        "",
        ["body"],
        (0, 0),
        "OTSL",
        "body",
    ),
]
# papers that cite by superscript numbers: no bracket in the text to link an entry from
SUPERSCRIPTS = {"1111.2011v2.pdf", "2407.01603v3.pdf"}
_IDS = [p.file.removeprefix("excerpts/").removesuffix(".pdf") for p in PAPERS]


def test_the_table_covers_every_corpus_pdf() -> None:
    on_disk = {str(p.relative_to(PDFS)) for p in PDFS.rglob("*.pdf")}
    assert on_disk == {p.file for p in PAPERS}


@functools.cache
def _paper(file: str) -> service.Paper:
    path = PDFS / file
    name = Path(file).stem
    document = parse_pdf(path.read_bytes(), path.as_uri())
    return service.Paper.open(LoadedPaper(document, f"local/{name}", f"local/{name}"))


@pytest.mark.parametrize("expected", PAPERS, ids=_IDS)
def test_the_outline_of_a_pdf_has_its_title_authors_abstract_and_sections(
    expected: Expected,
) -> None:
    paper = _paper(expected.file)
    outline = service.outline(paper)
    assert expected.title in outline["title"]
    if not expected.title:
        assert outline["title"] == ""  # none is made up from a heading
    if expected.author is not None:
        assert expected.author in outline["authors"]
    assert outline["abstract"].startswith(expected.abstract)
    assert [s["id"] for s in outline["sections"]] == expected.sections
    low, high = expected.references
    assert low <= outline["counts"]["references"] <= high
    assert paper.document.quality == "degraded"
    stem = Path(expected.file).stem
    assert paper.document.page_idv == (None if "excerpts" in expected.file else stem)


@pytest.mark.parametrize("expected", PAPERS, ids=_IDS)
def test_each_top_level_section_of_a_pdf_reads_with_its_heading_and_text(
    expected: Expected,
) -> None:
    paper = _paper(expected.file)
    for section in paper.document.sections:
        result = service.read(paper, section.id, 100_000)
        heading, _, body = result.markdown.partition("\n\n")
        assert heading.startswith("#") and section.title.text.split()[0] in heading
        assert len(body.split()) >= 5, (section.id, result.markdown[:200])
        assert result.to_json()["id"] == section.id


@pytest.mark.parametrize("expected", PAPERS, ids=_IDS)
def test_citing_a_pdfs_first_paragraph_gives_its_text_and_section_url(
    expected: Expected,
) -> None:
    paper = _paper(expected.file)
    first = paper.document.sections[0]
    cited = service.cite(paper, f"{first.id}.p1", "https://paperanchor.test")
    assert cited["anchor"] == f"{first.id}.p1"
    stem = Path(expected.file).stem
    assert cited["url"] == f"https://paperanchor.test/local/{stem}/sections/{first.id}.md"
    assert len(cited["text"].split()) >= 10


@pytest.mark.parametrize("expected", PAPERS, ids=_IDS)
def test_searching_a_pdf_finds_a_distinctive_word_where_the_paper_has_it(
    expected: Expected,
) -> None:
    hits = service.search_paper(_paper(expected.file), expected.query, 5)
    assert expected.found_in in [hit["sectionId"] for hit in hits]
    assert all(expected.query.lower() in hit["snippet"].lower() for hit in hits[:1])


_CITING = [p for p in PAPERS if p.references[1]]


@pytest.mark.parametrize("expected", _CITING, ids=[Path(p.file).stem for p in _CITING])
def test_a_pdfs_bibliography_is_split_into_numbered_entries(expected: Expected) -> None:
    paper = _paper(expected.file)
    entries = service.references(paper)["references"]
    assert [e["number"] for e in entries] == [str(n) for n in range(1, len(entries) + 1)]
    assert all(e["id"] == f"bib.bib{e['number']}" for e in entries)
    first = service.references(paper, "1")
    assert first["id"] == "bib.bib1" and first["text"] == entries[0]["text"]
    with_title = [e for e in entries if e["title"]]
    assert len(with_title) >= 0.6 * len(entries) or expected.file.startswith("1111")
    labels = {r.label for r in paper.document.references}
    if all(label.startswith("[") for label in labels) and expected.file not in SUPERSCRIPTS:
        # bracketed numbers in the text link paragraphs to their entries
        cited = [service.references(paper, e["id"])["citedIn"] for e in entries]
        assert sum(1 for anchors in cited if anchors) >= 0.5 * len(entries)


def test_acm_front_matter_keeps_its_keywords_out_of_the_abstract() -> None:
    document = _paper("2203.00130v1.pdf").document
    assert document.keywords is not None
    assert document.keywords.startswith("augmented reading; plain language summaries")
    assert document.abstract is not None
    text = plain_text(document.abstract)
    assert "CCS Concepts" not in text and "Key Words" not in text


def test_a_contents_across_two_pages_stays_out_of_the_keywords_and_the_text() -> None:
    # 2407.01603v3: its contents runs from page 1, past the "∗Corresponding author" footnote,
    # onto page 2; the keywords before it took the rest of it, and its last two entries were
    # read as an abstract paragraph
    paper = _paper("2407.01603v3.pdf")
    keywords = "Large Language Model, LLM, LLM agent, agent, science, chemistry"
    assert paper.document.keywords == keywords
    whole = service.read(paper, None, 200_000).markdown
    assert ". . . . ." not in whole
    assert "7 Conclusions 42" not in whole
    assert f"**Keywords:** {keywords}\n" in whole
    assert service.outline(paper)["abstract"].endswith("LLMs-in-science.")


@pytest.mark.parametrize(
    ("file", "keywords"),
    [
        # ACM's "KEYWORDS" on a line of its own, then "ACM Reference Format:": the keywords
        # were dropped with the front matter after them
        ("2302.07302v1.pdf", "reading interfaces, scientific papers, personalization"),
        # the same title, then "1 INTRODUCTION": the keywords were an abstract paragraph
        (
            "2304.02623v1.pdf",
            "AI-Assisted Writing, Summarization, Expert Writing, Augmented Writing, "
            "Expository Writing.",
        ),
    ],
)
def test_keywords_under_a_title_of_their_own_are_the_keywords_and_nothing_after(
    file: str, keywords: str
) -> None:
    paper = _paper(file)
    assert paper.document.keywords == keywords
    abstract = service.outline(paper)["abstract"]
    assert keywords[:20] not in abstract
    whole = service.read(paper, None, 200_000).markdown
    assert whole.count(keywords) == 1  # once, as the keywords
    assert f"**Keywords:** {keywords}\n" in whole


def _paragraphs(file: str) -> list[str]:
    document = _paper(file).document
    return [plain_text(v.node) for v in walk(document.blocks) if isinstance(v.node, Paragraph)]


def test_a_paragraph_that_runs_past_the_footnotes_onto_the_next_page_stays_one() -> None:
    # 2206.10883v3: 9 pt notes under 10 pt text, then "Preprint. Under review.", cut the
    # paragraph in two at each of four page ends
    texts = _paragraphs("2206.10883v3.pdf")
    joined = [t for t in texts if "captures the key d" in t]
    assert len(joined) == 1 and "each case’s timeline. For a typical summary" in joined[0]
    assert not any(t.startswith("each case’s timeline") for t in texts)
    at = texts.index(joined[0])
    assert texts[at + 1 : at + 4] == [
        "1https://clearinghouse.net.",
        "2The dataset can be accessed at https://multilexsum.github.io.",
        "Preprint. Under review.",
    ]


def test_footnotes_are_a_paragraph_each_and_an_abstract_set_small_is_none() -> None:
    texts = _paragraphs("1201.3077v1.pdf")
    assert "∗yogi@cs.Technion.ac.IL" in texts
    assert "‡David a Scott@email.com" in texts
    # 2501.10120v1's abstract, a column of 10 pt under 10.9 pt text, is no footnote: it
    # stays one paragraph, and the notes under it are their own
    abstract = _paper("2501.10120v1.pdf").document.abstract
    assert abstract is not None
    texts = [plain_text(v.node) for v in walk(abstract.blocks) if isinstance(v.node, Paragraph)]
    assert texts[0].startswith("We introduce PaSa")
    assert texts[0].endswith("https://github.com/bytedance/pasa.")
    assert texts[1:] == ["∗Equal contribution.", "†Corresponding author."]


def test_lettered_items_are_paragraphs_and_a_variable_opening_a_line_is_none() -> None:
    texts = _paragraphs("2206.10883v3.pdf")
    # "a." items whose lines wrap under their text were cut at each line
    assert (
        "a. Long summaries typically contain multiple paragraphs, covering the case background,"
        " parties involved, and proceedings. Major case events and outcomes typically receive"
        " a paragraph each."
    ) in texts
    assert "b. Case type" in texts and "c. Case name" in texts
    # 1111.2011v2: "… a correction to the value of" / "r. Such a shift …" is one sentence
    joined = [t for t in _paragraphs("1111.2011v2.pdf") if "correction to the value of" in t]
    assert len(joined) == 1 and "value of r. Such a shift" in joined[0]
