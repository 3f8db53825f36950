"""Classes of markup whose words a reader sees and the parser once dropped or garbled (issue 19):
acknowledgements, conversion debris, loose footnote texts, author separators."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from lxml import etree

from paperanchor.paper import LoadedPaper
from paperanchor.parse import parse_document
from paperanchor.parse.front import parse_authors
from paperanchor.render.markdown import join, node_chunks
from paperanchor.service import Paper, figure, outline, read, references
from paperanchor.tree import Document, Section, walk
from tests.corpus_pages import fixture_path, has_class, page_root, parsed
from tests.reliability.hostile_pages import ampersand_authors, marked_authors, tabular_authors

ACKNOWLEDGING = [
    "html/1307.8133.arxmliv.html",
    "html/2201.00020.ar5iv.html",
    "html/2507.00150v1.arxiv.html",
    "generated/celerite.html",
]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _sections(document: Document, kind: str) -> list[Section]:
    return [
        v.node
        for v in walk(document.roots())
        if isinstance(v.node, Section) and v.node.kind == kind
    ]


def _page(body: str, authors: str = "") -> bytes:
    return (
        "<html><body><article class='ltx_document'><h1 class='ltx_title ltx_title_document'>T</h1>"
        f"{authors}{body}</article></body></html>"
    ).encode()


@pytest.mark.parametrize("name", ACKNOWLEDGING)
def test_acknowledgements_are_a_titled_section_with_every_word_of_the_page(name: str) -> None:
    document = parsed(name)
    (section,) = _sections(document, "acknowledgements")
    assert section.title.text == "Acknowledgements"
    markdown = join(node_chunks(section, document))
    (element,) = page_root(name).xpath(f"//*[{has_class('ltx_acknowledgements')}]")
    expected = [w for w in _words(element.text_content()) if w != "acknowledgements"]
    found = _words(markdown)
    # every word of the page's acknowledgements, in order
    position = 0
    for word in expected:
        position = found.index(word, position) + 1


def test_acknowledgements_without_a_heading_are_titled_acknowledgements() -> None:
    document = parse_document(
        _page("<div class='ltx_acknowledgements'>We thank <em>the referee</em> for help.</div>")
    )
    (section,) = _sections(document, "acknowledgements")
    assert section.title.text == "Acknowledgements"
    assert "We thank *the referee* for help." in join(node_chunks(section, document))


def test_a_conversion_error_is_counted_where_it_stands_and_not_served_as_text() -> None:
    body = (
        "<section class='ltx_section' id='S1'><h2 class='ltx_title'>1 Intro</h2>"
        "<div class='ltx_para' id='S1.p1'><p class='ltx_p'>See "
        "<span class='ltx_ERROR undefined'>\\cellcolor</span>[HTML]E19898 30.3 and "
        "<span class='ltx_ERROR undefined'>\\printindex</span>[columns=2, intoc] the end.</p></div>"
        "</section>"
    )
    document = parse_document(_page(body))
    markdown = join(node_chunks(document.sections[0], document))
    assert "See 30.3 and the end." in markdown
    assert "cellcolor" not in markdown and "columns" not in markdown
    assert document.sections[0].errors == 2 and document.errors == 2
    assert document.quality == "degraded"


def test_latex_residue_left_as_text_is_a_conversion_error_not_the_papers_words() -> None:
    body = (
        "<section class='ltx_section' id='S1'>"
        "<h2 class='ltx_title'>Part \\@slowromancapi@ Intro</h2>"
        "<div class='ltx_para' id='S1.p1'><table class='ltx_tabular' id='S1.T1'><tr>"
        "<td class='ltx_td'>\\hdashline a</td>"
        "<td class='ltx_td'>C:\\path and \\n</td></tr></table>"
        "<p class='ltx_p'>Code <code>\\section</code> stays.</p></div></section>"
    )
    document = parse_document(_page(body))
    section = document.sections[0]
    markdown = join(node_chunks(section, document))
    assert section.title.text == "Part Intro"
    assert "hdashline" not in markdown
    # a path, an escape sequence and code are the page's text
    assert "C:\\\\path and \\\\n" in markdown and "`\\section`" in markdown
    assert section.errors == 2 and document.errors == 2


def test_a_footnote_text_outside_a_paragraph_is_its_text_without_mark_or_type() -> None:
    document = parsed("html/2410.00260v2.arxiv.html")
    markdown = join(node_chunks(document.blocks[0], document))
    assert "These authors contributed equally to this work." in markdown
    assert "footnotetext" not in markdown


def test_the_corpus_serves_no_footnotetext_label_or_error_macro_as_text() -> None:
    for name in ("html/2501.11120v1.arxiv.html", "generated/scipy.html", "generated/agd.html"):
        document = parsed(name)
        for block in document.blocks:
            markdown = join(node_chunks(block, document))
            assert "footnotetext:" not in markdown
            assert "\\\\JournalTitle" not in markdown and "\\\\xpatchcmd" not in markdown


AFFILIATED = (
    "<div class='ltx_authors'><span class='ltx_creator ltx_role_author'>"
    "<span class='ltx_personname'>"
    "Ana Souza<br class='ltx_break'>Cosmo-Ufes &amp; Universidade Federal do Espírito Santo, "
    "29075-910, Vitória - ES, Brazil<br class='ltx_break'>&amp;Bruno Lima<br class='ltx_break'>"
    "Departamento de Física &amp; Astronomia <span class='ltx_ERROR undefined'>\\And</span>"
    "Carla Dias<br class='ltx_break'>Rua A &amp; B</span></span></div>"
)


def test_an_ampersand_inside_an_affiliation_never_separates_authors() -> None:
    document = parse_document(
        _page("<div class='ltx_para'><p class='ltx_p'>x</p></div>", AFFILIATED)
    )
    assert document.authors == ("Ana Souza", "Bruno Lima", "Carla Dias")


@pytest.mark.parametrize(
    ("name", "authors"),
    [
        ("html/2401.16380v1.arxiv.html", 6),  # `\And` printed as "&" before the next name
        ("html/2510.11260v1.arxiv.html", 5),
        ("generated/deeplimits.html", 4),
        ("pairs/2404.07647.ar5iv.html", 3),  # "Clergerie & Benoît Sagot" on the names line
    ],
)
def test_the_pages_own_author_separators_still_split_authors(name: str, authors: int) -> None:
    assert len(parsed(name).authors) == authors


OLMO = (
    "Dirk Groeneveld", "Iz Beltagy", "Pete Walsh", "Akshita Bhagia", "Rodney Kinney",
    "Oyvind Tafjord", "Ananya Harsh Jha", "Hamish Ivison", "Ian Magnusson", "Yizhong Wang",
    "Shane Arora", "David Atkinson", "Russell Authur", "Khyathi Raghavi Chandu", "Arman Cohan",
    "Jennifer Dumas", "Yanai Elazar", "Yuling Gu", "Jack Hessel", "Tushar Khot",
    "William Merrill", "Jacob Morrison", "Niklas Muennighoff", "Aakanksha Naik", "Crystal Nam",
    "Matthew E. Peters", "Valentina Pyatkin", "Abhilasha Ravichander", "Dustin Schwenk",
    "Saurabh Shah", "Will Smith", "Emma Strubell", "Nishant Subramani", "Mitchell Wortsman",
    "Pradeep Dasigi", "Nathan Lambert", "Kyle Richardson", "Luke Zettlemoyer", "Jesse Dodge",
    "Kyle Lo", "Luca Soldaini", "Noah A. Smith", "Hannaneh Hajishirzi",
)  # fmt: skip
WIZARDCODER = (
    "Ziyang Luo", "Can Xu", "Pu Zhao", "Qingfeng Sun", "Xiubo Geng", "Wenxiang Hu",
    "Chongyang Tao", "Jing Ma", "Qingwei Lin", "Daxin Jiang",
)  # fmt: skip


@pytest.mark.parametrize(
    ("name", "authors"),
    [
        # a tabular per author: its first row the name, the later ones the affiliation
        ("generated/agd.html", ("Jeremy Bernstein", "Chris Mingard", "Kevin Huang",
                                "Navid Azizan", "Yisong Yue")),
        # lines of bold names each ending with math marks, then lines opening with marks
        ("pairs/2402.00838v3.arxiv.html", OLMO),
        ("pairs/2402.00838.ar5iv.html", OLMO),  # the marks as `sup`
        # names told apart by their marks only
        ("html/2403.16952v1.arxiv.html", ("Jiasheng Ye", "Peiju Liu", "Tianxiang Sun",
                                          "Yunhua Zhou", "Jun Zhan", "Xipeng Qiu")),
        # a line of names, then one of bold names, the last holding the affiliations' break
        ("pairs/2306.08568.arxiv.html", WIZARDCODER),
        ("pairs/2306.08568.ar5iv.html", WIZARDCODER),
        ("pairs/2401.03129v1.arxiv.html", ("Chen-An Li", "Hung-Yi Lee")),
        # names between em spaces (`\quad`), no mark
        ("html/2604.15597v1.arxiv.html", ("Philippe Laban", "Tobias Schnabel",
                                          "Jennifer Neville")),
        # a list of names going on after a comma across two breaks; IEEE grades are no names
        ("html/2404.09516v1.arxiv.html", (
            "Xiao Wang", "Shiao Wang", "Yuhe Ding", "Yuehang Li", "Wentao Wu", "Yao Rong",
            "Weizhe Kong", "Ju Huang", "Shihao Li", "Haoxiang Yang", "Ziwen Wang", "Bo Jiang",
            "Chenglong Li", "Yaowei Wang", "Yonghong Tian", "Jin Tang")),
        # kept: a break inside a bold span between two marked names
        ("html/2501.11120v1.arxiv.html", ("Jan Betley", "Xuchan Bao", "Martín Soto",
                                          "Anna Sztyber-Betley", "James Chua", "Owain Evans")),
        # kept: a bold name, then affiliation lines without marks
        ("generated/herding.html", ("Ferenc Huszár", "David Duvenaud")),
    ],
)  # fmt: skip
def test_every_author_of_a_block_of_many_is_read_and_no_affiliation(
    name: str, authors: tuple[str, ...]
) -> None:
    assert parsed(name).authors == authors


BR = "<br class='ltx_break'>"
TABULAR = (
    "<span class='ltx_tabular'><span class='ltx_tr'><span class='ltx_td'>{}</span></span>"
    "<span class='ltx_tr'><span class='ltx_td'>{}</span></span></span>"
)


@pytest.mark.parametrize(
    ("person", "authors"),
    [
        # marked names go on across breaks until a line that opens with its mark
        (f"Ana Souza<sup>1</sup> Bruno Lima<sup>2</sup>{BR}Carla Dias<sup>1</sup>{BR}"
         f"<sup>1</sup>Rua A<sup>2</sup>Rua B", ("Ana Souza", "Bruno Lima", "Carla Dias")),
        # a line without marks after marked names is no names
        (f"Ana Souza<sup>1</sup>{BR}Bruno Lima", ("Ana Souza",)),
        # nor one after unmarked names, unless the list goes on after a comma
        (f"Ana Souza{BR}Bruno Lima", ("Ana Souza",)),
        (f"Ana Souza, Bruno Lima,{BR}Carla Dias", ("Ana Souza", "Bruno Lima", "Carla Dias")),
        (f"Ana Souza,{BR}Rua A", ("Ana Souza",)),  # one name and a comma is no list
        # tabulars: one author each; later lines of tabulars too, but not after a first line
        # without any
        (TABULAR.format("Ana Souza", "Rua A") + TABULAR.format("Bruno Lima", "Rua B") + BR
         + TABULAR.format("Carla Dias", "Rua C"), ("Ana Souza", "Bruno Lima", "Carla Dias")),
        (f"Ana Souza{BR}" + TABULAR.format("Rua A", "Vitória"), ("Ana Souza",)),
        # an IEEE grade in its own span; an em space between names
        ("Ana Souza, <span class='ltx_text ltx_font_italic'>Senior Member, IEEE</span>, "
         "Bruno Lima\u2003Carla Dias", ("Ana Souza", "Bruno Lima", "Carla Dias")),
    ],
)  # fmt: skip
def test_the_author_markup_rules_on_crafted_blocks(person: str, authors: tuple[str, ...]) -> None:
    block = (
        "<div class='ltx_authors'><span class='ltx_creator ltx_role_author'>"
        f"<span class='ltx_personname'>{person}</span></span></div>"
    )
    document = parse_document(_page("<div class='ltx_para'><p class='ltx_p'>x</p></div>", block))
    assert document.authors == authors


def test_the_manyauthors_fixture_reads_both_shapes_of_a_block_of_many_authors() -> None:
    document = parse_document(fixture_path("manyauthors").read_bytes())
    assert document.authors == (
        # tabulars: a sans-serif name with a mark or none, over its affiliation
        "Linnea Sandoval", "Tariq Okafor", "Wen Haruki",
        # bold names with marks on two lines, then "Riverbend Research Laboratory" and
        # "Eastmoor University" each after its mark, and an e-mail
        "Marta Quispe", "Oskar Lindgren", "Ines Carvalho", "Dmitri Volkov", "Aiyana Redcloud",
    )  # fmt: skip


def _creators(html: bytes) -> list[etree._Element]:
    root = etree.fromstring(html, etree.HTMLParser(huge_tree=True))
    return list(root.xpath(f"//*[{has_class('ltx_creator')}]"))


def _cpu_seconds(creators: list[etree._Element]) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        parse_authors(creators)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("make", [marked_authors, tabular_authors, ampersand_authors])
def test_an_author_block_that_abuses_the_name_rules_is_read_only_to_its_bounds(
    make: Callable[[int], bytes],
) -> None:
    small, large = _creators(make(2_000)), _creators(make(20_000))
    names = parse_authors(large)
    assert names == parse_authors(small)  # read to the same bound, before the 2,000th
    assert 0 < len(names) < 2_000
    # ten times the block costs no more: what is past the bounds is never walked (main's
    # walk went through every child: 65 ms, 164 ms, 324 ms on the 20,000 of the hostile pages)
    assert _cpu_seconds(large) < 3 * _cpu_seconds(small) + 0.005


def _labels() -> Document:
    return parse_document(fixture_path("labels").read_bytes(), "https://example.org/")


def test_an_alphabetic_label_is_the_printed_label_with_math_as_its_characters() -> None:
    references = _labels().references
    assert [(r.number, r.label) for r in references] == [
        ("HNA+17", "[HNA+17]"),
        ("KMH+20", "[KMH+20]"),
        ("Lon23", "[Lon23]"),
        ("vdBKLM+19", "[vdBKLM+19]"),  # longer than eight characters, never renumbered
    ]


def test_citations_of_alphabetic_labels_print_them_as_the_page_does_in_text_and_cells() -> None:
    document = _labels()
    markdown = join(node_chunks(document.sections[0], document))
    assert "two groups [HNA+17, KMH+20], and" in markdown
    assert "described later [vdBKLM+19]." in markdown
    assert "| \\[HNA+17] | 1,200 |" in markdown  # one pair of brackets, the page's
    assert "FLOATSUPERSCRIPT" not in markdown and "[[" not in markdown


@pytest.mark.parametrize("key", ["HNA+17", "[HNA+17]", "bib.bibx1"])
def test_a_reference_is_found_by_its_printed_label(key: str) -> None:
    paper = Paper.open(LoadedPaper(_labels(), "local/labels", "local/labels"))
    entry = references(paper, key)
    assert entry["id"] == "bib.bibx1" and "S1.p1" in entry["citedIn"]


def test_an_author_year_entry_is_still_found_by_its_position() -> None:
    document = parsed("html/2309.15402.ar5iv.html")
    paper = Paper.open(LoadedPaper(document, "local/x", "local/x"))
    assert references(paper, "[3]")["title"] == document.references[2].title
    assert document.references[0].label == "Aggarwal et al. (2023)"


@pytest.mark.parametrize(
    ("name", "algorithm", "figure_id"),
    [("fixture", "algorithm1", "S2.F1"), ("html/2403.16952v1.arxiv.html", "alg1", "S1.F1")],
)
def test_an_algorithm_is_its_own_kind_found_by_its_printed_label_never_as_a_figure(
    name: str, algorithm: str, figure_id: str
) -> None:
    document = _labels() if name == "fixture" else parsed(name)
    paper = Paper.open(LoadedPaper(document, "local/x", "local/x"))
    for label in ("Algorithm 1", "Alg. 1", "algorithm 1", algorithm):
        answer = figure(paper, label)
        assert (answer["kind"], answer["id"], answer["number"]) == ("algorithm", algorithm, "1")
    for label in ("Figure 1", "Fig. 1"):
        assert figure(paper, label)["id"] == figure_id
    lines = read(paper, "Algorithm 1", 8000).markdown
    assert "**Algorithm 1" in lines and "\n```\n" in lines  # its lines kept as code


def test_the_outline_counts_algorithms_apart_from_figures() -> None:
    counts = outline(Paper.open(LoadedPaper(parsed("html/2403.16952v1.arxiv.html"), "l/x", "l/x")))
    page = page_root("html/2403.16952v1.arxiv.html")
    algorithms = page.xpath(f"//figure[{has_class('ltx_float_algorithm')}]")
    figures = page.xpath(f"//figure[{has_class('ltx_figure')}][not(ancestor::figure)]")
    assert counts["counts"]["algorithms"] == len(algorithms) == 2
    assert counts["counts"]["figures"] == len(figures)


def test_an_undefined_macros_internal_argument_is_debris_and_no_main_text_is_left_of_it() -> None:
    document = parsed("html/2401.16380v1.arxiv.html")
    # `\pdfcolInitStack{tcb@breakable}`: the error and its argument, nothing of the paper
    assert [b.id for b in document.blocks if isinstance(b, Section) and b.kind == "body"] == []
    assert document.errors == 2


def test_a_run_of_empty_paragraphs_is_no_main_text_section() -> None:
    document = parsed("pairs/2401.10225v1.arxiv.html")
    assert not [b for b in document.blocks if isinstance(b, Section) and b.kind == "body"]
    body = (
        "<div class='ltx_para' id='p1'><p class='ltx_p'><span class='ltx_ERROR undefined'>"
        "\\printindex</span>[columns=2, intoc]</p></div>"
        "<section class='ltx_section' id='S1'><h2 class='ltx_title'>1 A</h2>"
        "<div class='ltx_para' id='S1.p1'><p class='ltx_p'>Text.</p></div></section>"
    )
    document = parse_document(_page(body))
    assert [b.id for b in document.blocks] == ["S1"]


def test_a_conversion_error_inside_loose_text_leaves_one_run_without_it() -> None:
    body = (
        "<section class='ltx_section' id='S1'><h2 class='ltx_title'>1 A</h2>"
        "<div class='ltx_para' id='S1.p1'>Before <span class='ltx_ERROR undefined'>\\foo</span>"
        "[opt] after.</div></section>"
    )
    document = parse_document(_page(body))
    (paragraph,) = document.sections[0].blocks
    assert join(node_chunks(paragraph, document)) == "Before after.\n"
