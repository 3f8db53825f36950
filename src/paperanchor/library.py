"""A paper by reference: cache, single flight, fetch, parse."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from paperanchor.errors import BadRequest, NotFound
from paperanchor.flight import SingleFlight
from paperanchor.refs import PaperRef, parse_ref
from paperanchor.settings import Settings
from paperanchor.shared import Shared
from paperanchor.sources import FetchedPage, PaperMissing, Sources
from paperanchor.store import PaperCache, Store, open_store

log = logging.getLogger(__name__)

Parse = Callable[[bytes, str], Any]

# Papers kept in the process, so that a hot paper is not read and unpickled from the store on
# every request, nor opened again by the service (which keeps its views by document identity):
# unpickling and opening 2501.11120v1 costs 13 ms, and GET /2501.11120v1/sections/S2.md over
# Redis went from 68 to 322 requests/s in one process (bench/workers.py, 2 cores). As many as
# the service keeps views of. A confirmed version (and a local file's parse, keyed by its
# bytes) never changes and stays until evicted; anything else may be superseded and is read
# from the store again after UNSETTLED_MEMORY_S.
MEMORY_PAPERS = 64
UNSETTLED_MEMORY_S = 600.0
# Local files whose fingerprint (name, inode, size, times) is known to name a parse: a warm
# request for 1311.0066 (3.3 MB) read and hashed the file every time, 5.3 ms. Small entries.
LOCAL_FINGERPRINTS = 1024
# A remembered "no such paper" is its error detail: a short sentence naming the paper.
_MISSING_DETAIL_CHARS = 500


@dataclass(frozen=True, slots=True)
class LoadedPaper:
    """A parsed paper and where it came from (the fields of SPEC §5's Outline header)."""

    document: Any
    paper: str
    idv: str
    version: int | None
    version_confirmed: bool
    source: str
    source_url: str


class Library:
    """Loads papers: from the cache, else one shared fetch and parse per paper, then caches them.

    Cache policy (docs/fetching.md): a paper whose version is confirmed is kept forever under
    its idv; one whose version is unknown or unconfirmed (ar5iv) for `latest_ttl_s`; the
    reference asked for maps to the idv it resolved to for `latest_ttl_s`. Local documents are
    cached by a digest of their bytes, so an edited file is parsed again. Nothing is cached
    when fetching or parsing fails.

    Over a Redis store, the single flight and the hosts' gaps hold across every process that
    shares it (shared.py): one process fetches a paper, the others read its result from the cache.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        parse: Parse,
        parser_version: str,
        store: Store | None = None,
        sources: Sources | None = None,
    ) -> None:
        self.settings = settings
        self.parser_version = parser_version
        self._parse = parse
        # What the library opens it closes; a store or sources passed in stay the caller's.
        self._owns_store = store is None
        self._owns_sources = sources is None
        self.store: Store = store if store is not None else open_store(settings)
        self.cache = PaperCache(self.store)
        self.shared = Shared.over(self.store, settings.cache_url, lease_s=settings.lock_lease_s)
        self.sources = sources if sources is not None else Sources(settings, shared=self.shared)
        self._flight: SingleFlight[str, LoadedPaper] = SingleFlight()
        self._settled: OrderedDict[str, tuple[Any, float]] = OrderedDict()
        self._settled_lock = threading.Lock()  # read from the store's worker threads too
        # (reference, fingerprint) -> the parse's memory key and the paper without its document
        self._local_known: OrderedDict[tuple[str, str], tuple[str, LoadedPaper]] = OrderedDict()
        self.cache_hits = 0
        """Papers answered from memory or the store (a local file whose parse was kept too)."""
        self.fetches = 0
        """Papers asked of a source and not found parsed: upstream fetches, local files parsed."""

    async def load(self, ref: PaperRef) -> LoadedPaper:
        """The parsed paper for `ref`, fetching and parsing it at most once at a time."""
        if not ref.is_local:
            # A versioned reference that was settled is itself: no store lookup at all.
            kept: LoadedPaper | None = self._recall(ref.idv) if ref.version is not None else None
            cached = kept or await asyncio.to_thread(self._cached, ref)
            if cached is not None:
                self.cache_hits += 1
                return cached
        return await self._flight.run(ref.idv, lambda: self._load_uncached(ref))

    async def __aenter__(self) -> Library:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the store and sources this library opened itself."""
        if self._owns_sources:
            await self.sources.aclose()
        if self.shared is not None:
            await self.shared.aclose()
        if self._owns_store:
            self.store.close()

    async def _load_uncached(self, ref: PaperRef) -> LoadedPaper:
        local: str | None = None
        if self.settings.local_dir is not None:
            local = await asyncio.to_thread(self.sources.local_fingerprint, ref)
            known = await self._known_local(ref, local) if local else None
            if known is not None:
                return known
        if ref.is_local:
            return await self._fetch(ref)
        # A flight for this paper may have finished between our cache miss and now.
        cached = await self._from_cache(ref)
        if cached is not None:
            return cached
        if local is None:  # a local file of that name would be read first
            await self._raise_if_missing(ref)
        if self.shared is not None:
            return await self.shared.once(
                f"fetch:{ref.idv}", lambda: self._fetch(ref), lambda: self._from_cache(ref)
            )
        return await self._fetch(ref)

    async def _from_cache(self, ref: PaperRef) -> LoadedPaper | None:
        cached = await asyncio.to_thread(self._cached, ref)
        if cached is not None:
            self.cache_hits += 1
        return cached

    async def _fetch(self, ref: PaperRef) -> LoadedPaper:
        """Fetch and parse `ref` from the first source with a readable rendering of it, then
        cache it (a local document: its parse only).

        A source's page is parsed before the next source is asked: a local `<id>.html` of
        another version than the one asked for is passed over, and so is a failed rendering
        (a conversion that died before the body, SPEC §2), which is served only when no
        source has better, and then never cached. A paper no source has is remembered for
        PAPERANCHOR_NOT_FOUND_TTL_S.
        """
        failed: LoadedPaper | None = None
        try:
            async with aclosing(self.sources.pages(ref)) as pages:
                async for page in pages:
                    key = ""
                    if page.source == "local":
                        key, document = await self._local_document(page)
                    else:
                        self.fetches += 1
                        base_url = page.base_url or page.source_url
                        document = await asyncio.to_thread(self._parse, page.html, base_url)
                    loaded = _resolved(document, page)
                    if loaded is None:
                        continue  # the file holds another version than the one asked for
                    if _quality(document) == "failed":
                        log.info("%s's rendering of %s failed; asking on", page.source, ref.idv)
                        failed = failed or loaded
                        continue
                    if page.source == "local":
                        if page.fingerprint:
                            self._know_local(ref, page.fingerprint, key, loaded)
                    else:
                        await asyncio.to_thread(self._remember, ref, loaded)
                        self._keep_loaded(loaded)
                    return loaded
        except PaperMissing as exc:
            if failed is None:  # a failed rendering is no evidence that the paper is missing
                self.fetches += 1
                await self._remember_missing(ref, exc)
                raise
        except NotFound:
            if failed is None:
                self.fetches += 1
                raise
        except Exception:
            self.fetches += 1
            raise
        assert failed is not None  # pages() ends with NotFound when nothing was served
        return failed

    async def _local_document(self, page: FetchedPage) -> tuple[str, Any]:
        """The parse of a local page, and the key it is kept under."""
        # A local file can change under the same name: key its parse by its bytes.
        digest = await asyncio.to_thread(
            lambda: hashlib.sha256(page.base_url.encode() + b"\0" + page.html).hexdigest()
        )
        key = f"local-sha256:{digest}"
        cached = self._recall(key) or await asyncio.to_thread(
            self.cache.get_paper, key, self.parser_version
        )
        if cached is not None:
            self.cache_hits += 1
            self._keep(key, cached, settled=True)
            return key, cached
        self.fetches += 1
        document = await asyncio.to_thread(self._parse, page.html, page.base_url or page.source_url)
        ttl = self.settings.latest_ttl_s
        if ttl > 0:
            await asyncio.to_thread(self.cache.put_paper, key, self.parser_version, document, ttl)
        self._keep(key, document, settled=True)
        return key, document

    async def _known_local(self, ref: PaperRef, fingerprint: str) -> LoadedPaper | None:
        """The parse of an unchanged local file, found by its fingerprint without reading it."""
        with self._settled_lock:
            known = self._local_known.get((ref.idv, fingerprint))
            if known is not None:
                self._local_known.move_to_end((ref.idv, fingerprint))
        if known is None:
            return None
        key, template = known
        document = self._recall(key) or await asyncio.to_thread(
            self.cache.get_paper, key, self.parser_version
        )
        if document is None:
            return None  # no longer kept: read and parse it again
        self.cache_hits += 1
        self._keep(key, document, settled=True)
        return dataclasses.replace(template, document=document)

    def _know_local(self, ref: PaperRef, fingerprint: str, key: str, loaded: LoadedPaper) -> None:
        with self._settled_lock:
            self._local_known[(ref.idv, fingerprint)] = (
                key,
                dataclasses.replace(loaded, document=None),
            )
            while len(self._local_known) > LOCAL_FINGERPRINTS:
                self._local_known.popitem(last=False)

    # -- "no such paper", remembered for NOT_FOUND_TTL_S ----------------------------------------

    async def _raise_if_missing(self, ref: PaperRef) -> None:
        """`NotFound` again when every source said lately that `ref` does not exist."""
        if self.settings.not_found_ttl_s <= 0:
            return
        raw = await asyncio.to_thread(self._store_get, _missing_key(ref))
        detail = _missing_detail(raw, ref)
        if detail is not None:
            raise NotFound(detail)

    async def _remember_missing(self, ref: PaperRef, exc: PaperMissing) -> None:
        ttl = self.settings.not_found_ttl_s
        if ttl <= 0:
            return
        detail = exc.detail.encode()
        await asyncio.to_thread(self._store_set, _missing_key(ref), detail, ttl)

    def _store_get(self, key: str) -> bytes | None:
        try:
            return self.store.get(key)
        except Exception as exc:  # a store that fails reads as a miss
            log.warning("cache read of %s failed: %s", key, exc)
            return None

    def _store_set(self, key: str, value: bytes, ttl: float) -> None:
        try:
            self.store.set(key, value, ttl)
        except Exception as exc:  # not remembering is safe
            log.warning("cache write of %s failed: %s", key, exc)

    def _cached(self, ref: PaperRef) -> LoadedPaper | None:
        """The cached paper for `ref` (runs in a worker thread: the store is blocking I/O)."""
        candidates = [ref.idv]
        mapped = self.cache.get_latest(ref.idv)
        if mapped is not None and mapped != ref.idv:
            # A bare id's latest version wins over an entry stored under the bare id itself.
            candidates.insert(0 if ref.version is None else 1, mapped)
        for idv in candidates:
            found = self._recall(idv) or self.cache.get_paper(idv, self.parser_version)
            if isinstance(found, LoadedPaper):
                self._keep_loaded(found)
                return found
        return None

    def _recall(self, key: str) -> Any:
        with self._settled_lock:
            kept = self._settled.get(key)
            if kept is None:
                return None
            if kept[1] <= time.monotonic():
                del self._settled[key]
                return None
            self._settled.move_to_end(key)
            return kept[0]

    def _keep_loaded(self, loaded: LoadedPaper) -> None:
        settled = loaded.version is not None and loaded.version_confirmed
        self._keep(loaded.idv, loaded, settled=settled)

    def _keep(self, key: str, value: Any, *, settled: bool) -> None:
        ttl = min(self.settings.latest_ttl_s, UNSETTLED_MEMORY_S)
        if not settled and ttl <= 0:
            return
        expires = math.inf if settled else time.monotonic() + ttl
        with self._settled_lock:
            if key in self._settled and self._settled[key][0] is value:
                expires = self._settled[key][1]  # recalling a paper does not extend its stay
            self._settled[key] = (value, expires)
            self._settled.move_to_end(key)
            while len(self._settled) > MEMORY_PAPERS:
                self._settled.popitem(last=False)

    def _remember(self, ref: PaperRef, loaded: LoadedPaper) -> None:
        ttl = self.settings.latest_ttl_s
        settled = loaded.version is not None and loaded.version_confirmed
        # A version never changes, so a confirmed one is kept forever; anything else may be
        # superseded (a newer version, arXiv HTML replacing ar5iv) and lives as long as "latest".
        if settled:
            self.cache.put_paper(loaded.idv, self.parser_version, loaded)
        elif ttl > 0:
            self.cache.put_paper(loaded.idv, self.parser_version, loaded, ttl)
        if ref.idv != loaded.idv and ttl > 0:
            self.cache.put_latest(ref.idv, loaded.idv, ttl)


def _missing_key(ref: PaperRef) -> str:
    return f"missing:{ref.idv}"


def _missing_detail(raw: bytes | None, ref: PaperRef) -> str | None:
    """A remembered not-found's detail; None for anything else (an entry is untrusted data)."""
    if raw is None or len(raw) > _MISSING_DETAIL_CHARS:
        return None
    try:
        detail = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if ref.idv not in detail or not detail.isprintable():
        return None
    return detail


def _quality(document: Any) -> str:
    return str(getattr(document, "quality", "ok"))


def _resolved(document: Any, page: FetchedPage) -> LoadedPaper | None:
    """The paper a parsed page is, its version settled (SPEC §2, Versions): from where it was
    found (the final URL, a local file's name), else from the page's own furniture (its
    `<base href>` or arXiv's watermark, read by the parser into `page_idv`), never from body
    text. ar5iv's version stays unconfirmed. None when a local file's furniture names another
    version than the one asked for."""
    ref = page.ref
    confirmed = page.version_confirmed
    named = _furniture_version(getattr(document, "page_idv", None), ref)
    if ref.version is None and named is not None and not ref.is_local:
        asked = page.asked
        if page.source == "local" and asked is not None and asked.version not in (None, named):
            return None
        ref = ref.with_version(named)
        confirmed = page.source != "ar5iv"
    return LoadedPaper(
        document=document,
        paper=ref.paper,
        idv=ref.idv,
        version=ref.version,
        version_confirmed=confirmed,
        source=page.source,
        source_url=page.source_url,
    )


def _furniture_version(page_idv: str | None, ref: PaperRef) -> int | None:
    """The version in a page's furniture when it names this paper (a watermark or base of
    another paper is no evidence)."""
    if not page_idv or ref.is_local:
        return None
    try:
        named = parse_ref(page_idv)
    except BadRequest:
        return None
    return named.version if named.paper == ref.paper else None
