"""A paper by reference: cache, single flight, fetch, parse."""

from __future__ import annotations

import asyncio
import ctypes
import hashlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import TypeVar

from paperanchor.codec import Codec
from paperanchor.coordination import Coordination
from paperanchor.errors import BadRequest, NotFound, PaperAnchorError, ParseError, TooLarge
from paperanchor.flight import Ready, SingleFlight
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse.pdf import parse_pdf
from paperanchor.refs import PaperRef, parse_ref
from paperanchor.settings import Settings
from paperanchor.sources import Absent, FetchedPage, PaperMissing, Sources
from paperanchor.store import BestEffort, PaperCache, Store
from paperanchor.tree import Document

log = logging.getLogger(__name__)

Parse = Callable[[bytes, str], Document]

# Papers kept in the process, so that a hot paper is not read and decoded from the store on
# every request, nor opened again (its view is kept in the same entry, `get`): reading and
# opening 2501.11120v1 costs 13 ms, and GET /2501.11120v1/sections/S2.md over Redis went from
# 68 to 322 requests/s in one process (bench/workers.py, 2 cores). They are bounded in bytes
# (PAPERANCHOR_MEMORY_MB), least recently used first out. A confirmed version (and a local
# file's parse, keyed by its bytes) never changes and stays until evicted; anything else may be
# superseded and is read from the store again after UNSETTLED_MEMORY_S.
UNSETTLED_MEMORY_S = 600.0
# Local files whose fingerprint (name, inode, size, times) is known to name a parse: a warm
# request for 1311.0066 (3.3 MB) read and hashed the file every time, 5.3 ms. Small entries.
LOCAL_FINGERPRINTS = 1024
# A remembered "no such paper" is its error detail: a short sentence naming the paper.
_MISSING_DETAIL_CHARS = 500
# A held Paper weighs its tree and anchor index, TREE_PER_ENTRY_BYTE per byte of its cache
# entry, plus its renderings as they are kept (Paper.rendered_bytes: sys.getsizeof of its
# Markdown chunks and strings and its HTML pages, counted at each `get`). The tree's factor:
# decoding an entry and opening its view allocates 2.4-3.2x the entry's bytes of Python
# objects (scripts/paper_weight.py, tracemalloc: 2501.11120v1 3.1x, submission-5393936 3.2x,
# ssh-electron-phonon 2.4x; the renderings are counted as 0.6-0.9x, above what they allocate),
# and `paperanchor serve` holding papers within its bound showed 8.4-8.9x resident memory
# above idle per entry byte with every section rendered (tests/test_memory.py, /proc's VmRSS;
# pages of 8.8 and 42 MB): what the allocator keeps around a tree is counted with the tree.
TREE_PER_ENTRY_BYTE = 9
# glibc keeps what a large parse frees (lxml's tree of a 42 MB page, ~380 MB) in its heap, and
# a server that parsed such a page stayed that much larger whatever it held; malloc_trim hands
# it back (six copies of that page, two held: 979 MB resident without it, 557 MB with it). It
# takes 150 ms after that page and 7 ms after a 0.7 MB one: after pages or entries at least
# this big it runs before the answer (so that the memory bound holds when it is given), after
# any other parse in the background, one at a time. Small parses leave garbage too: a server
# holding 50 corpus papers (bench/memory.py) took 3.2 MB of resident memory per paper while
# its papers' objects are 0.5 MB (tracemalloc); trimming after every parse made it 1.2 MB.
TRIM_AFTER_BYTES = 4 << 20
# glibc gives each thread that allocates at once an arena of its own, up to 8 per core, and
# keeps each one's freed memory apart: the worker threads every parse runs in spread one
# paper's garbage over many arenas. Python's own objects come from pymalloc under the GIL;
# what allocates outside it is lxml's parse, at most one per core at a time here. Two arenas:
# the 50 papers above took 2.3 MB each without trimming (3.2 with glibc's default), 0.9 MB
# with it (one arena: 1.7 and 0.6 MB, but then parses in two threads queue for one lock).
MALLOC_ARENAS = 2
# PDFs parsed at once in a process (each in a child of its own, parse/pdf/extract.py). A child
# may take 1 GiB of address space and a core for up to a minute, and each parse holds one of
# the worker threads every operation of the service runs in (six on a 2-core machine) while
# it runs. Two bound the worst case at 2 GiB and leave four threads to everything else. More
# buys little (scripts/pdf_parses_at_once.py, the nine corpus PDFs on this 2-core machine, 1 /
# 2 / 3 / 4 at once): 10.3 / 8.4 / - / 6.9 s idle, 19.5 / 11.3 / 10.3 / 13.4 s under a load of
# 2; and arXiv's PDFs arrive one per PAPERANCHOR_MIN_GAP_S (3 s) while a parse takes 0.3-6 s.
# The bound is the papers', and a process has one Papers (runtime.py).
PDF_PARSES = 2
# HTML pages parsed at once in a process. A parse runs in one of the six worker threads and
# holds the GIL for most of its time (the tree is built in Python): a page near the parse
# bounds (parse/__init__.py, 1 M tags) takes about 25 s and 1.5 GB, and three 50 MB pages at once
# took 57-109 s and 3.5 GB (issue 21 #5). Two at a time keep four threads and the memory of
# two parses for everything else; a third waits for a slot instead of slowing both.
HTML_PARSES = 2


def paper_codec(max_html_bytes: int = 50 << 20) -> Codec[LoadedPaper]:
    """The cache codec of parsed papers: an entry is at most as large as the largest page."""
    # A paper's entry is smaller than its page (2501.11120v1: 0.4 MB for 0.7 MB of HTML, a
    # 42 MB page: 27 MB) except for pages that are nearly all text, kept twice (Markdown and
    # plain): those above the cap are served but not cached.
    return Codec(LoadedPaper, max_bytes=max(max_html_bytes, 1 << 20))


@dataclass(slots=True)
class _Kept:
    loaded: LoadedPaper
    expires: float
    size: int
    """the paper's cache entry in bytes, what its tree is weighed by (TREE_PER_ENTRY_BYTE)"""
    view: Paper | None = None
    """the paper's view (anchor index, renderings), opened on its first `get` and kept here"""
    rendered: int = 0
    """the view's `rendered_bytes` as last counted in the memory's weight"""

    @property
    def weight(self) -> int:
        """The bytes this entry is counted as: its tree and index, and its renderings."""
        return self.size * TREE_PER_ENTRY_BYTE + self.rendered


_Result = TypeVar("_Result")
Prepare = Callable[[Paper], object]
"""Work on a view opened for a request, run in the worker that opened it (an outline)."""


class _Unread:
    """The "no such paper" entry was not read with the lookup."""


_UNREAD = _Unread()


def _document(document: Document) -> Document:
    return document


class Papers:
    """Loads papers: from the cache, else one shared fetch and parse per paper, then caches them.

    Cache policy (docs/fetching.md): a paper whose version is confirmed is kept forever under
    its idv; one whose version is unknown or unconfirmed (ar5iv) for `latest_ttl_s`; the
    reference asked for maps to the idv it resolved to for `latest_ttl_s`. Local documents are
    cached by a digest of their bytes, so an edited file is parsed again. Nothing is cached
    when fetching or parsing fails.

    Over a Redis store, the single flight and the hosts' gaps hold across every process that
    shares it (coordination.py): one process fetches a paper, the others read its result from
    the cache.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store,
        sources: Sources,
        coordination: Coordination,
        parse: Parse,
        parser_version: str,
        parse_pdf: Parse = parse_pdf,
    ) -> None:
        """The papers over `store`, `sources` and `coordination`, which runtime.py builds and
        closes (tests build them through it too)."""
        limit_malloc_arenas()  # before the store's and the parses' threads start
        self.settings = settings
        self.parser_version = parser_version
        self._parse = parse
        self._parse_pdf = parse_pdf
        self._pdf_slots = asyncio.Semaphore(PDF_PARSES)
        self._html_slots = asyncio.Semaphore(HTML_PARSES)
        self.store = store
        self.cache = PaperCache(self.store, paper_codec(settings.max_html_bytes))
        self._kept = BestEffort(self.store)  # not-found entries
        self.memory_bytes = settings.memory_bytes
        self.coordination = coordination
        self.sources = sources
        self._flight: SingleFlight[str, LoadedPaper] = SingleFlight()
        self._settled: OrderedDict[str, _Kept] = OrderedDict()
        self._settled_lock = threading.Lock()  # read from the store's worker threads too
        self._held = 0  # the weights of what _settled holds
        # (reference, fingerprint) -> the parse's memory key and the paper's header
        self._local_known: OrderedDict[tuple[str, str], tuple[str, LoadedPaper]] = OrderedDict()
        self._key_of: dict[str, str] = {}  # idv -> the memory key its paper is held under
        # idv -> a paper answered before its store write, with its view, until it is held
        self._answered: dict[str, tuple[LoadedPaper, Paper | None]] = {}
        self.cache_hits = 0
        self.fetches = 0
        self._trimming: asyncio.Future[None] | None = None
        self._stored = 0  # papers this library has stored, a clock for _load_uncached

    async def load(
        self,
        ref: PaperRef,
        prepare: Prepare | None = None,
        alongside: Callable[[], object] | None = None,
    ) -> LoadedPaper:
        """The parsed paper for `ref`, fetching and parsing it at most once at a time; a paper
        parsed for this call is opened in the parse's worker and `prepare` run on its view.
        `alongside` runs in the worker of the store lookup, when there is one."""
        stored = self._stored
        missing: _Unread | bytes | None = _UNREAD
        if not ref.is_local:
            # A versioned reference that was settled is itself: no store lookup at all.
            kept: LoadedPaper | None = self._recall(ref.idv) if ref.version is not None else None
            if kept is None:
                # One hop for the lookup and the "no such paper" entry a fetch would read next.
                kept, missing = await asyncio.to_thread(self._lookup, ref, alongside)
            if kept is not None:
                self.cache_hits += 1
                return kept
        return await self._flight.answered(
            ref.idv, lambda ready: self._load_uncached(ref, stored, missing, prepare, ready)
        )

    async def get(
        self,
        ref: PaperRef,
        prepare: Prepare | None = None,
        alongside: Callable[[], object] | None = None,
    ) -> Paper:
        """The paper `ref` names with its view (anchor index, renderings), kept in the same
        memory entry as the paper: the one memory of papers, evicted together. `prepare` runs
        on a view opened for this call, in the worker thread that opened it."""
        loaded = await self.load(ref, prepare, alongside)
        view = self._view_of(loaded)
        if view is None:
            # Building the index walks the whole tree (144 ms for a 3.3 MB page, seconds for a
            # hostile one): never on the event loop, where every other request waits for it.
            view = await asyncio.to_thread(self._open, loaded, prepare)
        else:
            self._count_renderings(loaded, view)
        return view

    async def edition(self, ref: PaperRef, source: str | None) -> Paper:
        """The paper `ref` names as one source renders it (contract §10, editions): `source` None
        is any source, as `get`; "arxiv", "ar5iv" or "pdf" that source only, fetched from it
        alone and cached under `<idv>@<source>` like any paper."""
        if source is None or ref.is_local:
            return await self.get(ref)
        held = await asyncio.to_thread(self._cached, ref) if ref.version is not None else None
        if held is not None and held.source == source:
            return await self.get(ref)  # the paper's own rendering is that edition
        key = f"{ref.idv}@{source}"
        loaded = self._recall(key)
        if loaded is None:
            loaded = await self._flight.run(key, lambda: self._load_edition(ref, source, key))
        with self._settled_lock:
            kept = self._settled.get(key)
            view = kept.view if kept is not None and kept.loaded is loaded else None
        if view is None:
            view = await asyncio.to_thread(Paper.open, loaded)
            with self._settled_lock:
                kept = self._settled.get(key)
                if kept is not None and kept.loaded is loaded:
                    kept.view = view
        return view

    async def _load_edition(self, ref: PaperRef, source: str, key: str) -> LoadedPaper:
        found = await asyncio.to_thread(self.cache.read_paper, key, self.parser_version)
        if found is not None:
            self.cache_hits += 1
            loaded, size = found
            self._keep(key, loaded, settled=_settled(loaded), size=size, named=False)
            return loaded
        asks = self.sources.network(ref, only=source)
        if not asks:
            raise NotFound(f"No {source} source is configured for {ref.idv}")
        answer = await asks[0]()
        if isinstance(answer, Absent):
            raise NotFound(f"{answer.source} has no rendering of {ref.idv}: {answer.reason}")
        self.fetches += 1
        base_url = answer.base_url or answer.source_url
        loaded_or_none = await self._parse_page(
            answer, base_url, lambda document: _resolved(document, answer)
        )
        if loaded_or_none is None or loaded_or_none.document.quality == "failed":
            raise NotFound(f"{source}'s rendering of {ref.idv} failed")
        loaded = loaded_or_none
        ttl = self.settings.latest_ttl_s
        settled = _settled(loaded)
        size = 0
        if settled or ttl > 0:
            put = self.cache.put_paper
            size = await asyncio.to_thread(
                put, key, self.parser_version, loaded, None if settled else ttl
            )
        self._keep(key, loaded, settled=settled, size=size or len(answer.html), named=False)
        return loaded

    def _open(self, loaded: LoadedPaper, prepare: Prepare | None) -> Paper:
        """`loaded`'s view, `prepare` run on it, held with the paper (in a worker thread).

        An error of `prepare` is left to the caller's own call of it, where it is answered."""
        view = self._opened(loaded, prepare)
        self._attach(loaded, view)
        return view

    def _opened(self, loaded: LoadedPaper, prepare: Prepare | None) -> Paper:
        """`loaded`'s view with `prepare` run on it (its error left to the caller's own call)."""
        view = Paper.open(loaded)
        if prepare is not None:
            try:
                prepare(view)
            except Exception:  # raised again where the operation runs it
                log.debug("preparing the view of %s failed", loaded.idv, exc_info=True)
        return view

    def _lookup(
        self, ref: PaperRef, alongside: Callable[[], object] | None
    ) -> tuple[LoadedPaper | None, _Unread | bytes | None]:
        """The cached paper for `ref` and, when there is none and a fetch would ask next, the
        remembered "no such paper" entry (in a worker thread: the store is blocking I/O);
        `alongside` is run first."""
        if alongside is not None:
            alongside()
        cached = self._cached(ref)
        if cached is not None or self.settings.local_dir is not None:
            return cached, _UNREAD
        if self.settings.not_found_ttl_s <= 0:
            return None, None
        return None, self._kept.get(_missing_key(ref))

    def _held_entry(self, loaded: LoadedPaper) -> _Kept | None:
        """The memory entry holding this very paper (caller holds the lock)."""
        key = self._key_of.get(loaded.idv)
        kept = self._settled.get(key) if key is not None else None
        return kept if kept is not None and kept.loaded is loaded else None

    def _view_of(self, loaded: LoadedPaper) -> Paper | None:
        with self._settled_lock:
            kept = self._held_entry(loaded)
            if kept is not None and kept.view is not None:
                return kept.view
            # answered before it was stored: its view, until it is held with it
            answered = self._answered.get(loaded.idv)
            return answered[1] if answered is not None and answered[0] is loaded else None

    def _attach(self, loaded: LoadedPaper, view: Paper) -> None:
        with self._settled_lock:
            kept = self._held_entry(loaded)
            if kept is not None:  # a paper not held (too large to fit) keeps no view either
                kept.view = view

    def _count_renderings(self, loaded: LoadedPaper, view: Paper) -> None:
        """Count in the memory's weight what the view has rendered since it was last counted
        (its renderings are made after `get` answers, so each `get` counts the ones before it),
        evicting the least recently used past the bound."""
        with self._settled_lock:
            kept = self._held_entry(loaded)
            if kept is None or kept.view is not view or kept.rendered == view.rendered_bytes:
                return
            self._held += view.rendered_bytes - kept.rendered
            kept.rendered = view.rendered_bytes
            self._evict()

    def _evict(self) -> None:
        """Drop the least recently used papers until the rest fit (caller holds the lock)."""
        while self._held > self.memory_bytes and self._settled:
            self._forget(next(iter(self._settled)))

    def views(self) -> list[Paper]:
        """The views held, least recently used first."""
        with self._settled_lock:
            return [kept.view for kept in self._settled.values() if kept.view is not None]

    async def __aenter__(self) -> Papers:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def stored(self) -> None:
        """Wait until the papers answered before their store write are stored and held."""
        await self._flight.finish()

    async def aclose(self) -> None:
        """Wait for the store writes of papers answered before them, and for a trim of the heap
        in the background (before the runtime closes the store)."""
        await self.stored()
        if self._trimming is not None:
            await self._trimming

    async def _load_uncached(
        self,
        ref: PaperRef,
        stored: int,
        missing: _Unread | bytes | None = _UNREAD,
        prepare: Prepare | None = None,
        ready: Ready[LoadedPaper] | None = None,
    ) -> LoadedPaper:
        """`ref` fetched and parsed; `stored` is `_stored` from before the caller's cache miss,
        `missing` the "no such paper" entry read with it (`_UNREAD` when it was not); `ready`
        hands a fetched paper to its readers before it is stored (`_settle`)."""
        local: str | None = None
        if self.settings.local_dir is not None:
            local = await asyncio.to_thread(self.sources.local_fingerprint, ref)
            known = await self._known_local(ref, local) if local else None
            if known is not None:
                return known
        if ref.is_local:
            return await self._fetch(ref, prepare)
        # A flight for this paper may have finished between our cache miss and now: then this
        # process holds it, or is storing it (answered before its write), or has stored a paper
        # since. Read again only then (each read is a thread hop and two store lookups; another
        # process's write in that window is a race the shared single flight of a Redis store
        # settles, not this).
        if (held := self._recall(ref.idv)) is not None:
            self.cache_hits += 1
            return held
        if self._stored != stored:
            cached = await self._from_cache(ref)
            if cached is not None:
                return cached
        if local is None:  # a local file of that name would be read first
            if isinstance(missing, _Unread):
                await self._raise_if_missing(ref)
            elif (detail := _missing_detail(missing, ref)) is not None:
                raise NotFound(detail)
        return await self.coordination.once(
            f"fetch:{ref.idv}",
            lambda: self._fetch(ref, prepare, ready),
            lambda: self._from_cache(ref),
        )

    async def _from_cache(self, ref: PaperRef) -> LoadedPaper | None:
        cached = await asyncio.to_thread(self._cached, ref)
        if cached is not None:
            self.cache_hits += 1
        return cached

    async def _fetch(
        self, ref: PaperRef, prepare: Prepare | None = None, ready: Ready[LoadedPaper] | None = None
    ) -> LoadedPaper:
        """The source policy (docs/fetching.md), in one loop: ask each source in turn (the
        local directory's files, then arXiv's HTML, ar5iv and arXiv's PDF), parse its page,
        settle its version, and accept it or ask the next; then cache what was accepted (a
        local document: its parse only).

        Passed over: a local `<id>.html` of another version than the one asked for, a PDF
        without a text layer, and a failed rendering (a conversion that died before the body,
        contract §2), which is served only when no source has better, and then never cached. A
        paper no source has is remembered for PAPERANCHOR_NOT_FOUND_TTL_S.
        """
        passed = _Passed()
        try:
            found = False
            async with aclosing(self.sources.local_pages(ref)) as pages:
                async for page in pages:
                    found = True
                    if (loaded := await self._read(ref, page, passed, prepare)) is not None:
                        return loaded
            if not (ref.is_local and found):  # a local reference's file is all there is
                absents: list[Absent] = []
                pdf_read = False
                for ask in self.sources.network(ref):
                    answer = await ask()
                    if isinstance(answer, Absent):
                        absents.append(answer)
                        continue
                    found = True
                    pdf_read = answer.kind == "pdf"  # read but not served: it said why
                    read = await self._read(ref, answer, passed, prepare, ready)
                    if (loaded := read) is not None:
                        return loaded
                raise self.sources.missing(ref, absents, found=found, pdf_read=pdf_read)
        except PaperMissing as exc:
            if passed.failed is None:  # a failed rendering is no evidence that it is missing
                self.fetches += 1
                missing = _with_reasons(exc, passed.unreadable)
                await self._remember_missing(ref, missing)
                raise missing from None
        except NotFound as exc:
            if passed.failed is None:
                self.fetches += 1
                raise _with_reasons(exc, passed.unreadable) from None
        except Exception:
            self.fetches += 1
            raise
        if passed.failed is None:
            # only a local document's pages end without NotFound: its file was a PDF without text
            assert passed.unreadable, "the sources raise NotFound when they have nothing"
            raise NotFound(f"{ref.paper}: " + "; ".join(passed.unreadable))
        return passed.failed

    async def _read(
        self,
        ref: PaperRef,
        page: FetchedPage,
        passed: _Passed,
        prepare: Prepare | None = None,
        ready: Ready[LoadedPaper] | None = None,
    ) -> LoadedPaper | None:
        """`page` parsed, its version settled and, when it is a paper to serve, cached and
        returned; None when it is passed over (`passed` says why)."""
        try:
            if page.source == "local":
                loaded = await self._local_paper(page)
            else:
                self.fetches += 1
                base_url = page.base_url or page.source_url
                loaded = await self._parse_page(
                    page,
                    base_url,
                    lambda document: self._settle(ref, page, document, prepare, ready),
                )
        except _NoText as exc:
            passed.unreadable.append(exc.detail)
            return None  # not a paper to serve: a later source may have one
        except (ParseError, TooLarge) as exc:
            if passed.failed is None or page.kind != "pdf":
                raise
            # a PDF the reader refuses is no better than the failed rendering
            log.info("%s; serving the failed rendering", exc.detail)
            return None
        if loaded is None:
            return None  # a local file holds another version than the one asked for
        if loaded.document.quality == "failed":
            log.info("%s's rendering of %s failed; asking on", page.source, ref.idv)
            passed.failed = passed.failed or loaded
            return None
        if loaded.source == "local" and page.fingerprint:
            self._know_local(ref, page.fingerprint, _local_key(page), loaded)
        return loaded  # an arXiv paper was stored and held by _settle

    def _settle(
        self,
        ref: PaperRef,
        page: FetchedPage,
        document: Document,
        prepare: Prepare | None,
        ready: Ready[LoadedPaper] | None = None,
    ) -> LoadedPaper | None:
        """In the parse's worker thread, so that a cold request hops once for all of it: the
        page's paper resolved and, when it is one to serve, stored, held and opened (`prepare`
        run on its view), then the heap the parse freed handed back.

        With `ready`, a page under TRIM_AFTER_BYTES is opened and handed to its readers first,
        and stored, held and trimmed right after, in this thread while the answer goes out: the
        store write (the codec's encoding and diskcache's SQLite) is no part of a cold answer.
        Until it is held, the paper and its view are found in `_answered`.
        """
        loaded = _resolved(document, page)
        if loaded is None or loaded.document.quality == "failed":
            return loaded
        if ready is not None and len(page.html) < TRIM_AFTER_BYTES:
            return self._answer_then_store(ref, page, loaded, prepare, ready)
        size = self._remember(ref, loaded)
        self._keep(loaded.idv, loaded, settled=_settled(loaded), size=size or len(page.html))
        try:
            self._open(loaded, prepare)
        except Exception:  # `get` opens it again and answers the error
            log.debug("opening %s failed", loaded.idv, exc_info=True)
        release_freed_memory()
        return loaded

    def _answer_then_store(
        self,
        ref: PaperRef,
        page: FetchedPage,
        loaded: LoadedPaper,
        prepare: Prepare | None,
        ready: Ready[LoadedPaper],
    ) -> LoadedPaper:
        view: Paper | None = None
        try:
            view = self._opened(loaded, prepare)
        except Exception:  # `get` opens it again and answers the error
            log.debug("opening %s failed", loaded.idv, exc_info=True)
        with self._settled_lock:
            self._answered[loaded.idv] = (loaded, view)
        ready(loaded)
        try:
            size = self._remember(ref, loaded)
            self._keep(loaded.idv, loaded, settled=_settled(loaded), size=size or len(page.html))
            if view is not None:
                self._attach(loaded, view)
                self._count_renderings(loaded, view)  # as the answer's `get` counted them
        finally:
            with self._settled_lock:
                if self._answered.get(loaded.idv, (None,))[0] is loaded:
                    del self._answered[loaded.idv]
        release_freed_memory()
        return loaded

    async def _parse_page(
        self,
        page: FetchedPage,
        base_url: str,
        then: Callable[[Document], _Result],
    ) -> _Result:
        """A page's tree, in a worker thread, under the process's bound on parses of its kind.

        A PDF the reader cannot read is an error naming the paper and where the PDF came from;
        one without a text layer is `_NoText`, so that the next source is asked.
        """
        if page.kind != "pdf":
            try:
                return await _bounded(self._html_slots, self._parse, page.html, base_url, then)
            except TooLarge as exc:  # the parser's bounds do not know the paper's name
                raise TooLarge(f"{page.ref.paper}: {exc.detail}") from None
        what = (
            f"the local file {page.source_url}"
            if page.source == "local"
            else f"arXiv's PDF of {page.found.idv}"
        )
        try:
            return await _bounded(self._pdf_slots, self._parse_pdf, page.html, base_url, then)
        except NotFound as exc:
            raise _NoText(f"{what} cannot be read: {exc.detail}") from None
        except PaperAnchorError as exc:
            raise type(exc)(f"{what} cannot be read: {exc.detail}") from None

    async def _local_paper(self, page: FetchedPage) -> LoadedPaper | None:
        """A local page's paper, its parse cached by the file's bytes (None when its furniture
        names another version than the one asked for). The paper held in memory is answered
        again while it is the same, so its views are kept too."""
        key = await asyncio.to_thread(_local_key, page)
        held = self._recall(key)
        size = 0
        if held is not None:
            self.cache_hits += 1
            document = held.document
        else:
            found = await asyncio.to_thread(self.cache.read_paper, key, self.parser_version)
            if found is not None:
                self.cache_hits += 1
                document, size = found[0].document, found[1]
            else:
                self.fetches += 1
                base_url = page.base_url or page.source_url
                document = await self._parse_page(page, base_url, _document)
                ttl = self.settings.latest_ttl_s
                if ttl > 0:
                    entry = _entry(document, page)
                    put = self.cache.put_paper
                    size = await asyncio.to_thread(put, key, self.parser_version, entry, ttl)
        loaded = _resolved(document, page)
        if loaded is None:
            return None
        if held is not None and held.same(loaded):
            return held
        self._keep(key, loaded, settled=True, size=size or len(page.html))
        if held is None:
            await self._release(max(size, len(page.html)))  # after a parse or a decode
        return loaded

    async def _release(self, size: int) -> None:
        """Hand freed heap back after a parse of `size` bytes: at once when it is large, else
        in the background, one trim at a time (TRIM_AFTER_BYTES)."""
        if size >= TRIM_AFTER_BYTES:
            await asyncio.to_thread(release_freed_memory)
        elif self._trimming is None or self._trimming.done():
            self._trimming = asyncio.ensure_future(asyncio.to_thread(release_freed_memory))

    async def _known_local(self, ref: PaperRef, fingerprint: str) -> LoadedPaper | None:
        """The parse of an unchanged local file, found by its fingerprint without reading it."""
        with self._settled_lock:
            known = self._local_known.get((ref.idv, fingerprint))
            if known is not None:
                self._local_known.move_to_end((ref.idv, fingerprint))
        if known is None:
            return None
        key, header = known  # the paper's header without its tree
        held = self._recall(key)
        if held is not None and held == header:
            self.cache_hits += 1
            return held  # the very paper held, so the service's views of it are kept too
        if held is not None:
            document, size = held.document, self._held_size(key)
        else:
            found = await asyncio.to_thread(self.cache.read_paper, key, self.parser_version)
            if found is None:
                return None  # no longer kept: read and parse it again
            document, size = found[0].document, found[1]
        loaded = replace(header, document=document)
        self.cache_hits += 1
        self._keep(key, loaded, settled=True, size=size)
        return loaded

    def _know_local(self, ref: PaperRef, fingerprint: str, key: str, loaded: LoadedPaper) -> None:
        with self._settled_lock:
            self._local_known[(ref.idv, fingerprint)] = (key, loaded.header())
            while len(self._local_known) > LOCAL_FINGERPRINTS:
                self._local_known.popitem(last=False)

    # -- "no such paper", remembered for NOT_FOUND_TTL_S ----------------------------------------

    async def _raise_if_missing(self, ref: PaperRef) -> None:
        """`NotFound` again when every source said lately that `ref` does not exist."""
        if self.settings.not_found_ttl_s <= 0:
            return
        raw = await asyncio.to_thread(self._kept.get, _missing_key(ref))
        detail = _missing_detail(raw, ref)
        if detail is not None:
            raise NotFound(detail)

    async def _remember_missing(self, ref: PaperRef, exc: PaperMissing) -> None:
        ttl = self.settings.not_found_ttl_s
        if ttl <= 0:
            return
        detail = exc.detail.encode()
        await asyncio.to_thread(self._kept.set, _missing_key(ref), detail, ttl)

    def _cached(self, ref: PaperRef) -> LoadedPaper | None:
        """The cached paper for `ref` (runs in a worker thread: the store is blocking I/O)."""
        candidates = [ref.idv]
        mapped = self.cache.get_latest(ref.idv)
        if mapped is not None and mapped != ref.idv:
            # A bare id's latest version wins over an entry stored under the bare id itself.
            candidates.insert(0 if ref.version is None else 1, mapped)
        for idv in candidates:
            kept = self._recall(idv)
            if kept is not None:
                return kept
            found = self.cache.read_paper(idv, self.parser_version)
            if found is None:
                continue
            loaded, size = found
            if loaded.idv != idv:  # the entry's own label was rewritten to match the key
                self.cache.drop_paper(idv, self.parser_version, f"it holds {loaded.idv}")
                continue
            self._keep(idv, loaded, settled=_settled(loaded), size=size)
            if size >= TRIM_AFTER_BYTES:
                release_freed_memory()
            return loaded
        return None

    def _recall(self, key: str) -> LoadedPaper | None:
        with self._settled_lock:
            kept = self._settled.get(key)
            if kept is None:
                answered = self._answered.get(key)  # answered, its store write under way
                return answered[0] if answered is not None else None
            if kept.expires <= time.monotonic():
                self._forget(key)
                return None
            self._settled.move_to_end(key)
            return kept.loaded

    def _keep(
        self, key: str, loaded: LoadedPaper, *, settled: bool, size: int, named: bool = True
    ) -> None:
        """Hold `loaded` in memory as `size` bytes of entry, evicting the least recently used;
        `named`: the paper's idv names this entry (an edition of one source does not)."""
        ttl = min(self.settings.latest_ttl_s, UNSETTLED_MEMORY_S)
        with self._settled_lock:
            old = self._settled.get(key)
            view = old.view if old is not None and old.loaded is loaded else None
            self._forget(key)
            kept = _Kept(loaded, 0.0, size, view, view.rendered_bytes if view is not None else 0)
            if (not settled and ttl <= 0) or kept.weight > self.memory_bytes:
                return  # served, not held: it would not fit at all
            kept.expires = math.inf if settled else time.monotonic() + ttl
            self._settled[key] = kept
            if named:
                self._key_of[loaded.idv] = key
            self._held += kept.weight
            self._evict()

    def _forget(self, key: str) -> None:
        kept = self._settled.pop(key, None)
        if kept is not None:
            self._held -= kept.weight
            if self._key_of.get(kept.loaded.idv) == key:
                del self._key_of[kept.loaded.idv]

    def _held_size(self, key: str) -> int:
        """The entry size `key` is held as (0 when it is not held)."""
        with self._settled_lock:
            kept = self._settled.get(key)
            return kept.size if kept is not None else 0

    @property
    def memory_held(self) -> int:
        """Bytes the papers held in memory are counted as (at most `memory_bytes`)."""
        return self._held

    def _remember(self, ref: PaperRef, loaded: LoadedPaper) -> int:
        """Cache `loaded`; the size of its entry, 0 when it was not stored."""
        ttl = self.settings.latest_ttl_s
        size = 0
        # A version never changes, so a confirmed one is kept forever; anything else may be
        # superseded (a newer version, arXiv HTML replacing ar5iv) and lives as long as "latest".
        if _settled(loaded):
            size = self.cache.put_paper(loaded.idv, self.parser_version, loaded)
        elif ttl > 0:
            size = self.cache.put_paper(loaded.idv, self.parser_version, loaded, ttl)
        if ref.idv != loaded.idv and ttl > 0:
            self.cache.put_latest(ref.idv, loaded.idv, ttl)
        self._stored += 1  # after the writes: a reader that sees it finds them
        return size


_Missing = TypeVar("_Missing", bound=NotFound)


@dataclass(slots=True)
class _Passed:
    """What the source loop passed over: the first failed rendering, and why PDFs could not
    be read."""

    failed: LoadedPaper | None = None
    unreadable: list[str] = field(default_factory=list)


class _NoText(Exception):
    """A PDF without a text layer (a scanned paper): no paper to serve, the next source may be."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _with_reasons(exc: _Missing, unreadable: list[str]) -> _Missing:
    """`exc` with what was found but could not be read (a PDF without text) said after it."""
    if not unreadable:
        return exc
    return type(exc)(f"{exc.detail}, and " + "; ".join(unreadable))


async def _bounded(
    gate: asyncio.Semaphore,
    parse: Parse,
    data: bytes,
    base_url: str,
    then: Callable[[Document], _Result],
) -> _Result:
    """`then(parse(data, base_url))` in a worker thread once `gate` has a free slot.

    The slot is held until the parse ends, even when the caller is cancelled first (the last
    waiter of a fetch gave up): the thread and its child run on to their end, at most the
    reader's 90 s, and must still count.
    """
    await gate.acquire()
    try:
        work = asyncio.ensure_future(asyncio.to_thread(lambda: then(parse(data, base_url))))
    except BaseException:
        gate.release()
        raise

    def done(finished: asyncio.Future[_Result]) -> None:
        gate.release()
        if not finished.cancelled():
            finished.exception()  # retrieved: a parse nobody waits for any more is not an error

    work.add_done_callback(done)
    return await asyncio.shield(work)


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc only
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()
_M_ARENA_MAX = -8  # glibc's malloc.h


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for the threads started from now on (elsewhere nothing);
    whether it was set."""
    return _LIBC is not None and bool(_LIBC.mallopt(_M_ARENA_MAX, arenas))


def release_freed_memory() -> None:
    """Hand the heap memory Python has freed back to the system (glibc; elsewhere nothing)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _settled(loaded: LoadedPaper) -> bool:
    return loaded.version is not None and loaded.version_confirmed


def _entry(document: Document, page: FetchedPage) -> LoadedPaper:
    """What a local document's cache entry holds: its tree (the rest is resolved per request)."""
    ref = page.found
    return LoadedPaper(
        document, ref.paper, ref.idv, ref.version, False, page.source, page.source_url
    )


def _local_key(page: FetchedPage) -> str:
    """A local file's parse is kept by its bytes: a file can change under the same name."""
    digest = hashlib.sha256(page.base_url.encode() + b"\0" + page.html).hexdigest()
    return f"local-sha256:{digest}"


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


def _resolved(document: Document, page: FetchedPage) -> LoadedPaper | None:
    """The paper a parsed page is, its version settled (contract §2, Versions), here only: where
    it was found names it (arXiv's final URL, a local file's name: confirmed), else the page's
    own furniture (its `<base href>` or arXiv's watermark, read by the parser into `page_idv`;
    confirmed but from ar5iv), never body text; else it is unknown. None when a local file's
    furniture names another version than the one asked for."""
    asked = page.ref
    ref, confirmed = page.found, page.found_version is not None
    named = _furniture_version(document.page_idv, asked)
    if ref.version is None and named is not None and not asked.is_local:
        if page.source == "local" and asked.version not in (None, named):
            return None
        ref, confirmed = asked.with_version(named), page.source != "ar5iv"
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
