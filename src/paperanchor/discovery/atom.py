"""arXiv API Atom feeds (contract §4 metadata and search) -> `Metadata`, `Hit` and search pages.

Both formats arXiv has served are read: the 2025+ one (`arXiv Query:` title, namespaces on the
root) and the older one (`ArXiv Query:`, `rel="self"`, namespaces declared per element).
Every field stays the text arXiv wrote, with its whitespace runs squashed to one space (the
older format wraps titles and abstracts at 80 columns); dates become ISO 8601 in UTC.

A feed is untrusted bytes: it must be UTF-8, at most `MAX_FEED_BYTES`, without a DTD (so no
entity can expand), and is parsed by libxml2 without network access or entity resolution.
arXiv's error feeds (one entry whose id is under `/api/errors`) raise `BadRequest` or
`NotFound` with arXiv's words; a feed that is not a feed raises `UpstreamError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from lxml import etree

from paperanchor.errors import BadRequest, NotFound, UpstreamError
from paperanchor.refs import PaperRef, parse_ref, shown
from paperanchor.shapes import Hit, Metadata, SearchPage

ATOM = "http://www.w3.org/2005/Atom"
ARXIV = "http://arxiv.org/schemas/atom"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"

# The largest answer we ask for is trends' 2,000 entries (arXiv's per-request maximum); the
# recorded 100-entry "testing" feed is 231,594 bytes (2.3 kB an entry), so 2,000 entries are
# about 4.6 MB. 16 MB leaves 3x for long abstracts and parses in about 0.1 s.
MAX_FEED_BYTES = 16 * 1024 * 1024
MAX_ENTRIES = 2000
# arXiv caps an abstract at 1,920 characters; titles and comments are far shorter. A field
# fifty times that is not arXiv's: squashing a 9.5 MB title took 0.65 s and 131 MB.
MAX_FIELD_CHARS = 100_000
# The most authors arXiv lists on one paper are a few thousand (the ATLAS and CMS Higgs
# combination: 5,154); arXiv has about 160 categories. An entry past these is not arXiv's: a
# feed of 16 MB could otherwise hold millions of either.
MAX_AUTHORS = 10_000
MAX_CATEGORIES = 200
HIT_AUTHORS = 3
# contract §4: a hit costs about a hundred tokens, and §5 caps its summary at 300 characters.
# Over the recorded 100-entry "testing" feed a 300-character summary made a hit 140 tokens
# (median; 158 at most), 150 characters make it 103 (119 at most): the summary is what a
# reader skims to pick a paper, and its abstract is one metadata call away.
HIT_SUMMARY_CHARS = 150

_ENTRY_ID = re.compile(r"^https?://(?:www\.|export\.)?arxiv\.org/abs/(?P<id>\S+?)v(?P<v>\d{1,4})$")
_ARXIV_URL = re.compile(r"^https?://(?:www\.|export\.)?arxiv\.org/\S*$")
_NOT_FOUND_WORDS = ("not found", "does not exist", "no such", "unknown id")


@dataclass(frozen=True, slots=True)
class Feed:
    """One parsed feed: arXiv's total and start index, and its entries in feed order."""

    total: int
    start: int
    entries: tuple[Metadata, ...]


def parse_feed(body: bytes) -> Feed:
    """Parse an arXiv API answer; raise arXiv's own error as `BadRequest`/`NotFound`."""
    root = _root(body)
    entries = root.findall(f"{{{ATOM}}}entry")
    if len(entries) > MAX_ENTRIES:
        raise UpstreamError(
            f"the arXiv API answered {len(entries)} entries (at most {MAX_ENTRIES} are asked for)"
        )
    for entry in entries:
        _raise_if_error(entry)
    parsed = tuple(_metadata(entry, index) for index, entry in enumerate(entries))
    total = _count(root, "totalResults", len(parsed))
    start = _count(root, "startIndex", 0)
    return Feed(total=total, start=start, entries=parsed)


def metadata_by_paper(feed: Feed) -> dict[str, Metadata]:
    """The feed's entries keyed by their bare id (`1706.03762`, `hep-th/9901001`)."""
    return {entry["paper"]: entry for entry in feed.entries}


def metadata_for(feed: Feed, ref: PaperRef) -> Metadata:
    """The entry of one requested paper (matched on its bare id); `NotFound` when it is absent."""
    found = metadata_by_paper(feed).get(ref.paper)
    if found is None:
        raise NotFound(f"The arXiv API has no paper {ref.idv}")
    return found


def to_hit(metadata: Metadata) -> Hit:
    """The compact search result of one entry."""
    authors = metadata["authors"]
    shown_authors = authors[:HIT_AUTHORS] + (["et al."] if len(authors) > HIT_AUTHORS else [])
    return {
        "paper": metadata["paper"],
        "idv": f"{metadata['paper']}v{metadata['latestVersion']}",
        "title": metadata["title"],
        "authors": shown_authors,
        "published": metadata["published"],
        "primaryCategory": metadata["primaryCategory"],
        "summary": clip(metadata["abstract"], HIT_SUMMARY_CHARS),
    }


def search_page(feed: Feed, query: str, limit: int | None = None) -> SearchPage:
    """A search answer: the query as sent, arXiv's total, the start index and the hits, at
    most `limit` of them whatever the feed holds."""
    entries = feed.entries if limit is None else feed.entries[: max(0, limit)]
    return {
        "query": query,
        "total": feed.total,
        "start": feed.start,
        "hits": [to_hit(entry) for entry in entries],
    }


def clip(text: str, limit: int) -> str:
    """`text` whole when it fits in `limit` characters, else cut at a word boundary + "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    # a "word" longer than half the budget (a URL, a formula) is cut inside rather than dropped
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


# -- parsing ---------------------------------------------------------------------------------


def _root(body: bytes) -> etree._Element:
    if len(body) > MAX_FEED_BYTES:
        raise UpstreamError(
            f"the arXiv API answered {len(body):,} bytes (more than {MAX_FEED_BYTES:,})"
        )
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise UpstreamError("the arXiv API answered bytes that are not UTF-8") from None
    # No DTD, hence no entity declarations: nothing can expand (billion laughs, external
    # entities). arXiv's feeds never carry one. The scan is valid because the bytes were just
    # checked to be UTF-8 and the parser is told to read them as UTF-8.
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise UpstreamError("the arXiv API answered XML with a document type declaration")
    parser = etree.XMLParser(
        encoding="utf-8",
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,  # keeps libxml2's depth (256) and text-node limits
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as exc:
        reason = str(exc).split(",", 1)[0]  # libxml2 appends advice for its own options
        raise UpstreamError(f"the arXiv API answered XML that does not parse ({reason})") from None
    if root is None or root.tag != f"{{{ATOM}}}feed":
        raise UpstreamError("the arXiv API answered XML that is not an Atom feed")
    if root.getroottree().docinfo.internalDTD is not None:
        raise UpstreamError("the arXiv API answered XML with a document type declaration")
    return root


def _raise_if_error(entry: etree._Element) -> None:
    entry_id = _text(entry.find(_ID)) or ""
    if "arxiv.org/api/errors" not in entry_id:
        return
    message = _text(entry.find(_SUMMARY)) or _text(entry.find(_TITLE)) or "error"
    detail = f"arXiv API: {shown_message(message)}"
    if any(words in message.lower() for words in _NOT_FOUND_WORDS):
        raise NotFound(detail)
    raise BadRequest(detail)


def shown_message(message: str) -> str:
    """An upstream message for an error detail: one line, control characters escaped, clipped."""
    return shown(" ".join(message[:1000].split()))


_ID, _TITLE, _SUMMARY = f"{{{ATOM}}}id", f"{{{ATOM}}}title", f"{{{ATOM}}}summary"
_PUBLISHED, _UPDATED = f"{{{ATOM}}}published", f"{{{ATOM}}}updated"
_AUTHOR, _NAME = f"{{{ATOM}}}author", f"{{{ATOM}}}name"
_CATEGORY, _LINK = f"{{{ATOM}}}category", f"{{{ATOM}}}link"
_PRIMARY, _DOI = f"{{{ARXIV}}}primary_category", f"{{{ARXIV}}}doi"
_JOURNAL, _COMMENT = f"{{{ARXIV}}}journal_ref", f"{{{ARXIV}}}comment"


def _metadata(entry: etree._Element, index: int) -> Metadata:
    # one pass over the children: entry.find() per field cost 12 us each, 0.3 s of a
    # 2,000-entry feed
    first: dict[str, etree._Element] = {}
    authors: list[str] = []
    terms: list[str] = []
    links: list[etree._Element] = []
    for child in entry:
        tag = child.tag
        if tag == _AUTHOR:
            name = _text(child.find(_NAME))
            if name:
                authors.append(name)
                _check_count(authors, MAX_AUTHORS, "authors", index)
        elif tag == _CATEGORY:
            term = " ".join(_attribute(child, "term").split())
            if term:
                terms.append(term)
                _check_count(terms, MAX_CATEGORIES, "categories", index)
        elif tag == _LINK:
            links.append(child)
        elif isinstance(tag, str):
            first.setdefault(tag, child)
    raw_id = _text(first.get(_ID)) or ""
    match = _ENTRY_ID.match(raw_id)
    try:
        ref = parse_ref(match["id"]) if match else None
    except BadRequest:
        ref = None
    if ref is None or match is None or ref.is_local or int(match["v"]) < 1:
        raise UpstreamError(f"arXiv API entry {index + 1} has no arXiv id ({shown(raw_id)!r})")
    version = int(match["v"])
    idv = f"{ref.paper}v{version}"
    categories = _unique(terms)
    primary_node = first.get(_PRIMARY)
    primary = " ".join(_attribute(primary_node, "term").split()) if primary_node is not None else ""
    if not primary:
        primary = categories[0] if categories else ""
    if primary and primary not in categories:
        categories.insert(0, primary)
    abs_url, pdf_url = _links(links, idv)
    return {
        "paper": ref.paper,
        "title": _field(first, _TITLE, idv) or "",
        "authors": authors,
        "abstract": _field(first, _SUMMARY, idv) or "",
        "published": _date(first, _PUBLISHED, idv),
        "updated": _date(first, _UPDATED, idv),
        "latestVersion": version,
        "categories": categories,
        "primaryCategory": primary,
        "doi": _field(first, _DOI, idv),
        "journalRef": _field(first, _JOURNAL, idv),
        "comment": _field(first, _COMMENT, idv),
        "absUrl": abs_url,
        "pdfUrl": pdf_url,
    }


class _TooLong(Exception):
    """A text node and its descendants hold more than MAX_FIELD_CHARS characters."""


def _text(node: etree._Element | None) -> str | None:
    try:
        return _bounded_text(node)
    except _TooLong:
        assert node is not None
        name = str(node.tag).rsplit("}", 1)[-1]
        raise UpstreamError(
            f"the arXiv API answered a {name} of over {MAX_FIELD_CHARS:,} characters"
        ) from None


def _bounded_text(node: etree._Element | None) -> str | None:
    """The whole text of an element, child elements' text included, squashed; counted as it
    is read, so that a field of 140,000 `<b>` children is refused after 100,000 characters
    rather than joined (the cap read only `node.text` before)."""
    if node is None:
        return None
    pieces: list[str] = []
    size = 0
    for piece in node.itertext():
        size += len(piece)
        if size > MAX_FIELD_CHARS:
            raise _TooLong
        pieces.append(piece)
    text = " ".join("".join(pieces).split())
    return text or None


def _attribute(node: etree._Element, name: str) -> str:
    value = node.get(name) or ""
    if len(value) > MAX_FIELD_CHARS:
        raise UpstreamError(
            f"the arXiv API answered a {name} of over {MAX_FIELD_CHARS:,} characters"
        )
    return value


def _check_count(items: list[str], limit: int, what: str, index: int) -> None:
    if len(items) > limit:
        raise UpstreamError(f"arXiv API entry {index + 1} has more than {limit:,} {what}")


def _field(first: dict[str, etree._Element], tag: str, idv: str) -> str | None:
    try:
        return _bounded_text(first.get(tag))
    except _TooLong:
        name = tag.rsplit("}", 1)[-1]
        raise UpstreamError(
            f"arXiv API entry {idv} has a {name} of over {MAX_FIELD_CHARS:,} characters"
        ) from None


def _date(first: dict[str, etree._Element], tag: str, idv: str) -> str:
    name = tag.rsplit("}", 1)[-1]
    raw = _text(first.get(tag))
    if raw is None:
        raise UpstreamError(f"arXiv API entry {idv} has no {name} date")
    try:
        moment = datetime.fromisoformat(raw[:64])
    except ValueError:
        raise UpstreamError(
            f"arXiv API entry {idv} has a {name} date that is not ISO 8601 ({shown(raw)!r})"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError):
        raise UpstreamError(
            f"arXiv API entry {idv} has a {name} date out of range ({shown(raw)!r})"
        ) from None


def _links(links: list[etree._Element], idv: str) -> tuple[str, str]:
    abs_url = pdf_url = None
    for link in links:
        href = " ".join(_attribute(link, "href").split())
        if not _ARXIV_URL.match(href):
            continue  # only arxiv.org addresses; a DOI link or anything else is not ours to pass
        if link.get("rel") == "alternate" and abs_url is None:
            abs_url = href
        elif link.get("title") == "pdf" and pdf_url is None:
            pdf_url = href
    return (
        abs_url or f"https://arxiv.org/abs/{idv}",
        pdf_url or f"https://arxiv.org/pdf/{idv}",
    )


def _count(root: etree._Element, name: str, default: int) -> int:
    raw = _text(root.find(f"{{{OPENSEARCH}}}{name}"))
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 12:
        raise UpstreamError(f"the arXiv API answered a {name} that is not a count ({shown(raw)!r})")
    return int(raw)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
