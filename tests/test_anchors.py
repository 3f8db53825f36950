"""Anchors resolve by id, alias, slug and the labels a paper prints (contract §3), in linear
time."""

from __future__ import annotations

import pytest

from paperanchor.anchors import AnchorIndex, label_queries
from paperanchor.errors import NotFound
from paperanchor.parse import parse_document
from paperanchor.tree import Document, Inline, Paragraph, Section, Text
from tests.corpus_pages import fixture_path, parsed


def _fixture_index(name: str) -> AnchorIndex:
    document = parse_document(fixture_path(name).read_bytes(), "https://example.org/")
    return AnchorIndex.build(document, f"local/{name}")


# What a reader quotes from the text -> the node it names. The fixture `full` prints sections
# 1-5 with 2.1, 2.1.1, 2.2, appendices A (with A.1) and B, tables 1-2, figure 1 with panels
# (a) and (b), equations (1)-(6), Definition 1, Lemma 1 and Theorem 2.
FULL_LABELS = [
    ("2.1", "S2.SS1"),
    ("§2.1", "S2.SS1"),
    ("§ 2.1", "S2.SS1"),
    ("Section 2.1", "S2.SS1"),
    ("section 2.1.", "S2.SS1"),
    ("Sec. 2.1", "S2.SS1"),
    ("2.1.1", "S2.SS1.SSS1"),
    ("3", "S3"),
    ("Appendix A", "A1"),
    ("appendix B", "A2"),
    ("App. A", "A1"),
    ("A.1", "A1.SS1"),
    ("Table 2", "S4.T2"),
    ("Tab. 1", "S4.T1"),
    ("table 1", "S4.T1"),
    ("Figure 1", "S4.F1"),
    ("Fig. 1", "S4.F1"),
    ("Fig. 1b", "S4.F0.sf2"),
    ("Fig. 1(a)", "S4.F0.sf1"),
    ("Figure 1 (b)", "S4.F0.sf2"),
    ("Eq. (4)", "S2.E4"),
    ("Eq. 4", "S2.E4"),
    ("Equation 6", "A1.E6"),
    ("(5)", "S2.E5"),
    ("(1)", "S2.E1"),
    ("Theorem 2", "Thmtheorem2"),
    ("Thm. 2", "Thmtheorem2"),
    ("Lemma 1", "Thmtheorem1"),
    ("Definition 1", "Thmdefinition1"),
    ("Def. 1", "Thmdefinition1"),
]


@pytest.mark.parametrize(("label", "node_id"), FULL_LABELS)
def test_a_printed_label_resolves_to_the_node_it_names(label: str, node_id: str) -> None:
    assert _fixture_index("full").resolve(label).node.id == node_id


# The same on pages we did not write: IEEE numbering (1808.08002 prints "II-A", "TABLE II"),
# numbered theorems and questions (1311.0066), an appendix numbered by a roman numeral.
CORPUS_LABELS = [
    ("html/1808.08002.ar5iv.html", "II-A", "S2.SS1"),
    ("html/1808.08002.ar5iv.html", "Section II-A", "S2.SS1"),
    ("html/1808.08002.ar5iv.html", "Table II", "S4.T2"),
    ("html/1808.08002.ar5iv.html", "TABLE I", "S2.T1"),
    ("html/1311.0066.arxmliv.html", "Theorem 1.2", "S1.Thmtheorem2"),
    ("html/1311.0066.arxmliv.html", "Question 1.1", "S1.Thmtheorem1"),
    ("html/1311.0066.arxmliv.html", "Definition 2.1", "S2.Thmtheorem1"),
    ("generated/synthetic.html", "Table 2", "A2.T2"),
    ("generated/synthetic.html", "Lemma 2.3", "S2.Thmtheorem3"),
    ("generated/hypergrad.html", "Algorithm 2", "alg2"),
    ("generated/herding.html", "Prop. 1", "Thmprop1"),
    ("html/2410.00260v2.arxiv.html", "Table 2", "S3.T2"),
]


@pytest.mark.parametrize(("page", "label", "node_id"), CORPUS_LABELS)
def test_a_printed_label_resolves_on_real_pages(page: str, label: str, node_id: str) -> None:
    index = AnchorIndex.build(parsed(page), page)
    assert index.resolve(label).node.id == node_id


def test_ids_aliases_and_slugs_win_over_printed_labels() -> None:
    index = _fixture_index("full")
    assert index.resolve("S3").node.id == "S3"
    assert index.resolve("S2.1").node.id == "S2.SS1"  # alias
    assert index.resolve("model").node.id == "S2"  # slug
    assert index.resolve("E1").node.id == "S2.E1"  # short alias


@pytest.mark.parametrize(
    "label",
    ["Table 9", "Figure 7", "(42)", "Theorem 5", "Appendix Z", "9.9", "Fig. 1z", "Section"],
)
def test_a_label_the_paper_does_not_print_is_not_found(label: str) -> None:
    with pytest.raises(NotFound):
        _fixture_index("full").resolve(label)


def test_a_long_anchor_is_not_read_as_a_printed_label() -> None:
    assert label_queries("Table " + "1" * 100) == []
    assert label_queries("x" * 100_000) == []


def _alike_sections(count: int) -> Document:
    sections = tuple(
        Section(
            f"S{i}",
            "section",
            str(i),
            f"{i} ",
            Inline("Results", "Results"),
            1,
            (Paragraph(f"S{i}.p1", (Text(f"S{i}.p1.1", Inline("x", "x")),)),),
        )
        for i in range(1, count + 1)
    )
    return Document(Inline("T", "T"), (), None, None, sections)


def test_sections_titled_alike_get_numbered_slugs_in_document_order() -> None:
    index = AnchorIndex.build(_alike_sections(20_000), "local/alike")
    assert index.slug_of["S1"] == "results"
    assert index.slug_of["S2"] == "results-2"
    assert index.slug_of["S20000"] == "results-20000"
    assert index.resolve("results-12345").node.id == "S12345"


def test_a_section_titled_paper_leaves_the_anchor_paper_to_the_whole_paper() -> None:
    document = _alike_sections(2)
    titled = tuple(
        Section(s.id, s.kind, s.number, s.tag, Inline("Paper", "Paper"), 1, s.blocks)
        for s in document.sections
    )
    index = AnchorIndex.build(Document(document.title, (), None, None, titled), "local/p")
    assert index.slug_of["S1"] == "paper-2" and index.slug_of["S2"] == "paper-3"
