"""A paper by reference: cache, single flight, fetch, parse."""

from __future__ import annotations

import asyncio
import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paperanchor.codec import Codec
from paperanchor.flight import SingleFlight
from paperanchor.refs import PaperRef
from paperanchor.settings import Settings
from paperanchor.shared import Shared
from paperanchor.sources import FetchedPage, Sources
from paperanchor.store import PaperCache, Store, open_store
from paperanchor.tree import Document

Parse = Callable[[bytes, str], Any]

# Papers kept in the process, so that a hot paper is not read and decoded from the store on
# every request, nor opened again by the service (which keeps its views by document identity):
# unpickling and opening 2501.11120v1 costs 13 ms, and GET /2501.11120v1/sections/S2.md over
# Redis went from 68 to 322 requests/s in one process (bench/workers.py, 2 cores). As many as
# the service keeps views of. A confirmed version (and a local file's parse, keyed by its
# bytes) never changes and stays until evicted; anything else may be superseded and is read
# from the store again after UNSETTLED_MEMORY_S.
MEMORY_PAPERS = 64
UNSETTLED_MEMORY_S = 600.0


@dataclass(frozen=True, slots=True)
class LoadedPaper:
    """A parsed paper and where it came from (the fields of SPEC §5's Outline header)."""

    document: Document
    paper: str
    idv: str
    version: int | None
    version_confirmed: bool
    source: str
    source_url: str


def paper_codec(max_html_bytes: int = 50 << 20) -> Codec[LoadedPaper]:
    """The cache codec of parsed papers: an entry is at most as large as the largest page."""
    # A paper's entry is smaller than its page (2501.11120v1: 0.4 MB for 0.7 MB of HTML, a
    # 42 MB page: 27 MB) except for pages that are nearly all text, kept twice (Markdown and
    # plain): those above the cap are served but not cached.
    return Codec(LoadedPaper, max_bytes=max(max_html_bytes, 1 << 20))


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
        self.cache = PaperCache(self.store, paper_codec(settings.max_html_bytes))
        self.shared = Shared.over(self.store, lease_s=settings.lock_lease_s)
        self.sources = sources if sources is not None else Sources(settings, shared=self.shared)
        self._flight: SingleFlight[str, LoadedPaper] = SingleFlight()
        self._settled: OrderedDict[str, tuple[Any, float]] = OrderedDict()
        self._settled_lock = threading.Lock()  # read from the store's worker threads too
        self.cache_hits = 0
        self.fetches = 0

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
        if self._owns_store:
            self.store.close()

    async def _load_uncached(self, ref: PaperRef) -> LoadedPaper:
        if ref.is_local:
            return await self._fetch(ref)
        # A flight for this paper may have finished between our cache miss and now.
        cached = await self._from_cache(ref)
        if cached is not None:
            return cached
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
        """Fetch and parse `ref`, then cache it (a local document: its parse only)."""
        self.fetches += 1
        page = await self.sources.fetch(ref)
        if page.source == "local":
            document = await self._local_document(page)
            return _loaded(document, page)
        base_url = page.base_url or page.source_url
        document = await asyncio.to_thread(self._parse, page.html, base_url)
        loaded = _loaded(document, page)
        await asyncio.to_thread(self._remember, ref, loaded)
        self._keep_loaded(loaded)
        return loaded

    async def _local_document(self, page: FetchedPage) -> Document:
        # A local file can change under the same name: key its parse by its bytes.
        digest = hashlib.sha256(page.base_url.encode() + b"\0" + page.html).hexdigest()
        key = f"local-sha256:{digest}"
        cached = self._recall(key)
        if cached is None:
            found = await asyncio.to_thread(self.cache.get_paper, key, self.parser_version)
            cached = found.document if found is not None else None
        if cached is not None:
            self.cache_hits += 1
            self._keep(key, cached, settled=True)
            return cached  # type: ignore[no-any-return]
        document = await asyncio.to_thread(self._parse, page.html, page.base_url or page.source_url)
        ttl = self.settings.latest_ttl_s
        if ttl > 0:
            loaded = _loaded(document, page)
            await asyncio.to_thread(self.cache.put_paper, key, self.parser_version, loaded, ttl)
        self._keep(key, document, settled=True)
        return document  # type: ignore[no-any-return]

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
                if found.idv != idv:  # the entry's own label was rewritten to match the key
                    self.cache.drop_paper(idv, self.parser_version, f"it holds {found.idv}")
                    continue
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


def _loaded(document: Any, page: FetchedPage) -> LoadedPaper:
    return LoadedPaper(
        document=document,
        paper=page.ref.paper,
        idv=page.ref.idv,
        version=page.ref.version,
        version_confirmed=page.version_confirmed,
        source=page.source,
        source_url=page.source_url,
    )
