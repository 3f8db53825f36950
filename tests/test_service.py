"""The seven operations over fixture papers, with expectations derived by hand from the LaTeX."""

from __future__ import annotations

import asyncio
import functools
import re
from typing import Any

import pytest

from paperanchor import service
from paperanchor.errors import BadRequest, NotFound
from paperanchor.infer import sentences
from paperanchor.paper import LoadedPaper
from paperanchor.parse import parse_document
from paperanchor.refs import parse_ref
from paperanchor.render.markdown import tokens_of
from paperanchor.render.text import plain_text
from paperanchor.settings import Settings
from tests.corpus_pages import fixture_path, parsed
from tests.replay import papers_of

PUBLIC = "http://127.0.0.1:8000"


@functools.cache
def fixture(name: str) -> service.Paper:
    document = parse_document(fixture_path(name).read_bytes(), f"https://example.org/{name}.html")
    return service.Paper.open(LoadedPaper(document, f"local/{name}", f"local/{name}"))


def test_cite_returns_a_paragraphs_exact_text_and_its_sections_url() -> None:
    cited = service.cite(fixture("short"), "S2.p2", PUBLIC)
    assert cited == {
        "text": "Between two consecutive anchors the remaining paragraphs are aligned with a "
        "standard dynamic program. Because anchors are fixed, each of these problems is "
        "independent, and the total cost is the sum of the squares of the gap lengths rather "
        "than the product $nm$.",
        "url": f"{PUBLIC}/local/short/sections/S2.md",
        "anchor": "S2.p2",
        "permalink": None,  # a local document has no public address
        "hash": service.text_hash(cited["text"]),
        # the selectors of contract §10: the text around it, cut at words, and its section
        "prefix": "an inverted index of rare words.",
        "suffix": "Anchoring turns one large",
        "sectionPath": ["2 Method"],
        "textFragment": None,  # no permalink, no fragment
    }
    assert len(cited["hash"]) == 16


def test_citing_a_subsection_paragraph_points_at_the_subsection_without_a_fragment() -> None:
    cited = service.cite(fixture("full"), "S2.SS1.p1", PUBLIC)
    assert cited["url"] == f"{PUBLIC}/local/full/sections/S2.SS1.md"
    assert cited["anchor"] == "S2.SS1.p1"
    assert cited["text"].startswith(
        "A version of a document is a sequence of paragraphs "
        "$P=(p_{1},\\dots,p_{n})$. Each paragraph is mapped"
    )
    # the display equation sits inside the paragraph, as TeX, with its printed number
    assert "\n$J(p,q)=\\frac{\\sum_{f\\in\\phi(p)\\cap\\phi(q)}w_{f}}" in cited["text"]
    assert "#" not in cited["url"]


def test_citing_a_section_gives_its_whole_plain_text() -> None:
    cited = service.cite(fixture("short"), "conclusion", PUBLIC)
    assert cited["anchor"] == "S3"
    assert cited["text"].startswith("3 Conclusion\n\nAnchoring turns one large alignment problem")
    assert "**" not in cited["text"] and "$$" not in cited["text"]


def test_search_orders_by_distinct_terms_then_occurrences_then_document_order() -> None:
    # Counted by hand in fixtures/src/short/main.tex, "anchor"/"paragraph" as substrings:
    #   abstract 1/3, S1.p1 0/4, S1.p2 3/1, S1.p3 1/2, S2.p1 2/5, S2.p2 2/1, S3.p1 2/1.
    hits = service.search_paper(fixture("short"), "Anchor PARAGRAPH", 50)
    abstract_anchor = hits[1]["anchor"]
    assert [h["anchor"] for h in hits] == [
        "S2.p1",
        abstract_anchor,
        "S1.p2",
        "S1.p3",
        "S2.p2",
        "S3.p1",
        "S1.p1",
    ]
    assert hits[1]["sectionId"] == "abstract"
    assert [h["sectionId"] for h in hits[2:]] == ["S1", "S1", "S2", "S3", "S1"]


def test_search_snippets_are_cut_at_word_boundaries_around_the_first_match() -> None:
    hits = service.search_paper(fixture("short"), "bottleneck", 5)
    assert [h["anchor"] for h in hits] == ["S1.p1"]
    snippet = hits[0]["snippet"]
    assert snippet.startswith("…") and "bottleneck" in snippet
    assert not snippet.startswith("… ") and len(snippet) <= 2 * 150 + len("bottleneck") + 2
    words = plain_text(fixture("short").index.resolve("S1.p1").node).split()
    assert snippet.strip("…").split()[0] in words


def test_search_without_hits_is_an_empty_list_and_without_terms_a_bad_request() -> None:
    assert service.search_paper(fixture("short"), "zeppelin", 5) == []
    with pytest.raises(BadRequest, match="query"):
        service.search_paper(fixture("short"), "   ", 5)


def test_equation_returns_the_pages_tex_annotation_and_printed_number() -> None:
    result = service.equation(fixture("short"), "E1")
    assert result == {
        "id": "S2.E1",
        "number": "1",
        "latex": "\\mu_{i}=\\max_{j}s(p_{i},q_{j})-\\max_{j\\neq j^{\\ast}_{i}}s(p_{i},q_{j}),"
        "\\qquad j^{\\ast}_{i}=\\arg\\max_{j}s(p_{i},q_{j}).",
    }


def test_an_equation_group_row_and_the_whole_group() -> None:
    row = service.equation(fixture("full"), "E3")
    assert row["id"] == "S2.E3" and row["number"] == "3"
    group = service.equation(fixture("full"), "A2.EGx1")
    assert group["latex"].startswith("\\begin{aligned}\\displaystyle C(\\sigma) & ")
    assert group["latex"].endswith("\\end{aligned}")
    assert group["latex"].count(" \\\\ ") == 2  # three rows


def test_a_reference_with_an_arxiv_id_and_one_with_a_doi_parse_into_fields() -> None:
    refs = service.references(fixture("short"))["references"]
    vaswani, lecun = refs[0], refs[1]
    assert vaswani["arxiv"] == "1706.03762"
    assert vaswani["title"] == "Attention is all you need"
    assert vaswani["year"] == "2017"
    assert vaswani["authors"][:2] == ["A. Vaswani", "N. Shazeer"] and len(vaswani["authors"]) == 8
    assert lecun["doi"] == "10.1038/nature14539"
    assert lecun["authors"] == ["Y. LeCun", "Y. Bengio", "G. Hinton"]
    assert lecun["year"] == "2015" and lecun["title"] == "Deep learning"


@pytest.mark.parametrize("spelling", ["bib.bib2", "2", "[2]"])
def test_one_reference_by_id_number_or_bracket_lists_where_it_is_cited(spelling: str) -> None:
    entry = service.references(fixture("short"), spelling)
    assert entry["id"] == "bib.bib2"
    assert entry["citedIn"] == ["S1.p1"]


def test_author_year_references_number_by_position() -> None:
    refs = service.references(fixture("authoryear"))["references"]
    assert [r["number"] for r in refs] == [str(i) for i in range(1, len(refs) + 1)]
    assert all(r["year"] and r["year"] in r["text"] for r in refs)
    assert service.references(fixture("authoryear"), "1")["id"] == refs[0]["id"]


def test_an_unknown_reference_is_not_found_naming_it() -> None:
    with pytest.raises(NotFound, match='"99"'):
        service.references(fixture("short"), "99")


def test_figure_and_table_by_short_alias() -> None:
    table = service.figure(fixture("full"), "T1")
    assert table["kind"] == "table" and table["id"] == "S4.T1" and table["number"] == "1"
    assert table["headerRows"] == 2
    # the multicolumn header repeats in both columns it spans; multirow repeats downwards
    assert table["rows"][0] == ["Method", "Features", "Edit type", "Edit type"]
    assert table["rows"][1][:2] == ["Method", "Features"]
    figure = service.figure(fixture("full"), "F1")
    assert figure["kind"] == "figure" and len(figure["panels"]) == 2
    assert all(url.startswith("https://example.org/full/") for url in figure["images"])
    assert figure["sectionId"] == "S4"


def test_a_section_is_not_a_figure() -> None:
    with pytest.raises(NotFound, match="S1 is a section"):
        service.figure(fixture("short"), "S1")


def test_an_unknown_anchor_suggests_the_nearest_section() -> None:
    with pytest.raises(NotFound) as caught:
        service.read(fixture("short"), "intro")
    assert caught.value.detail.startswith(
        'No anchor "intro" in local/short; did you mean introduction (S1)'
    )


def test_read_resolves_ids_aliases_and_slugs_case_insensitively() -> None:
    paper = fixture("full")
    by_id = service.read(paper, "S2.SS1").markdown
    assert by_id.startswith("## 2.1 Paragraph representation\n")
    for spelling in ("S2.1", "paragraph-representation", "PARAGRAPH-Representation", "s2.ss1"):
        assert service.read(paper, spelling).markdown == by_id


def test_read_truncates_at_a_block_boundary_and_says_where_to_fetch_the_rest() -> None:
    paper = fixture("full")
    full = service.read(paper, "S2", 100_000)
    cut = service.read(paper, "S2", 300)
    assert not full.truncated and cut.truncated
    assert tokens_of(cut.markdown) == cut.tokens <= 300
    last = cut.markdown.rstrip("\n").rsplit("\n", 1)[-1]
    match = re.fullmatch(
        r"…\[truncated: (\d+) more tokens; fetch /local/full/sections/S2\.md\]", last
    )
    assert match
    shown = cut.markdown[: cut.markdown.rindex("\n\n…[truncated")]
    assert full.markdown.startswith(shown + "\n\n")  # whole blocks
    assert int(match.group(1)) == tokens_of(full.markdown) - tokens_of(shown)


def test_a_first_block_too_long_for_the_budget_is_cut_inside_at_a_sentence() -> None:
    paper = fixture("full")
    full = service.read(paper, "S2", 100_000)
    cut = service.read(paper, "S2", 100)
    shown = cut.markdown[: cut.markdown.rindex("\n\n…[truncated")]
    assert tokens_of(cut.markdown) == cut.tokens <= 100 and shown.endswith(" …")
    body = shown.removesuffix(" …")
    assert full.markdown.startswith(body)
    assert body[-1] in ".?!" or body[-1].isalnum()  # a sentence's or a word's end


def test_truncation_of_a_subsection_names_its_alias() -> None:
    cut = service.read(fixture("full"), "S2.SS1", 100)
    assert cut.markdown.rstrip().endswith("fetch /local/full/sections/S2.1.md]")


def test_footnotes_come_at_the_end_of_the_section_that_references_them() -> None:
    markdown = service.read(fixture("full"), "S1").markdown
    body, notes = markdown.rsplit("\n\n", 1)
    assert "[^1]" in body
    assert notes.startswith("[^1]: A version history of ten or more revisions")


def test_outline_has_the_spec_shape_and_extractive_inference() -> None:
    result = service.outline(fixture("short"))
    assert result["schema"] == 1 and result["inferred"] == "ready"
    assert set(result) == {
        "schema",
        "paper",
        "idv",
        "version",
        "versionConfirmed",
        "source",
        "sourceUrl",
        "title",
        "authors",
        "abstract",
        "tldr",
        "contributions",
        "inferred",
        "tokens",
        "counts",
        "sections",
        "quality",
        "license",
        "metadata",  # null: PaperService.outline fills it in for an arXiv paper
    }
    assert result["authors"] == ["Mira Okonkwo", "Tobias Lindqvist"]
    assert [s["slug"] for s in result["sections"]] == [
        "introduction",
        "method",
        "conclusion",
        "references",
    ]
    # contributions are the introduction's list, verbatim
    assert result["contributions"][0].startswith("a scoring rule that marks a paragraph")
    assert len(result["contributions"]) == 3


@pytest.mark.parametrize("name", ["short", "full", "authoryear"])
def test_every_inferred_sentence_appears_verbatim_in_the_paper(name: str) -> None:
    paper = fixture(name)
    result = service.outline(paper)
    text = "\n".join(plain_text(b) for b in paper.document.blocks)
    text += "\n" + plain_text(paper.document.abstract)  # type: ignore[arg-type]
    flat = " ".join(text.split())
    for sentence in [*sentences(result["tldr"] or ""), *(result["contributions"] or [])]:
        assert " ".join(sentence.split()) in flat


@pytest.mark.parametrize(
    "name", ["html/2501.11120v1.arxiv.html", "html/1808.08002.ar5iv.html", "generated/scipy.html"]
)
def test_inference_on_real_papers_is_extractive(name: str) -> None:
    document = parsed(name)
    paper = service.Paper.open(LoadedPaper(document, "x", "x"))
    result = service.outline(paper)
    flat = " ".join(" ".join(plain_text(b) for b in document.blocks).split())
    if document.abstract is not None:
        flat += " " + " ".join(plain_text(document.abstract).split())
    assert result["tldr"]
    for sentence in [*sentences(result["tldr"]), *(result["contributions"] or [])]:
        assert " ".join(sentence.split()) in flat


def test_a_cut_whole_paper_points_at_its_outline() -> None:
    cut = service.read(fixture("full"), None, 100)
    assert cut.truncated
    assert cut.markdown.rstrip().endswith("fetch /local/full/outline.json]")
    assert cut.markdown.startswith("# Stable Paragraph Identifiers Across Manuscript Revisions")


@pytest.mark.parametrize(
    ("asked", "idv", "confirmed", "pinned"),
    [
        ("2501.11120v1", "2501.11120v1", True, True),
        ("2501.11120", "2501.11120v1", True, False),  # the latest version may change
        ("2307.00235v1", "2307.00235v1", False, False),  # ar5iv: the version is not confirmed
        ("2307.00235v1", "2307.00235", False, False),
        ("2501.11120v1", "2501.11120v2", True, False),  # another version answered
        ("local/short", "local/short", False, False),
    ],
)
def test_an_answer_is_pinned_only_when_the_version_asked_for_answered_confirmed(
    asked: str, idv: str, confirmed: bool, pinned: bool
) -> None:
    served = service.Served({}, parse_ref(asked), idv, confirmed)
    assert served.pinned is pinned


def test_each_operation_says_which_paper_answered_beside_its_value(tmp_path) -> None:
    settings = Settings(cache_dir=tmp_path, local_dir=fixture_path("short").parent, offline=True)

    async def main() -> list[service.Served[Any]]:
        async with papers_of(settings, parser_version="test") as library:
            paper_service = service.PaperService(library, PUBLIC)
            return [
                await paper_service.outline("local/short"),
                await paper_service.read("local/short", "S1"),
                await paper_service.cite("local/short", "S2.p2"),
                await paper_service.cite_text("local/short", "anchors are fixed"),
                await paper_service.references("local/short"),
                await paper_service.reference("local/short", "1"),
                await paper_service.reference_answer("local/short", "1"),
                await paper_service.equation("local/short", "E1"),
                await paper_service.search_paper("local/short", "anchor"),
                await paper_service.view("local/short"),
            ]

    answers = asyncio.run(main())

    local = parse_ref("local/short")
    assert {(a.asked, a.idv, a.pinned, a.pending) for a in answers} == {
        (local, "local/short", False, False)
    }
    outline, read, cite = (answer.value for answer in answers[:3])
    assert outline["idv"] == "local/short" and outline["metadata"] is None
    assert read.markdown.startswith("# 1 ")
    assert cite["anchor"] == "S2.p2"
    assert answers[6].value["reference"]["citedIn"]
