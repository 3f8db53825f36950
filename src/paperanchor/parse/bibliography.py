"""Bibliography entries parsed into authors, title, year, arXiv id, DOI and URL."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from paperanchor.parse.context import ParseContext
from paperanchor.parse.dom import HtmlElement, children, classes, printed_text, tag_of
from paperanchor.parse.inline import inline_of
from paperanchor.tree import Bibliography, Inline, Reference

_ARXIV = re.compile(
    r"(?:arxiv[:\s]*(?:preprint\s*)?(?:abs/)?|arxiv\.org/(?:abs|pdf)/)"
    r"((?:\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?)",
    re.IGNORECASE,
)
# The `(?=…)` that opens _DOI, _YEAR, _AUTHOR_SPLIT and _ET_AL names the characters a match
# can start with: the engine passes every other position at once, where a leading `\s*`, `\b`
# or look-behind tried the whole pattern (half the cost of the entries' fields).
_DOI = re.compile(r"(?=1)\b(10\.\d{4,9}/[^\s\"<>]+)")
_URL = re.compile(r"https?://[^\s\"<>]+")
_YEAR = re.compile(r"(?=[12])(?<![\d./\-])((?:1[89]|20)\d{2})[a-z]?(?![\d])")
_INITIALS = re.compile(r"^(?:[A-Z][a-z]?\.?[\s\-]*)+$")
# A split is made where a run of spaces ends in ";", ",", "&" or "and ": the run is taken
# whole (`\s*+`, never given back), so that a space between two words fails at once where
# `\s*` then `\s+and` tried every way of sharing the run (the look-behind asks for the
# space `\s+and` needed).
_AUTHOR_SPLIT = re.compile(r"(?=[\s;,&])\s*+(?:;|,\s*and\s+|(?<=\s)and\s+|&\s*|,)\s*")
# "et al" in any case, spelled out: IGNORECASE matches no other character for these letters,
# and a pattern without it lets the engine skip to the first "e" or "E" in C.
_ET_AL = re.compile(r"(?=[eE])\b[eE][tT]\s*[aA][lL]\.?")
_TRAILING = " .,;:"
# An entry's authors are at its start: past this many characters no author list runs on.
AUTHOR_SCAN_CHARS = 4000


def parse_bibliography(biblist: HtmlElement, ctx: ParseContext, section_id: str) -> Bibliography:
    entries = []
    position = 0
    for item in children(biblist):
        if tag_of(item) != "li":
            continue
        position += 1
        entries.append(parse_entry(item, ctx, position))
    return Bibliography(biblist.get("id") or f"{section_id}.L1", tuple(entries))


def entry_numbers(biblist: HtmlElement, labels: dict[Any, str]) -> dict[str, tuple[str, str]]:
    """Each entry's id -> (the number `parse_entry` gives it, its printed label without
    brackets), read before the body is parsed so that a citation printed as its key (see
    inline.py) can print the number instead. `labels` gets each entry element's first label,
    which `parse_entry` then need not read again."""
    numbers: dict[str, tuple[str, str]] = {}
    position = 0
    for item in biblist.iterchildren(etree.Element):
        if tag_of(item) != "li":
            continue
        position += 1
        label = ""
        for child in item.iterchildren(etree.Element):  # the label opens the entry
            if "ltx_tag" in classes(child):
                label = printed_text(child)
                break
        labels[item] = label
        item_id = item.get("id")
        if item_id:
            numbers[item_id] = (entry_number(label, position), label)
    return numbers


# A printed label is one word in brackets or parentheses: "[12]", "(3)", "[HNA+17]",
# "[vdBKLM+19]" (alpha styles, any length); a label with spaces ("Vaswani et al. (2017)") is
# an author-year one. Bounded: a longer "word" is no label a reader types.
_LABEL = re.compile(r"[\[(]?\s*(\S{1,64}?)\s*[\])]?")


def entry_number(label: str, position: int) -> str:
    """The printed label without its brackets, whatever its form (`12`, `HNA+17`); author-year
    styles, which print names rather than a label, are numbered by position (contract §4)."""
    return _label_reading(label, position)[1]


def _label_reading(label: str, position: int) -> tuple[bool, str]:
    """Whether the label is an author-year one, and the entry's number, from one match."""
    match = _LABEL.fullmatch(label) if label else None
    if match is None:
        return bool(label), str(position)
    return False, match.group(1).strip("[]()") or str(position)


def parse_entry(item: HtmlElement, ctx: ParseContext, position: int) -> Reference:
    ref_id = item.get("id") or f"bib.pos{position}"
    label = ""
    blocks: list[HtmlElement] = []
    first_label = ctx.bib_labels.get(item)  # read before the body (entry_numbers)
    for child in item.iterchildren(etree.Element):
        cls = classes(child)
        if not label and "ltx_tag" in cls:
            label = printed_text(child) if first_label is None else first_label
            first_label = None  # an empty first label: the next one is read
        elif "ltx_bibblock" in cls:
            blocks.append(child)
    if not blocks:
        blocks = [c for c in children(item) if "ltx_tag" not in classes(c)]
    block_texts = [inline_of(b, ctx)[0] for b in blocks]
    hrefs = [a.get("href") or "" for a in item.iter("a")]
    return reference_of(ref_id, position, label, block_texts, hrefs)


def reference_of(
    ref_id: str, position: int, label: str, block_texts: list[Inline], hrefs: list[str]
) -> Reference:
    """The entry's fields from its blocks (authors, title, the rest) and its link targets.

    LaTeXML gives the blocks (`\\newblock`); the PDF parser cuts a plain-text entry into
    blocks at its sentence ends and passes no links.
    """
    texts = [b.text for b in block_texts]
    text = " ".join([t for t in texts if t]).strip()
    markdown = " ".join([b.markdown for b in block_texts if b.markdown]).strip()
    author_year, number = _label_reading(label, position)
    arxiv = _arxiv(text, hrefs)
    doi = _doi(text, hrefs)
    url = None
    for href in hrefs:  # two entries in three have none
        if href.startswith(("http://", "https://")):
            url = href
            break
    if url is None and "http" in text:  # _URL's literal start, tested in C
        found = _URL.search(text)
        url = found.group(0).rstrip(_TRAILING) if found else None
    year = _year(label if author_year else "", text, arxiv, doi)
    # the authors are at the start: a hostile entry of a million names is read that far
    head = text[:AUTHOR_SCAN_CHARS]
    authors = (
        _authors(texts[0][:AUTHOR_SCAN_CHARS])
        if len(texts) > 1
        else _leading_names(head) or _authors(head.split(". ")[0])
    )
    title = _title(texts)
    return Reference(ref_id, number, label, text, markdown, authors, title, year, arxiv, doi, url)


# The literal each pattern needs is looked for in C before the pattern is tried (`in` costs
# a fraction of a search, and most entries hold no arXiv id, most links no DOI): no character
# but "x" and "X" matches an `x` under IGNORECASE.
def _arxiv(text: str, hrefs: list[str]) -> str | None:
    for candidate in (text, *hrefs):
        if "x" in candidate or "X" in candidate:
            match = _ARXIV.search(candidate)
            if match:
                return match.group(1).rstrip(_TRAILING)
    return None


def _doi(text: str, hrefs: list[str]) -> str | None:
    for candidate in (*hrefs, text):
        if "10." in candidate:
            match = _DOI.search(candidate)
            if match:
                return match.group(1).rstrip(_TRAILING + ")]")
    return None


def _year(label: str, text: str, arxiv: str | None, doi: str | None) -> str | None:
    match = _YEAR.search(label) if label else None
    if match:
        return match.group(1)
    cleaned = text
    for noise in (arxiv, doi):
        if noise:
            cleaned = cleaned.replace(noise, " ")
    if "http" in cleaned:
        cleaned = _URL.sub(" ", cleaned)
    return _last_year(cleaned)


def _last_year(text: str) -> str | None:
    """The last of `_YEAR.findall(text)`, found from the end: no match of _YEAR can start
    inside another (its digits follow a digit, its letter is no digit), so the last match is
    the one at the last place where the pattern matches, and only the places where "18",
    "19" or "20" is are tried (a scan of the whole entry cost a tenth of its fields). Each
    prefix is looked for backwards from where it was last found, so that the text is read
    once for each; past a few places that are no year ("2020…" over a whole hostile entry)
    the whole text is scanned in C as before."""
    match = _YEAR.match
    places = {prefix: text.rfind(prefix) for prefix in _YEAR_PREFIXES}
    for _ in range(_YEAR_TRIES):
        prefix = max(places, key=places.__getitem__)
        start = places[prefix]
        if start < 0:
            return None
        found = match(text, start)
        if found is not None:
            return found.group(1)
        places[prefix] = text.rfind(prefix, 0, start + 1)  # the one before this one
    years = _YEAR.findall(text)
    return years[-1] if years else None


_YEAR_PREFIXES = ("18", "19", "20")
# Real entries have a few places that are no year after their last one (pages, DOIs, ids)
_YEAR_TRIES = 32


def _authors(block: str) -> tuple[str, ...]:
    """Names from the first block: `A. Vaswani, N. Shazeer, and N. Parmar` or `Vaswani, A., …`."""
    block = _without_et_al(block).strip(_TRAILING)
    if not block:
        return ()
    parts = [part for p in _AUTHOR_SPLIT.split(block) if (part := p.strip(_TRAILING))]  # has " "
    if not parts:
        return ()
    # one test where no digit is (a year ends a block): every part is a piece of the block
    digits = _has_digit(block)
    names: list[str] = []
    index = 0
    if all(" " in part for part in parts[:-1]):
        # whole names only ("Aman Madaan"): no part is a surname that initials follow
        head = parts[:-1]  # names with a space, so longer than one character
        if not digits:
            return tuple(parts) if len(parts[-1]) > 1 else tuple(head)
        if not _has_digit(" ".join(head)):
            return (*head, *(n for n in parts[-1:] if len(n) > 1 and not _has_digit(n)))
        index, names = len(parts), parts
    while index < len(parts):
        part = parts[index]
        nxt = parts[index + 1] if index + 1 < len(parts) else None
        # "Surname, I." pairs: a part of initials belongs to the surname before it
        if (
            nxt is not None
            and " " not in part  # first: "Aman Madaan" needs no pattern
            and _INITIALS.match(nxt)
            and not _INITIALS.match(part)
        ):
            names.append(f"{nxt} {part}".strip())
            index += 2
            continue
        names.append(part)
        index += 1
    if not digits:
        return tuple(n for n in names if len(n) > 1)
    return tuple(n for n in names if len(n) > 1 and not _has_digit(n))


def _without_et_al(text: str) -> str:
    # the pattern is tried only where its first two letters are (most author lists)
    if "et" in text or "Et" in text or "ET" in text or "eT" in text:
        return _ET_AL.sub("", text)
    return text


_ASCII_DIGIT = re.compile(r"[0-9]")


def _has_digit(text: str) -> bool:
    """`any(map(str.isdigit, text))`, in C for ASCII text (where only 0-9 are digits)."""
    if text.isascii():
        return _ASCII_DIGIT.search(text) is not None
    return any(map(str.isdigit, text))


_INITIAL = re.compile(r"[A-Z][a-z]?\.(?:-?[A-Z][a-z]?\.)*")  # A.  Th.  L.-J.  J.-P.
_LEADING_INITIALS = re.compile(r"((?:[A-Z][a-z]?\.[\s\-]*)+)\s")
_SURNAME_END = re.compile(r"(.*?[^\W\d_]{2})\.\s")  # a name's last word, then a sentence
_PARTICLES = frozenset(
    [
        "van",
        "von",
        "de",
        "der",
        "den",
        "del",
        "della",
        "da",
        "di",
        "du",
        "dos",
        "das",
        "le",
        "la",
        "el",
        "al",
        "bin",
        "ten",
        "ter",
        "st",
    ]
)
_SUFFIXES = frozenset({"Jr.", "Jr", "Sr.", "II", "III", "IV"})


def _leading_names(text: str) -> tuple[str, ...]:
    """The authors an entry of one block starts with, in the two forms whose initials end in
    periods: initials first (`A. B. Name, C. Name, and D. Name, “Title,” …`, IEEE and APS) or
    name first (`Name, A. B., Name, C., and Name, D. Title …`); () when it has neither."""
    # `A., & Name` splits twice: no empty segment between
    segments = [segment for p in _AUTHOR_SPLIT.split(text) if (segment := p.strip())]
    if len(segments) > 1 and _is_surname(segments[0]) and _INITIAL.match(segments[1]):
        return _name_first(segments)
    names: list[str] = []
    for segment in segments:
        segment = _without_et_al(segment).strip(_TRAILING)
        if _is_initials_first(segment):
            names.append(segment)
            continue
        # the last author and the title in one segment: `N. Parmar. Attention is all …`
        head = _SURNAME_END.match(segment)
        if head is not None and _is_initials_first(head.group(1)):
            names.append(head.group(1))
        break
    return tuple(names)


def _name_first(segments: list[str]) -> tuple[str, ...]:
    names: list[str] = []
    index = 0
    while index + 1 < len(segments):
        surname, initials = segments[index], segments[index + 1]
        if not _is_surname(surname):
            break
        if initials in _SUFFIXES and index + 2 < len(segments):  # `Duvall, Jr., T. L.`
            surname, initials = f"{surname} {initials}", segments[index + 2]
            index += 1
        if _INITIALS.match(initials) and _INITIAL.match(initials):
            names.append(f"{initials.strip(_TRAILING)}. {surname}")
            index += 2
            continue
        lead = _LEADING_INITIALS.match(initials)  # `N. Attention is all you need.`
        if lead is not None:
            names.append(f"{lead.group(1).strip()} {surname}")
        break
    return tuple(names)


def _is_initials_first(segment: str) -> bool:
    """`A. B. Name`, `L.-J. Li`, `C. C. de Visser`, `G. J. Van Ryzin`, `J. Smith Jr.`"""
    if not "A" <= segment.lstrip()[:1] <= "Z":  # no initial opens it (the title, mostly)
        return False
    words = segment.split()
    index = 0
    count = len(words)
    initial = _INITIAL.fullmatch
    while index < count and initial(words[index]):
        index += 1
    return index > 0 and _is_name_words(words, index)


def _is_surname(segment: str) -> bool:
    """`Vaswani`, `van Kampen`, `Fei-Fei`, `de la Cruz`: no initials, no sentence."""
    return _is_name_words(segment.split())


def _is_name_words(words: list[str], start: int = 0) -> bool:
    """Whether `words[start:]` are a name: at most three capitalised words of letters, hyphens
    and apostrophes, besides particles before them and suffixes after."""
    end = len(words)
    while start < end and words[start] in _PARTICLES:
        start += 1
    while start < end and words[end - 1] in _SUFFIXES:
        end -= 1
    if not 0 < end - start <= 3:
        return False
    for word in words[start:end]:
        if not word[0].isupper():
            return False
        if not word.isalpha() and ("." in word or not all(c.isalpha() or c in "-'’" for c in word)):
            return False
    return True


_QUOTED = re.compile(r"[“\"]([^”\"]{4,})[”\"]")


def _title(blocks: list[str]) -> str | None:
    if len(blocks) > 1:
        title = blocks[1].strip(_TRAILING)
        return title or None
    text = blocks[0] if blocks else ""
    quoted = _QUOTED.search(text)
    return quoted.group(1).strip(_TRAILING) if quoted else None
