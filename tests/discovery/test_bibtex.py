"""BibTeX entries: arXiv's form, names, keys, a paper's bibliography; read back with pybtex."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pybtex.database import parse_string

from paperanchor.discovery.atom import Metadata, parse_feed
from paperanchor.discovery.bibtex import (
    arxiv_entry,
    bib_name,
    bibtex,
    entry_key,
    papers_bibtex,
    references_bibtex,
    unique_keys,
)
from paperanchor.tree import Reference
from tests.discovery.recorded import all_metadata, atom

pytestmark = pytest.mark.usefixtures("corpus")


def recorded(name: str) -> Metadata:
    (entry,) = parse_feed(atom(name)).entries
    return entry


def read_back(bib: str) -> Any:
    return parse_string(bib, "bibtex")


def test_an_arxiv_paper_is_one_misc_in_the_form_arxiv_recommends() -> None:
    bib = papers_bibtex([recorded("arxivpy_2016_id_list=1111.2011v2.xml")])
    assert bib == (
        "@misc{murray2011quantum,\n"
        "  title = {Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large "
        "Connectivity Limit},\n"
        "  author = {Murray, James M. and Del Maestro, Adrian and Tesanovic, Zlatko},\n"
        "  year = {2011},\n"
        "  month = nov,\n"
        "  eprint = {1111.2011},\n"
        "  archivePrefix = {arXiv},\n"
        "  primaryClass = {cond-mat.str-el},\n"
        "  doi = {10.1103/PhysRevB.85.115117},\n"
        "  note = {Phys. Rev. B 85, 115117 (2012)},\n"
        "  url = {https://arxiv.org/abs/1111.2011},\n"
        "}\n"
    )
    entry = read_back(bib).entries["murray2011quantum"]
    assert [str(person) for person in entry.persons["author"]] == [
        "Murray, James M.",
        "Del Maestro, Adrian",
        "Tesanovic, Zlatko",
    ]
    assert entry.fields["month"] == "November"  # the macro, as every style defines it


def test_a_paper_titled_0_is_cited_as_0() -> None:
    metadata = recorded("arxivpy_2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml")
    entry = read_back(papers_bibtex([metadata])).entries["nguyen20210"]
    assert entry.fields["title"] == "0" and "note" not in entry.fields
    assert entry.fields["eprint"] == "2104.12255" and entry.fields["primaryClass"] == "cs.CR"


def test_a_legacy_paper_keeps_its_slash_in_eprint_and_its_journal_reference_as_note() -> None:
    metadata = recorded("arxivpy_2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml")
    entry = read_back(papers_bibtex([metadata])).entries["gould2006frequency"]
    assert entry.fields["eprint"] == "astro-ph/0601001"
    assert entry.fields["url"] == "https://arxiv.org/abs/astro-ph/0601001"
    assert entry.fields["primaryClass"] == "astro-ph"
    assert entry.fields["note"] == "ActaAstron.56:1-50,2006"
    assert entry.fields["title"].startswith("Frequency of Hot Jupiters and Very Hot Jupiters")
    assert "{OGLE}-{III}" in entry.fields["title"]
    assert len(entry.persons["author"]) == 4


def test_a_doi_with_an_underscore_is_a_doi_and_one_that_breaks_latex_is_a_note() -> None:
    papers = all_metadata()
    assert "doi = {10.1007/3-540-40988-2_10}," in papers_bibtex([papers["gr-qc/0103067"]])
    broken = {**papers["1111.2011"], "doi": "10.1000/a%b#c", "journalRef": None}
    entry = read_back(papers_bibtex([broken])).entries["murray2011quantum"]
    assert "doi" not in entry.fields and entry.fields["note"] == "DOI 10.1000/a\\%b\\#c"


def test_every_recorded_entry_reads_back_with_its_fields() -> None:
    papers = all_metadata()
    parsed = read_back(papers_bibtex(list(papers.values())))
    assert len(parsed.entries) == len(papers) == 132
    by_eprint = {entry.fields["eprint"]: entry for entry in parsed.entries.values()}
    assert set(by_eprint) == set(papers)
    for paper, metadata in papers.items():
        entry = by_eprint[paper]
        assert entry.type == "misc" and entry.fields["archivePrefix"] == "arXiv"
        assert entry.fields["year"] == metadata["published"][:4]
        assert len(entry.persons["author"]) == len(metadata["authors"])
        assert ("doi" in entry.fields) == bool(metadata["doi"])


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("Adrian Del Maestro", "Del Maestro, Adrian"),
        ("Yohann De Castro", "De Castro, Yohann"),
        ("Giordano Da Lozzo", "Da Lozzo, Giordano"),
        ("Le Song", "Song, Le"),  # a first name that is also a particle
        ("James M. Murray", "Murray, James M."),
        ("John Smith Jr.", "Smith, Jr., John"),
        ("John Smith, Jr.", "Smith, Jr., John"),
        ("Abadi, M. G.", "Abadi, M. G."),
        ("Aubert D", "Aubert, D"),  # surname then initials, as some reference lists print
        ("Pascal Meißner", "Mei{\\ss}ner, Pascal"),
        ("C. Lämmerzahl", 'L{\\"a}mmerzahl, C.'),
        ("ATLAS Collaboration", "{ATLAS Collaboration}"),
        ("Plato", "Plato"),
        ("Sandro and Paval", "Paval, Sandro {and}"),  # "and" would split the name in two
        ("A, B, C", "A, B{,} C"),  # a third comma is "Too many commas" for BibTeX
        ("others", "{others}"),
    ],
)
def test_an_author_is_written_last_name_first(name: str, written: str) -> None:
    assert bib_name(name) == written


def test_many_authors_end_with_and_others() -> None:
    metadata = {
        **all_metadata()["1111.2011"],
        "authors": [f"Author {n} Name{n}" for n in range(1200)],
    }
    entry = read_back(papers_bibtex([metadata])).entries["name02011quantum"]
    people = entry.persons["author"]
    assert len(people) == 1001 and str(people[-1]) == "others"


@pytest.mark.parametrize(
    ("authors", "year", "title", "key"),
    [
        (
            ["James M. Murray"],
            "2011",
            "Quantum Criticality for Extended Nodes",
            "murray2011quantum",
        ),
        (["Quan Thoi Minh Nguyen"], "2021", "0", "nguyen20210"),
        (["Adrian Del Maestro"], "2012", "A Luttinger Liquid Core", "delmaestro2012luttinger"),
        (["Pascal Meißner"], "2025", "ComicScene154: A Scene Dataset", "meissner2025comicscene154"),
        (["Jiajun Hu"], "2023", "$\\omega$Test: WebView-Oriented Testing", "hu2023test"),
        (['C. L\\"ammerzahl'], "2001", "The Role of Equivalence", "lammerzahl2001role"),
        (["ATLAS Collaboration"], "2012", "Observation of a new particle", "atlas2012observation"),
        ([], "2020", "Untitled by nobody", "2020untitled"),
    ],
)
def test_keys_are_lastname_year_first_word_in_ascii(
    authors: list[str], year: str, title: str, key: str
) -> None:
    assert entry_key(authors, year, title) == key


def test_colliding_keys_get_a_b_in_order_and_others_stay() -> None:
    assert unique_keys(["x2020y", "z2020w", "x2020y", "x2020y"]) == [
        "x2020ya",
        "z2020w",
        "x2020yb",
        "x2020yc",
    ]
    # a suffixed key never takes a key that another entry already has
    assert unique_keys(["k", "k", "ka"]) == ["kb", "kc", "ka"]


def test_two_papers_with_the_same_key_get_a_and_b_and_the_same_paper_is_written_once() -> None:
    papers = all_metadata()
    first = papers["1912.04900"]  # Zhu et al. 2019, "Datamorphic Testing: …"
    second = {**papers["1912.09881"], "title": "Datamorphic Testing Revisited"}
    bib = papers_bibtex([first, second, first])
    assert re.findall(r"@misc\{(\w+),", bib) == ["zhu2019datamorphica", "zhu2019datamorphicb"]


def test_amsmath_commands_come_with_a_providecommand_preamble() -> None:
    metadata = {**all_metadata()["1111.2011"], "title": "Maps on $\\mathbb{R}^n$"}
    bib = papers_bibtex([metadata])
    assert bib.startswith('@preamble{ "\\providecommand{\\mathbb}[1]{\\mathbf{#1}}" }\n')
    assert read_back(bib).entries["murray2011maps"].fields["title"] == "Maps on {$\\mathbb{R}^n$}"


@pytest.mark.parametrize(
    "title",
    [
        "}, note = {injected",
        "}} @misc{evil, title = {x",
        '" # evil # "',
        "\\input{/etc/passwd} \\immediate\\write18{touch pwned}",
        "{{{{ unbalanced",
        "\x00\x1b]0;title\x07",
    ],
)
def test_a_hostile_title_stays_one_field_of_one_entry(title: str) -> None:
    metadata = {**all_metadata()["1111.2011"], "title": title, "authors": [title + " Smith"]}
    parsed = read_back(papers_bibtex([metadata]))
    (entry,) = parsed.entries.values()
    assert set(entry.fields) == {
        "title",
        "year",
        "month",
        "eprint",
        "archivePrefix",
        "primaryClass",
        "doi",
        "note",
        "url",
    }
    assert len(entry.persons["author"]) == 1
    assert entry.fields["note"] == "Phys. Rev. B 85, 115117 (2012)"


def reference(number: int, **fields: Any) -> Reference:
    values: dict[str, Any] = {
        "id": f"bib.bib{number}",
        "number": str(number),
        "label": str(number),
        "text": "",
        "markdown": "",
        "authors": (),
        "title": None,
        "year": None,
        "arxiv": None,
        "doi": None,
        "url": None,
    }
    values.update(fields)
    return Reference(**values)


def test_a_bibliography_entry_with_an_arxiv_id_becomes_that_papers_misc() -> None:
    papers = all_metadata()
    refs = [
        reference(1, text="J. M. Murray et al., PRB 85 (2012), arXiv:1111.2011", arxiv="1111.2011"),
        reference(
            2,
            text="Y. LeCun, Y. Bengio, and G. Hinton. Deep learning. Nature, 521:436, 2015.",
            authors=("Y. LeCun", "Y. Bengio", "G. Hinton"),
            title="Deep learning",
            year="2015",
            doi="10.1038/nature14539",
            url="https://doi.org/10.1038/nature14539",
        ),
        reference(3, text="A. Vaswani et al. Attention. 2017.", arxiv="1706.03762v5", year="2017a"),
        reference(4, text="Unattributed, 50% of {it}."),
    ]
    bib = references_bibtex(refs, {"1111.2011": papers["1111.2011"]})
    parsed = read_back(bib)
    assert list(parsed.entries) == ["murray2011quantum", "lecun2015deep", "2017", "ref4"]
    assert parsed.entries["murray2011quantum"].fields["eprint"] == "1111.2011"
    lecun = parsed.entries["lecun2015deep"]
    assert [str(p) for p in lecun.persons["author"]] == ["LeCun, Y.", "Bengio, Y.", "Hinton, G."]
    assert lecun.fields["doi"] == "10.1038/nature14539"
    assert lecun.fields["note"].startswith("Y. LeCun, Y. Bengio, and G. Hinton.")
    vaswani = parsed.entries["2017"]  # no metadata found for it: parsed fields and its eprint
    assert vaswani.fields["eprint"] == "1706.03762" and vaswani.fields["year"] == "2017"
    assert parsed.entries["ref4"].fields["note"] == "Unattributed, 50\\% of it."
    assert parsed.entries["ref4"].fields["key"] == "unattributed"


def test_a_real_bibliography_reads_back_entry_for_entry(corpus: Any) -> None:
    from paperanchor.parse import parse_document

    document = parse_document((corpus / "html" / "2501.11120v1.arxiv.html").read_bytes())
    refs = document.references
    parsed = read_back(references_bibtex(refs, {}))
    assert len(parsed.entries) == len(refs) == 48
    with_arxiv = [entry for entry in parsed.entries.values() if "eprint" in entry.fields]
    assert len(with_arxiv) == sum(1 for ref in refs if ref.arxiv)
    assert all(entry.fields["note"] for entry in parsed.entries.values())


def test_an_empty_list_is_an_empty_bib() -> None:
    assert bibtex([]) == "" and papers_bibtex([]) == ""
    assert arxiv_entry(all_metadata()["1111.2011"]).key == "murray2011quantum"


def test_a_crafted_cached_metadata_cannot_break_the_entry() -> None:
    crafted = {
        **all_metadata()["1111.2011"],
        "paper": "1111.2011}, note = {x",
        "published": "not a date",
        "authors": [],
    }
    parsed = read_back(papers_bibtex([crafted]))  # type: ignore[list-item]
    (entry,) = parsed.entries.values()
    assert entry.fields["eprint"] == "1111.2011, note = x"  # its braces were grouping: dropped
    assert entry.fields["note"] == "Phys. Rev. B 85, 115117 (2012)"
    assert "year" not in entry.fields and "url" not in entry.fields
    assert entry.fields["key"] == "quantum"
