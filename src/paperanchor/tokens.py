"""o200k_base token counts (contract §3): what `tokens` reports and `maxTokens` bounds.

The tokenizer is GitHub's `bpe` crate (rust-gems, MIT) as the `bpe-openai` wheel ships it, with
its o200k_base vocabulary built in (byte-identical to OpenAI's published file), so counting works
offline; its counts equal tiktoken's on every corpus page (tests/test_tokens.py says how that was
checked) at about 1.6 times tiktoken's speed, and its encoder has no quadratic worst case.

The wheel's Python package is not imported: it builds `Encoding` tables of the vocabulary in
Python at import (0.5 s and 70 MB), and its `Encoding` refuses texts over 200,000 tokens. Its
Rust binding, which the wheel types in `_bindings.pyi`, is loaded alone and counts directly:
about 60 ms and 35 MB (plus 33 MB of the mapped library) on first use.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import unicodedata
from pathlib import Path
from typing import Protocol

ENCODING = "o200k_base"

# The binding holds the GIL while it counts (about 40 ms a million characters): a longer text
# is counted in pieces cut at a blank line, so that no one call stalls the event loop for long.
# Each cut can change the count by a token or so; a piece is thousands of tokens.
PIECE_CHARS = 500_000


class _Tokenizer(Protocol):
    def encode(self, text: str) -> list[int]: ...
    def decode(self, tokens: list[int]) -> str: ...
    def count(self, text: str) -> int: ...


@functools.cache
def _tokenizer() -> _Tokenizer:
    """The wheel's Rust binding, loaded by itself: importing the `bpe_openai` package would
    also build its Python `Encoding` tables (0.5 s, 70 MB, and a DeprecationWarning)."""
    package = importlib.util.find_spec("bpe_openai")  # finds it without importing it
    if package is None or not package.submodule_search_locations:
        raise ImportError("bpe-openai is not installed: pip install bpe-openai")
    folder = Path(next(iter(package.submodule_search_locations)))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"_bindings{suffix}"
        if path.is_file():
            break
    else:
        raise ImportError(f"bpe-openai has no Rust binding in {folder}")
    spec = importlib.util.spec_from_file_location("bpe_openai._bindings", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    binding = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(binding)
    tokenizer: _Tokenizer = binding.tokenizer_for_encoding(ENCODING)
    return tokenizer


def load() -> None:
    """Load the tokenizer now (a server does at start, so its first reader does not wait)."""
    _tokenizer()


def count(text: str) -> int:
    """The o200k_base tokens of `text` (pieces of a very long text counted apart)."""
    if len(text) <= PIECE_CHARS:
        return _tokenizer().count(text)
    return sum(_tokenizer().count(piece) for piece in _pieces(text))


def _pieces(text: str) -> list[str]:
    """`text` in consecutive pieces of at most about PIECE_CHARS characters, cut after a blank
    line where there is one (else anywhere: a hostile page's one huge paragraph)."""
    pieces = []
    start = 0
    while len(text) - start > PIECE_CHARS:
        end = text.rfind("\n\n", start + PIECE_CHARS // 2, start + PIECE_CHARS)
        end = start + PIECE_CHARS if end < 0 else end + 2
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def prefix_chars(text: str, limit: int) -> int:
    """How many characters of `text` its first `limit` tokens cover (whole characters only)."""
    if limit <= 0:
        return 0
    tokenizer = _tokenizer()
    span = limit * 8  # most tokens are a few characters: widen only when this held too few
    while True:
        ids = tokenizer.encode(text[:span])
        if len(ids) > limit:
            break
        if span >= len(text):
            return len(text)
        span *= 4
    # a token may end inside a character's UTF-8 bytes: step back to one that decodes
    for end in range(limit, max(0, limit - 4), -1):
        try:
            return len(tokenizer.decode(ids[:end]))
        except ValueError:
            continue
    return 0


# Characters either side of a seam that decide what joining two chunks changes: the seam's
# own pretokens (a run of punctuation takes the newlines after it) lie well within them.
SEAM_CHARS = 32


class Counts:
    """The counts of chunks and of the seams between them, shared by the counts of every
    section of one paper: a section's chunks are its parent's too, and each is counted once."""

    def __init__(self) -> None:
        self.chunks: dict[str, int] = {}
        self.seams: dict[tuple[str, str], int] = {}
        # a chunk's tail is asked for once for each section holding it (its parents' too)
        self.tails: dict[str, str] = {}
        # a unit's tokens with the seam after it, a blank line (one not last) or the final
        # newline: what each section holding it adds for it, one lookup each time
        self.followed: dict[str, int] = {}
        self.ending: dict[str, int] = {}

    def chunk(self, chunk: str) -> int:
        counted = self.chunks.get(chunk)
        if counted is None:
            counted = self.chunks[chunk] = count(chunk)
        return counted

    def seam(self, before: str, glue: str) -> int:
        """The tokens `before + glue` has beyond those of `before` (what follows the glue
        starts with no white space, so its first pretoken starts at its first character)."""
        tail = self.tails.get(before)
        if tail is None:
            tail = self.tails[before] = _tail(before)
        key = (tail, glue)
        counted = self.seams.get(key)
        if counted is None:
            counted = self.seams[key] = count(tail + glue) - count(tail)
        return counted

    def joined(self, chunks: list[str]) -> int:
        """The tokens of the non-empty chunks joined by blank lines, with a final newline
        (render.markdown.join), without joining them all."""
        # white space at a chunk's edge joins the blank line beside it into one pretoken that
        # may reach the next seam: such a chunk is counted together with its neighbour
        total = 0
        unit: list[str] = []
        for chunk in chunks:
            if not chunk:
                continue
            if unit and (chunk[0].isspace() or unit[-1][-1].isspace()):
                unit.append(chunk)
                continue
            if unit:
                total += self._followed(unit[0] if len(unit) == 1 else "\n\n".join(unit))
            unit = [chunk]
        if not unit:
            return self.seam("", "\n")
        last = unit[0] if len(unit) == 1 else "\n\n".join(unit)
        counted = self.ending.get(last)
        if counted is None:
            counted = self.ending[last] = self.chunk(last) + self.seam(last, "\n")
        return total + counted

    def _followed(self, text: str) -> int:
        counted = self.followed.get(text)
        if counted is None:
            counted = self.followed[text] = self.chunk(text) + self.seam(text, "\n\n")
        return counted


def _tail(text: str) -> str:
    """The end of `text` that decides how newlines after it are cut into pretokens.

    o200k's pretokens: a word or number takes no newline after it, and the next chunk's first
    pretoken starts at its first character unless that is white space (Counts.joined keeps such
    a chunk with its neighbour); a run of punctuation, with one space before it, takes the
    newlines after it, and so does white space. So the tail is the white space at the end, after
    the run of punctuation before it if any, or the last SEAM_CHARS characters where that run
    is longer or its start is unclear.
    """
    stripped = text.rstrip()
    space = text[len(stripped) :]
    if not stripped or stripped[-1].isalnum():
        return space[-SEAM_CHARS:] if not stripped else space
    start = len(stripped)
    while start > 0 and len(stripped) - start < SEAM_CHARS:
        ch = stripped[start - 1]
        if ch.isalnum() or ch.isspace():
            break
        start -= 1
    if len(stripped) - start >= SEAM_CHARS or any(map(_mark, stripped[start:])):
        # a run longer than the window, or one with combining marks, which belong to the
        # word before them or to the run as the letters around them decide
        return stripped[-SEAM_CHARS:] + space
    if stripped[start - 1 : start] == " ":
        start -= 1
        if stripped[start - 1 : start].isspace():
            return stripped[-SEAM_CHARS:] + space
    elif start > 0 and not stripped[start - 1].isalnum():
        return stripped[-SEAM_CHARS:] + space
    return stripped[start:] + space


def _mark(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "M"
