"""Citations keep their printed label; a label that is a BibTeX key prints the entry's number."""

from __future__ import annotations

import tracemalloc

import pytest

from paperanchor import service
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from paperanchor.tree import Text
from tests.corpus_pages import PAIR_PAGES, PAPER_PAGES, fixture_path, page_root, parsed


def _paper(document):  # type: ignore[no-untyped-def]
    return Paper.open(LoadedPaper(document, "local/x", "local/x"))


def test_a_citation_printed_as_its_key_prints_the_entrys_number() -> None:
    # fixtures/src/authoryear: \bibitem{DBLP:journals/corr/SzegedyVISW15} has no natbib label,
    # so LaTeXML printed "(DBLP:journals/corr/SzegedyVISW15, )"
    paper = _paper(parse_document(fixture_path("authoryear").read_bytes()))
    markdown = paper.markdown()
    assert "DBLP:" not in markdown.split("# References")[0]
    assert "as in image classification (5), did not change" in markdown
    entry = service.references(paper, "bib.bib5")
    assert entry["number"] == "5" and entry["citedIn"] == ["S4.p2"]
    # the author-year citations keep their printed labels
    assert "Okafor (2019)" in markdown


def test_keys_of_a_page_without_brackets_become_bracketed_numbers() -> None:
    markdown = _paper(parsed("html/2201.00020.ar5iv.html")).markdown()
    assert "unsolved mysteries in physics [1] ; [2] ." in markdown
    assert "dyson2014graviton" not in markdown


def test_a_year_or_a_number_as_the_link_of_a_citation_is_its_label() -> None:
    html = (
        b"<html><body><article class='ltx_document'><section class='ltx_section' id='S1'>"
        b"<h2 class='ltx_title'>1 A</h2><div class='ltx_para' id='S1.p1'><p class='ltx_p'>"
        b"<cite class='ltx_cite'>Vaswani et al. (<a class='ltx_ref' href='#bib.bib1'>2017a</a>)"
        b"</cite> and <cite class='ltx_cite'>[<a class='ltx_ref' href='#bib.bib2'>Vas17</a>]</cite>"
        b"</p></div></section><section class='ltx_bibliography' id='bib'><ul class='ltx_biblist'>"
        b"<li class='ltx_bibitem' id='bib.bib1'><span class='ltx_tag ltx_tag_bibitem'>"
        b"Vaswani et al. (2017a)</span><span class='ltx_bibblock'>A. Vaswani.</span></li>"
        b"<li class='ltx_bibitem' id='bib.bib2'><span class='ltx_tag ltx_tag_bibitem'>[Vas17]"
        b"</span><span class='ltx_bibblock'>A. Vaswani.</span></li></ul></section>"
        b"</article></body></html>"
    )
    markdown = _paper(parse_document(html)).markdown()
    assert "Vaswani et al. (2017a) and [Vas17]" in markdown


# -- where an entry is cited (Reference.citedIn) ------------------------------------------------


def _linked_entries(name: str, document) -> set[str]:  # type: ignore[no-untyped-def]
    """The bibliography entries the page's own links point at, anywhere on the page."""
    entries = {reference.id for reference in document.references}
    linked = {
        href.rpartition("#")[2] for href in page_root(name).xpath("//a[@href]/@href") if "#" in href
    }
    return linked & entries


@pytest.mark.parametrize("name", PAPER_PAGES + PAIR_PAGES)
def test_every_entry_the_page_cites_is_cited_somewhere(name: str) -> None:
    # a citation in a table cell, a caption, a footnote or a theorem's label counts (2404.09516v1
    # cites 45 of its 269 entries only in its comparison tables); nothing else does
    document = parsed(name)
    cited_in = _paper(document).cited_in()
    assert set(cited_in) == _linked_entries(name, document)
    assert all(cited_in.values())


def test_a_citation_outside_a_paragraph_names_the_block_that_holds_it() -> None:
    cases = [
        ("html/2404.09516v1.arxiv.html", "bib.bib114", ["S2.T5"]),  # a table's cell
        ("html/2403.16952v1.arxiv.html", "bib.bib9", ["S3.SS1.SSS0.Px2.p1"]),  # a footnote
        # a theorem's label: "Proposition 2.14 (Holliday and Pacuit [3])"
        ("html/split-cycle-axiomatic-characterization.arxiv.html", "bib.bib3", ["S2.Thmtheorem14"]),
    ]
    for name, entry, holders in cases:
        assert service.references(_paper(parsed(name)), entry)["citedIn"] == holders, name


def test_a_caption_that_cites_names_its_figure() -> None:
    html = (
        b"<html><body><article class='ltx_document'><section class='ltx_section' id='S1'>"
        b"<h2 class='ltx_title'>1 A</h2><figure class='ltx_figure' id='S1.F1'>"
        b"<img class='ltx_graphics' src='x1.png' alt=''/><figcaption class='ltx_caption'>"
        b"<span class='ltx_tag ltx_tag_figure'>Figure 1: </span>After "
        b"<cite class='ltx_cite'>[<a class='ltx_ref' href='#bib.bib1'>1</a>]</cite>.</figcaption>"
        b"</figure></section><section class='ltx_bibliography' id='bib'><ul class='ltx_biblist'>"
        b"<li class='ltx_bibitem' id='bib.bib1'><span class='ltx_tag ltx_tag_bibitem'>[1]"
        b"</span><span class='ltx_bibblock'>A. Vaswani.</span></li></ul></section>"
        b"</article></body></html>"
    )
    document = parse_document(html)
    assert service.references(_paper(document), "1")["citedIn"] == ["S1.F1"]


def test_a_footnote_mark_repeated_costs_its_citations_once() -> None:
    # hostile: one footnote citing 2,000 entries, its mark repeated 2,000 times; each mark
    # copying the citations would hold 4,000,000
    entries = 2000
    cites = "".join(f"<a class='ltx_ref' href='#bib.bib{i}'>{i}</a>" for i in range(entries))
    note = (
        "<span class='ltx_note ltx_role_footnote' id='footnote1'><span class='ltx_note_outer'>"
        f"<span class='ltx_note_content'>See <cite class='ltx_cite'>{cites}</cite></span>"
        "</span></span>"
    )
    again = "<span class='ltx_note ltx_role_footnote' id='footnote1'></span>"
    bib = "".join(
        f"<li class='ltx_bibitem' id='bib.bib{i}'><span class='ltx_tag'>[{i}]</span>"
        f"<span class='ltx_bibblock'>A. Name.</span></li>"
        for i in range(entries)
    )
    html = (
        "<html><body><article class='ltx_document'><section class='ltx_section' id='S1'>"
        "<h2 class='ltx_title'>1 A</h2><div class='ltx_para' id='S1.p1'><p class='ltx_p'>"
        f"{note}{again * entries}</p></div></section><section class='ltx_bibliography' id='bib'>"
        f"<ul class='ltx_biblist'>{bib}</ul></section></article></body></html>"
    ).encode()
    tracemalloc.start()
    try:
        document = parse_document(html)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20  # each mark copying them: 4,000,000 ids, 32 MB of list alone
    paper = _paper(document)
    citing = [v.node.cites for v in paper.index.nodes.values() if isinstance(v.node, Text)]
    assert [len(cites) for cites in citing if cites] == [entries]
    assert paper.cited_in()["bib.bib1999"] == ["S1.p1"]
