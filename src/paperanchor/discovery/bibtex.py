"""BibTeX (contract §4): one `@misc` per arXiv paper, and a paper's bibliography as BibTeX.

The entry is the form arXiv recommends, with `author` as `Last, First and …` and a `month`:

    @misc{murray2011quantum,
      title = {Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large …},
      author = {Murray, James M. and Del Maestro, Adrian and Tesanovic, Zlatko},
      year = {2011},
      month = nov,
      eprint = {1111.2011},
      archivePrefix = {arXiv},
      primaryClass = {cond-mat.str-el},
      doi = {10.1103/PhysRevB.85.115117},
      note = {Phys. Rev. B 85, 115117 (2012)},
      url = {https://arxiv.org/abs/1111.2011},
    }

Values are written by `latex.tex` (our escaping rules); keys are `lastnameYEARfirstword` in
ASCII, and keys that collide within one .bib get `a`, `b`, … in order.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paperanchor.discovery.latex import AMS_FALLBACKS, ascii_fold, plain, tex, words
from paperanchor.errors import BadRequest
from paperanchor.refs import parse_ref
from paperanchor.shapes import Metadata
from paperanchor.tree import Reference

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# bibtex formats author lists in quadratic time: 3,000 names took it 1.4 s, 30,000 took
# 2 min 11 s and overflowed its 200,000-character string. Past 1,000 names (0.2 s) the
# list ends with BibTeX's "and others" (printed "et al.").
MAX_AUTHORS = 1000
KEY_PART_CHARS = 24
# A key names the title by its first word that says something: "A Bijective String …" is
# `…bijective`, as Google Scholar and DBLP keys do.
KEY_SKIP = frozenset("a an the on of in for to and with at by from towards toward".split())  # noqa: SIM905
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_PARTICLES = frozenset(
    """
    van von de der den del della dela dei di da das dos du le la les ten ter te zu af av
    bin ibn al el st st. mac
    """.split()  # noqa: SIM905 - a word list reads better as words
)
_ORGANISATION = re.compile(
    r"\b(?:collaboration|consortium|team|group|project|committee|survey|observatory|"
    r"association|institute|university|laboratory|network|initiative)\b",
    re.IGNORECASE,
)
_INITIALS = re.compile(r"^(?:[A-Z]\.?-?){1,4}$")
_CATEGORY = re.compile(r"^[A-Za-z][A-Za-z.-]{0,31}$")
# What `doi` and `url` fields may hold: styles print them with the url package's `\url`
# (verbatim), or as plain text when it is not loaded, where `% # & { } \` break the
# document. `_` (10.1007/3-540-40988-2_10, recorded) prints only through `\url`: plain.bst
# ignores both fields, natbib styles need the url package for it, as for any DOI. A DOI or
# URL with a breaking character is kept as text in `note` instead (escaped).
_SAFE_DOI = re.compile(r"^10\.\d{4,9}/[A-Za-z0-9./:;()\[\]<>+_-]{1,200}$")
_SAFE_URL = re.compile(
    r"^https?://[A-Za-z0-9.-]{1,253}(?::\d{1,5})?(?:/[A-Za-z0-9./:;=?@!+_~-]*)?$"
)
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
_PUBLISHED = re.compile(r"^(?P<year>\d{4})-(?P<month>0[1-9]|1[0-2])-")
_URL_SAFE_ID = re.compile(r"^[A-Za-z0-9./-]{1,64}$")


@dataclass(frozen=True, slots=True)
class Entry:
    """One BibTeX entry before its key is made unique: the key, its fields, the AMS it uses."""

    key: str
    fields: tuple[tuple[str, str], ...]
    needs: frozenset[str] = frozenset()


def arxiv_entry(metadata: Metadata) -> Entry:
    """The `@misc` of one arXiv paper, from its API metadata (or a cached copy of it)."""
    title = tex(metadata["title"])
    authors, author_needs = _authors(metadata["authors"])
    # metadata may come back from a cache: the id and the date are checked, not trusted
    paper = _eprint(metadata["paper"])
    dated = _PUBLISHED.match(metadata["published"])
    year = dated["year"] if dated else ""
    fields: list[tuple[str, str]] = [("title", "{" + title.value + "}")]
    if authors:
        fields.append(("author", "{" + authors + "}"))
    if dated:
        fields.append(("year", "{" + year + "}"))
        fields.append(("month", MONTHS[int(dated["month"]) - 1]))
    fields.append(("eprint", "{" + paper + "}"))
    fields.append(("archivePrefix", "{arXiv}"))
    primary = metadata["primaryCategory"]
    if primary:
        shown = primary if _CATEGORY.match(primary) else tex(primary, protect=False).value
        fields.append(("primaryClass", "{" + shown + "}"))
    notes = []
    needs = set(title.needs | author_needs)
    doi = metadata["doi"]
    if doi and _SAFE_DOI.match(doi):
        fields.append(("doi", "{" + doi + "}"))
    elif doi:
        notes.append("DOI " + doi)
    if metadata["journalRef"]:
        notes.insert(0, metadata["journalRef"])
    if notes:
        note = tex(". ".join(notes), protect=False)
        needs |= note.needs
        fields.append(("note", "{" + note.value + "}"))
    if _URL_SAFE_ID.match(paper):
        fields.append(("url", "{https://arxiv.org/abs/" + paper + "}"))
    if not authors:
        fields.append(("key", "{" + (_key_word(metadata["title"]) or "anonymous") + "}"))
    key = entry_key(metadata["authors"][:1], year, metadata["title"], paper)
    return Entry(key, tuple(fields), frozenset(needs))


def reference_entry(reference: Reference, metadata: Metadata | None = None) -> Entry:
    """A bibliography entry: its arXiv paper's `@misc` when `metadata` is given, else its parse."""
    if metadata is not None:
        return arxiv_entry(metadata)
    fields: list[tuple[str, str]] = []
    needs: set[str] = set()
    if reference.title:
        title = tex(reference.title)
        needs |= title.needs
        fields.append(("title", "{" + title.value + "}"))
    authors, author_needs = _authors(reference.authors)
    needs |= author_needs
    if authors:
        fields.append(("author", "{" + authors + "}"))
    year = _YEAR.search(reference.year or "")
    if year:
        fields.append(("year", "{" + year.group() + "}"))
    if reference.arxiv:
        try:
            eprint = parse_ref(reference.arxiv).paper
        except BadRequest:  # a reference's arXiv id is only a hint
            eprint = None
        if eprint:
            fields += [("eprint", "{" + eprint + "}"), ("archivePrefix", "{arXiv}")]
    if reference.doi and _SAFE_DOI.match(reference.doi):
        fields.append(("doi", "{" + reference.doi + "}"))
    if reference.url and _SAFE_URL.match(reference.url):
        fields.append(("url", "{" + reference.url + "}"))
    note = tex(reference.text, protect=False)
    needs |= note.needs
    if note.value:
        fields.append(("note", "{" + note.value + "}"))
    if not authors:
        fields.append(("key", "{" + (_key_word(reference.title or reference.text) or "ref") + "}"))
    key = entry_key(
        reference.authors[:1], year.group() if year else "", reference.title or "", reference.number
    )
    return Entry(key, tuple(fields), frozenset(needs))


def papers_bibtex(papers: Sequence[Metadata]) -> str:
    """A .bib of arXiv papers (GET /{paper}.bib, the `bibtex` tool), one entry per paper."""
    unique = {metadata["paper"]: metadata for metadata in papers}
    return bibtex([arxiv_entry(metadata) for metadata in unique.values()])


def references_bibtex(references: Sequence[Reference], found: Mapping[str, Metadata]) -> str:
    """A paper's bibliography as a .bib: `found` maps a reference's arXiv id to its metadata."""
    entries = []
    for reference in references:
        metadata = None
        if reference.arxiv:
            try:
                metadata = found.get(parse_ref(reference.arxiv).paper)
            except BadRequest:  # an unreadable arXiv id: the parsed fields are used
                metadata = None
        entries.append(reference_entry(reference, metadata))
    return bibtex(entries)


def bibtex(entries: Sequence[Entry]) -> str:
    """The .bib text of `entries`: duplicate entries once, keys made unique in order."""
    distinct = list({(entry.key, entry.fields): entry for entry in entries}.values())
    keys = unique_keys([entry.key for entry in distinct])
    needs = sorted(set().union(*(entry.needs for entry in distinct))) if distinct else []
    parts = [f'@preamble{{ "{AMS_FALLBACKS[name]}" }}\n' for name in needs]
    for key, entry in zip(keys, distinct, strict=True):
        lines = [f"@misc{{{key},"]
        lines += [f"  {name} = {value}," for name, value in entry.fields]
        lines.append("}")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def entry_key(authors: Sequence[str], year: str, title: str, fallback: str = "") -> str:
    """`lastnameYEARfirstword` in lower-case ASCII (`murray2011quantum`)."""
    last = ascii_fold(_surname(plain(authors[0]))) if authors else ""
    word = _key_word(title)
    key = last[:KEY_PART_CHARS] + "".join(c for c in year if c.isdigit())[:4] + word
    if not key:
        key = "ref" + ascii_fold(fallback)[:KEY_PART_CHARS]
    return key


def unique_keys(keys: Sequence[str]) -> list[str]:
    """Keys that occur more than once get `a`, `b`, … in order; keys seen once stay as they are."""
    counts = Counter(keys)
    taken = {key for key in keys if counts[key] == 1}
    used: Counter[str] = Counter()
    out = []
    for key in keys:
        if counts[key] == 1:
            out.append(key)
            continue
        while True:
            candidate = key + _letters(used[key])
            used[key] += 1
            if candidate not in taken:
                break
        taken.add(candidate)
        out.append(candidate)
    return out


def bib_name(name: str) -> str:
    """One author as BibTeX reads names: `Last, First`, `Last, Jr., First`, or `{Organisation}`."""
    printed = plain(name)
    if _ORGANISATION.search(printed) or (len(printed.split()) > 6 and "," not in printed):
        return "{" + _part(name) + "}"  # a collaboration is one name, never split
    last, first, suffix = _split_name(printed)
    out = _part(last)
    if suffix:
        out += ", " + _part(suffix)
    if first:
        out += ", " + _part(first)
    if out.strip().casefold() == "others":
        out = "{" + out + "}"  # "and others" is BibTeX's et al.
    return out


# -- helpers ---------------------------------------------------------------------------------


def _authors(names: Sequence[str]) -> tuple[str, frozenset[str]]:
    written: list[str] = []
    needs: set[str] = set()
    etal = False
    for name in names:
        if " ".join(name.split()).casefold().rstrip(".") in ("et al", "others", "and others"):
            etal = True
            continue
        if len(written) == MAX_AUTHORS:
            etal = True
            break
        needs |= tex(name, protect=False).needs
        bib = bib_name(name)
        if bib.strip("{} "):
            written.append(bib)
    if etal and written:
        written.append("others")
    return " and ".join(written), frozenset(needs)


def _part(text: str) -> str:
    """A name part: escaped, its commas and its words "and" braced so BibTeX does not split."""
    value = tex(text, protect=False).value.replace(",", "{,}")
    return " ".join(
        "{" + token + "}" if token.casefold() == "and" else token for token in value.split(" ")
    )


def _split_name(name: str) -> tuple[str, str, str]:
    """(last, first, suffix) of a printed name: "Adrian Del Maestro", "Aubert D", "Abadi, M. G."."""
    text = " ".join(name.split())
    if "," in text:
        head, _, rest = text.partition(",")
        rest = rest.strip()
        if rest.casefold() in _SUFFIXES:
            last, first, _ = _split_name(head)  # "John Smith, Jr."
            return last, first, rest
        return head.strip(), rest, ""
    tokens = text.split()
    if not tokens:
        return "", "", ""
    suffix = ""
    if len(tokens) > 1 and tokens[-1].casefold() in _SUFFIXES:
        suffix = tokens.pop()
    if len(tokens) > 1 and _INITIALS.match(tokens[-1]) and not _INITIALS.match(tokens[0]):
        return " ".join(tokens[:-1]), tokens[-1], suffix  # "Aubert D", as some styles print
    last = _last_of(tokens)
    first = " ".join(tokens[: len(tokens) - len(last.split())])
    return last, first, suffix


def _eprint(paper: str) -> str:
    try:
        return parse_ref(paper).paper
    except BadRequest:
        return tex(paper, protect=False).value  # not an arXiv id: its text, escaped


def _surname(name: str) -> str:
    if _ORGANISATION.search(name):
        return name.split()[0] if name.split() else ""  # "ATLAS Collaboration" -> atlas
    return _split_name(name)[0]


def _last_of(tokens: Sequence[str]) -> str:
    start = len(tokens) - 1
    # particles before the surname belong to it ("Yohann De Castro" -> "De Castro"), but the
    # first token is always a given name ("Le Song", "Van Jacobson")
    while start > 1 and tokens[start - 1].casefold() in _PARTICLES:
        start -= 1
    return " ".join(tokens[start:])


def _key_word(title: str) -> str:
    found = [ascii_fold(word) for word in words(title)]
    found = [word for word in found if word]
    for word in found:
        if word not in KEY_SKIP:
            return word[:KEY_PART_CHARS]
    return found[0][:KEY_PART_CHARS] if found else ""


def _letters(index: int) -> str:
    """a, b, …, z, aa, ab, …"""
    out = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        out = chr(ord("a") + remainder) + out
    return out
