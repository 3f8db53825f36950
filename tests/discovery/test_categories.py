"""arXiv's taxonomy as package data, category checking, and trends from one feed."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from paperanchor.discovery.atom import parse_feed
from paperanchor.discovery.categories import (
    STOP_WORDS,
    categories,
    category_id,
    title_terms,
    trends,
)
from paperanchor.errors import BadRequest
from tests.discovery.recorded import TESTING_100, atom


def test_the_taxonomy_is_the_corpus_copy_of_arxivs_minus_its_test_groups(corpus: Path) -> None:
    source = json.loads((corpus / "taxonomy" / "arxiv_taxonomy_definitions.json").read_text())
    shipped = categories()
    ids = [category["id"] for category in shipped["categories"]]
    expected = [
        cid
        for cid, category in source["CATEGORIES"].items()
        if source["ARCHIVES"][category["in_archive"]]["in_group"] not in ("grp_test", "grp_bad")
    ]
    assert ids == expected and len(ids) == 176
    assert shipped["aliases"] == source["CATEGORY_ALIASES"]
    assert shipped["source"]["source_repo"] == "arXiv/arxiv-base"
    cs_lg = next(c for c in shipped["categories"] if c["id"] == "cs.LG")
    assert cs_lg == {
        "id": "cs.LG",
        "name": "Machine Learning",
        "archive": "cs",
        "group": "grp_cs",
        "active": True,
        "aliasOf": None,
        "description": source["CATEGORIES"]["cs.LG"]["description"],
    }


def test_the_taxonomy_is_served_from_the_installed_package_not_the_corpus() -> None:
    from importlib import resources

    assert (resources.files("paperanchor") / "data" / "arxiv_taxonomy.json").is_file()


def test_category_ids_are_unique_whatever_their_case() -> None:
    ids = [category["id"] for category in categories()["categories"]]
    assert len({cid.casefold() for cid in ids}) == len(ids)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("cs.LG", "cs.LG"),
        ("CS.lg", "cs.LG"),
        (" astro-ph ", "astro-ph"),
        ("hep-th", "hep-th"),
        ("cs.SY", "eess.SY"),
        ("math.MP", "math-ph"),
        ("stat.TH", "math.ST"),
        ("chao-dyn", "chao-dyn"),  # a subsumed archive still names its old papers
    ],
)
def test_a_category_is_checked_in_any_case_and_an_alias_resolves(name: str, canonical: str) -> None:
    assert category_id(name) == canonical


@pytest.mark.parametrize(
    ("name", "detail"),
    [
        ("cs.XY", 'Unknown arXiv category "cs.XY"; did you mean cs.SY, cs.CY, cs.SI?'),
        ("cs", 'Unknown arXiv category "cs"'),
        ("test.soft", 'Unknown arXiv category "test.soft"'),
        ("cs.LG OR all:x", 'Unknown arXiv category "cs.LG OR all:x"'),
        ("\x00", 'Unknown arXiv category "\\x00"'),
    ],
)
def test_an_unknown_category_is_a_bad_request_with_the_nearest(name: str, detail: str) -> None:
    with pytest.raises(BadRequest) as caught:
        category_id(name)
    assert caught.value.detail.startswith(detail)


def test_title_terms_drop_stop_words_math_and_commands() -> None:
    assert title_terms("A Study of $\\alpha$-Stable \\emph{Testing} for the LLM-based Testing") == [
        "study",
        "stable",
        "testing",
        "llm-based",
    ]
    assert not set(title_terms("Towards using the new approach via a model")) & STOP_WORDS


@pytest.mark.usefixtures("corpus")
def test_trends_count_submissions_per_day_of_the_window_from_the_100_entry_feed() -> None:
    feed = parse_feed(atom(TESTING_100))
    now = datetime(2025, 1, 31, 23, 59, 59, tzinfo=UTC)
    result = trends(feed, 30, now)
    # the window's submissions, counted from the raw XML without our parser
    raw = re.findall(rb"<published>(\d{4}-\d{2}-\d{2})T", atom(TESTING_100))
    days = Counter(d.decode() for d in raw if b"2025-01-02" <= d <= b"2025-01-31")
    assert result["since"] == "2025-01-02" and result["until"] == "2025-01-31"
    assert len(result["perDay"]) == 30
    assert {d["date"]: d["count"] for d in result["perDay"] if d["count"]} == dict(days)
    assert result["submissions"] == sum(days.values()) == 5
    assert result["total"] == 214881
    # relevance-sorted and reaching back to 2001: it covers the window
    assert result["complete"] is True
    terms = result["topTerms"]
    # the five titles: "…Neuroevolution for Testing Games", "…of Test Generation", "AugmenTest:
    # Enhancing Tests with LLM-Driven Oracles", "…Approach to Testing Firm Conduct…",
    # "…Regression Test Optimization…" (tests is not test: terms are words, not stems)
    assert terms[:2] == [{"term": "test", "count": 2}, {"term": "testing", "count": 2}]
    assert all(t["count"] <= result["submissions"] and t["term"] not in STOP_WORDS for t in terms)
    assert [t["count"] for t in terms] == sorted((t["count"] for t in terms), reverse=True)


@pytest.mark.usefixtures("corpus")
def test_trends_of_a_feed_that_stops_inside_the_window_are_marked_incomplete() -> None:
    feed = parse_feed(atom("search-cat-cs.LG-max5.paperpulse.xml"))
    newest = max(entry["published"] for entry in feed.entries)
    result = trends(feed, 7, datetime.fromisoformat(newest), category="cs.LG")
    assert result["submissions"] == 5 and result["total"] == 262731
    assert result["complete"] is False  # five of 262,731, all on the window's last day
    assert result["category"] == "cs.LG"


@pytest.mark.usefixtures("corpus")
def test_trends_default_to_seven_days_and_check_the_range() -> None:
    feed = parse_feed(atom(TESTING_100))
    assert len(trends(feed, None, datetime(2026, 4, 12, tzinfo=UTC))["perDay"]) == 7
    # a naive `now` is UTC, not the machine's local time
    assert trends(feed, 1, datetime(2025, 1, 31, 23, 30))["until"] == "2025-01-31"
    with pytest.raises(BadRequest, match="days must be from 1 to 30 \\(got 31\\)"):
        trends(feed, 31)
