"""arXiv API requests (contract §4 search and metadata): the query parameters, checked.

The client only sends what these functions return; every argument is checked here, with a
`BadRequest` that names what was asked for. A search's field syntax (`ti:`, `au:`, `abs:`,
`cat:`, `AND`, `OR`, `ANDNOT`, quotes, parentheses) is arXiv's and is passed through;
`category` and `from`/`to` are composed into it with `AND`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from paperanchor.discovery.categories import category_id, trends_days
from paperanchor.discovery.checks import whole_number
from paperanchor.errors import BadRequest
from paperanchor.refs import PaperRef, parse_ref, shown

SORTS = {"relevance": "relevance", "submitted": "submittedDate", "updated": "lastUpdatedDate"}
LIMIT_DEFAULT, LIMIT_MAX = 10, 50
ID_LIST_MAX = 20
# arXiv serves no result past the 30,000th of a query ("Paging": start + max_results).
RESULTS_WINDOW = 30000
# A search_query is sent in a URL; arXiv's own form allows far less. 1,000 characters is a
# long hand-written query, and keeps the URL under every server's 8 kB line limit.
QUERY_MAX_CHARS = 1000
# arXiv's first submissions are from August 1991; an open `from` starts there.
FIRST_DAY = date(1991, 8, 1)
# One trends request: arXiv's largest page (2,000 entries, about 4.6 MB of Atom).
TRENDS_MAX_RESULTS = 2000

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # tabs and newlines are spaces


@dataclass(frozen=True, slots=True)
class ArxivQuery:
    """One arXiv API request: the search_query as sent, paging and order."""

    search_query: str
    start: int
    limit: int
    sort: str

    def params(self) -> dict[str, str]:
        """The request's query parameters, in the order arXiv documents them."""
        return {
            "search_query": self.search_query,
            "start": str(self.start),
            "max_results": str(self.limit),
            "sortBy": SORTS[self.sort],
            "sortOrder": "descending",
        }


def search_query(
    q: str | None,
    *,
    category: str | None = None,
    date_from: str | date | None = None,
    date_to: str | date | None = None,
    sort: str | None = None,
    start: int | str | None = None,
    limit: int | str | None = None,
    today: date | None = None,
) -> ArxivQuery:
    """The arXiv request of one search (contract §4); `today` (UTC) closes an open `to`."""
    # REST passes an absent argument as "": it is absent
    category = None if category is None or str(category).strip() == "" else category
    date_from = None if date_from == "" else date_from
    date_to = None if date_to == "" else date_to
    text = _query_text(q)
    composed_with = category is not None or date_from is not None or date_to is not None
    parts = [f"({text})" if text and composed_with else text]
    if category is not None:
        parts.append(f"cat:{category_id(category)}")
    if date_from is not None or date_to is not None:
        first = _day("from", date_from) if date_from is not None else FIRST_DAY
        last = _day("to", date_to) if date_to is not None else (today or _utc_today())
        if first > last:
            raise BadRequest(f"from ({first.isoformat()}) is after to ({last.isoformat()})")
        parts.append(f"submittedDate:[{first:%Y%m%d}0000 TO {last:%Y%m%d}2359]")
    composed = " AND ".join(part for part in parts if part)
    if not composed:
        raise BadRequest("A search needs a query (q), a category or a date range")
    chosen_sort = _sort(sort)
    first_result = whole_number("start", start, 0, 0, RESULTS_WINDOW - 1)
    count = whole_number("limit", limit, LIMIT_DEFAULT, 1, LIMIT_MAX)
    if first_result + count > RESULTS_WINDOW:
        raise BadRequest(
            f"start + limit must be at most {RESULTS_WINDOW} (arXiv serves no result past it); "
            f"got {first_result} + {count}"
        )
    return ArxivQuery(composed, first_result, count, chosen_sort)


def trends_query(
    category: str, days: int | str | None = None, *, today: date | None = None
) -> tuple[ArxivQuery, int]:
    """The one request behind category trends: the window's submissions, newest first."""
    window = trends_days(days)
    last = today or _utc_today()
    first = last - timedelta(days=window - 1)
    query = ArxivQuery(
        f"cat:{category_id(category)} AND submittedDate:[{first:%Y%m%d}0000 TO {last:%Y%m%d}2359]",
        0,
        TRENDS_MAX_RESULTS,
        "submitted",
    )
    return query, window


def id_list(papers: Sequence[str | PaperRef]) -> list[PaperRef]:
    """The checked papers of one metadata request: 1-20 arXiv references, duplicates dropped."""
    if isinstance(papers, str):
        papers = [papers]
    if not papers:
        raise BadRequest("Metadata needs at least one paper")
    refs: dict[str, PaperRef] = {}
    for paper in papers:
        ref = paper if isinstance(paper, PaperRef) else parse_ref(paper)
        if ref.is_local:
            raise BadRequest(f"{ref.paper} is a local document; the arXiv API has no metadata")
        refs.setdefault(ref.idv, ref)
    if len(refs) > ID_LIST_MAX:
        raise BadRequest(f"At most {ID_LIST_MAX} papers in one request (got {len(refs)})")
    return list(refs.values())


def id_list_params(refs: Sequence[PaperRef]) -> dict[str, str]:
    """The query parameters of one metadata request for `refs` (from `id_list`).

    arXiv answers a versioned id with that version's entry and a bare id with the latest
    version, so a caller that wants `latestVersion` to be the latest passes bare ids.
    """
    return {"id_list": ",".join(ref.idv for ref in refs), "max_results": str(len(refs))}


# -- argument checks -------------------------------------------------------------------------


def _query_text(q: str | None) -> str:
    if q is None:
        return ""
    if not isinstance(q, str):
        raise BadRequest(f"q must be text (got {type(q).__name__})")
    if _CONTROL.search(q):
        raise BadRequest(f'q contains control characters: "{shown(q)}"')
    text = " ".join(q.split())
    if len(text) > QUERY_MAX_CHARS:
        raise BadRequest(f"q is {len(text)} characters long (at most {QUERY_MAX_CHARS})")
    return text


def _sort(sort: str | None) -> str:
    if sort is None or sort == "":
        return "relevance"
    if sort not in SORTS:
        raise BadRequest(f'sort must be relevance, submitted or updated (got "{shown(str(sort))}")')
    return sort


def _day(name: str, value: str | date) -> date:
    if isinstance(value, datetime):
        return value.astimezone(UTC).date() if value.tzinfo else value.date()
    if isinstance(value, date):
        return value
    text = str(value).strip()
    if not _DATE.match(text):
        raise BadRequest(f'{name} must be a date YYYY-MM-DD (got "{shown(text)}")')
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise BadRequest(f'{name} is not a calendar date: "{shown(text)}"') from None


def _utc_today() -> date:
    return datetime.now(UTC).date()
