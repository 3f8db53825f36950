"""Which papers a public server may serve the text of (SPEC §12), from the licence's name.

arXiv's terms let anyone store and serve its metadata (CC0), not the e-prints: a paper is
served whole only under a Creative Commons licence or in the public domain. arXiv's own
non-exclusive licence lets arXiv distribute the paper, nobody else; a licence that is not known
is treated as that one.

    name_of_url("http://creativecommons.org/licenses/by/4.0/")   # "CC BY 4.0"
    abs_page_licence(body_of_arxiv_org_abs_page)                  # "arXiv.org perpetual …"
    allows_serving("CC BY-SA 4.0")                                # True

Pure: no I/O. The listing's bytes are bounded before any pattern looks at them.
"""

from __future__ import annotations

import html
import re

NON_EXCLUSIVE = "arXiv.org perpetual non-exclusive license"
UNKNOWN = "unknown"

# An abs page is about 40 kB; its licence link comes before the end of its first 200 kB.
ABS_PAGE_BYTES = 200_000
_LICENCE_LINK = re.compile(
    rb"<a\b[^>]{0,400}?href\s*=\s*[\"']([^\"'<>]{1,300})[\"'][^>]{0,400}>", re.IGNORECASE
)
_RIGHTS = re.compile(rb"Rights to this article|abs-license", re.IGNORECASE)
# How far from the box's mark its link may be: the link's tag is under 500 bytes.
_WINDOW = 600
_CC_URL = re.compile(
    r"^https?://(?:www\.)?creativecommons\.org/(?:licenses/(?P<kind>[a-z-]{2,12})/(?P<v>[\d.]{1,5})"
    r"|publicdomain/(?P<pd>zero|mark)/(?P<pdv>[\d.]{1,5}))/?$",
    re.IGNORECASE | re.ASCII,
)
_ARXIV_URL = re.compile(
    r"^https?://(?:www\.)?arxiv\.org/licenses/(?P<kind>[a-z-]{1,40})/[\d.]{1,5}/?$",
    re.IGNORECASE | re.ASCII,
)
# The names arXiv's HTML pages print in their furniture (`License: CC BY 4.0`, `CC Zero`,
# `arXiv.org perpetual non-exclusive license`), and the same licences as URLs.
_OPEN = re.compile(r"^(?:cc[\s-]|cc0\b|cc zero\b|creative commons\b|public domain\b)", re.I)


def name_of_url(url: str) -> str | None:
    """The licence a URL names (`CC BY 4.0`, `CC Zero`, arXiv's non-exclusive one); None for
    a URL that names no licence we know."""
    url = url.strip()
    cc = _CC_URL.match(url)
    if cc is not None:
        if cc["pd"] is not None:
            return "CC Zero" if cc["pd"].lower() == "zero" else "Public Domain"
        return f"CC {cc['kind'].upper()} {cc['v']}"
    arxiv = _ARXIV_URL.match(url)
    if arxiv is not None:
        kind = arxiv["kind"].lower()
        if kind.startswith("nonexclusive"):
            return NON_EXCLUSIVE
        if kind in ("assumed-1991-2003",):
            return "arXiv.org assumed license (1991-2003)"
        return f"arXiv.org {kind} license"
    return None


def abs_page_licence(body: bytes) -> str | None:
    """The licence an arxiv.org/abs page links to (`<a href=… title="Rights to this article">`
    in `div.abs-license`); None when the page links to none."""
    head = body[:ABS_PAGE_BYTES]
    # from the few marks of the licence's box, not from every link: a page of unclosed `<a`
    # would make every position a start
    for mark in _RIGHTS.finditer(head):
        start = max(0, mark.start() - _WINDOW)
        window = head[start : mark.end() + _WINDOW]
        for link in _LICENCE_LINK.finditer(window):
            if start + link.end() <= mark.start():
                continue  # a link before the box, not its own
            named = name_of_url(html.unescape(link.group(1).decode("ascii", "replace")))
            if named is not None:
                return named
    return None


def allows_serving(licence: str | None) -> bool:
    """Whether a public server may serve the paper's text: a Creative Commons licence or the
    public domain, by name or by URL; arXiv's non-exclusive licence and unknown ones not."""
    if licence is None:
        return False
    name = name_of_url(licence) or " ".join(licence.split())
    return bool(_OPEN.match(name)) and "non-exclusive" not in name.lower()
