"""Semantic Scholar Graph API (SPEC §4 citations): request paths, answers -> `Citations`.

Two requests answer one `citations` call: the paper (`paper/arXiv:{id}`, for its citation
count) and the first page of its citing papers (`paper/arXiv:{id}/citations`). One answers the
arXiv ids a bibliography does not print (SPEC §11): the paper's references
(`paper/arXiv:{id}/references`, their titles and external ids, up to 1,000). The paths are
relative to `PAPERANCHOR_S2_URL` (`https://api.semanticscholar.org/graph/v1`). An answer is
untrusted JSON: bounded in size and depth, every field checked for its type.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypedDict

from paperanchor.discovery.atom import shown_message
from paperanchor.discovery.checks import whole_number
from paperanchor.errors import BadRequest, NotFound, PaperAnchorError, Unavailable, UpstreamError
from paperanchor.refs import PaperRef, parse_ref
from paperanchor.shapes import Citations, Citing

LIMIT_DEFAULT, LIMIT_MAX = 20, 100
PAPER_FIELDS = "title,externalIds,citationCount"
CITATION_FIELDS = "title,year,externalIds,url"
REFERENCE_FIELDS = "title,externalIds"
REFERENCES_MAX = 1000  # S2's largest page of references: one request per paper
# A title longer than this is no title (the longest in the corpus's bibliographies is ~300).
MAX_TITLE_CHARS = 1000
# A page of 100 citing papers with these four fields is about 25 kB; the recorded whole
# paper object (1,000 citations with every field, and an embedding) is 2.8 MB.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
_DOI = re.compile(r"^10\.\d{4,9}/\S{1,300}$")
_URL = re.compile(r"^https?://\S{1,2000}$")


def citations_limit(limit: int | str | None) -> int:
    """The checked `limit` of a citations call: 1-100, default 20."""
    return whole_number("limit", limit, LIMIT_DEFAULT, 1, LIMIT_MAX)


def paper_request(ref: PaperRef) -> tuple[str, dict[str, str]]:
    """The path and query of the paper lookup (`paper/arXiv:1706.03762`)."""
    return f"paper/arXiv:{_arxiv_id(ref)}", {"fields": PAPER_FIELDS}


def citations_request(ref: PaperRef, limit: int | str | None = None) -> tuple[str, dict[str, str]]:
    """The path and query of the first page of citing papers, `limit` of them (1-100)."""
    count = citations_limit(limit)
    return (
        f"paper/arXiv:{_arxiv_id(ref)}/citations",
        {"fields": CITATION_FIELDS, "offset": "0", "limit": str(count)},
    )


def references_request(ref: PaperRef) -> tuple[str, dict[str, str]]:
    """The path and query of the paper's references, their titles and external ids."""
    return (
        f"paper/arXiv:{_arxiv_id(ref)}/references",
        {"fields": REFERENCE_FIELDS, "offset": "0", "limit": str(REFERENCES_MAX)},
    )


class CitedPaper(TypedDict):
    """One reference S2 knows an arXiv id for."""

    title: str
    arxiv: str


class CitedPapers(TypedDict):
    """The references of `paper` that S2 knows arXiv ids for (kept a day in the store)."""

    paper: str
    cited: list[CitedPaper]


def cited_papers(ref: PaperRef, body: bytes) -> CitedPapers:
    """The references with a title and an arXiv id in S2's answer; anything else is skipped."""
    page = _object(body, "references page")
    data = page.get("data")
    if not isinstance(data, list):
        raise UpstreamError("Semantic Scholar's references page has no data list")
    cited: list[CitedPaper] = []
    for item in data[:REFERENCES_MAX]:
        paper = item.get("citedPaper") if isinstance(item, dict) else None
        if not isinstance(paper, dict):
            continue
        title = paper.get("title")
        external = paper.get("externalIds")
        listed = external.get("ArXiv") if isinstance(external, dict) else None
        arxiv = _arxiv(listed) if isinstance(listed, str) and len(listed) <= 64 else None
        if isinstance(title, str) and 0 < len(title) <= MAX_TITLE_CHARS and arxiv is not None:
            cited.append({"title": " ".join(title.split()), "arxiv": arxiv})
    return {"paper": ref.paper, "cited": cited}


def headers(api_key: str | None) -> dict[str, str]:
    """The request headers: S2's key when one is configured."""
    return {"x-api-key": api_key} if api_key else {}


def raise_for_status(
    status: int, body: bytes, what: str, *, retry_after: float | None = None
) -> None:
    """Map a non-2xx answer to our errors, with Semantic Scholar's own words.

    404 -> NotFound, 400 -> BadRequest, 401/403/429 -> Unavailable (our key or our rate, not
    the caller's request), anything else -> UpstreamError.
    """
    if 200 <= status < 300:
        return
    words = _words(body)
    detail = f"Semantic Scholar answered {status} for {what}" + (f": {words}" if words else "")
    error: PaperAnchorError
    if status == 404:
        error = NotFound(detail)
    elif status == 400:
        error = BadRequest(detail)
    elif status in (401, 403, 429):
        error = Unavailable(detail, retry_after=retry_after)
    else:
        error = UpstreamError(detail, retry_after=retry_after)
    raise error


def citations(
    ref: PaperRef, paper_body: bytes, page_body: bytes, limit: int | str | None = None
) -> Citations:
    """The `Citations` of `ref` from the paper lookup's answer and the citations page's."""
    count_limit = citations_limit(limit)
    paper = _object(paper_body, "paper")
    page = _object(page_body, "citations page")
    data = page.get("data")
    if not isinstance(data, list):
        raise UpstreamError("Semantic Scholar's citations page has no data list")
    listed = [_citing(item) for item in data[:count_limit]]
    citing = [item for item in listed if item is not None]
    count = paper.get("citationCount")
    if not isinstance(count, int) or not _is_count(count):
        offset = page.get("offset", 0)
        if "next" in page or not isinstance(offset, int) or not _is_count(offset):
            raise UpstreamError("Semantic Scholar gave no citation count for " + ref.paper)
        count = offset + len(data)  # the last page: every citing paper has been listed
    return {"paper": ref.paper, "count": count, "citations": citing}


# -- helpers ---------------------------------------------------------------------------------


def _arxiv_id(ref: PaperRef) -> str:
    if ref.is_local:
        raise BadRequest(f"{ref.paper} is a local document; Semantic Scholar knows arXiv papers")
    return ref.paper  # the bare id: S2 counts citations of the paper, not of a version


def _object(body: bytes, what: str) -> dict[str, Any]:
    if len(body) > MAX_ANSWER_BYTES:
        raise UpstreamError(
            f"Semantic Scholar's {what} is {len(body):,} bytes (more than {MAX_ANSWER_BYTES:,})"
        )
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        # RecursionError: "[[[[…" nested deeper than Python's stack; ValueError also covers
        # integers longer than Python converts (4,300 digits)
        raise UpstreamError(f"Semantic Scholar's {what} is not JSON") from None
    if not isinstance(value, dict):
        raise UpstreamError(f"Semantic Scholar's {what} is not a JSON object")
    return value


def _citing(item: object) -> Citing | None:
    paper = item.get("citingPaper") if isinstance(item, dict) else None
    if not isinstance(paper, dict):
        return None
    title = paper.get("title")
    year = paper.get("year")
    external = paper.get("externalIds")
    external = external if isinstance(external, dict) else {}
    return {
        "title": " ".join(title.split()) if isinstance(title, str) else "",
        "year": year
        if isinstance(year, int) and _is_count(year) and 1000 <= year <= 2999
        else None,
        "arxiv": _arxiv(external.get("ArXiv")),
        "doi": _matched(_DOI, external.get("DOI")),
        "url": _matched(_URL, paper.get("url")),
    }


def _arxiv(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        ref = parse_ref(value)
    except BadRequest:
        return None
    return None if ref.is_local else ref.paper


def _matched(pattern: re.Pattern[str], value: object) -> str | None:
    return value if isinstance(value, str) and pattern.match(value) else None


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _words(body: bytes) -> str:
    """S2's own message (`{"error": …}` or `{"message": …}`), else nothing."""
    try:
        value = json.loads(body[:65536])
    except (ValueError, RecursionError):
        return ""
    if isinstance(value, dict):
        for key in ("error", "message"):
            if isinstance(value.get(key), str):
                return shown_message(value[key])
    return ""
