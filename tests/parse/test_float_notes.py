"""A footnote in a caption or a table cell is printed with its section, as a text run's is."""

from __future__ import annotations

from paperanchor.paper import LoadedPaper
from paperanchor.parse import parse_document
from paperanchor.service import Paper, read
from tests.corpus_pages import parsed, section_page


def _note(note_id: str, mark: str, words: str) -> str:
    return (
        f"<span class='ltx_note ltx_role_footnote' id='{note_id}'><sup class='ltx_note_mark'>"
        f"{mark}</sup><span class='ltx_note_outer'><span class='ltx_note_content'><sup "
        f"class='ltx_note_mark'>{mark}</sup>{words}</span></span></span>"
    )


def test_footnotes_of_a_caption_and_of_a_cell_are_printed_with_the_section() -> None:
    table = (
        "<figure class='ltx_table' id='S1.T1'><figcaption class='ltx_caption'>"
        f"<span class='ltx_tag'>Table 1: </span>Stars{_note('footnote1', '1', 'caption note')}"
        "</figcaption><table class='ltx_tabular' id='S1.T1.1'><tr class='ltx_tr'>"
        f"<td class='ltx_td'>a{_note('footnote2', '2', 'cell note')}</td></tr></table></figure>"
    )
    html = section_page(f"<div class='ltx_para' id='S1.p1'><p class='ltx_p'>Text.</p></div>{table}")
    paper = Paper.open(LoadedPaper(parse_document(html), "local/n", "local/n"))
    markdown = read(paper, "S1", 100_000).markdown
    assert "[^1]: caption note" in markdown
    assert "[^2]: cell note" in markdown
    assert "[^1]: caption note" in read(paper, "S1.T1", 100_000).markdown


def test_a_table_notes_of_a_real_page_are_read() -> None:
    # 2507.00150v1 writes its tables' notes ("Notes. Columns list: …") as caption footnotes
    document = parsed("html/2507.00150v1.arxiv.html")
    paper = Paper.open(LoadedPaper(document, "local/n", "local/n"))
    assert "Columns list: Star ID, Classification" in read(paper, "S2", 100_000).markdown
