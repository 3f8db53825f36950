"""Lines in reading order -> the tree: front matter, sections, paragraphs, floats, equations,
bibliography. Every character comes from a line of the text layer; nothing is made up.

Ids follow LaTeXML's scheme so an anchor reads the same whichever rendering served it: `S3`,
`S3.SS2`, `S3.SS2.SSS1` from the printed numbers, `A1` for appendix A, `Sx1` for unnumbered
sections, `bib` for the references, `<section>.p<n>` for paragraphs, `<top section>.F<n>`,
`.T<n>` and `.E<n>` for floats and equations by their printed number (LaTeXML prefixes them
with the top-level section, not the subsection).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from paperanchor.parse.bibliography import reference_of
from paperanchor.parse.pdf.extract import Line
from paperanchor.parse.pdf.layout import Placed
from paperanchor.parse.pdf.regions import CAPTION as _CAPTION
from paperanchor.parse.pdf.text import Vocabulary, inline, join_lines
from paperanchor.tree import (
    EMPTY,
    Bibliography,
    Block,
    Equation,
    Figure,
    Inline,
    Paragraph,
    Reference,
    Section,
    Table,
    Text,
)

_ARABIC = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,2})(?P<dot>\.?)\s+(?P<title>\S.*)$")
_APPENDIX = re.compile(
    r"^(?P<word>(?i:appendix)\s+)?(?P<num>[A-Z](?:\.\d{1,2}){0,2})(?P<dot>[.:]?)\s+(?P<title>\S.*)$"
)
_ROMAN = re.compile(r"^(?P<num>[IVX]{1,5})\.\s+(?P<title>\S.*)$")
# A heading's number set on a line of its own, its title on the next ("I." then
# "INTRODUCTION"; REVTeX's "A." then "Thin spacers")
_NUMBER_ALONE = re.compile(r"^(?:[IVX]{1,5}|[A-Z])\.$")
# Front matter that may be set like a heading: an affiliation names an institution and a place
# after a comma; an author line is names marked with their affiliations ("Ann Lee,1 Bo Wu2")
_AFFILIATION = re.compile(
    r"universit|institut|department|laborator|college|school\s+of|faculty|\bdept\b|@", re.I
)
_AFFILIATION_MARK = re.compile(r"[^\W\d_]\d|[∗*†‡§¶]")
_INITIAL = re.compile(r"\b[A-Z]\.(?:\s|-)")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10}
_UNNUMBERED = {
    "acknowledgments": "unnumbered",
    "acknowledgements": "unnumbered",
    "acknowledgment": "unnumbered",
    "acknowledgement": "unnumbered",
    "references": "bibliography",
    "bibliography": "bibliography",
    "literature cited": "bibliography",
    "works cited": "bibliography",
    "appendix": "unnumbered",
    "appendices": "unnumbered",
    "supplementary material": "unnumbered",
    "limitations": "unnumbered",
    "ethics statement": "unnumbered",
    "ethical considerations": "unnumbered",
    "broader impact": "unnumbered",
    "broader impacts": "unnumbered",
    "conclusion": "unnumbered",
    "conclusions": "unnumbered",
    "related work": "unnumbered",
    "discussion": "unnumbered",
}
# Front-matter blocks that end the abstract and are not the paper's body.
_FRONT_BLOCK = re.compile(
    r"^(?:keywords|key\s*words|index\s+terms|ccs\s+concepts|acm\s+reference\s+format|"
    r"additional\s+key\s+words)\b",
    re.I,
)
# ACM's "Additional Key Words and Phrases:" is its keywords line
_KEYWORDS = re.compile(
    r"^(?:keywords|key\s*words|index\s+terms|additional\s+key\s+words(?:\s+and\s+phrases)?)"
    r"\s*[:.—–\-]?\s*",
    re.I,
)
_ABSTRACT = re.compile(r"^abstract\b\s*[:.—–\-]?\s*", re.I)
_EQ_NUMBER = re.compile(r"\s*\((?P<num>\d{1,3}[a-z]?)\)$")
# \x80-\x9f: a bullet from a TeX symbol font without a Unicode map arrives as a C1 control
_BULLET = re.compile(r"^(?:[•∙◦▪‣●○■□➢►✓–—*\x80-\x9f]|\(?\d{1,2}[.)]|\([a-z]{1,3}\)|[a-z]\))\s")
_SENTENCE_END = re.compile(r"[.!?:;)\"”]$")
# An item lettered "a." opens a line only after a sentence's end or another item: in running
# text a line may start with a variable and a full stop ("the value of / r. Such a shift")
_LETTER_ITEM = re.compile(r"^[a-z]\.\s")
_BIB_BRACKET = re.compile(r"^\[(?P<label>[^\]\s]{1,16})\]\s*")
_BIB_NUMBER = re.compile(r"^(?P<label>\d{1,4})\.\s+")
# A table of contents: its title, and how its entries look without their dot leaders.
_CONTENTS = re.compile(r"^(?:table\s+of\s+)?contents$", re.IGNORECASE)
_CONTENTS_PAGES = 5
# A footnote's mark at the start of its line: a number run into the note's first word
# ("1https://clearinghouse.net.", "2The dataset …") or a symbol ("∗Equal contribution.")
_NOTE_MARK = re.compile(r"^(?:\d{1,2}(?=[A-Za-z])|[∗*†‡§¶])")
# The footnote lines a contents may pass on its way onto the next page (_contents_end)
_CONTENTS_NOTE_LINES = 6
_LEADERS = re.compile(r"(?:\s*\.){3,}")
_ENTRY_NUMBER = re.compile(r"^((?:\d{1,2}|[A-Z])(?:\.\d{1,2}){0,3})\.?\s+\S")
_PAGE_REF = re.compile(r"\S\s+\d{1,4}$")
# A bracketed citation of numbered entries: [12], [3, 7], [25–29]; a range is expanded up to
# this many entries (a hostile [1–999999999] costs no more).
_CITATION = re.compile(
    r"\[(\d{1,4}(?:\s*[–-]\s*\d{1,4})?(?:\s*,\s*\d{1,4}(?:\s*[–-]\s*\d{1,4})?)*)\]"
)
_CITED_RANGE = 100
# REVTeX's entries: a raised number, then the authors
_BIB_PLAIN = re.compile(r"^(?P<label>\d{1,4})\s+(?=[A-Z])")
# A bibliography without a heading is taken only when this many entries number 1, 2, 3 …
_MIN_UNHEADED_ENTRIES = 5
# an arXiv category after an identifier ("arXiv:2305.12345 [cs.CL]"), not an entry's key
_CATEGORY = re.compile(r"[a-z\-]{2,9}(?:\.[A-Za-z\-]{2,6})?")
# A bibliography entry's blocks end at a sentence end: a period after a word of three or more
# characters (not after an initial like "A."), or a question or exclamation mark.
_BLOCK_END = re.compile(r"(?:(?<=[^\W_]{3})\.|(?<=[)\]\"”]\.)|[?!])\s+(?=[A-Z0-9“\"'‘(])")
_YEAR_BLOCK = re.compile(r"^\(?\d{4}[a-z]?\)?\.?$")
_NAME_WORD = re.compile(
    r"^(?:[A-Z][\w'’\-]*\.?|[A-Z]\.(?:-?[A-Z]\.)*|\([A-Z][\w'’\-]*\)|"
    r"de|van|von|der|den|da|di|du|le|la|y|dos|del)$"
)
_NOT_A_NAME = re.compile(
    r"[@{}\\/:|]|https?|universit|institut|department|school|college|laborator|\blab\b|"
    r"research|inc\b|corp|\bltd\b|academy|center|centre|faculty|hospital|group|google|"
    r"microsoft|meta\b|amazon|openai|deepmind|nvidia|\bibm\b|usa\b|china|germany|france|japan|"
    r"email|equal contribution|corresponding|preprint|draft|submitted|under review|polytechn|"
    r"politecnic|technolog|\bscience|foundation|company|\blabs?\b|\bai\b|agency|ministry|"
    r"council|society|association|consortium|\bdept\b|\bschool\b|\bcampus\b|hochschule",
    re.IGNORECASE,
)


@dataclass
class _Builder:
    id: str
    kind: str
    number: str | None
    tag: str
    title: Inline
    level: int
    blocks: list[Block] = field(default_factory=list)
    paragraphs: int = 0
    references: list[list[Placed]] = field(default_factory=list)

    def build(self) -> Section:
        return Section(
            self.id, self.kind, self.number, self.tag, self.title, self.level, tuple(self.blocks)
        )


@dataclass(frozen=True, slots=True)
class _Heading:
    kind: str
    number: str | None
    tag: str
    title: str
    key: tuple[int, ...]
    letter: bool = False
    roman: bool = False


def _roman(text: str) -> int:
    total = 0
    for char, after in zip(text, [*text[1:], ""], strict=True):
        value = _ROMAN_VALUES[char]
        total += -value if after and _ROMAN_VALUES[after] > value else value
    return total


def _looks_like_title(title: str) -> bool:
    words = title.split()
    # "[D1] Discover Relevant Citations", "“Why” questions": what opens the title may be a
    # bracket or a quote before its first letter
    first = title.lstrip("[(“\"'‘")[:1]
    return (
        bool(words)
        and (first.isupper() or first.isdigit())
        and len(words) <= 16
        and not title.endswith((",", ";"))
        and any(sum(ch.isalpha() for ch in word) >= 3 for word in words)
        and sum(ch.isalpha() for ch in title) >= 0.6 * len(title.replace(" ", ""))
    )


def _front_matter(text: str) -> bool:
    """Whether a first-page line set like a heading is an affiliation or an author line:
    "I. Ivanova,1 A. Petrov,2 and K. Sato1" opens like section I, "1 Department of Physics,
    Harwick University" like section 1; neither is one."""
    if _AFFILIATION.search(text) and ("," in text or "@" in text):
        return True
    if text.isupper():
        return False  # REVTeX's and IEEEtran's headings are capitals, names are not
    names = _names(text)
    # after the heading-like opening, an initial ("A. Petrov") names a person: a heading
    # "1 Deep Learning, Neural Networks" has two name-like parts and no initial
    rest = text.split(None, 1)[1] if " " in text else ""
    initial = _INITIAL.search(rest) is not None
    return (len(names) >= 2 and initial) or bool(names and _AFFILIATION_MARK.search(text))


def join_split_numbers(lines: list[Placed], size: float) -> list[Placed]:
    """The lines with a heading number set on a line of its own ("I." above or beside
    "INTRODUCTION") joined to the title that follows it in the same column."""
    out: list[Placed] = []
    index = 0
    while index < len(lines):
        placed = lines[index]
        after = lines[index + 1] if index + 1 < len(lines) else None
        line = placed.line
        if (
            after is not None
            and _NUMBER_ALONE.match(line.text.strip())
            and (after.page, after.column) == (placed.page, placed.column)
            and line.y0 - after.line.y1 < 1.5 * size
            and after.line.y1 > line.y0 - 3 * size
            and abs(after.line.size - line.size) < 0.3 * size
        ):
            title = after.line
            joined = replace(
                title,
                text=f"{line.text.strip()} {title.text.strip()}",
                x0=min(line.x0, title.x0),
                y1=max(line.y1, title.y1),
            )
            out.append(replace(after, line=joined))
            index += 2
            continue
        out.append(placed)
        index += 1
    return out


class _Numbering:
    """The headings accepted so far; a candidate must continue the sequence they started."""

    def __init__(self) -> None:
        self.key: tuple[int, ...] = ()
        self.letter_mode = False
        self.roman_mode = False
        self.appendix = False

    def follows(self, heading: _Heading) -> bool:
        key = heading.key
        current = self.key
        if heading.roman and not (self.roman_mode or (not current and key == (1,))):
            return False
        if not heading.roman and self.roman_mode:
            return False
        if heading.letter and not (self.letter_mode or self.appendix):
            return False
        if not heading.letter and self.letter_mode and len(key) == 1:
            return False
        if len(key) == 1:
            top = current[0] if current and (heading.letter == self.letter_mode) else 0
            return top < key[0] <= top + 2
        if len(current) < len(key) - 1 or current[: len(key) - 1] != key[:-1]:
            return False
        last = current[len(key) - 1] if len(current) >= len(key) else 0
        return last < key[-1] <= last + 2

    def accept(self, heading: _Heading) -> None:
        self.key = heading.key
        self.letter_mode = heading.letter
        self.roman_mode = heading.roman


class TreeBuilder:
    """Turns the placed lines of a paper into its sections; one instance per paper."""

    def __init__(self, lines: list[Placed], size: float, vocabulary: Vocabulary) -> None:
        self.lines = lines
        self.size = size
        self.vocabulary = vocabulary
        self.numbering = _Numbering()
        self.top: list[Block] = []
        self.stack: list[_Builder] = []
        self.unnumbered = 0
        self.unnumbered_equations = 0
        self.float_ids: set[str] = set()
        self.section_ids: set[str] = set()
        self.paragraph: list[Placed] = []
        self.paragraph_right = 0.0  # where the paragraph's longest line ends
        self.side: list[Block] = []
        self.side_lines: list[Placed] = []
        self.gap = self._typical_gap()
        self.foot = self._foot_lines()
        self.abstract: _Builder | None = None
        self.keywords: list[str] = []
        self.front_block = False
        self.keywords_open = False
        """Whether the front block's text is the keywords: from a keywords title ("Keywords",
        ACM's "KEYWORDS" on a line of its own) to the block's next title ("ACM Reference
        Format:") or the first section."""

    # -- classification -------------------------------------------------------------------

    def _typical_gap(self) -> float:
        gaps = []
        for before, line in zip(self.lines, self.lines[1:], strict=False):
            if (before.page, before.column) == (line.page, line.column) and self._is_body(line):
                gap = before.line.y0 - line.line.y1
                if 0 <= gap < 2 * self.size:
                    gaps.append(gap)
        gaps.sort()
        return gaps[len(gaps) // 2] if gaps else 0.3 * self.size

    def _foot_lines(self) -> frozenset[Placed]:
        """The lines of footnotes at the foot of each column of each page: the last lines of
        its run in reading order, each set smaller than the body (but within `_is_body`'s
        range, as NeurIPS's 9 pt notes under 10 pt text are), below a gap wider than a
        paragraph's, fewer than the lines above them in that run. They are side lines (set
        after the paragraph they interrupt), so that a paragraph running onto the next page
        stays one (2206.10883v3: "… captures the key d[etails of] each case's timeline" was
        two, with two footnotes and "Preprint. Under review." between). Linear: each line is
        looked at twice at most."""
        foot: set[Placed] = set()
        end = len(self.lines)
        while end > 0:
            key = (self.lines[end - 1].page, self.lines[end - 1].column)
            start = end
            while start > 0 and (self.lines[start - 1].page, self.lines[start - 1].column) == key:
                start -= 1
            notes = end
            while notes > start and not self._is_body_size(self.lines[notes - 1]):
                notes -= 1
            # notes take less of a column than its text: a column set small (2501.10120v1's
            # abstract at 10 pt beside 10.9 pt text), or a quotation or listing longer than
            # the text above it, is no footnote
            if start < notes < end and end - notes < notes - start:
                above, first = self.lines[notes - 1].line, self.lines[notes].line
                if above.y0 - first.y1 > self.gap + 0.5 * self.size:
                    foot.update(self.lines[notes:end])
            end = start
        return frozenset(foot)

    def _is_body(self, placed: Placed) -> bool:
        return 0.85 * self.size <= placed.line.size <= 1.2 * self.size

    def _heading_style(self, line: Line) -> bool:
        # REVTeX sets its headings bold at 9 pt beside a 10 pt body
        return (line.bold >= 0.5 and line.size >= 0.85 * self.size) or line.size >= 1.08 * self.size

    def _caps_style(self, placed: Placed) -> bool:
        """IEEEtran and REVTeX set headings in (small) capitals, centred in the column, at the
        body size or under it and not bold: "I. INTRODUCTION", "REFERENCES"."""
        line = placed.line
        letters = [char for char in line.text if char.isalpha()]
        if len(letters) < 3 or any(char.islower() for char in letters):
            return False
        if line.size < 0.7 * self.size:
            return False
        middle = (line.x0 + line.x1) / 2
        centre = (placed.column_left + placed.column_right) / 2
        return abs(middle - centre) <= 1.5 * self.size

    def _styled(self, placed: Placed) -> bool:
        return self._heading_style(placed.line) or self._caps_style(placed)

    def heading(self, placed: Placed) -> _Heading | None:
        line = placed.line
        text = line.text.strip()
        if len(text) > 160 or line.math > 0.3:
            return None
        if not self._styled(placed):
            # IEEEtran sets "A. Detector" in italics at the body size, on a line of its own
            # (the first line of an italic paragraph runs to the column's edge)
            italic = line.italic >= 0.5 and self._is_body(placed)
            short = line.x1 < placed.column_right - 2 * self.size
            return self._letter_subsection(text) if italic and short else None
        if placed.page == 1 and _front_matter(text):
            return None
        name = re.sub(r"[\s.:]+$", "", text).lower()
        name = re.sub(r"\s+", " ", name)
        if name in _UNNUMBERED:
            return _Heading(_UNNUMBERED[name], None, "", text.rstrip(".: "), ())
        match = _ARABIC.match(text)
        if match and _looks_like_title(match.group("title")):
            num = match.group("num")
            key = tuple(int(part) for part in num.split("."))
            kind = ("section", "subsection", "subsubsection")[len(key) - 1]
            return _Heading(kind, num, num + match.group("dot"), match.group("title"), key)
        match = _APPENDIX.match(text)
        roman = _ROMAN.match(text)
        if match and roman and not match.group("word") and not self.numbering.letter_mode:
            match = None  # "I. INTRODUCTION" opens a roman sequence, not appendix I
        subsection = self._letter_subsection(text)
        if subsection is not None:
            return subsection
        if match and _looks_like_title(match.group("title")):
            num = match.group("num")
            parts = num.split(".")
            key = (ord(parts[0]) - ord("A") + 1, *(int(p) for p in parts[1:]))
            kind = ("appendix", "subsection", "subsubsection")[len(key) - 1]
            tag = (match.group("word") or "") + num + match.group("dot")
            heading = _Heading(kind, num, tag.strip(), match.group("title"), key, letter=True)
            if match.group("word"):
                self.numbering.appendix = True
            return heading
        match = roman
        if match and _looks_like_title(match.group("title")):
            num = match.group("num")
            key = (_roman(num),)
            return _Heading("section", num, num + ".", match.group("title"), key, roman=True)
        return None

    def _letter_subsection(self, text: str) -> _Heading | None:
        """Under "II. RESULTS" (REVTeX, IEEEtran) "A. Thin spacers" is subsection II.A."""
        numbering = self.numbering
        if not numbering.roman_mode or numbering.appendix or not numbering.key:
            return None
        match = _APPENDIX.match(text)
        if (
            match is None
            or match.group("word")
            or "." in match.group("num")
            or not _looks_like_title(match.group("title"))
        ):
            return None
        num = match.group("num")
        top = numbering.key[0]
        roman = _ROMAN.match(text)
        if roman is not None and top < _roman(roman.group("num")) <= top + 2:
            return None  # "V. DISCUSSION" after "IV." is section V, not subsection IV.V
        key = (top, ord(num) - ord("A") + 1)
        return _Heading("subsection", num, num + ".", match.group("title"), key, roman=True)

    def _equation(self, placed: Placed) -> tuple[bool, str | None]:
        line = placed.line
        text = line.text.strip()
        number = _EQ_NUMBER.search(text)
        words = len(text.split())
        centred = line.x0 - placed.column_left > 2 * self.size
        if line.math >= 0.4 and words < 40:
            return True, number.group("num") if number else None
        if number and centred and words < 25 and line.x1 >= placed.column_right - self.size:
            return True, number.group("num")
        return False, None

    # -- sections -------------------------------------------------------------------------

    def _parent_blocks(self) -> list[Block]:
        return self.stack[-1].blocks if self.stack else self.top

    def _close(self, level: int) -> None:
        while self.stack and self.stack[-1].level >= level:
            builder = self.stack.pop()
            self._finish(builder)
            (self.stack[-1].blocks if self.stack else self.top).append(builder.build())

    def _finish(self, builder: _Builder) -> None:
        if builder.kind == "bibliography":
            builder.blocks.append(self._bibliography(builder))

    def _top_id(self) -> str:
        return self.stack[0].id if self.stack else ""

    def _open(self, heading: _Heading) -> None:
        self._flush()
        level = max(1, len(heading.key)) if heading.key else 1
        self._close(level)
        if heading.kind == "bibliography" and "bib" not in self.section_ids:
            section_id = "bib"
        elif heading.key:
            prefix = "A" if heading.letter else "S"
            marks = ("", "SS", "SSS")
            parent = self.stack[-1].id if self.stack and level > 1 else ""
            section_id = (
                f"{parent}.{marks[level - 1]}{heading.key[-1]}"
                if parent
                else f"{prefix}{heading.key[0]}"
            )
        else:
            self.unnumbered += 1
            section_id = f"Sx{self.unnumbered}"
        if section_id in self.section_ids:
            self.unnumbered += 1
            section_id = f"Sx{self.unnumbered}"
        self.section_ids.add(section_id)
        if heading.kind == "bibliography" or heading.title.lower().startswith("appendi"):
            self.numbering.appendix = True
        kind = "unnumbered" if section_id.startswith("Sx") else heading.kind
        self.stack.append(
            _Builder(section_id, kind, heading.number, heading.tag, inline(heading.title), level)
        )

    # -- paragraphs -----------------------------------------------------------------------

    def _starts_paragraph(self, before: Placed | None, placed: Placed) -> bool:
        if before is None:
            return True
        line, previous = placed.line, before.line
        text = line.text.strip()
        if _BULLET.match(text):
            return True
        previous_text = previous.text.strip()
        listed = bool(_BULLET.match(previous_text) or _LETTER_ITEM.match(previous_text))
        if _LETTER_ITEM.match(text) and (listed or _SENTENCE_END.search(previous_text)):
            return True
        # a line is short against the paragraph it is in, so an indented block (an abstract
        # set narrower than the page) is not cut at every sentence that ends a line
        right = max(self.paragraph_right, line.x1)
        if len(self.paragraph) < 2 and right < before.column_right - 1.5 * self.size:
            right = max(right, line.x1) if line.x1 > previous.x1 else before.column_right
        short = previous.x1 < right - 1.5 * self.size
        ended = short and bool(_SENTENCE_END.search(previous.text.strip()))
        indent = line.x0 - placed.column_left
        if (before.page, before.column) == (placed.page, placed.column):
            gap = previous.y0 - line.y1
            if gap > self.gap + 0.5 * self.size or gap < -self.size:
                return True
            if line.x0 > previous.x0 + 0.6 * self.size and not listed:
                return True
            return ended
        return ended or indent > 0.6 * self.size

    def _flush(self) -> None:
        """End the paragraph in progress, then set down what came beside it (floats, notes)."""
        if self.paragraph:
            text = join_lines([p.line for p in self.paragraph], self.vocabulary)
            self._add_paragraph(text)
        self.paragraph = []
        self.paragraph_right = 0.0
        self._flush_side_lines()
        if self.side:
            target = self.abstract if self.abstract is not None and not self.stack else None
            blocks = target.blocks if target is not None else self._current_blocks()
            blocks.extend(self.side)
            self.side = []

    def _flush_side_lines(self) -> None:
        """Set down the lines beside the text, a paragraph for each note: one starts at a note
        mark ("1https://…", "∗Equal contribution."), and among the notes at a page's foot
        after a gap wider than a paragraph's ("Preprint. Under review." under them). Other
        small lines stay together: a figure's words read as text would fall apart."""
        lines, self.side_lines = self.side_lines, []
        start = 0
        for at in range(1, len(lines) + 1):
            if at < len(lines):
                before, placed = lines[at - 1], lines[at]
                gap = before.line.y0 - placed.line.y1
                apart = (before.page, before.column) != (placed.page, placed.column)
                foot = before in self.foot and placed in self.foot
                if not (
                    (foot and (apart or gap > self.gap + 0.5 * self.size))
                    or _NOTE_MARK.match(placed.line.text.strip())
                ):
                    continue
            text = join_lines([p.line for p in lines[start:at]], self.vocabulary)
            self._add_paragraph(text, side=True)
            start = at

    def _current_blocks(self) -> list[Block]:
        if not self.stack:
            self.stack.append(
                _Builder("body", "body", None, "", Inline("Main text", "Main text"), 1)
            )
            self.section_ids.add("body")
        return self.stack[-1].blocks

    def _add_paragraph(self, text: str, *, side: bool = False) -> None:
        if not text.strip():
            return
        if self.front_block:
            # a footnote in smaller type (side) is no wrapped line of the keywords: it is
            # front matter, left out as the rest of the front block is
            if not side and (self.keywords_open or _KEYWORDS.match(text)):
                self.keywords.append(_KEYWORDS.sub("", text))
            return
        if self.abstract is not None and not self.stack:
            owner = self.abstract
        else:
            self._current_blocks()
            owner = self.stack[-1]
        owner.paragraphs += 1
        paragraph_id = f"{owner.id}.p{owner.paragraphs}"
        block = Paragraph(paragraph_id, (Text(f"{paragraph_id}.1", inline(text)),))
        if side and self.paragraph:
            self.side.append(block)
        else:
            owner.blocks.append(block)

    # -- floats and equations -------------------------------------------------------------

    def _caption(self, index: int) -> int:
        """A float from the caption starting at `index`; the index of the line after it."""
        first = self.lines[index]
        match = _CAPTION.match(first.line.text.strip())
        assert match is not None
        kind = "table" if match.group("kind").lower().startswith("tab") else "figure"
        number = match.group("num")
        digits = re.sub(r"\D", "", number)
        prefix = self._top_id()
        marker = "T" if kind == "table" else "F"
        index_text = digits if digits and digits == number else str(len(self.float_ids) + 1)
        float_id = f"{prefix}.{marker}{index_text}" if prefix else f"{marker}{index_text}"
        if float_id in self.float_ids:
            return -1
        caption_lines = [first.line]
        end = index + 1
        while end < len(self.lines):
            placed = self.lines[end]
            before = self.lines[end - 1]
            if (
                (placed.page, placed.column) != (before.page, before.column)
                or abs(placed.line.size - first.line.size) > 0.6
                or before.line.y0 - placed.line.y1 > self.gap + 0.4 * self.size
                or _CAPTION.match(placed.line.text.strip())
                or self.heading(placed) is not None
            ):
                break
            caption_lines.append(placed.line)
            end += 1
            if (
                before.line.x1 < before.column_right - 2 * self.size
                and caption_lines[-2] is not first.line
            ):
                caption_lines.pop()
                end -= 1
                break
        text = join_lines(caption_lines, self.vocabulary)
        tag_end = match.start("rest") if match.group("rest") else len(first.line.text.strip())
        tag = first.line.text.strip()[:tag_end].strip()
        caption = inline(text[len(tag) :].strip()) if text.startswith(tag) else inline(text)
        self.float_ids.add(float_id)
        node: Figure | Table
        if kind == "table":
            node = Table(float_id, number, tag, caption, (), (), 0)
        else:
            node = Figure(float_id, "figure", number, tag, caption, ())
        self._flush_side_lines()
        if self.paragraph:
            self.side.append(node)
        else:
            self._place(node)
        return end

    def _place(self, block: Block) -> None:
        if self.abstract is not None and not self.stack:
            self.abstract.blocks.append(block)
        else:
            self._current_blocks().append(block)

    def _equations(self, index: int) -> int:
        """Display equations from the run of equation lines at `index`; the index after it."""
        self._flush()
        pending: list[Line] = []
        end = index
        while end < len(self.lines):
            placed = self.lines[end]
            is_equation, number = self._equation(placed)
            if not is_equation or self.heading(placed) is not None:
                break
            pending.append(placed.line)
            end += 1
            if number is not None:
                self._add_equation(pending, number)
                pending = []
        if pending:
            self._add_equation(pending, None)
        return end

    def _add_equation(self, lines: list[Line], number: str | None) -> None:
        text = " ".join(line.text.strip() for line in lines)
        if number is not None:
            text = _EQ_NUMBER.sub("", text)
        prefix = self._top_id()
        if number is not None and re.fullmatch(r"\d+", number):
            equation_id = f"{prefix}.E{number}" if prefix else f"E{number}"
        else:
            self.unnumbered_equations += 1
            marker = f"Ex{self.unnumbered_equations}"
            equation_id = f"{prefix}.{marker}" if prefix else marker
        if equation_id in self.float_ids:
            self.unnumbered_equations += 1
            equation_id = f"{equation_id}.x{self.unnumbered_equations}"
        self.float_ids.add(equation_id)
        self._place(Equation(equation_id, number, None, text=text))

    # -- bibliography ---------------------------------------------------------------------

    def _bibliography(self, builder: _Builder) -> Bibliography:
        entries = _split_entries(builder.references, self.size)
        references: list[Reference] = []
        for position, entry in enumerate(entries, start=1):
            text = join_lines([p.line for p in entry], self.vocabulary)
            references.append(_reference(position, text))
        return Bibliography(f"{builder.id}.L1", tuple(references))

    # -- the walk -------------------------------------------------------------------------

    def _unheaded_bibliography(self, start: int) -> int | None:
        """Where a bibliography without a heading begins (REVTeX prints none): the last run of
        small lines numbered 1, 2, 3 … to the end of the paper, when no line is titled
        References or the like."""
        lines = self.lines[start:]
        for placed in lines:
            heading = self.heading(placed)
            if heading is not None and heading.kind == "bibliography":
                return None
        for offset in range(len(lines) - 1, -1, -1):
            placed = lines[offset]
            text = placed.line.text.strip()
            # REVTeX raises its numbers (prl, 4.1) or brackets them (prb, 4.2)
            label = _BIB_PLAIN if _BIB_PLAIN.match(text) else _BIB_BRACKET
            match = label.match(text)
            if match is None or match.group("label") != "1" or self._is_body_size(placed):
                continue
            tail = lines[offset:]
            if any(self._is_body_size(p) for p in tail):
                return None
            if len(_sequence_starts(tail, label)) >= _MIN_UNHEADED_ENTRIES:
                return start + offset
            return None
        return None

    def _is_body_size(self, placed: Placed) -> bool:
        return placed.line.size >= 0.95 * self.size

    def _contents_end(self, index: int) -> int:
        """The index after a table of contents whose title line is at `index`: its entries
        (numbered titles, dot leaders, page numbers) run until a number comes round again,
        which is the body's first heading, or until a line that is none of those.

        A contents that runs onto the next page passes the first page's footnotes on the way
        (2407.01603v3: "∗Corresponding author" between "2.1 The Transformer . . . 4" and "2.2
        Model training . . . 6"): a run of up to _CONTENTS_NOTE_LINES lines in smaller type
        is passed over, and kept as side lines, when the line after it is an entry still.
        """
        seen: set[str] = set()
        end = index + 1
        while end < len(self.lines):
            if not self._contents_entry(end, seen):
                notes = end
                while (
                    notes < len(self.lines)
                    and notes - end < _CONTENTS_NOTE_LINES
                    and not self._is_body_size(self.lines[notes])
                ):
                    notes += 1
                if notes == end or not self._contents_entry(notes, seen):
                    break
                self.side_lines.extend(self.lines[end:notes])
                end = notes
            end += 1
        return end

    def _contents_entry(self, index: int, seen: set[str]) -> bool:
        """Whether the line at `index` is an entry of the contents whose numbers are `seen`
        (a number it brings is added to them)."""
        if index >= len(self.lines):
            return False
        placed = self.lines[index]
        text = _LEADERS.sub("", placed.line.text.strip())
        number = _ENTRY_NUMBER.match(text)
        if number is not None:
            if number.group(1) in seen:
                return False
            seen.add(number.group(1))
            return True
        return bool(_PAGE_REF.search(text) or text.isdigit() or placed.line.bold > 0.5)

    def build(self, start: int) -> list[Block]:
        index = start
        before: Placed | None = None
        bibliography = self._unheaded_bibliography(start)
        while index < len(self.lines):
            placed = self.lines[index]
            text = placed.line.text.strip()
            if _CONTENTS.match(text) and placed.page <= _CONTENTS_PAGES:
                # a table of contents repeats the headings with page numbers: not the body
                self._flush()
                index = self._contents_end(index)
                # the footnotes it passed, where they stand: in a front block (after the
                # keywords) they are front matter, left out with it
                self._flush_side_lines()
                before = None
                continue
            if index == bibliography:
                # a structural title like "Abstract": the paper printed none
                self.abstract_done()
                self._open(_Heading("bibliography", None, "", "References", ()))
            heading = self.heading(placed)
            if heading is not None and (not heading.key or self.numbering.follows(heading)):
                index = self._heading_lines(index, heading)
                before = None
                continue
            if self.stack and self.stack[-1].kind == "bibliography":
                self.stack[-1].references.append([placed])
                index += 1
                continue
            if _FRONT_BLOCK.match(text) and not self.stack:
                # front matter ends at the first section: a body line that opens with
                # "Keywords that users …" (2407.01603v3, page 39) is the paper's text
                self._flush()
                self.front_block = True
                self.keywords_open = _KEYWORDS.match(text) is not None
                rest = _KEYWORDS.sub("", text) if self.keywords_open else ""
                if rest and rest != text:
                    self.keywords.append(rest)
                    index = self._keyword_lines(index)
                else:
                    index += 1
                before = None
                continue
            if _CAPTION.match(text):
                end = self._caption(index)
                if end > 0:
                    index = end
                    continue
            is_equation, _number = self._equation(placed)
            if is_equation:
                index = self._equations(index)
                before = None
                continue
            # a foot line is set below the body's size: a line of body size is not looked up
            if not self._is_body(placed) or (
                not self._is_body_size(placed) and placed in self.foot
            ):
                self.side_lines.append(placed)
                index += 1
                continue
            if self.side_lines and not self.paragraph:
                self._flush_side_lines()
            if self._starts_paragraph(before, placed):
                self._flush()
            self.paragraph.append(placed)
            self.paragraph_right = max(self.paragraph_right, placed.line.x1)
            before = placed
            index += 1
        self._flush()
        self._close(1)
        return self.top

    def _heading_lines(self, index: int, heading: _Heading) -> int:
        """Open the section; a title wrapped onto a second line of the same style joins it."""
        first = self.lines[index]
        end = index + 1
        title = heading.title
        while end < len(self.lines) and heading.key:
            placed = self.lines[end]
            if (
                (placed.page, placed.column) != (first.page, first.column)
                or abs(placed.line.size - first.line.size) > 0.3
                or not self._styled(placed)
                or first.line.y0 - placed.line.y1 > self.gap + 0.5 * self.size
                or self.heading(placed) is not None
                or len(placed.line.text) > 80
            ):
                break
            title = join_lines([replace(first.line, text=title), placed.line], self.vocabulary)
            first = placed
            end += 1
        if heading.key:
            self.numbering.accept(heading)
        self.abstract_done()
        self._open(
            _Heading(
                heading.kind,
                heading.number,
                heading.tag,
                title,
                heading.key,
                heading.letter,
                heading.roman,
            )
        )
        return end

    def _keyword_lines(self, index: int) -> int:
        """The keywords' wrapped lines after the one at `index` (IEEEtran's "Index Terms—…"
        runs on in the same bold type); the index after them."""
        first = self.lines[index]
        end = index + 1
        while end < len(self.lines):
            placed, before = self.lines[end], self.lines[end - 1]
            if (
                (placed.page, placed.column) != (first.page, first.column)
                or abs(placed.line.size - first.line.size) > 0.3
                or abs(placed.line.bold - first.line.bold) > 0.3
                or before.line.y0 - placed.line.y1 > self.gap + 0.5 * self.size
                or self.heading(placed) is not None
                or _FRONT_BLOCK.match(placed.line.text.strip())
            ):
                break
            self.keywords.append(placed.line.text.strip())
            end += 1
        return end

    def abstract_done(self) -> None:
        """The abstract and the front block end at the first section heading; the paragraph
        in progress is the abstract's, or the front block's (2304.02623v1's keywords, under
        their title, run up to "1 INTRODUCTION")."""
        if self.front_block or (self.abstract is not None and not self.stack):
            self._flush()
        self.front_block = False
        self.keywords_open = False


def _split_entries(lines: list[list[Placed]], size: float) -> list[list[Placed]]:
    flat = [group[0] for group in lines]
    if not flat:
        return []
    bracket = _sequence_starts(flat, _BIB_BRACKET)
    numbered = _sequence_starts(flat, _BIB_NUMBER)
    plain = _sequence_starts(flat, _BIB_PLAIN)
    # author-year lists: an entry starts at the column's edge and its other lines hang
    # indented; where nothing hangs, entries are set apart by space
    edges: dict[tuple[int, int], float] = {}
    for placed in flat:
        key = (placed.page, placed.column)
        edges[key] = min(edges.get(key, placed.line.x0), placed.line.x0)
    hanging = {
        (p.page, p.column) for p in flat if p.line.x0 - edges[(p.page, p.column)] > 0.8 * size
    }
    entries: list[list[Placed]] = []
    for position, placed in enumerate(flat):
        key = (placed.page, placed.column)
        at_edge = placed.line.x0 - edges[key] < 0.5 * size
        if len(bracket) >= 2:
            new = position in bracket
        elif len(numbered) >= 2:
            new = position in numbered
        elif len(plain) >= _MIN_UNHEADED_ENTRIES:
            new = position in plain
        elif key in hanging:
            new = at_edge
        else:
            before = flat[position - 1] if position else None
            new = (
                before is None
                or (before.page, before.column) != key
                or before.line.y0 - placed.line.y1 > 0.5 * size
            )
        if new or not entries:
            entries.append([placed])
        else:
            entries[-1].append(placed)
    return entries


def _sequence_starts(flat: list[Placed], label: re.Pattern[str]) -> set[int]:
    """The lines that open an entry by their printed label. Numbers must run 1, 2, 3 …: a year
    ("2011. Why not …") or an arXiv category ("[cs.CL]") that a wrapped entry puts at the start
    of a line is not a label. Keys such as `[Smi20]` have no order; any of them opens an entry."""
    starts: set[int] = set()
    expected = 1
    for position, placed in enumerate(flat):
        match = label.match(placed.line.text.strip())
        if match is None:
            continue
        printed = match.group("label")
        if not printed.isdigit():
            if not _CATEGORY.fullmatch(printed):
                starts.add(position)
        elif int(printed) == expected:
            starts.add(position)
            expected += 1
    return starts


def _reference(position: int, text: str) -> Reference:
    label = ""
    match = _BIB_BRACKET.match(text) or _BIB_NUMBER.match(text) or _BIB_PLAIN.match(text)
    body = text
    if match:
        label = f"[{match.group('label')}]"
        body = text[match.end() :].strip()
    blocks = [b for b in _BLOCK_END.split(body) if b]
    kept = [b for b in blocks if not _YEAR_BLOCK.match(b.strip())]
    if len(kept) < len(blocks) and kept:
        # an author-year style sets the year apart ("Name. 2023. Title."): the year stays in
        # the text, the title is the block after the authors
        blocks = kept
    block_texts = [inline(b) for b in blocks] or [EMPTY]
    reference = reference_of(f"bib.bib{position}", position, label, block_texts, [])
    full = inline(body)
    title = reference.title
    if title is not None and len(title.split()) < 2:
        # a physics entry has no title: the block after the authors is a journal's
        # abbreviation ("Phys." of "Phys. Rev. Lett."), not a title
        title = None
    return Reference(
        reference.id,
        reference.number,
        reference.label,
        full.text,
        full.markdown,
        reference.authors,
        title,
        reference.year,
        reference.arxiv,
        reference.doi,
        reference.url,
    )


def title_and_authors(
    front: list[Placed], size: float, pieces: tuple[Line, ...] = (), below: float = float("-inf")
) -> tuple[Inline, tuple[str, ...], int]:
    """The title (the first run of lines set large) and the authors' names; and how many
    front lines the title took.

    Names are read from the first page's pieces as PDFium set them (`pieces`, before rows
    are joined: a grid of authors is one row per line of names) between the title and the
    front matter's end (`below`, a y); without pieces, from the front lines after the title.
    When some names are bold, only bold ones count: the affiliations under them are not.
    """
    big = [i for i, p in enumerate(front) if p.line.size >= 1.2 * size and len(p.line.text) > 3]
    if not big:
        return EMPTY, (), 0
    start = big[0]
    title_lines = [front[start].line]
    end = start + 1
    while end < len(front) and abs(front[end].line.size - title_lines[0].size) < 0.3:
        if title_lines[-1].y0 - front[end].line.y1 > title_lines[0].size:
            break
        title_lines.append(front[end].line)
        end += 1
    title = " ".join(line.text.strip() for line in title_lines)
    top = min(line.y0 for line in title_lines)
    if pieces:
        candidates = sorted(
            (ln for ln in pieces if ln.y1 <= top + 1 and ln.y0 >= below - 1),
            key=lambda ln: (-round(ln.y1), ln.x0),
        )
    else:
        candidates = [placed.line for placed in front[end:]]
    found: list[tuple[str, bool, float]] = []
    for line in candidates:
        if line.size >= title_lines[0].size or line.size < 0.8 * size:
            continue
        for name in _names(line.text):
            if name not in (n for n, _, _ in found):
                found.append((name, line.bold >= 0.5, line.size))
    if any(bold for _, bold, _ in found) and not all(bold for _, bold, _ in found):
        found = [item for item in found if item[1]]
    largest = max((item[2] for item in found), default=0.0)
    # names are never set smaller than the affiliations under them (IEEEtran: 11 pt names
    # over 10 pt places, "Lagoon City, Nigeria")
    found = [item for item in found if item[2] > largest - 0.3]
    return inline(title), tuple(name for name, _, _ in found), end


def _names(text: str) -> list[str]:
    """The names on one front-matter line, up to its first part that is not a name: in
    "TAL AUGUST, University of Washington, USA" or "FutureHouse Inc., San Francisco, CA" what
    follows an affiliation is its place."""
    names = []
    text = re.sub(r"\S+@\S+", " ", text)
    for part in re.split(r"\s*(?:[,;&·]|\band\b|[\d∗*†‡§¶♯⋆★✉♦♣♠♥◊♢♡♤♧‖]+)\s*", text):
        part = part.strip(" .")
        words = part.split()
        if not words:
            continue
        if _NOT_A_NAME.search(part):
            break
        if (
            2 <= len(words) <= 5
            and all(_NAME_WORD.match(w) for w in words)
            and words[-1][0].isupper()
        ):
            names.append(" ".join(words))
    return names


def abstract_start(lines: list[Placed], size: float) -> tuple[int, str] | None:
    """Where the abstract begins on the first page: its heading line, and any text that follows
    the word on that line ("Abstract—We propose …")."""
    for index, placed in enumerate(lines):
        if placed.page > 2:
            return None
        text = placed.line.text.strip()
        match = _ABSTRACT.match(text)
        if match and (
            placed.line.bold >= 0.3 or text.isupper() or placed.line.size > size or len(text) <= 10
        ):
            return index, text[match.end() :]
    return None


def link_citations(
    blocks: tuple[Block, ...], references: tuple[Reference, ...]
) -> tuple[Block, ...]:
    """The blocks with each text run's bracketed citations (`[12]`, `[3, 7]`, `[25–29]`)
    pointing at the entries that print those numbers, so `references(id)` can say where an
    entry is cited. Only a bibliography with bracketed or numbered labels is linked: an
    author–year or superscript style gives no number to match."""
    by_number = {r.number: r.id for r in references if r.label}
    if not by_number:
        return blocks

    def cites(text: str) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for match in _CITATION.finditer(text):
            for part in match.group(1).split(","):
                low, _, high = part.strip().replace("–", "-").partition("-")
                last = min(int(high), int(low) + _CITED_RANGE) if high else int(low)
                for number in range(int(low), last + 1):
                    if str(number) in by_number:
                        found[by_number[str(number)]] = None
        return tuple(found)

    def walk(block: Block) -> Block:
        if isinstance(block, Text):
            linked = cites(block.content.text)
            return replace(block, cites=linked) if linked else block
        if isinstance(block, Paragraph | Section):
            return replace(block, blocks=tuple(walk(b) for b in block.blocks))
        return block

    return tuple(walk(block) for block in blocks)
