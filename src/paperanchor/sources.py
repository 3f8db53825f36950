"""Where a paper comes from (contract §2): the local directory, arXiv HTML, ar5iv, then the PDF.

Only the configured bases are ever contacted, with the normalised id appended; redirects are
followed by hand and never off the upstream's host. Every request goes through `upstream.py`:
serialised per host with a minimum gap (across processes too, given a `RedisCoordination`),
retried with capped full-jitter backoff, failing fast for a host that is down, bounded in time,
in queue length and in decoded size. A page that does not end its document is a broken answer.

A source answers a page with what its address says of the version (`FetchedPage.found_version`)
or its word that it does not have the paper (`Absent`); the order they are asked in, parsing,
and settling the version are the loop of papers.py (`Papers._fetch`).
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import itertools
import logging
import os
import re
import stat
import time
import zlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Literal
from urllib.parse import quote, urljoin, urlsplit

import httpx

from paperanchor.coordination import Coordination
from paperanchor.errors import NotFound, PaperAnchorError, TooLarge, UpstreamError
from paperanchor.refs import PaperRef, parse_ref, shown
from paperanchor.settings import Settings
from paperanchor.upstream import ERROR_PAGE_BYTES, Answer, Unreachable, Upstream

log = logging.getLogger(__name__)

SourceName = Literal["local", "arxiv", "ar5iv", "pdf"]
PageKind = Literal["html", "pdf"]

MAX_REDIRECTS = 5
_ERROR_PAGE_BYTES = ERROR_PAGE_BYTES  # the name `_classify` has always used

# How far from its end a page must close its document (`</html>` or `</body>`). The corpus's
# pages close it within their last 20 bytes (one adds a template tag after `</html>`); a
# browser may append scripts. The check reads this much of the tail, never the whole page.
_END_BYTES = 16 * 1024
# A local file modified this recently may still change within its clock tick: its size and
# times are not trusted to name its content (git's "racily clean" files).
_RACY_S = 2.0
OFFLINE_HINT = (
    "; no network source can be reached: if this machine is offline, set "
    "PAPERANCHOR_OFFLINE=1 to serve only the cache and the local directory"
)
_REDIRECTS = {301, 302, 303, 307, 308}
_HTML_TYPES = {"text/html", "application/xhtml+xml", "application/xml", "text/xml"}
_NO_HTML = re.compile(rb"No\s+HTML\s+for", re.IGNORECASE)
# What a PDF may be served as: arXiv says application/pdf; a mirror or proxy may say less.
_PDF_TYPES = {"application/pdf", "application/x-pdf", "application/octet-stream"}
PDF_ACCEPT = "application/pdf"
# A whole PDF ends with %%EOF within this many bytes, as the PDF reader checks it
# (parse/pdf/extract.py `check_pdf`): a body without it was cut short.
_PDF_TAIL = 2048
_PDF_LABEL = "arXiv PDF"
_ABS_PATH = re.compile(r"(?:^|/)abs(?:/|$)")
_URL_VERSION = re.compile(r"v([1-9]\d*)(?:\.pdf)?/?$")


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """One paper's page as a source answered it, with what says which version it is; the
    version is settled when the page is parsed (papers.py `_resolved`)."""

    ref: PaperRef
    """The reference this page answers, as it was asked for."""
    html: bytes
    """The page's bytes: LaTeXML HTML, or a PDF when `kind` is "pdf"."""
    source: SourceName
    source_url: str
    found_version: int | None
    """The version where the page was found names: arXiv's final URL, a local file's name
    (`<id>vN.html`); None when it names none (ar5iv never does)."""
    base_url: str = ""
    """What relative links resolve against: the final URL, or the local file's /files/ URL."""
    fingerprint: str = ""
    """A local file's name, device, inode, size and times when they can name its bytes (see
    `local_fingerprint`); empty otherwise."""
    kind: PageKind = "html"

    @property
    def found(self) -> PaperRef:
        """The reference as where the page was found names it (its version, else none)."""
        return self.ref if self.ref.is_local else self.ref.with_version(self.found_version)


@dataclass(frozen=True, slots=True)
class Absent:
    """A source's answer that it does not have the paper."""

    source: str
    reason: str
    paper_exists: bool = False


Ask = Callable[[], Awaitable["FetchedPage | Absent"]]
"""One network source asked for a paper: its page, or its word that it does not have it."""

_Answer = Answer  # the name `_classify` has always used


class PaperMissing(NotFound):
    """No source has the paper: it does not exist anywhere (remembered for NOT_FOUND_TTL_S)."""


class Sources:
    """The sources in order, over one `Upstream` client shared by every request.

    With a `RedisCoordination`, each host's gap and pauses hold across every process sharing it.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        coordination: Coordination | None = None,
        upstream: Upstream | None = None,
        service_base: str | None = "",
    ) -> None:
        """Sources over `upstream` (runtime.py builds it), else over a client of their own;
        a local page's images are under `service_base`'s /files/ route (default the public
        URL), or beside its file (`file:` URLs) when there is no HTTP server (None: stdio)."""
        self.settings = settings
        self.service_base = settings.public_base if service_base == "" else service_base
        self.upstream = (
            upstream if upstream is not None else Upstream(settings, coordination=coordination)
        )

    @classmethod
    def over(cls, settings: Settings, upstream: Upstream) -> Sources:
        """The sources of `settings` over the upstream client runtime.py built."""
        return cls(settings, upstream=upstream)

    @property
    def requests_sent(self) -> int:
        """Upstream HTTP requests started by this instance (each retry and redirect counts)."""
        return self.upstream.requests_sent

    async def aclose(self) -> None:
        """Close the upstream client these sources fetch with."""
        await self.upstream.aclose()

    async def fetch(self, ref: PaperRef) -> FetchedPage:
        """The first page any source has for `ref`, unparsed; `NotFound` when none has one.

        Papers (papers.py) asks the sources itself, parsing each page before asking the next.
        """
        async with aclosing(self.local_pages(ref)) as pages:
            async for page in pages:
                return page
        absents: list[Absent] = []
        for ask in self.network(ref):
            answer = await ask()
            if isinstance(answer, FetchedPage):
                return answer
            absents.append(answer)
        raise self.missing(ref, absents, found=False, pdf_read=False)

    async def local_pages(self, ref: PaperRef) -> AsyncGenerator[FetchedPage, None]:
        """The local directory's files for `ref`, each read when the caller wants it (none
        without a directory; a local reference without one is `NotFound`)."""
        directory = self.settings.local_dir
        if directory is None:
            if ref.is_local:
                raise NotFound(
                    f"No local directory is configured for {ref.paper} (set PAPERANCHOR_LOCAL_DIR)"
                )
            return
        async for page in self._local(ref, directory):
            yield page

    def network(self, ref: PaperRef, only: str | None = None) -> list[Ask]:
        """The network sources configured, in the order they are asked: arXiv's HTML, ar5iv,
        then arXiv's PDF (`only`: that one source, "arxiv", "ar5iv" or "pdf"). `NotFound` where
        none may be asked: for a local reference (asked only when the local directory has no
        file for it) and offline."""
        settings = self.settings
        if ref.is_local:
            raise NotFound(
                # the folder's path is the server's business, not the client's
                f"Unknown local document {ref.paper}: no {ref.local_name}.html "
                f"or {ref.local_name}.pdf in the local directory"
            )
        if settings.offline:
            raise NotFound(
                f"{ref.idv} is not {self._where()}, and offline mode (PAPERANCHOR_OFFLINE=1) "
                "fetches nothing from arXiv or ar5iv"
            )
        asks: list[Ask] = []
        if settings.arxiv_html_url and only in (None, "arxiv"):
            asks.append(functools.partial(self._arxiv, ref, settings.arxiv_html_url))
        if settings.ar5iv_url and only in (None, "ar5iv"):
            asks.append(functools.partial(self._ar5iv, ref, settings.ar5iv_url))
        if settings.arxiv_pdf_url and only in (None, "pdf"):
            asks.append(functools.partial(self._pdf, ref, settings.arxiv_pdf_url))
        return asks

    def missing(
        self, ref: PaperRef, absents: list[Absent], *, found: bool, pdf_read: bool
    ) -> NotFound:
        """What to answer when no source had a page to serve: `absents` are the network
        sources' answers that they do not have it, `found` whether any page was found at all,
        `pdf_read` whether arXiv served a PDF (then the paper exists). `PaperMissing` when the
        paper is missing everywhere (it is remembered)."""
        if not absents and not found:
            return NotFound(
                f"{ref.idv} is not {self._where()}, and no network source is configured "
                "(PAPERANCHOR_ARXIV_HTML_URL, PAPERANCHOR_AR5IV_URL and "
                "PAPERANCHOR_ARXIV_PDF_URL are empty)"
            )
        for absent in absents:
            log.info("%s does not have %s: %s", absent.source, ref.idv, absent.reason)
        html = [absent for absent in absents if absent.source != _PDF_LABEL]
        no_pdf = len(html) < len(absents)
        # A PDF arXiv served is a paper arXiv has, whatever its HTML sources said.
        if pdf_read or any(absent.paper_exists for absent in html):
            names = " or ".join(absent.source for absent in html)
            detail = (
                f"No HTML rendering of {ref.idv} on {names}"
                if names
                else f"No HTML source is configured for {ref.idv}"
            )
            return PaperMissing(detail + (", and no PDF on arXiv" if no_pdf else ""))
        return PaperMissing(f"Unknown paper {ref.idv}")

    def _where(self) -> str:
        return "in the local directory or the cache" if self.settings.local_dir else "in the cache"

    # -- the local directory ------------------------------------------------------------------

    def local_fingerprint(self, ref: PaperRef) -> str | None:
        """The fingerprint of the local file `fetch` would read first for `ref` (blocking: stat).

        None when the local directory has no file for `ref`; "" when the file changed so
        recently that its size and times may not tell its next change apart.
        """
        directory = self.settings.local_dir
        if directory is None:
            return None
        for path, _ in _local_candidates(ref, directory):
            try:
                return _fingerprint(path.name, path.stat())
            except OSError:
                return ""
        return None

    async def _local(self, ref: PaperRef, directory: Path) -> AsyncGenerator[FetchedPage, None]:
        candidates = await asyncio.to_thread(_local_candidates, ref, directory)
        for path, named_version in candidates:
            html, fingerprint = await asyncio.to_thread(
                _read_local, path, self.settings.max_html_bytes
            )
            # Clients see the file's name, never the server's folder; the page's relative image
            # paths resolve to this server's /files/ route, which serves the local directory.
            files_url = (
                f"{self.service_base}/files/{quote(path.name)}"
                if self.service_base is not None
                else path.resolve().as_uri()
            )
            kind: PageKind = "pdf" if path.suffix == ".pdf" else "html"
            found = None if ref.is_local else named_version  # <id>.html: its furniture says
            yield FetchedPage(ref, html, "local", path.name, found, files_url, fingerprint, kind)

    # -- arXiv and ar5iv ------------------------------------------------------------------------

    async def _pdf(self, ref: PaperRef, base: str) -> FetchedPage | Absent:
        """arXiv's PDF of `ref` (the version asked for, else the latest), when it has one."""
        try:
            answer = await self._get_following(
                f"{base}/{ref.idv}", ref, _PDF_LABEL, broken=_unended_pdf, accept=PDF_ACCEPT
            )
        except TooLarge:
            # the same cap as a page's: one setting bounds what one fetch may hold in memory
            limit = self.settings.max_html_bytes
            raise TooLarge(
                f"arXiv's PDF of {ref.idv} is larger than PAPERANCHOR_MAX_HTML_MB ({limit} bytes)"
            ) from None
        if isinstance(answer, Absent):
            return answer
        absent = _classify_pdf(answer, ref, _PDF_LABEL)
        if absent is not None:
            return absent
        # The final URL's version, else the PDF's own margin stamp (papers.py reads it).
        return _at_final_url(answer, ref, "pdf", "pdf")

    async def _arxiv(self, ref: PaperRef, base: str) -> FetchedPage | Absent:
        answer = await self._get_following(f"{base}/{ref.idv}", ref, "arXiv")
        if isinstance(answer, Absent):
            return answer
        absent = _classify(answer, ref, "arXiv")
        if absent is not None:
            return absent
        return _at_final_url(answer, ref, "arxiv")

    async def _ar5iv(self, ref: PaperRef, base: str) -> FetchedPage | Absent:
        # ar5iv keeps one rendering per paper: ask for the bare id, and never report the
        # version asked for as confirmed (contract §2).
        answer = await self._get_following(f"{base}/{ref.paper}", ref, "ar5iv")
        if isinstance(answer, Absent):
            return answer
        absent = _classify(answer, ref, "ar5iv")
        if absent is not None:
            return absent
        return FetchedPage(ref, answer.body, "ar5iv", answer.url, None, answer.url)

    async def _get_following(
        self,
        url: str,
        ref: PaperRef,
        label: str,
        *,
        broken: Callable[[bytes], str | None] | None = None,
        accept: str | None = None,
    ) -> _Answer | Absent:
        origin = _origin(url)
        for _ in range(MAX_REDIRECTS + 1):
            answer = await self._get(url, ref, label, broken=broken or _unended, accept=accept)
            if answer.status not in _REDIRECTS:
                return answer
            location = answer.headers.get("location")
            if not location:
                raise UpstreamError(f"{label} redirected {ref.idv} without a Location")
            target = _redirect_target(url, location, ref, label)
            # A redirect to an abstract page means "no HTML here"; it is recognised before the
            # host is checked, so that ar5iv's redirect to arxiv.org/abs is a miss, not an error.
            if _ABS_PATH.search(urlsplit(target).path):
                return Absent(label, f"redirected to the abstract page {shown(target)}")
            if _origin(target) != origin:
                raise UpstreamError(
                    f"{label} redirected {ref.idv} off its host to {shown(target)}; not followed"
                )
            url = target
        raise UpstreamError(f"{label} redirected {ref.idv} more than {MAX_REDIRECTS} times")

    async def _get(
        self,
        url: str,
        ref: PaperRef,
        label: str,
        *,
        broken: Callable[[bytes], str | None],
        accept: str | None = None,
    ) -> _Answer:
        """One polite GET; a 200 page must be whole (`broken`: an HTML page ends its document,
        contract §2; a PDF ends with %%EOF)."""
        try:
            return await self.upstream.get(
                url,
                label=label,
                subject=ref.idv,
                limit=self.settings.max_html_bytes,
                error_limit=_ERROR_PAGE_BYTES,
                broken=broken,
                headers={"Accept": accept} if accept else None,
            )
        except Unreachable as exc:
            if await self._every_source_unreachable(url):
                raise Unreachable(exc.detail + OFFLINE_HINT, retry_after=exc.retry_after) from None
            raise

    async def _every_source_unreachable(self, failed: str) -> bool:
        """Whether no configured network source can be reached (`failed`'s host is down)."""
        others = {
            _origin(base): base
            for base in (
                self.settings.arxiv_html_url,
                self.settings.ar5iv_url,
                self.settings.arxiv_pdf_url,
            )
            if base and _origin(base) != _origin(failed)
        }
        for base in others.values():
            if await self.upstream.reachable(base):
                return False
        return True


# -- pure helpers ------------------------------------------------------------------------------


def version_in_url(url: str, paper: str) -> int | None:
    """The version in a final URL such as `…/html/1706.03762v7/` or `…/pdf/1706.03762v7.pdf`,
    for this paper only."""
    # one pattern for every paper (a pattern naming the paper was compiled anew for each
    # paper, 0.1 ms of a cold request): the path's last `v` with digits, after `/<paper>`
    path = urlsplit(url).path
    match = _URL_VERSION.search(path)
    if match is None or not path[: match.start()].endswith(f"/{paper}"):
        return None
    return int(match[1])


def _at_final_url(
    answer: _Answer, ref: PaperRef, source: SourceName, kind: PageKind = "html"
) -> FetchedPage:
    """arXiv's answer as a page, with the version its final URL names (if any)."""
    found = version_in_url(answer.url, ref.paper)
    return FetchedPage(ref, answer.body, source, answer.url, found, answer.url, kind=kind)


def _classify(answer: _Answer, ref: PaperRef, label: str) -> Absent | None:
    """None when the answer is a paper; `Absent` when it says "not here"; raises on garbage."""
    body = answer.body
    if answer.status in {404, 410}:
        exists = bool(_NO_HTML.search(body))
        return Absent(label, f"{answer.status}{' No HTML' if exists else ''}", exists)
    if answer.status != 200:
        raise UpstreamError(f"{label} answered {answer.status} for {ref.idv}")
    content_type = answer.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type and content_type not in _HTML_TYPES:
        raise UpstreamError(f"{label} answered {ref.idv} with {content_type}, not HTML")
    if not body.strip():
        return Absent(label, "an empty page")
    if b"ltx_document" in body:
        return None
    if _NO_HTML.search(body[:_ERROR_PAGE_BYTES]):
        return Absent(label, "a No HTML page", paper_exists=True)
    if not _looks_like_html(body):
        raise UpstreamError(f"{label} answered {ref.idv} with bytes that are not HTML")
    return Absent(label, "an HTML page that is not a LaTeXML document")


def _classify_pdf(answer: _Answer, ref: PaperRef, label: str) -> Absent | None:
    """None when the answer is a PDF; `Absent` when it says "not here" (arXiv's 404 for an
    unknown or withdrawn paper, an HTML page in place of the PDF); raises on garbage."""
    body = answer.body
    if answer.status in {404, 410}:
        return Absent(label, str(answer.status))
    if answer.status != 200:
        raise UpstreamError(f"{label} answered {answer.status} for {ref.idv}")
    if not body.strip():
        return Absent(label, "an empty answer")
    pdf = _looks_like_pdf(body)
    if not pdf and _looks_like_html(body):
        return Absent(label, "an HTML page, not a PDF")
    content_type = answer.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type and content_type not in _PDF_TYPES:
        raise UpstreamError(f"{label} answered {ref.idv} with {shown(content_type)}, not a PDF")
    if not pdf:
        raise UpstreamError(f"{label} answered {ref.idv} with bytes that are not a PDF")
    return None


def _looks_like_pdf(body: bytes) -> bool:
    # as the PDF reader looks for it: the header within the first KiB
    return b"%PDF-" in body[:1024]


def _unended_pdf(body: bytes) -> str | None:
    """Why a PDF is not whole: it does not end with %%EOF (a body that stopped early)."""
    if not _looks_like_pdf(body) or b"%%EOF" in body[-_PDF_TAIL:]:
        return None  # not a PDF at all (`_classify_pdf` says so), or whole
    return f"the PDF stops before its end ({len(body)} bytes, no %%EOF)"


def _looks_like_html(body: bytes) -> bool:
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html", b"<?xml")) or b"<html" in head[:1024]


def _local_candidates(ref: PaperRef, directory: Path) -> list[tuple[Path, int | None]]:
    """Files that may hold `ref`, in order, each with the version its name states: the HTML
    files first, then the PDFs (contract §2: a PDF is read only when no HTML is better)."""
    stems: list[tuple[str, int | None]]
    if ref.local_name is not None:
        stems = [(ref.local_name, None)]
    elif ref.version is not None:
        stems = [(ref.file_stem, ref.version), (ref.bare_file_stem, None)]
    else:
        stems = [(ref.bare_file_stem, None)]
        latest = _latest_local_version(ref.bare_file_stem, directory)
        if latest is not None:
            stems.append((f"{ref.bare_file_stem}v{latest}", latest))
    found = []
    for suffixes in ((".html", ".html.gz"), (".pdf",)):
        for stem, named_version in stems:
            for suffix in suffixes:
                path = directory / f"{stem}{suffix}"
                if path.is_file():
                    found.append((path, named_version))
                    break
    return found


def _latest_local_version(stem: str, directory: Path) -> int | None:
    pattern = re.compile(rf"{re.escape(stem)}v([1-9]\d*)\.(?:html(?:\.gz)?|pdf)")
    try:
        names = [entry.name for entry in directory.iterdir()]
    except OSError:
        return None
    versions = [int(match[1]) for name in names if (match := pattern.fullmatch(name))]
    return max(versions, default=None)


def _read_local(path: Path, limit: int) -> tuple[bytes, str]:
    """A local file's bytes (decompressed for `.gz`) and the fingerprint of what was read."""
    name = path.name  # never the folder: its path is the server's business, not the client's
    try:
        with path.open("rb") as raw:
            fingerprint = _fingerprint(name, os.fstat(raw.fileno()))
            if path.suffix == ".gz":
                with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
                    html = stream.read(limit + 1)
            else:
                html = raw.read(limit + 1)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise UpstreamError(f"The local file {name} is not a readable gzip file ({exc})") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UpstreamError(f"Cannot read the local file {name}: {reason}") from None
    if len(html) > limit:
        raise TooLarge(f"{name} is larger than PAPERANCHOR_MAX_HTML_MB ({limit} bytes)")
    return html, fingerprint


def _fingerprint(name: str, status: os.stat_result) -> str:
    """What names a file's bytes without reading them; "" while it may still change unseen."""
    if not stat.S_ISREG(status.st_mode):
        return ""
    changed = max(status.st_mtime_ns, status.st_ctime_ns) / 1e9
    if time.time() - changed < _RACY_S:
        return ""
    return (
        f"{name}:{status.st_dev}:{status.st_ino}:{status.st_size}:"
        f"{status.st_mtime_ns}:{status.st_ctime_ns}"
    )


def _unended(body: bytes) -> str | None:
    """Why an HTML page is not whole: it does not close its document near its end."""
    if not _looks_like_html(body):
        return None  # not HTML at all: `_classify` says so
    tail = body[-_END_BYTES:].lower()
    if b"</html" in tail or b"</body" in tail:
        return None
    return f"the page stops before its end ({len(body)} bytes, no </html> or </body>)"


def _redirect_target(url: str, location: str, ref: PaperRef, label: str) -> str:
    """The absolute URL a `Location` names; `UpstreamError` for one that is not a URL."""
    try:
        target = urljoin(url, location)
        parsed = httpx.URL(target)
    except (ValueError, httpx.InvalidURL):
        parsed = None
    # A backslash is a slash to browsers and to nothing else: such a Location is not followed.
    usable = parsed is not None and parsed.scheme in {"http", "https"} and bool(parsed.host)
    if not usable or "\\" in location:
        raise UpstreamError(
            f"{label} redirected {ref.idv} to an address that is not a URL: {shown(location)}"
        )
    return target


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


# -- what the local directory holds, for the landing page -------------------------------------

# The landing page lists the folder by name: at most this many files, each title read from
# the first bytes of its file (every page of the corpus has its <title> in its first 300), out
# of at most SCANNED_LOCAL_ENTRIES entries of the folder, so that a huge folder costs no more.
LISTED_LOCAL_FILES = 200
SCANNED_LOCAL_ENTRIES = 10_000
_TITLE_PREFIX_BYTES = 64 * 1024
_TITLE_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class LocalFile:
    """A paper of the local directory: the reference that opens it, its file and its title."""

    reference: str
    name: str
    title: str | None


def local_files(directory: Path, limit: int = LISTED_LOCAL_FILES) -> tuple[list[LocalFile], int]:
    """The papers of `directory` that a reference can open (contract §2's names), in name order,
    at most `limit` of them, and how many more there are (blocking: call it in a thread)."""
    try:
        entries = itertools.islice(directory.iterdir(), SCANNED_LOCAL_ENTRIES)
        names = sorted(
            entry.name
            for entry in entries
            if entry.name.endswith((".html", ".html.gz", ".pdf")) and entry.is_file()
        )
    except OSError:
        return [], 0
    pages = {_page_stem(name) for name in names if not name.endswith(".pdf")}
    unlisted = _unlisted(directory)
    names = [name for name in names if name not in unlisted]
    found: list[LocalFile] = []
    skipped = 0
    for name in names:
        pdf = name.endswith(".pdf")
        stem = name.removesuffix(".pdf") if pdf else _page_stem(name)
        if pdf and stem in pages:
            continue  # its reference opens the HTML file beside it
        try:
            ref = parse_ref(stem.replace("_", "/"))
            reference = ref.idv if not ref.is_local else f"local/{stem}"
        except PaperAnchorError:
            try:
                reference = parse_ref(f"local/{stem}").paper
            except PaperAnchorError:
                continue  # no reference names this file
        if len(found) >= limit:
            skipped += 1
            continue
        # a PDF's title is in its text layer: only a parse finds it
        title = None if pdf else _local_title(directory / name)
        found.append(LocalFile(reference, name, title))
    return found, skipped


def _page_stem(name: str) -> str:
    return name.removesuffix(".gz").removesuffix(".html")


def _local_title(path: Path) -> str | None:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as stream:
                head = stream.read(_TITLE_PREFIX_BYTES)
        else:
            with path.open("rb") as stream:
                head = stream.read(_TITLE_PREFIX_BYTES)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    # the first <title …>, read as HTML reads it (text up to </title>, `<` included), bounded
    lowered = head.lower()
    start = lowered.find(b"<title")
    opened = lowered.find(b">", start, start + 200) if start >= 0 else -1
    if opened < 0:
        return None
    end = lowered.find(b"</title", opened, opened + 1 + _TITLE_CHARS)
    raw = head[opened + 1 : end if end >= 0 else opened + 1 + _TITLE_CHARS]
    title = " ".join(unescape(raw.decode("utf-8", "replace")).split())
    # ar5iv's and arXiv's listings' <title> opens with the id: `[1808.08002] Polynomial …`
    title = _ID_PREFIX.sub("", title)
    return title[:300] or None


_ID_PREFIX = re.compile(
    r"^\[(?:\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?/\d{7})(?:v\d{1,4})?\]\s+", re.ASCII
)
# A file of the local directory that names pages to leave off the landing page, one file name a
# line (`#` starts a comment): test fixtures and drafts open by reference, not as samples.
UNLISTED = ".unlisted"
_UNLISTED_BYTES = 64 * 1024


def _unlisted(directory: Path) -> frozenset[str]:
    """The file names the directory's UNLISTED file names (none when it has none)."""
    try:
        with (directory / UNLISTED).open("rb") as stream:
            raw = stream.read(_UNLISTED_BYTES)
    except OSError:
        return frozenset()
    lines = raw.decode("utf-8", "replace").splitlines()
    return frozenset(name for line in lines if (name := line.split("#", 1)[0].strip()))
