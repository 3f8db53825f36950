"""Finding a quote among a paper's passages (contract §4, cite by text), at a bounded cost.

A quote is checked for length before anything is paid for it (NFKC can make 18 characters of
one: 3.9 MB of U+FDFA became 23 M), then compared exactly, then fuzzily. Fuzzy comparison is
`partial_ratio` (the best alignment of the quote inside a passage), whose cost is the quote's
length times the text it is compared with. It runs over windows of the passages that cover
every alignment, the windows holding most of the quote's words first, and stops when the work
(quote length × window length, summed) reaches `WORK_CAP`: a paper of any size costs at most
that, where two `extractOne` calls over a 3 MB page took 20 s holding the GIL. On a paper whose
text fits the cap, every window is compared, so the answer is the one an unbounded search gives.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from rapidfuzz import fuzz

from paperanchor.errors import BadRequest

QUOTE_RANGE = (10, 2000)
# contract §4: a quote matches fuzzily at a partial similarity of at least 90 (rapidfuzz, 0-100).
FUZZY_MIN_SCORE = 90
# Work, as quote length × characters compared (partial_ratio weighs PARTIAL_COST times as much
# as ratio), summed over a request: about 0.2 s of rapidfuzz on this project's machine.
WORK_CAP = 6_000_000_000
PARTIAL_COST = 7
# A quote up to this long is compared by partial_ratio (fast for short needles); a longer one
# by ratio at the starts its first and last ANCHOR_WORDS words point at, at most MAX_STARTS.
SHORT_QUOTE = 64
ANCHOR_WORDS = 4
MAX_STARTS = 400
# Whitespace can only shrink under normalisation, and NFKC seldom shrinks anything else: a raw
# quote this many times the upper bound cannot come down into range.
RAW_FACTOR = 4
_MIN_WINDOW = 2_000


def comparable(text: str) -> str:
    """Text as quotes are compared: NFKC, case-folded, whitespace squashed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def checked_quote(quote: object) -> str:
    """The quote as compared, or BadRequest when it is no string or out of range; the range is
    checked on the raw text before normalising it, and again after."""
    if not isinstance(quote, str):
        raise BadRequest("text must be a string")
    low, high = QUOTE_RANGE
    if len(quote) > RAW_FACTOR * high:
        _out_of_range(len(quote))
    squashed = " ".join(quote.split())
    if not low <= len(squashed) <= high:
        _out_of_range(len(squashed))
    wanted = comparable(squashed)
    if not low <= len(wanted) <= high:
        _out_of_range(len(wanted))
    return wanted


def _out_of_range(length: int) -> None:
    low, high = QUOTE_RANGE
    raise BadRequest(f"text is {length} characters long: give a quote of {low}–{high} characters")


@dataclass(frozen=True)
class Found:
    """The passage a quote was found in (`match` "exact" or "fuzzy"), or the closest one
    (`match` "none") with its score."""

    index: int
    match: str
    score: float


def find(wanted: str, passages: list[str], work_cap: int = WORK_CAP) -> Found | None:
    """Where `wanted` (as `checked_quote` returns it) is among `passages` (as `comparable`
    returns them): exact, else fuzzy at FUZZY_MIN_SCORE or more, else the closest compared."""
    for index, passage in enumerate(passages):
        if wanted in passage:
            return Found(index, "exact", 100.0)
    length = len(wanted)
    words = wanted.split()
    wanted_words = set(words)
    short = length <= SHORT_QUOTE
    # short quotes: windows of `size` stepping by `size - length`, which hold every alignment
    size = max(2 * length, _MIN_WINDOW) if short else 0
    pieces: list[tuple[int, int, int]] = []  # (-shared words, passage index, start)
    for index, passage in enumerate(passages):
        if short:
            for start in range(0, max(1, len(passage) - length + 1), size - length):
                shared = len(wanted_words.intersection(passage[start : start + size].split()))
                pieces.append((-shared, index, start))
        else:
            pieces.append((-len(wanted_words.intersection(passage.split())), index, 0))
    pieces.sort()
    anchors = _anchors(words)
    best: Found | None = None
    closest: Found | None = None
    work = 0
    for _shared, index, start in pieces:
        if work > work_cap and closest is not None:
            break
        passage = passages[index]
        if short:
            window = passage[start : start + size]
            work += PARTIAL_COST * length * len(window)
            score = fuzz.partial_ratio(wanted, window)
        else:
            score, spent = _anchored(wanted, passage, anchors)
            work += spent
        # A passage shorter than the quote cannot contain it: partial similarity would match
        # a short footnote inside a long made-up quote.
        fits = len(passage) >= 0.9 * length and score >= FUZZY_MIN_SCORE
        if fits and (best is None or score > best.score):
            best = Found(index, "fuzzy", score)
        if closest is None or score > closest.score:
            closest = Found(index, "none", score)
    return best or closest


def _anchors(words: list[str]) -> list[tuple[str, int]]:
    """The quote's first and last words with their offsets in it: where one of them is in a
    passage, the quote would start at that position less the offset."""
    offsets: list[tuple[str, int]] = []
    at = 0
    for word in words:
        offsets.append((word, at))
        at += len(word) + 1
    picked = offsets[:ANCHOR_WORDS] + offsets[-ANCHOR_WORDS:]
    return list(dict.fromkeys(picked))


def _anchored(wanted: str, passage: str, anchors: list[tuple[str, int]]) -> tuple[float, int]:
    """The best similarity of `wanted` to a stretch of `passage` of its length that starts
    where one of its anchor words puts it (partial_ratio costs the cube of a long quote's
    length: 0.3 s for 2,000 characters), and the work spent."""
    length = len(wanted)
    if len(passage) <= length:
        return fuzz.ratio(wanted, passage), length * length
    starts: dict[int, None] = {}
    for word, offset in anchors:
        found = passage.find(word)
        while found != -1 and len(starts) < MAX_STARTS:
            starts[max(0, min(found - offset, len(passage) - length))] = None
            found = passage.find(word, found + 1)
    best, spent, at = 0.0, 0, 0
    for start in starts or {0: None}:
        score = fuzz.ratio(wanted, passage[start : start + length], score_cutoff=best)
        spent += length * length
        if score > best:
            best, at = score, start
    for start in range(max(0, at - 3), min(len(passage) - length, at + 3) + 1):  # refine
        best = max(best, fuzz.ratio(wanted, passage[start : start + length]))
        spent += length * length
    return best, spent
