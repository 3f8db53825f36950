"""arXiv API Atom feeds -> Metadata, hits and search pages, on every recorded answer."""

from __future__ import annotations

import json
import math
import re
import statistics

import pytest

from paperanchor.discovery.atom import (
    HIT_SUMMARY_CHARS,
    Feed,
    clip,
    metadata_by_paper,
    metadata_for,
    parse_feed,
    search_page,
    to_hit,
)
from paperanchor.errors import BadRequest, NotFound
from paperanchor.refs import parse_ref
from tests.discovery.recorded import ATOM, TESTING_100, atom, atom_names, meta

pytestmark = pytest.mark.usefixtures("corpus")

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
# the <id> of each entry as written in the raw XML, read without lxml
RAW_ENTRY_ID = re.compile(rb"<entry>\s*<id>https?://arxiv\.org/abs/([^<]+?)v(\d+)</id>")


def feed(name: str) -> Feed:
    return parse_feed(atom(name))


@pytest.mark.parametrize("name", atom_names())
def test_every_recorded_answer_parses_or_raises_arxivs_own_error(name: str) -> None:
    recorded = meta(ATOM / name)
    status = recorded["status"] if recorded else 200
    if status != 200:
        with pytest.raises(BadRequest, match="arXiv API: incorrect id format for abc"):
            parse_feed(atom(name))
        return
    parsed = parse_feed(atom(name))
    raw_ids = RAW_ENTRY_ID.findall(atom(name))
    assert [(e["paper"], e["latestVersion"]) for e in parsed.entries] == [
        (parse_ref(paper.decode()).paper, int(version)) for paper, version in raw_ids
    ]
    total = re.search(rb"totalResults[^>]*>(\d+)<", atom(name))
    assert total is not None and parsed.total == int(total.group(1))
    for entry in parsed.entries:
        assert ISO.match(entry["published"]) and ISO.match(entry["updated"])
        assert entry["published"] <= entry["updated"]
        assert entry["title"] and entry["authors"] and entry["abstract"]
        assert entry["primaryCategory"] == entry["categories"][0]
        idv = f"{entry['paper']}v{entry['latestVersion']}"
        assert entry["absUrl"].endswith("/abs/" + idv) and entry["pdfUrl"].endswith("/pdf/" + idv)


def test_a_paper_titled_0_keeps_the_title_0() -> None:
    (entry,) = feed("arxivpy_2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml").entries
    assert entry == {
        "paper": "2104.12255",
        "title": "0",
        "authors": ["Quan Thoi Minh Nguyen"],
        "abstract": entry["abstract"],
        "published": "2021-04-20T16:07:14Z",
        "updated": "2021-04-20T16:07:14Z",
        "latestVersion": 1,
        "categories": ["cs.CR"],
        "primaryCategory": "cs.CR",
        "doi": None,
        "journalRef": None,
        "comment": None,
        "absUrl": "https://arxiv.org/abs/2104.12255v1",
        "pdfUrl": "https://arxiv.org/pdf/2104.12255v1",
    }
    assert entry["abstract"].startswith("What is the funniest number in cryptography? 0.")
    assert entry["abstract"].endswith("awarded $35,000 in total for the reported bugs.")


@pytest.mark.parametrize(
    ("name", "paper", "version"),
    [
        ("arxivpy_2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml", "astro-ph/0601001", 1),
        ("arxivpy_2026_id_hep-ex_0406020v1_s0_m100_84b15d66c0ce.xml", "hep-ex/0406020", 1),
        ("arxivpy_2026_id_quant-ph_0201082v1_s0_m100_86989fe779ef.xml", "quant-ph/0201082", 1),
        ("arxivpy_2016_id_list=1111.2011v2.xml", "1111.2011", 2),
    ],
)
def test_legacy_and_versioned_ids_give_the_bare_id_and_the_version(
    name: str, paper: str, version: int
) -> None:
    parsed = feed(name)
    (entry,) = parsed.entries
    assert (entry["paper"], entry["latestVersion"]) == (paper, version)
    assert metadata_for(parsed, parse_ref(paper)) == entry
    assert metadata_for(parsed, parse_ref(f"{paper}v{version}")) == entry


def test_a_legacy_entry_keeps_its_journal_reference_comment_and_four_authors() -> None:
    (entry,) = feed("arxivpy_2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml").entries
    assert entry["journalRef"] == "ActaAstron.56:1-50,2006"
    assert entry["comment"].startswith("62 pages including 16 figures and 9 tables.")
    assert entry["authors"] == [
        "Andrew Gould",
        "Susan Dorsher",
        "B. Scott Gaudi",
        "Andrzej Udalski",
    ]
    assert entry["categories"] == ["astro-ph"]
    # "Gould &amp; Morgan" in the XML is text with an ampersand, once
    assert "Gould & Morgan (2003)" in entry["abstract"]


def test_the_older_format_reads_like_the_new_one_with_its_line_wrapping_squashed() -> None:
    (entry,) = feed("arxivpy_2016_id_list=1111.2011v2.xml").entries
    assert entry["title"] == (
        "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large Connectivity Limit"
    )
    assert entry["published"] == "2011-11-08T18:48:36Z"
    assert entry["updated"] == "2012-04-02T12:38:54Z"
    assert entry["doi"] == "10.1103/PhysRevB.85.115117"
    assert entry["journalRef"] == "Phys. Rev. B 85, 115117 (2012)"
    assert entry["comment"] == "8 pages, 3 figures. Published version"
    assert entry["categories"] == ["cond-mat.str-el", "cond-mat.stat-mech"]
    assert entry["absUrl"] == "http://arxiv.org/abs/1111.2011v2"  # as arXiv wrote it then
    assert "\n" not in entry["abstract"] and "  " not in entry["abstract"]


def test_an_author_name_keeps_its_non_ascii_letters() -> None:
    (entry,) = feed("atom-2508.16190.xml").entries
    assert entry["authors"] == ["Sandro Paval", "Ivan P. Yamshchikov", "Pascal Meißner"]


def test_arxivs_error_feed_is_a_bad_request_with_arxivs_words() -> None:
    with pytest.raises(BadRequest) as caught:
        parse_feed(atom("arxivpy_2026_id_abc_s0_m100_b79c8dcf6bc3.xml"))
    assert caught.value.detail == "arXiv API: incorrect id format for abc"
    assert caught.value.status == 400


def test_an_error_feed_that_says_not_found_is_not_found() -> None:
    body = atom("arxivpy_2026_id_abc_s0_m100_b79c8dcf6bc3.xml").replace(
        b"incorrect id format for abc", b"paper 1234.5678 not found"
    )
    with pytest.raises(NotFound, match=r"arXiv API: paper 1234\.5678 not found"):
        parse_feed(body)


@pytest.mark.parametrize(
    "name",
    [
        "arxivpy_2026_id_0000.0000_s0_m100_8b51d9633a68.xml",
        "arxivpy_2026_id_0808.05394_s0_m100_7b0c7d0a7cdd.xml",
        "empty-feed-1234.1234.xml",
        "empty-feed-9999.99999.scholar-search.xml",
    ],
)
def test_an_empty_feed_is_an_empty_list_and_the_paper_is_not_found(name: str) -> None:
    parsed = feed(name)
    assert parsed.entries == () and parsed.total == 0
    assert search_page(parsed, "id_list=")["hits"] == []
    with pytest.raises(NotFound, match=r"The arXiv API has no paper 2104\.12255v1"):
        metadata_for(parsed, parse_ref("2104.12255v1"))


def test_of_two_ids_asked_together_only_the_one_arxiv_has_is_answered() -> None:
    # 0808.05394 has five digits before 2015: no arXiv id has that form, so arXiv answers
    # nothing for it (and paperanchor refuses it before asking, see test_query)
    parsed = feed("arxivpy_2026_id_0808.05394_1707.08567_s0_m100_42e5aa0ec3af.xml")
    assert list(metadata_by_paper(parsed)) == ["1707.08567"]
    assert metadata_for(parsed, parse_ref("1707.08567"))["title"].startswith("Proceedings of")
    with pytest.raises(NotFound, match=r"1605\.08386"):
        metadata_for(parsed, parse_ref("1605.08386"))


def test_search_pages_give_the_query_total_start_and_hits() -> None:
    page = search_page(feed("arxivpy_2026_q_testing_s10_m10_34e56e15aaac.xml"), "testing")
    assert (page["query"], page["total"], page["start"], len(page["hits"])) == (
        "testing",
        214881,
        10,
        10,
    )
    whole = feed(TESTING_100).entries
    for start, name in [
        (0, "arxivpy_2026_q_testing_s0_m10_bc5a6c384fe9.xml"),
        (10, "arxivpy_2026_q_testing_s10_m10_34e56e15aaac.xml"),
        (20, "arxivpy_2026_q_testing_s20_m10_348a237fecab.xml"),
    ]:
        hits = search_page(feed(name), "testing")["hits"]
        assert [hit["paper"] for hit in hits] == [e["paper"] for e in whole[start : start + 10]]


def test_a_hit_names_three_authors_then_et_al() -> None:
    (entry,) = feed("arxivpy_2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml").entries
    hit = to_hit(entry)
    assert hit["authors"] == ["Andrew Gould", "Susan Dorsher", "B. Scott Gaudi", "et al."]
    assert hit["idv"] == "astro-ph/0601001v1" and hit["primaryCategory"] == "astro-ph"
    (three,) = feed("arxivpy_2016_id_list=1111.2011v2.xml").entries
    assert to_hit(three)["authors"] == three["authors"]


def test_a_hit_summary_is_at_most_150_characters_cut_at_a_word() -> None:
    for entry in feed(TESTING_100).entries:
        summary = to_hit(entry)["summary"]
        assert len(summary) <= HIT_SUMMARY_CHARS
        if len(entry["abstract"]) <= HIT_SUMMARY_CHARS:
            assert summary == entry["abstract"]
        else:
            kept = summary.removesuffix("…")
            assert summary.endswith("…") and entry["abstract"].startswith(kept)
            assert entry["abstract"][len(kept)] in " ,;:"  # the next character ends a word


def test_clip_cuts_inside_a_word_only_when_the_word_is_longer_than_half_the_budget() -> None:
    assert clip("short", 10) == "short"
    assert clip("alpha beta gamma delta", 12) == "alpha beta…"
    assert clip("x" * 50, 10) == "x" * 9 + "…"


def test_a_search_hit_costs_about_a_hundred_tokens() -> None:
    tokens = [
        math.ceil(len(json.dumps(to_hit(e), ensure_ascii=False, separators=(",", ":"))) / 4)
        for e in feed(TESTING_100).entries
    ]
    # measured: median 103, max 119 (the 150-character summary is 38 of them; 300 characters
    # made it median 140, max 158)
    assert HIT_SUMMARY_CHARS == 150 and len(tokens) == 100
    assert statistics.median(tokens) <= 110 and max(tokens) < 125


def test_the_newer_and_older_search_formats_give_the_same_shape() -> None:
    new = feed("search-cat-cs.LG-max5.paperpulse.xml")
    old = feed("search-cat-cs.RO-neural.oldformat-2025.xiv.xml")
    assert new.total == 262731 and len(new.entries) == 5
    assert old.total == 5619 and len(old.entries) == 2
    assert set(new.entries[0]) == set(old.entries[0])
    assert old.entries[0]["categories"] == ["cs.RO", "cs.AI", "cs.CV", "cs.LG", "cs.SY", "eess.SY"]
    assert old.entries[0]["comment"] == (
        "39th Conference on Neural Information Processing Systems (NeurIPS 2025); "
        "Project Website: rdd-neurips.github.io"
    )
