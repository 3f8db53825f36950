"""Citations keep their printed label; a label that is a BibTeX key prints the entry's number."""

from __future__ import annotations

from paperanchor import service
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from tests.corpus_pages import fixture_path, parsed


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
