"""Joining lines into running text: line-end hyphens resolved against the paper's own words."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from paperanchor.parse.inline import InlineResult
from paperanchor.parse.pdf.extract import Line
from paperanchor.tree import Inline

_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_LAST = re.compile(r"([^\W\d_]+)-?$")
_FIRST = re.compile(r"^([^\W\d_]+)")
# C1 controls are glyphs of fonts without a Unicode map (a TeX bullet is \x88): not text
_CONTROLS = dict.fromkeys(range(0x80, 0xA0))


class Vocabulary:
    """The words and hyphenated compounds the paper uses inside its lines (lower case)."""

    def __init__(self, lines: Iterable[Line]) -> None:
        self.words: set[str] = set()
        for line in lines:
            found = _WORD.findall(line.text.lower())
            # a line's last word may be half of a hyphenated one: only whole words count
            if found and (line.hyphen or line.text.endswith("-")):
                found = found[:-1]
            for word in found:
                self.words.add(word)
                if "-" in word:
                    self.words.update(word.split("-"))

    def keeps_hyphen(self, head: str, tail: str) -> bool:
        """Whether `head-` + `tail` across a line end is a compound rather than a word split."""
        head, tail = head.lower(), tail.lower()
        joined = f"{head}{tail}"
        compound = f"{head}-{tail}"
        return bool(compound in self.words and joined not in self.words)


def join_lines(lines: list[Line], vocabulary: Vocabulary) -> str:
    """The lines as one run of text: a word split by a line-end hyphen is whole again."""
    if not lines:
        return ""
    parts = [lines[0].text.strip()]
    for before, line in itertools.pairwise(lines):
        text = line.text.strip()
        if not text:
            continue
        previous = parts[-1]
        soft = before.hyphen  # PDFium took the hyphen out and told us it ended the line
        hard = not soft and previous.endswith("-") and not previous.endswith("--")
        if soft or hard:
            head_match = _LAST.search(previous)
            tail_match = _FIRST.match(text)
            head = head_match.group(1) if head_match else ""
            if hard:
                previous = previous[:-1]
            if (
                head
                and tail_match
                and text[0].islower()
                and not vocabulary.keeps_hyphen(head, tail_match.group(1))
            ):
                parts[-1] = previous
            else:
                parts[-1] = previous + "-"
            parts.append(text)
            continue
        parts.append(("" if previous.endswith(("–", "—", "/")) else " ") + text)
    return "".join(parts).translate(_CONTROLS).strip()


def inline(text: str) -> Inline:
    """The text in both renderings, escaped for Markdown as the HTML parser escapes page text."""
    result = InlineResult()
    result.add_text(text)
    return result.inline()
