"""Paper references (SPEC §1): parse every accepted spelling into one normalised form."""

from __future__ import annotations

import re
from dataclasses import dataclass

from paperanchor.errors import BadRequest

_MODERN = r"(?P<yymm>\d{4})\.(?P<num>\d{4,5})"
_LEGACY = r"(?P<archive>[a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?)/(?P<legnum>\d{7})"
_ID = rf"(?:{_MODERN}|{_LEGACY})(?:v(?P<version>[1-9]\d{{0,3}}))?"
# re.ASCII: without it \d takes any script's digits ("１７０６.０３７６２" would be an id) and
# [a-z] under IGNORECASE takes "ſ" and the Kelvin sign; an id is ASCII (a bad-input test found it).
_BARE = re.compile(rf"^(?:arxiv:)?{_ID}$", re.IGNORECASE | re.ASCII)
_URL = re.compile(
    r"^https?://(?:www\.|export\.)?"
    r"(?:arxiv\.org/(?:abs|pdf|html)|ar5iv\.labs\.arxiv\.org/(?:abs|html)|ar5iv\.org/(?:abs|html))"
    rf"/{_ID}(?:\.pdf)?/?(?:[?#].*)?$",
    re.ASCII,
)
_LOCAL = re.compile(r"^local/(?P<name>[A-Za-z0-9][A-Za-z0-9._-]{0,199})$")
_MAX_SHOWN = 80


@dataclass(frozen=True, slots=True)
class PaperRef:
    """A normalised reference: an arXiv id with an optional version, or a local document."""

    paper_id: str
    version: int | None = None
    local_name: str | None = None

    @property
    def is_local(self) -> bool:
        return self.local_name is not None

    @property
    def paper(self) -> str:
        """The id without version (`1706.03762`), or `local/<name>`."""
        return self.paper_id

    @property
    def idv(self) -> str:
        """The id with its version when known, else the bare id."""
        return f"{self.paper_id}v{self.version}" if self.version is not None else self.paper_id

    @property
    def file_stem(self) -> str:
        """The idv as a file name: legacy ids write `/` as `_`."""
        if self.local_name is not None:
            return self.local_name
        return self.idv.replace("/", "_")

    @property
    def bare_file_stem(self) -> str:
        return self.paper_id.replace("/", "_")

    def with_version(self, version: int | None) -> PaperRef:
        return PaperRef(self.paper_id, version, self.local_name)


def shown(text: str) -> str:
    """Quote user input for an error detail, shortened and with control characters escaped."""
    clipped = text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"
    return repr(clipped)[1:-1] if any(ord(c) < 32 or ord(c) == 127 for c in clipped) else clipped


def parse_ref(text: str) -> PaperRef:
    """Parse any spelling of SPEC §1; anything else is `bad-request` naming what was received."""
    if not isinstance(text, str):
        raise BadRequest(f"Not a paper reference: {text!r}")
    raw = text.strip()
    local = _LOCAL.match(raw)
    if local:
        name = local["name"]
        if ".." in name:
            raise BadRequest(f'Not a paper reference: "{shown(text)}"')
        return PaperRef(f"local/{name}", None, name)
    match = _BARE.match(raw) or _URL.match(raw)
    if not match:
        raise BadRequest(
            f'Not a paper reference: "{shown(text)}" (expected an arXiv id such as 1706.03762, '
            "hep-th/9901001v2, an arxiv.org or ar5iv URL, or local/<name>)"
        )
    version = int(match["version"]) if match["version"] else None
    if match["yymm"]:
        yymm, num = match["yymm"], match["num"]
        month = int(yymm[2:])
        digits = 5 if yymm >= "1501" else 4
        if not 1 <= month <= 12 or len(num) != digits:
            raise BadRequest(f'Not a paper reference: "{shown(text)}" (no arXiv id has that form)')
        return PaperRef(f"{yymm}.{num}", version)
    archive = match["archive"]
    head, _, subject = archive.partition(".")
    canonical = head.lower() + (f".{subject.upper()}" if subject else "")
    return PaperRef(f"{canonical}/{match['legnum']}", version)


# The paths of arXiv's own pages: a reader who swaps arxiv.org for this server's host types them.
ARXIV_PAGE_PATHS = ("abs/", "html/", "pdf/")


def arxiv_page_path(path: str) -> PaperRef | None:
    """The paper of an arXiv page's path (`abs/1706.03762v7`, `pdf/1706.03762v7.pdf`,
    `html/hep-th/9901001/`), as its URL on arxiv.org names it; None for any other path."""
    if not path.startswith(ARXIV_PAGE_PATHS):
        return None
    try:
        return parse_ref(f"https://arxiv.org/{path}")
    except BadRequest:
        return None


def permalink(paper: str, idv: str, source: str, anchor: str | None) -> str | None:
    """The public address of a paper's node (SPEC §4 cite's `permalink`): arXiv's page of the
    version, ar5iv's rendering, the abstract page for a PDF; None for a local document. Always
    these public addresses, whatever upstream bases are configured: a mirror is not citable."""
    if paper.startswith("local/"):
        return None
    fragment = f"#{anchor}" if anchor else ""
    if source == "pdf":
        return f"https://arxiv.org/abs/{idv}"
    if source == "ar5iv":
        return f"https://ar5iv.labs.arxiv.org/html/{paper}{fragment}"
    # a version that is not known cannot be pinned: arXiv's latest rendering is the best there is
    return f"https://arxiv.org/html/{idv}{fragment}"
