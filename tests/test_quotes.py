"""Quote matching (quotes.py) finds what an unbounded search finds, at a bounded cost."""

from __future__ import annotations

import random

import pytest
from rapidfuzz import fuzz, process

from paperanchor.paper import LoadedPaper, Paper
from paperanchor.quotes import FUZZY_MIN_SCORE, checked_quote, find
from tests.corpus_pages import parsed

PAGES = ["html/2501.11120v1.arxiv.html", "generated/synthetic.html"]


def _passages(name: str) -> list[str]:
    paper = Paper.open(LoadedPaper(parsed(name), "local/x", "local/x"))
    return [normal for _unit, normal in paper.quotable()]


def _misquoted(text: str, rng: random.Random, typos: int) -> str:
    letters = list(text)
    for _ in range(typos):
        at = rng.randrange(len(letters))
        letters[at] = "z" if letters[at] != "z" else "q"
    return "".join(letters)


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("length", [30, 64, 120, 400, 1_500])
def test_a_misquoted_passage_is_found_where_an_unbounded_search_finds_it(
    name: str, length: int
) -> None:
    passages = _passages(name)
    rng = random.Random(length)
    long_ones = [i for i, p in enumerate(passages) if len(p) >= length + 20]
    for index in rng.sample(long_ones, min(8, len(long_ones))):
        start = rng.randrange(len(passages[index]) - length)
        quote = checked_quote(
            _misquoted(passages[index][start : start + length], rng, length // 40)
        )
        found = find(quote, passages)
        unbounded = process.extractOne(quote, passages, scorer=fuzz.partial_ratio)
        assert found is not None and unbounded is not None
        if unbounded[1] >= FUZZY_MIN_SCORE:
            assert found.match in ("exact", "fuzzy"), (quote, unbounded[1], found)
            # the passage found holds the quote as partial similarity reads it, too
            assert fuzz.partial_ratio(quote, passages[found.index]) >= FUZZY_MIN_SCORE - 1
