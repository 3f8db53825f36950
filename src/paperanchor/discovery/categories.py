"""arXiv's category taxonomy (GET /categories.json), category checking, and category trends.

The taxonomy ships as package data (`paperanchor/data/arxiv_taxonomy.json`, written by
`scripts/taxonomy_data.py` from arXiv/arxiv-base's `arxiv/taxonomy/definitions.py`), so the
route and the checks work offline. Trends are computed from one API feed of a category's
submissions, newest first (`query.trends_query`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from importlib import resources
from typing import cast

from paperanchor.discovery.atom import Feed
from paperanchor.discovery.checks import whole_number
from paperanchor.errors import BadRequest
from paperanchor.refs import shown
from paperanchor.shapes import Taxonomy, Trends

TOP_TERMS = 10
TRENDS_DAYS_DEFAULT, TRENDS_DAYS_MAX = 7, 30
_CATEGORY_SHAPE = re.compile(r"^[A-Za-z][A-Za-z-]{0,15}(?:\.[A-Za-z-]{1,16})?$")
_MATH = re.compile(r"\$[^$]*\$")
_COMMAND = re.compile(r"\\[A-Za-z]+|\\.")
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")

# English function words, and the few that join arXiv titles whatever their subject
# ("Towards …", "… via …", "… using …", "LLM-based", "A new …"): kept, they top every
# category's list (on the 100-entry "testing" feed "using" came second).
STOP_WORDS = frozenset(
    """
    a about above across after again against all also am among an and any are as at be
    because been before being below between both but by can could did do does doing down
    during each few for from further had has have having he her here hers him his how i if
    in into is it its itself just me more most my no nor not now of off on once only or other
    our ours out over own same she should so some such than that the their theirs them then
    there these they this those through to too under until up upon very was we were what when
    where which while who whom why will with within without would you your yours
    via using towards toward based new
    """.split()  # noqa: SIM905 - a word list reads better as words
)


@lru_cache(maxsize=1)
def _raw() -> str:
    return (resources.files("paperanchor") / "data" / "arxiv_taxonomy.json").read_text("utf-8")


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, str], dict[str, str]]:
    data = json.loads(_raw())
    by_folded = {category["id"].casefold(): category["id"] for category in data["categories"]}
    return by_folded, dict(data["aliases"])


def categories() -> Taxonomy:
    """arXiv's taxonomy for GET /categories.json: groups, archives, categories, aliases."""
    # package data written by scripts/taxonomy_data.py; tests/api validate it against the shape
    return cast(Taxonomy, json.loads(_raw()))


def category_id(name: str) -> str:
    """The canonical id of an arXiv category, any case, aliases resolved (`cs.SY` -> `eess.SY`)."""
    if not isinstance(name, str):
        raise BadRequest(f"category must be text (got {type(name).__name__})")
    text = name.strip()
    by_folded, aliases = _index()
    if _CATEGORY_SHAPE.match(text):
        found = by_folded.get(text.casefold())
        if found is not None:
            return aliases.get(found, found)
    nearest = difflib.get_close_matches(text, list(by_folded.values()), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(nearest)}?" if nearest else " (see /categories.json)"
    raise BadRequest(f'Unknown arXiv category "{shown(text)}"{hint}')


def title_terms(title: str) -> list[str]:
    """The distinct content words of a title, lower-cased, math and TeX commands dropped."""
    text = _COMMAND.sub(" ", _MATH.sub(" ", title)).casefold()
    terms: dict[str, None] = {}
    for word in _WORD.findall(text):
        word = word.strip("'’-")
        if len(word) < 2 or word in STOP_WORDS or word.isdigit():
            continue
        terms.setdefault(word, None)
    return list(terms)


def trends_days(days: int | str | None) -> int:
    """The checked `days` of category trends: 1-30, default 7."""
    return whole_number("days", days, TRENDS_DAYS_DEFAULT, 1, TRENDS_DAYS_MAX)


def trends(
    feed: Feed,
    days: int | str | None = None,
    now: datetime | None = None,
    *,
    category: str | None = None,
) -> Trends:
    """Submissions per UTC day over the last `days` days up to `now`, and the top title terms.

    `feed` is one API answer sorted by submission date; only entries submitted in the window
    count. When arXiv's total for the query is more than the feed holds and the feed does not
    reach back past the window's first day, `complete` is false (the counts are a lower bound).
    """
    days = trends_days(days)
    entries = feed.entries
    moment = now or datetime.now(UTC)
    moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    until = moment.date()
    since = until - timedelta(days=days - 1)
    per_day: Counter[date] = Counter()
    terms: Counter[str] = Counter()
    listed = 0
    oldest: date | None = None
    for entry in entries:
        listed += 1
        submitted = datetime.fromisoformat(entry["published"]).astimezone(UTC)
        day = submitted.date()
        oldest = day if oldest is None or day < oldest else oldest
        if not since <= day <= until or submitted > moment:
            continue
        per_day[day] += 1
        terms.update(title_terms(entry["title"]))
    counted = sum(per_day.values())
    arxiv_total = feed.total
    # complete when the feed held every result, or reached back past the window's first day
    complete = arxiv_total <= listed or (oldest is not None and oldest < since)
    ranked = sorted(terms.items(), key=lambda item: (-item[1], item[0]))[:TOP_TERMS]
    return {
        "category": category,
        "days": days,
        "since": since.isoformat(),
        "until": until.isoformat(),
        "submissions": counted,
        "total": arxiv_total,
        "complete": complete,
        "perDay": [
            {
                "date": (since + timedelta(days=offset)).isoformat(),
                "count": per_day[since + timedelta(days=offset)],
            }
            for offset in range(days)
        ],
        "topTerms": [{"term": term, "count": count} for term, count in ranked],
    }
