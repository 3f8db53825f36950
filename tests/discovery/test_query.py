"""arXiv API requests: search_query composition, paging, id lists and argument checks."""

from __future__ import annotations

from datetime import date

import pytest

from paperanchor.discovery.query import (
    ID_LIST_MAX,
    id_list,
    id_list_params,
    search_query,
    trends_query,
)
from paperanchor.errors import BadRequest
from paperanchor.refs import parse_ref

TODAY = date(2026, 4, 12)


def test_a_plain_query_is_sent_as_written_with_arxivs_defaults() -> None:
    assert search_query("testing").params() == {
        "search_query": "testing",
        "start": "0",
        "max_results": "10",
        "sortBy": "relevance",
        "sortOrder": "descending",
    }


@pytest.mark.parametrize(
    "q",
    [
        'au:del_maestro AND ti:"quantum criticality"',
        "au:del_maestro ANDNOT (ti:checkerboard OR ti:Pyrochlore)",
        "cat:cs.RO AND (neural)",
        "abs:transformer",
    ],
)
def test_field_syntax_is_passed_through(q: str) -> None:
    assert search_query(q).search_query == q


def test_category_and_dates_are_composed_with_and_around_the_query_in_parentheses() -> None:
    query = search_query(
        "ti:attention OR abs:transformer",
        category="cs.lg",
        date_from="2024-01-01",
        date_to="2024-01-31",
        sort="submitted",
        start="10",
        limit=20,
    )
    assert query.params() == {
        "search_query": "(ti:attention OR abs:transformer) AND cat:cs.LG "
        "AND submittedDate:[202401010000 TO 202401312359]",
        "start": "10",
        "max_results": "20",
        "sortBy": "submittedDate",
        "sortOrder": "descending",
    }


def test_an_open_date_range_runs_from_arxivs_first_day_or_to_today() -> None:
    assert search_query("x", date_to="2001-02-03").search_query.endswith(
        "submittedDate:[199108010000 TO 200102032359]"
    )
    assert search_query("x", date_from="2026-04-01", today=TODAY).search_query.endswith(
        "submittedDate:[202604010000 TO 202604122359]"
    )


def test_empty_arguments_are_absent_and_whitespace_in_q_is_squashed() -> None:
    query = search_query("ti:a\tAND\n ti:b", category="", date_from="", date_to="", sort="")
    assert query.search_query == "ti:a AND ti:b" and query.sort == "relevance"


def test_a_category_alone_is_a_search_and_an_alias_is_sent_as_its_canonical_id() -> None:
    assert search_query(None, category="cs.SY").search_query == "cat:eess.SY"
    assert search_query("", category="math.MP").search_query == "cat:math-ph"


@pytest.mark.parametrize(
    ("sort", "sent"),
    [("relevance", "relevance"), ("submitted", "submittedDate"), ("updated", "lastUpdatedDate")],
)
def test_sort_names_map_to_arxivs(sort: str, sent: str) -> None:
    assert search_query("x", sort=sort).params()["sortBy"] == sent


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        ({"q": ""}, "A search needs a query (q), a category or a date range"),
        ({"q": "   "}, "A search needs a query"),
        ({"q": "x", "limit": 0}, "limit must be from 1 to 50 (got 0)"),
        ({"q": "x", "limit": 51}, "limit must be from 1 to 50 (got 51)"),
        ({"q": "x", "limit": "ten"}, 'limit must be a whole number from 1 to 50 (got "ten")'),
        ({"q": "x", "limit": True}, "limit must be a whole number"),
        ({"q": "x", "start": -1}, "start must be from 0 to 29999 (got -1)"),
        ({"q": "x", "start": "1e3"}, "start must be a whole number"),
        ({"q": "x", "start": 29995, "limit": 10}, "start + limit must be at most 30000"),
        ({"q": "x", "sort": "date"}, 'sort must be relevance, submitted or updated (got "date")'),
        ({"q": "x", "date_from": "2024-02-30"}, 'from is not a calendar date: "2024-02-30"'),
        ({"q": "x", "date_to": "last week"}, 'to must be a date YYYY-MM-DD (got "last week")'),
        (
            {"q": "x", "date_from": "2024-02-02", "date_to": "2024-02-01"},
            "from (2024-02-02) is after to (2024-02-01)",
        ),
        ({"q": "x", "category": "cs.XY"}, 'Unknown arXiv category "cs.XY"; did you mean'),
        ({"q": "a\x00b"}, 'q contains control characters: "a\\x00b"'),
        ({"q": "x" * 1001}, "q is 1001 characters long (at most 1000)"),
    ],
)
def test_bad_arguments_are_bad_requests_naming_what_was_asked(
    arguments: dict[str, object], detail: str
) -> None:
    with pytest.raises(BadRequest) as caught:
        search_query(**arguments)  # type: ignore[arg-type]
    assert caught.value.detail.startswith(detail)


def test_an_id_list_is_one_request_for_up_to_twenty_papers_duplicates_dropped() -> None:
    refs = id_list(["astro-ph/0601001", "1706.03762v7", "arXiv:1706.03762v7", "1111.2011"])
    assert id_list_params(refs) == {
        "id_list": "astro-ph/0601001,1706.03762v7,1111.2011",
        "max_results": "3",
    }
    many = [f"2101.{n:05d}" for n in range(1, ID_LIST_MAX + 1)]
    assert len(id_list(many)) == ID_LIST_MAX
    with pytest.raises(BadRequest, match="At most 20 papers in one request \\(got 21\\)"):
        id_list([*many, "2101.99999"])


@pytest.mark.parametrize(
    ("papers", "detail"),
    [
        ([], "Metadata needs at least one paper"),
        (["abc"], 'Not a paper reference: "abc"'),
        (["0808.05394"], "no arXiv id has that form"),  # five digits before 2015
        (["local/short"], "local/short is a local document"),
    ],
)
def test_an_id_list_refuses_what_is_not_an_arxiv_paper(papers: list[str], detail: str) -> None:
    with pytest.raises(BadRequest, match=detail):
        id_list(papers)


def test_a_single_reference_is_an_id_list_of_one() -> None:
    assert id_list("hep-th/9901001v2") == [parse_ref("hep-th/9901001v2")]


def test_trends_ask_for_the_windows_submissions_newest_first() -> None:
    query, days = trends_query("cs.LG", "3", today=TODAY)
    assert days == 3
    assert query.params() == {
        "search_query": "cat:cs.LG AND submittedDate:[202604100000 TO 202604122359]",
        "start": "0",
        "max_results": "2000",
        "sortBy": "submittedDate",
        "sortOrder": "descending",
    }
    assert trends_query("cs.LG", None, today=TODAY)[1] == 7


@pytest.mark.parametrize("days", [0, 31, "a week", -3])
def test_trends_days_out_of_range_are_bad_requests(days: object) -> None:
    with pytest.raises(BadRequest, match="days must be"):
        trends_query("cs.LG", days, today=TODAY)  # type: ignore[arg-type]
