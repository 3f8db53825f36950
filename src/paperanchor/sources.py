"""Where a paper comes from (SPEC §2): the local directory, arXiv HTML, then ar5iv.

Only the configured bases are ever contacted, with the normalised id appended; redirects are
followed by hand and never off the upstream's host. Requests to one host are serialised with a
minimum gap (across processes too, given a `Shared` over Redis), retried with capped full-jitter
backoff, bounded in time and in size.
"""

from __future__ import annotations

import asyncio
import email.utils
import gzip
import itertools
import logging
import random
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AsyncExitStack, aclosing, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import unescape
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Literal
from urllib.parse import quote, urljoin, urlsplit

import httpx

from paperanchor.errors import NotFound, PaperAnchorError, TooLarge, Unavailable, UpstreamError
from paperanchor.refs import PaperRef, parse_ref
from paperanchor.settings import Settings
from paperanchor.shared import HostPaused, Shared

log = logging.getLogger(__name__)

SourceName = Literal["local", "arxiv", "ar5iv"]

try:
    _VERSION = version("paperanchor")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    _VERSION = "0"

USER_AGENT = (
    f"paperanchor/{_VERSION} (reads LaTeXML HTML renderings of arXiv papers one section at a "
    f"time; polite: one request per host at a time; python-httpx/{httpx.__version__})"
)

MAX_REDIRECTS = 5
# Enough of a 404 page to recognise arXiv's "No HTML for …"; the rest is not needed.
_ERROR_PAGE_BYTES = 256 * 1024
_REDIRECTS = {301, 302, 303, 307, 308}
_HTML_TYPES = {"text/html", "application/xhtml+xml", "application/xml", "text/xml"}
_NO_HTML = re.compile(rb"No\s+HTML\s+for", re.IGNORECASE)
_ABS_PATH = re.compile(r"(?:^|/)abs(?:/|$)")


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """One paper's HTML as a source answered it, with the version resolved where possible."""

    ref: PaperRef
    html: bytes
    source: SourceName
    source_url: str
    version_confirmed: bool
    base_url: str = ""
    """What relative links resolve against: the final URL, or the local file's /files/ URL."""
    asked: PaperRef | None = None
    """The reference this page answers, as it was asked for."""


@dataclass(frozen=True, slots=True)
class _Absent:
    """A source's answer that it does not have the paper."""

    source: str
    reason: str
    paper_exists: bool = False


@dataclass(slots=True)
class _Answer:
    url: str
    status: int
    headers: httpx.Headers
    body: bytes = b""


class Sources:
    """The three sources in order, over one HTTP client shared by every request.

    With `shared`, each host's gap and pauses hold across every process that shares its Redis.
    """

    def __init__(self, settings: Settings, *, shared: Shared | None = None) -> None:
        self.settings = settings
        self.shared = shared
        self._client = httpx.AsyncClient(
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
            },
            timeout=httpx.Timeout(settings.timeout_s),
            follow_redirects=False,
        )
        self._gates: dict[tuple[str, str], _HostGate] = {}
        self.requests_sent = 0
        """Upstream HTTP requests started by this instance (each retry and redirect counts)."""

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(self, ref: PaperRef) -> FetchedPage:
        """The first source's page for `ref`; `NotFound` when no source has one."""
        async with aclosing(self.pages(ref)) as pages:
            async for page in pages:
                return page
        raise AssertionError("pages() raises NotFound when it has nothing")  # pragma: no cover

    async def pages(self, ref: PaperRef) -> AsyncGenerator[FetchedPage, None]:
        """Each source's page for `ref`, in order, asked for only when the caller wants the
        next one (it has parsed the last and found it another version, or a failed
        rendering); `NotFound` at the end when no source had a page at all.

        A page's version here comes from where it was found (the final URL, a local file's
        name); the caller reads the page's furniture for the rest (library.py).
        """
        settings = self.settings
        if ref.is_local:
            if settings.local_dir is None:
                raise NotFound(
                    f"No local directory is configured for {ref.paper} (set PAPERANCHOR_LOCAL_DIR)"
                )
            found = False
            async for page in self._local(ref, settings.local_dir):
                found = True
                yield page
            if not found:
                raise NotFound(
                    # the folder's path is the server's business, not the client's
                    f"Unknown local document {ref.paper}: no {ref.local_name}.html "
                    "in the local directory"
                )
            return
        yielded = False
        if settings.local_dir is not None:
            async for page in self._local(ref, settings.local_dir):
                yielded = True
                yield page
        where = "in the local directory or the cache" if settings.local_dir else "in the cache"
        if settings.offline:
            raise NotFound(
                f"{ref.idv} is not {where}, and offline mode (PAPERANCHOR_OFFLINE=1) "
                "fetches nothing from arXiv or ar5iv"
            )
        absents: list[_Absent] = []
        if settings.arxiv_html_url:
            answer = await self._arxiv(ref, settings.arxiv_html_url)
            if isinstance(answer, FetchedPage):
                yielded = True
                yield answer
            else:
                absents.append(answer)
        if settings.ar5iv_url:
            answer = await self._ar5iv(ref, settings.ar5iv_url)
            if isinstance(answer, FetchedPage):
                yielded = True
                yield answer
            else:
                absents.append(answer)
        if not absents and not yielded:
            raise NotFound(
                f"{ref.idv} is not {where}, and no network source is configured "
                "(PAPERANCHOR_ARXIV_HTML_URL and PAPERANCHOR_AR5IV_URL are empty)"
            )
        for absent in absents:
            log.info("%s has no HTML for %s: %s", absent.source, ref.idv, absent.reason)
        if any(absent.paper_exists for absent in absents):
            names = " or ".join(absent.source for absent in absents)
            raise NotFound(f"No HTML rendering of {ref.idv} on {names}")
        raise NotFound(f"Unknown paper {ref.idv}")

    # -- the local directory ------------------------------------------------------------------

    async def _local(self, ref: PaperRef, directory: Path) -> AsyncGenerator[FetchedPage, None]:
        for path, named_version in _local_candidates(ref, directory):
            html = await asyncio.to_thread(_read_local, path, self.settings.max_html_bytes)
            if ref.is_local:
                resolved, confirmed = ref, False
            elif named_version is not None:
                resolved, confirmed = ref.with_version(named_version), True
            else:
                # <id>.html: which version it holds, its furniture says (library.py)
                resolved, confirmed = ref.with_version(None), False
            # Clients see the file's name, never the server's folder; the page's relative image
            # paths resolve to this server's /files/ route, which serves the local directory.
            files_url = f"{self.settings.public_base}/files/{quote(path.name)}"
            yield FetchedPage(resolved, html, "local", path.name, confirmed, files_url, ref)

    # -- arXiv and ar5iv ------------------------------------------------------------------------

    async def _arxiv(self, ref: PaperRef, base: str) -> FetchedPage | _Absent:
        answer = await self._get_following(f"{base}/{ref.idv}", ref, "arXiv")
        if isinstance(answer, _Absent):
            return answer
        absent = _classify(answer, ref, "arXiv")
        if absent is not None:
            return absent
        found = version_in_url(answer.url, ref.paper)
        return FetchedPage(
            ref.with_version(found),
            answer.body,
            "arxiv",
            answer.url,
            found is not None,
            answer.url,
            ref,
        )

    async def _ar5iv(self, ref: PaperRef, base: str) -> FetchedPage | _Absent:
        # ar5iv keeps one rendering per paper: ask for the bare id, and never report the
        # version asked for as confirmed (SPEC §2).
        answer = await self._get_following(f"{base}/{ref.paper}", ref, "ar5iv")
        if isinstance(answer, _Absent):
            return answer
        absent = _classify(answer, ref, "ar5iv")
        if absent is not None:
            return absent
        return FetchedPage(
            ref.with_version(None), answer.body, "ar5iv", answer.url, False, answer.url, ref
        )

    async def _get_following(self, url: str, ref: PaperRef, label: str) -> _Answer | _Absent:
        origin = _origin(url)
        for _ in range(MAX_REDIRECTS + 1):
            answer = await self._get(url, ref, label)
            if answer.status not in _REDIRECTS:
                return answer
            location = answer.headers.get("location")
            if not location:
                raise UpstreamError(f"{label} redirected {ref.idv} without a Location")
            target = urljoin(url, location)
            # A redirect to an abstract page means "no HTML here"; it is recognised before the
            # host is checked, so that ar5iv's redirect to arxiv.org/abs is a miss, not an error.
            if _ABS_PATH.search(urlsplit(target).path):
                return _Absent(label, f"redirected to the abstract page {target}")
            if _origin(target) != origin:
                raise UpstreamError(
                    f"{label} redirected {ref.idv} off its host to {target}; not followed"
                )
            url = target
        raise UpstreamError(f"{label} redirected {ref.idv} more than {MAX_REDIRECTS} times")

    async def _get(self, url: str, ref: PaperRef, label: str) -> _Answer:
        """One GET, retried on 429, 5xx and transport errors; politeness applied per attempt."""
        settings = self.settings
        gate = self._gate(url)
        attempts = settings.max_retries + 1
        failure = ""
        retry_after: float | None = None
        broken = False
        for attempt in range(attempts):
            retry_after = None
            try:
                async with gate.turn(label, ref):
                    self.requests_sent += 1
                    async with asyncio.timeout(settings.timeout_s):
                        answer = await self._get_once(url, ref, label)
                    if answer.status == 429 or answer.status >= 500:
                        retry_after = parse_retry_after(answer.headers.get("retry-after"))
                    if retry_after is not None:
                        # Within the turn, so that no request to the host, of this process or
                        # another, goes ahead before the pause is recorded. The host asked:
                        # every request to it waits; longer than the cap, they fail fast.
                        if retry_after > settings.backoff_cap_s:
                            await gate.block(retry_after)
                        else:
                            await gate.defer(retry_after)
            except TimeoutError:
                failure, broken = f"no complete answer within {settings.timeout_s:g} s", False
            except httpx.ProtocolError as exc:
                failure, broken = f"a broken response ({_describe(exc)})", True
            except httpx.TransportError as exc:
                failure, broken = f"unreachable ({_describe(exc)})", False
            else:
                if answer.status != 429 and answer.status < 500:
                    return answer
                failure, broken = f"status {answer.status}", False
            if retry_after is not None and retry_after > settings.backoff_cap_s:
                # Asked to stay away longer than we are willing to wait: stop now (the gate
                # makes every other request to this host fail fast until then).
                raise Unavailable(
                    f"{label} asks to retry {ref.idv} in {retry_after:.0f} s ({failure})",
                    retry_after=retry_after,
                )
            if attempt + 1 == attempts:
                break
            log.warning("%s: %s for %s; retrying", label, failure, url)
            if retry_after is None:
                ceiling = min(settings.backoff_cap_s, settings.backoff_s * 2**attempt)
                await asyncio.sleep(random.uniform(0, ceiling))
        tried = f"after {attempts} attempt{'s' if attempts > 1 else ''}"
        if broken:
            raise UpstreamError(f"{label} sent {failure} for {ref.idv} {tried}")
        raise Unavailable(
            f"{label} failed for {ref.idv}: {failure} {tried}", retry_after=retry_after
        )

    async def _get_once(self, url: str, ref: PaperRef, label: str) -> _Answer:
        limit = self.settings.max_html_bytes
        async with self._client.stream("GET", url) as response:
            answer = _Answer(str(response.url), response.status_code, response.headers)
            if answer.status in _REDIRECTS or answer.status == 429 or answer.status >= 500:
                return answer
            if answer.status != 200:
                answer.body = await _read_prefix(response, _ERROR_PAGE_BYTES)
                return answer
            declared = _content_length(response)
            if declared is not None and declared > limit:
                raise _too_large(ref, label, limit)
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > limit:
                    raise _too_large(ref, label, limit)
            answer.body = bytes(body)
            return answer

    def _gate(self, url: str) -> _HostGate:
        key = _origin(url)
        gate = self._gates.get(key)
        if gate is None:
            host = f"{key[0]}://{key[1]}"
            gate = self._gates[key] = _HostGate(self.settings.min_gap_s, host, self.shared)
        return gate


@dataclass(slots=True)
class _HostGate:
    """One request to a host at a time, `gap` seconds after the previous one ended.

    The local lock keeps one request of this process in line for the shared turn at a time;
    the shared turn (when there is one) does the same across processes.
    """

    gap: float
    host: str
    shared: Shared | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _ready_at: float = 0.0
    _blocked_until: float = 0.0

    @asynccontextmanager
    async def turn(self, label: str, ref: PaperRef) -> AsyncIterator[None]:
        async with self._lock:
            now = time.monotonic()
            if self._blocked_until > now:
                raise _paused(label, ref, self._blocked_until - now)
            if self._ready_at > now:
                await asyncio.sleep(self._ready_at - now)
            async with AsyncExitStack() as stack:
                if self.shared is not None:
                    try:
                        await stack.enter_async_context(self.shared.host_turn(self.host, self.gap))
                    except HostPaused as paused:
                        self._blocked_until = time.monotonic() + paused.seconds
                        raise _paused(label, ref, paused.seconds) from None
                try:
                    yield
                finally:
                    # Measured from the end of a request, so that arrivals at the host are at
                    # least `gap` apart whatever the network's latency.
                    self._ready_at = max(self._ready_at, time.monotonic() + self.gap)

    async def defer(self, seconds: float) -> None:
        self._ready_at = max(self._ready_at, time.monotonic() + seconds)
        if self.shared is not None:
            await self.shared.defer_host(self.host, seconds)

    async def block(self, seconds: float) -> None:
        self._blocked_until = max(self._blocked_until, time.monotonic() + seconds)
        if self.shared is not None:
            await self.shared.pause_host(self.host, seconds)


def _paused(label: str, ref: PaperRef, wait: float) -> Unavailable:
    return Unavailable(
        f"{label} asked us to pause; {ref.idv} can be fetched in {wait:.0f} s", retry_after=wait
    )


# -- pure helpers ------------------------------------------------------------------------------


def version_in_url(url: str, paper: str) -> int | None:
    """The version in a final URL such as `…/html/1706.03762v7/`, for this paper only."""
    match = re.search(rf"/{re.escape(paper)}v([1-9]\d*)/?$", urlsplit(url).path)
    return int(match[1]) if match else None


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _classify(answer: _Answer, ref: PaperRef, label: str) -> _Absent | None:
    """None when the answer is a paper; `_Absent` when it says "not here"; raises on garbage."""
    body = answer.body
    if answer.status in {404, 410}:
        exists = bool(_NO_HTML.search(body))
        return _Absent(label, f"{answer.status}{' No HTML' if exists else ''}", exists)
    if answer.status != 200:
        raise UpstreamError(f"{label} answered {answer.status} for {ref.idv}")
    content_type = answer.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type and content_type not in _HTML_TYPES:
        raise UpstreamError(f"{label} answered {ref.idv} with {content_type}, not HTML")
    if not body.strip():
        return _Absent(label, "an empty page")
    if b"ltx_document" in body:
        return None
    if _NO_HTML.search(body[:_ERROR_PAGE_BYTES]):
        return _Absent(label, "a No HTML page", paper_exists=True)
    if not _looks_like_html(body):
        raise UpstreamError(f"{label} answered {ref.idv} with bytes that are not HTML")
    return _Absent(label, "an HTML page that is not a LaTeXML document")


def _looks_like_html(body: bytes) -> bool:
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html", b"<?xml")) or b"<html" in head[:1024]


def _local_candidates(ref: PaperRef, directory: Path) -> list[tuple[Path, int | None]]:
    """Files that may hold `ref`, in order, each with the version its name states."""
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
    for stem, named_version in stems:
        for suffix in (".html", ".html.gz"):
            path = directory / f"{stem}{suffix}"
            if path.is_file():
                found.append((path, named_version))
                break
    return found


def _latest_local_version(stem: str, directory: Path) -> int | None:
    pattern = re.compile(rf"{re.escape(stem)}v([1-9]\d*)\.html(?:\.gz)?")
    try:
        names = [entry.name for entry in directory.iterdir()]
    except OSError:
        return None
    versions = [int(match[1]) for name in names if (match := pattern.fullmatch(name))]
    return max(versions, default=None)


def _read_local(path: Path, limit: int) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as stream:
                html = stream.read(limit + 1)
        else:
            with path.open("rb") as stream:
                html = stream.read(limit + 1)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise UpstreamError(f"Cannot read the local file {path}: {exc}") from exc
    if len(html) > limit:
        raise TooLarge(f"{path.name} is larger than PAPERANCHOR_MAX_HTML_MB ({limit} bytes)")
    return html


async def _read_prefix(response: httpx.Response, limit: int) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])


def _content_length(response: httpx.Response) -> int | None:
    try:
        return int(response.headers["content-length"])
    except (KeyError, ValueError):
        return None


def _too_large(ref: PaperRef, label: str, limit: int) -> PaperAnchorError:
    return TooLarge(
        f"{label}'s page for {ref.idv} is larger than PAPERANCHOR_MAX_HTML_MB ({limit} bytes)"
    )


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


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
    """The papers of `directory` that a reference can open (SPEC §2's names), in name order,
    at most `limit` of them, and how many more there are (blocking: call it in a thread)."""
    try:
        entries = itertools.islice(directory.iterdir(), SCANNED_LOCAL_ENTRIES)
        names = sorted(
            entry.name
            for entry in entries
            if entry.name.endswith((".html", ".html.gz")) and entry.is_file()
        )
    except OSError:
        return [], 0
    found: list[LocalFile] = []
    skipped = 0
    for name in names:
        stem = name.removesuffix(".gz").removesuffix(".html")
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
        found.append(LocalFile(reference, name, _local_title(directory / name)))
    return found, skipped


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
    return title[:300] or None
