"""A figure's images as bytes (contract §11, figures it can see), for a model that reads the plot.

An image comes from the site its paper's page came from and from nowhere else: an arXiv page's
`https://arxiv.org/html/…` images from the arXiv HTML site this server reads
(`PAPERANCHOR_ARXIV_HTML_URL`), an ar5iv page's from ar5iv, a local paper's `/files/…` images
from the local directory (api/files.py's rules). Any other address, and a redirect off that
site, is never fetched. Fetches are upstream.py's polite GETs, at most `MAX_IMAGE_BYTES` each.

An image is bytes, never decoded: its media type is read from its first bytes (`sniff`: PNG,
JPEG, GIF, WebP, SVG), whatever its Content-Type says, and anything else is refused. SVG is
passed on as it is (REST serves it sandboxed). Images are kept in the store with their media
type, re-sniffed when read back, as an entry anyone sharing the store could have written.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import quote, unquote, urljoin, urlsplit

from paperanchor.api.files import read_image
from paperanchor.errors import NotFound, PaperAnchorError, UpstreamError
from paperanchor.paper import LoadedPaper
from paperanchor.parse import ARXIV_SITE
from paperanchor.refs import shown
from paperanchor.settings import Settings

if TYPE_CHECKING:  # service.py imports `Image` from here and stays free of them (test_purity)
    from paperanchor.store import Store
    from paperanchor.upstream import Upstream

MAX_IMAGES: Final = 4
"""Images of one figure sent with it (contract §11); a figure's further images are not sent"""
MAX_IMAGE_BYTES: Final = 5 << 20
"""One image at most (contract §11); the corpus's largest figure image is 4 MB"""
# An arXiv version's images never change; a local file's may, and are not kept.
IMAGE_TTL_S: Final = 30 * 86400
MAX_REDIRECTS: Final = 2
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_SNIFF_BYTES = 1024
# ar5iv names its images on either of its two hosts (parse/__init__.py, _OWN_SITES)
_AR5IV_SITES = ("https://ar5iv.labs.arxiv.org/html/", "https://ar5iv.org/html/")


@dataclass(frozen=True, slots=True)
class Image:
    """One image of a figure: the address the figure names, its media type and its bytes."""

    url: str
    media_type: str
    data: bytes


def sniff(data: bytes) -> str | None:
    """The media type the bytes begin as (PNG, JPEG, GIF, WebP, SVG), or None for any other."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    head = data[:_SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<svg", b"<?xml", b"<!--", b"<!doctype svg")) and b"<svg" in head:
        return "image/svg+xml"
    return None


def _under(url: str, prefixes: tuple[str, ...]) -> str | None:
    """The rest of `url` after the first of `prefixes` it starts with, if it stays inside."""
    for prefix in prefixes:
        if url.startswith(prefix):
            rest = url[len(prefix) :]
            parts = unquote(urlsplit(rest).path).split("/")
            if rest and not any(part in ("", ".", "..") or "\\" in part for part in parts):
                return rest
    return None


def _in_folder(url: str, folder: Path) -> str | None:
    """A `file:` URL's path inside `folder`, relative and quoted as `/files/…` paths are; None
    when it is elsewhere (read_image then refuses links and anything but a regular file)."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        return None
    try:
        inside = Path(unquote(parts.path)).relative_to(folder.resolve())
    except ValueError:
        return None
    return quote(inside.as_posix())


class Images:
    """The images of figures, from their papers' own sites, kept in the store."""

    def __init__(self, settings: Settings, upstream: Upstream, store: Store, public_url: str):
        """Images fetched through `upstream`, kept in `store`; `public_url` is where this
        server says a local paper's images are (`/files/…`)."""
        from paperanchor.store import BestEffort

        self.settings = settings
        self.upstream = upstream
        self.store = BestEffort(store)
        self.files = public_url.rstrip("/") + "/files/"

    def fetched_from(self, meta: LoadedPaper, url: str) -> str | None:
        """Where an image of this paper is fetched from: a URL on its page's own site, a path
        in the local directory (`/files/…` without the prefix), or None: not fetched."""
        settings = self.settings
        if meta.source == "arxiv" and settings.arxiv_html_url:
            site = settings.arxiv_html_url.rstrip("/") + "/"
            rest = _under(url, (f"{ARXIV_SITE}/html/", site))
            return None if rest is None else site + rest
        if meta.source == "ar5iv" and settings.ar5iv_url:
            site = settings.ar5iv_url.rstrip("/") + "/"
            rest = _under(url, (*_AR5IV_SITES, site))
            return None if rest is None else site + rest
        if meta.source == "local" and settings.local_dir is not None:
            if url.startswith("file:"):  # over stdio a local page's images are file: URLs
                return _in_folder(url, Path(settings.local_dir))
            return _under(url, (self.files,))
        return None

    async def image(self, meta: LoadedPaper, url: str, what: str) -> Image:
        """The image at `url` (one a figure of `meta` names); `what` names it in errors."""
        where = self.fetched_from(meta, url)
        if where is None:
            raise NotFound(
                f"{what} of {meta.idv} is not on the site its page came from "
                f"({shown(url)}): not fetched"
            )
        if meta.source == "local":
            assert self.settings.local_dir is not None  # fetched_from said so
            folder = Path(self.settings.local_dir)
            parts = unquote(urlsplit(where).path).split("/")
            data = await asyncio.to_thread(read_image, folder, parts, shown(where), MAX_IMAGE_BYTES)
            return _typed(url, data, what, NotFound)
        key = "image:" + hashlib.sha256(where.encode()).hexdigest()[:32]
        kept = await asyncio.to_thread(self.store.get, key)
        found = _read_back(url, kept) if kept is not None else None
        if found is not None:
            return found
        image = _typed(url, await self._fetch(where, meta, what), what, UpstreamError)
        entry = image.media_type.encode() + b"\n" + image.data
        await asyncio.to_thread(self.store.set, key, entry, IMAGE_TTL_S)
        return image

    async def _fetch(self, url: str, meta: LoadedPaper, what: str) -> bytes:
        label = "ar5iv" if meta.source == "ar5iv" else "arXiv"
        origin = _origin(url)
        for _ in range(MAX_REDIRECTS + 1):
            answer = await self.upstream.get(
                url,
                label=label,
                subject=f"{meta.idv} {what}",
                limit=MAX_IMAGE_BYTES,
                limit_name="the image cap of 5 MB",
            )
            if answer.status == 200:
                return answer.body
            if answer.status in (404, 410):
                raise NotFound(f"{label} has no {what} of {meta.idv} ({shown(url)})")
            location = answer.headers.get("location")
            if answer.status not in _REDIRECTS or not location:
                raise UpstreamError(f"{label} answered {answer.status} for {what} of {meta.idv}")
            target = urljoin(url, location)
            if _origin(target) != origin:
                raise UpstreamError(
                    f"{label} redirected {what} of {meta.idv} off its site to "
                    f"{shown(target)}; not followed"
                )
            url = target
        raise UpstreamError(f"{label} redirected {what} of {meta.idv} too many times")


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


def _typed(url: str, data: bytes, what: str, error: type[PaperAnchorError]) -> Image:
    media_type = sniff(data)
    if media_type is None:
        raise error(f"{what} is not an image (PNG, JPEG, GIF, WebP or SVG): {shown(url)}")
    return Image(url, media_type, data)


def _read_back(url: str, entry: bytes) -> Image | None:
    """A kept image, when its entry is one: its media type, then its bytes, of that type."""
    media_type, _, data = entry.partition(b"\n")
    if sniff(data) != media_type.decode("ascii", "replace"):
        return None
    return Image(url, media_type.decode(), data)
