"""Two editions' Markdown as CriticMarkup (SPEC §10): `{++inserted++}`, `{--deleted--}`,
`{~~old~>new~~}` at word level, and the numbers that changed.

Both sides are our Markdown of a plain read, escaped as any read is (render/escape.py), so the
paper's text never becomes markup. CriticMarkup adds its own marks on top, and a paper's text
may contain them (`C{++}`, `x ~> y`, `$a^{++}$`): `escape` breaks every mark the paper's text
would make, before the marks of ours are added, in a way neither CommonMark nor TeX sees:
outside math and code a backslash (`\\{++` renders as `{++`), inside math and code a space
(TeX ignores spaces in math; `$a^{ ++ }$` is the same formula). A CriticMarkup reader that
honours backslash escapes (tests/render/test_critic.py has one) then finds exactly our marks,
and applying them gives back each edition's escaped Markdown exactly.

Word diff is quadratic in the worst case. The tokens are aligned by rapidfuzz's bit-parallel
Indel opcodes (LCS: 20,000 x 20,000 tokens in 0.12 s and 70 MB, 8,000 x 8,000 in 0.02 s and
26 MB, measured); past `MAX_CELLS` token pairs (after the common head and tail are taken off)
the middle is said as one substitution, so a hostile pair of huge paragraphs costs linear time.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Indel

MAX_CELLS = 64_000_000
"""Token pairs (old x new) the word alignment may cost: 8,000 x 8,000 (0.02 s, 26 MB)."""

WHOLE_BELOW = 0.35
"""Two chunks whose tokens share less than this (Indel normalized similarity) are said as one
substitution: a word diff of unrelated text is confetti a reader cannot follow."""

# What a word diff must not cut into: display and inline math, code spans, links and images,
# autolinks (as render/markdown.py's cut), and an entity (our `&lt;`).
_PROTECTED = (
    r"(?<!\\)\$\$.*?(?<!\\)\$\$|(?<!\\)\$(?:[^$\\]|\\.)*\$|`[^`]*`"
    r"|!?\[(?:\\.|[^\]\\])*\]\((?:<[^>]*>|[^)\s]*)\)|<[^>\s]*>"
)
_VERBATIM = re.compile(r"(?<!\\)\$\$.*?(?<!\\)\$\$|(?<!\\)\$(?:[^$\\]|\\.)*\$|`[^`]*`", re.DOTALL)
_TOKEN = re.compile(
    rf"{_PROTECTED}|\s+|\d+(?:[.,]\d+)*|\w+|&#?\w+;|\\.|.",
    re.DOTALL,
)
_NUMBER = re.compile(r"[-−]?\d+(?:[.,]\d+)*%?")
# The marks CriticMarkup reads: openers `{++ {-- {~~ {== {>>`, closers `++} --} ~~} ==} <<}`
# and the substitution's `~>`. Outside math a mark is broken by a backslash before its brace or
# tilde (an even run of backslashes before it escapes nothing); inside math and code by a space.
_TEXT_MARK = re.compile(r"(?<!\\)((?:\\\\)*)(\{(?=[+\-~=>])|(?<=[+\-~=<])\}|~(?=>))")
_VERBATIM_MARK = re.compile(r"\{(?=[+\-~=>])|(?<=[+\-~=<])\}|~(?=>)")


def escape(markdown: str) -> str:
    """Our Markdown with every CriticMarkup mark that the paper's text would make broken, in a
    way CommonMark and TeX do not see (module docstring)."""
    if not any(mark in markdown for mark in "{}~"):
        return markdown
    out: list[str] = []
    at = 0
    for match in _VERBATIM.finditer(markdown):
        out.append(_TEXT_MARK.sub(r"\1\\\2", markdown[at : match.start()]))
        out.append(_VERBATIM_MARK.sub(_spaced, match.group()))
        at = match.end()
    out.append(_TEXT_MARK.sub(r"\1\\\2", markdown[at:]))
    return "".join(out)


def _spaced(match: re.Match[str]) -> str:
    mark = match.group()
    return "{ " if mark == "{" else " }" if mark == "}" else "~ "


def tokens(markdown: str) -> list[str]:
    """Markdown as the word diff's tokens: words, numbers, whitespace runs, single marks, and
    math, code, links and entities whole; joined they are the Markdown again."""
    return _TOKEN.findall(markdown)


def inserted(markdown: str) -> str:
    """A whole run of (escaped) Markdown that only the new edition has."""
    return f"{{++{markdown}++}}" if markdown else ""


def deleted(markdown: str) -> str:
    """A whole run of (escaped) Markdown that only the old edition has."""
    return f"{{--{markdown}--}}" if markdown else ""


def substituted(old: str, new: str) -> str:
    """One run replaced by another (either may be empty)."""
    if not old:
        return inserted(new)
    if not new:
        return deleted(old)
    return f"{{~~{old}~>{new}~~}}"


def words(old: str, new: str) -> str:
    """The CriticMarkup of two runs of escaped Markdown at word level (`escape` both first)."""
    if old == new:
        return new
    a, b = tokens(old), tokens(new)
    head = _common_head(a, b)
    tail = _common_head(a[head:][::-1], b[head:][::-1])
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    out = ["".join(a[:head])]
    if len(middle_a) * len(middle_b) > MAX_CELLS:
        out.append(substituted("".join(middle_a), "".join(middle_b)))
    else:
        out.extend(_marked(middle_a, middle_b))
    out.append("".join(a[len(a) - tail :]))
    return "".join(out)


def _common_head(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _marked(a: list[str], b: list[str]) -> list[str]:
    return [
        "".join(b[b0:b1]) if same else substituted("".join(a[a0:a1]), "".join(b[b0:b1]))
        for same, a0, a1, b0, b1 in runs(a, b)
    ]


def runs(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[bool, int, int, int, int]]:
    """Two sequences (tokens, chunks, table rows) as runs that are equal or differ, as
    `(equal, a_start, a_end, b_start, b_end)`: every insertion and deletion between two equal
    runs merged into one (Indel has no substitution of its own)."""
    if not a or not b:
        return [(False, 0, len(a), 0, len(b))] if a or b else []
    runs: list[tuple[bool, int, int, int, int]] = []
    if len(a) * len(b) > MAX_CELLS:
        return [(False, 0, len(a), 0, len(b))]
    for op in Indel.opcodes(a, b):
        same = op.tag == "equal"
        if runs and not same and not runs[-1][0]:
            runs[-1] = (False, runs[-1][1], op.src_end, runs[-1][3], op.dest_end)
        else:
            runs.append((same, op.src_start, op.src_end, op.dest_start, op.dest_end))
    return runs


def similar(old: str, new: str) -> float:
    """How much two runs of Markdown share, 0..1, by their tokens."""
    a, b = tokens(old), tokens(new)
    if len(a) * len(b) > MAX_CELLS:
        return 0.0 if a[:64] != b[:64] else 1.0
    return float(Indel.normalized_similarity(a, b))


def chunk(old: str, new: str) -> str:
    """One block's escaped Markdown changed: word level when the two are alike, else one
    substitution (display math always whole: a formula is compared by its TeX)."""
    if old == new:
        return new
    if old.startswith("$$") or new.startswith("$$") or similar(old, new) < WHOLE_BELOW:
        return substituted(old, new)
    return words(old, new)


@dataclass(frozen=True, slots=True)
class NumberChange:
    """A number in the old text that the new text says otherwise (41.8 -> 41.0)."""

    old: str
    new: str


def numbers(old: str, new: str) -> list[NumberChange]:
    """The numbers that changed between two plain texts, word level: in each replaced run,
    the numbers paired in order when both sides hold as many (a changed table cell, `41.8`
    to `41.0`); a run that only adds or drops numbers is not a changed number."""
    if old == new:
        return []
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    head = _common_head(a, b)
    tail = _common_head(a[head:][::-1], b[head:][::-1])
    a, b = a[head : len(a) - tail], b[head : len(b) - tail]
    if len(a) * len(b) > MAX_CELLS:
        spans = [(a, b)]
    else:
        spans = [(a[a0:a1], b[b0:b1]) for same, a0, a1, b0, b1 in runs(a, b) if not same]
    found: list[NumberChange] = []
    for old_run, new_run in spans:
        old_numbers = _numbers_in(old_run)
        new_numbers = _numbers_in(new_run)
        if len(old_numbers) == len(new_numbers):
            found.extend(
                NumberChange(x, y) for x, y in zip(old_numbers, new_numbers, strict=True) if x != y
            )
    return found


def _numbers_in(run: list[str]) -> list[str]:
    # a number set as math (`$41.8$`, a table cell's) is a number too
    found = (token.strip("$") for token in run)
    return [token for token in found if _NUMBER.fullmatch(token)]


# Our marks, whole, as the reader finds them: a backslash pair is skipped (it is text), so an
# escaped `\{++` opens nothing; escape() leaves no unescaped closer inside a mark, so the first
# closer ends it. One scan in C: a Python loop over the characters cost 12 s on a page of
# 13,000 changed paragraphs.
_MARK = re.compile(r"\\.|(\{\+\+.*?\+\+\}|\{--.*?--\}|\{~~.*?~~\}|\{>>.*?<<\})", re.DOTALL)


def _marks(marked: str) -> list[tuple[int, int]]:
    """Where our marks are in CriticMarkup we wrote."""
    return [m.span(1) for m in _MARK.finditer(marked) if m.group(1) is not None]


def marked(text: str) -> bool:
    """Whether CriticMarkup we wrote holds a mark."""
    return bool(_marks(text))


def trimmed(marked: str, context: int) -> str:
    """CriticMarkup with the unchanged text between marks cut to `context` tokens either side
    of each mark (` … ` in between): a summary of the changes, not a text to read back."""
    spans = _marks(marked)
    if not spans:
        return marked
    out: list[str] = []
    at = 0
    for index, (start, end) in enumerate(spans):
        out.append(_cut(marked[at:start], context, head=index > 0, tail=True))
        out.append(marked[start:end])
        at = end
    out.append(_cut(marked[at:], context, head=True, tail=False))
    return "".join(out)


def opening(text: str, context: int) -> str:
    """The first `context` tokens of an unmarked text, with ` …` when there is more."""
    return _cut(text, context, head=True, tail=False)


def _cut(text: str, context: int, *, head: bool, tail: bool) -> str:
    pieces = tokens(text)
    keep = context * (int(head) + int(tail))
    if len(pieces) <= keep + 4:
        return text
    first = "".join(pieces[:context]) if head else ""
    last = "".join(pieces[len(pieces) - context :]) if tail else ""
    return f"{first} … {last}" if head and tail else f"{first} …" if head else f"… {last}"
