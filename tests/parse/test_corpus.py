"""Every corpus page parses, its counts match the manifest, and every anchor resolves."""

from __future__ import annotations

import re

import pytest

from paperanchor.anchors import AnchorIndex, section_alias, short_alias
from paperanchor.paper import LoadedPaper
from paperanchor.render.markdown import heading
from paperanchor.service import Paper, counts, read
from paperanchor.tree import Equation, Figure, Section, Table
from tests.corpus_pages import (
    FAILED_PAGES,
    HTML_PAPER_PAGES,
    PAIR_PAGES,
    PAPER_PAGES,
    has_class,
    manifest,
    page_root,
    parsed,
)
from tests.parse.reader_probe import probe

MATHML_LEAKS = ("italic_", "start_POSTSUPERSCRIPT", "start_POSTSUBSCRIPT", "end_POSTSUBSCRIPT")
CHROME = (
    "Generated on",
    "Generated  on",
    "by LaTeXML",
    "Mascot Sammy",
    "{% raw %}",
    "<script",
    "<style",
    "Report issue",
    "ltx_page_footer",
    "Back to top",
)


def _paper(name: str) -> Paper:
    return Paper.open(LoadedPaper(parsed(name), f"local/{name}", f"local/{name}"))


def _walk(blocks):  # type: ignore[no-untyped-def]
    for block in blocks:
        yield block
        if isinstance(block, Section):
            yield from _walk(block.blocks)


def _paragraph_units(document) -> int:  # type: ignore[no-untyped-def]
    return sum(
        1 for b in _walk(document.blocks) if isinstance(b, Section) and b.kind == "paragraph"
    )


@pytest.mark.parametrize("name", HTML_PAPER_PAGES)
def test_counts_equal_the_manifest(name: str) -> None:
    row = manifest()[f"html/{name}"]
    document = parsed(f"html/{name}")
    found = counts(document)
    root = page_root(f"html/{name}")
    # The contract counts `\paragraph` units as sections; the manifest's rule leaves them out.
    assert found["sections"] - _paragraph_units(document) == int(row["n_sections"])
    # The manifest's figure, table and bibliography rules are the contract's, but for the figure
    # panels inside a table float (2604.15597v1's six tables of icons): the manifest counts
    # each as an outermost `figure.ltx_figure`, the tree as a panel of its table.
    in_tables = root.xpath(
        f"//figure[{has_class('ltx_table')}]//figure[{has_class('ltx_figure')}]"
        f"[not(ancestor::figure[{has_class('ltx_figure')}])]"
    )
    assert found["figures"] == int(row["n_figures"]) - len(in_tables)
    assert found["tables"] == int(row["n_tables"])
    assert found["references"] == int(row["n_bibitems"])
    # The manifest's first rows counted every element of class ltx_para, including the
    # `span.ltx_para` LaTeXML puts inside pictures in figures; its later rows (2404.05405 on)
    # count `div.ltx_para`, as its README says. A paragraph here is a `div.ltx_para`, or a
    # `span.ltx_para` in a box of text drawn as a picture (read as blocks; a cell's is inline).
    divs = len(root.xpath(f"//div[{has_class('ltx_para')}]"))
    spans = len(root.xpath(f"//span[{has_class('ltx_para')}]"))
    assert int(row["n_paragraphs"]) in (divs, divs + spans)
    boxed = root.xpath(f"//foreignobject//span[{has_class('ltx_para')}][not(ancestor::td)]")
    # outside any section, a paragraph of conversion debris alone (2401.16380v1's
    # "tcb@breakable", an undefined macro's argument) is not kept as a "Main text" section
    debris = [
        d
        for d in root.xpath(f"//article/div[{has_class('ltx_para')}]")
        if re.fullmatch(
            r"\s*[A-Za-z]+@[A-Za-z@]+\s*", "".join(d.xpath(".//text()[not(ancestor::button)]"))
        )
    ]
    assert found["paragraphs"] == divs + len(boxed) - len(debris)
    # The manifest counted equation ids on `table`/`tbody` only; LaTeXML 0.8.0 put the ids of
    # a group's rows on `tr`, so those rows are added back (0903.1000, 1311.0066).
    row_ids = {e.get("id") for e in root.iter("tr") if re.search(r"\.Ex?\d+$", e.get("id") or "")}
    assert found["equations"] == int(row["n_equations"]) + len(row_ids)


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_section_figure_table_and_equation_resolves(name: str) -> None:
    document = parsed(name)
    index = AnchorIndex.build(document, name)
    for section in index.sections:
        assert index.resolve(section.id).node is section
        alias = section_alias(section.id)
        if alias:
            assert index.resolve(alias).node.id in (section.id, index.aliases[alias])
        assert index.resolve(index.slug_of[section.id]).node is section
    root = page_root(name)
    for kind, cls in (("figure", "ltx_figure"), ("table", "ltx_table")):
        for el in root.xpath(f"//figure[{has_class(cls)}][@id]"):
            node = index.resolve(el.get("id")).node
            assert isinstance(node, Figure | Table), (kind, el.get("id"))
            short = short_alias(el.get("id"))
            if short and el.get("id") not in index.panel_ids:
                assert isinstance(index.resolve(short).node, Figure | Table)
    for located in list(index.nodes.values()):
        node = located.node
        if isinstance(node, Equation) and re.search(r"(?:^|\.)E\d+$", node.id):
            short = node.id.rsplit(".", 1)[-1]
            assert isinstance(index.resolve(short).node, Equation)


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_reading_a_top_level_section_starts_with_its_heading_and_has_no_chrome(name: str) -> None:
    paper = _paper(name)
    for section in paper.document.sections:
        markdown = read(paper, section.id, 100_000).markdown
        assert markdown.startswith(heading(section))
        for leak in MATHML_LEAKS + CHROME:
            assert leak not in markdown, (section.id, leak)


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_top_level_section_tokens_add_up_to_the_whole_paper(name: str) -> None:
    paper = _paper(name)
    whole = paper.tokens()
    parts = sum(paper.tokens(s.id) for s in paper.document.sections)
    assert abs(whole - parts) <= 0.1 * whole, (whole, parts)


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_titles_and_authors_carry_no_marks_or_latex_separators(name: str) -> None:
    document = parsed(name)
    for author in document.authors:
        assert "\\" not in author and "AND" not in author.split()
    assert "[^" not in document.title.markdown
    assert document.title.text


@pytest.mark.parametrize("name", FAILED_PAGES)
def test_a_conversion_that_died_before_the_body_is_a_failed_rendering(name: str) -> None:
    document = parsed(name)
    assert document.quality == "failed"
    # nothing of the error residue is offered as the paper's text, no "Main text" section
    assert document.blocks == () and document.abstract is None
    assert document.errors == len(page_root(name).xpath(f"//*[{has_class('ltx_ERROR')}]"))


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_every_other_page_is_a_paper_whose_quality_follows_its_conversion_errors(name: str) -> None:
    document = parsed(name)
    assert document.quality == ("degraded" if document.errors else "ok")


# The probe as strict as a reader (tests/parse/reader_probe.py names what it does not look at,
# and why): every paragraph's text run, table cell of any table kind, caption, list item,
# theorem heading, footnote, text inside a picture, acknowledgement and bibliography entry of
# the page has its words, in order, in what `read` gives of its section.
@pytest.mark.parametrize("name", PAPER_PAGES + PAIR_PAGES)
def test_every_text_bearing_element_has_its_words_in_order_in_the_read_of_its_section(
    name: str,
) -> None:
    found = probe(_paper(name), page_root(name))
    assert sum(found.elements.values()) > 0
    missing = [
        f"{m.kind} {m.element_id or '?'} in {m.section or 'the paper'}: "
        f"{m.missing} of {m.total} words ({m.sample[:60]})"
        for m in found.misses
    ]
    assert missing == []


@pytest.mark.parametrize("name", PAPER_PAGES + PAIR_PAGES)
def test_every_bibliography_label_is_the_one_the_page_prints(name: str) -> None:
    found = probe(_paper(name), page_root(name))
    assert found.label_misses == []
