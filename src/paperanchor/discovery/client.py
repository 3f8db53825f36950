"""The discovery clients (SPEC §4): the arXiv API and Semantic Scholar, polite and cached.

    discovery = Discovery(settings, upstream=upstream, store=store)
    await discovery.metadata([ref, …])        # up to 20 papers, one API request: {idv: Metadata}
    await discovery.metadata_of(ref)          # one paper's Metadata, or NotFound
    await discovery.outline_metadata(ref, 1)  # kept, else fetched within 1 s (batched), else None
    await discovery.search(query)             # query.search_query(…) -> SearchPage
    await discovery.citations(ref, limit)     # Citations (Semantic Scholar)
    await discovery.cited_papers(ref, 1)      # the arXiv ids of its references (S2), kept a day
    await discovery.trends(category, days)    # Trends
    await discovery.listing_licence(ref)      # the licence arxiv.org/abs links to, or None
    await discovery.aclose()

This is the impure half of `paperanchor.discovery`: it sends the requests that `query.py` and
`s2.py` compose through `upstream.py`, each service behind a gate of its own (the arXiv API every
`PAPERANCHOR_ARXIV_API_GAP_S`, 3 s; Semantic Scholar every 1 s with a key, 3 s without; across
processes with Redis), and hands the answers to `atom.py` and `s2.py`. Answers are kept in the
store as JSON entries (`entries.py`, checked when read back): metadata for
`PAPERANCHOR_LATEST_TTL_S`, searches and trends for an hour, citations for a day. Errors are
never kept. Offline (`PAPERANCHOR_OFFLINE=1`) or with an empty URL, what is kept is served and
nothing is asked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from typing_extensions import TypedDict

from paperanchor import licence
from paperanchor.discovery import atom, entries, query, s2
from paperanchor.discovery.atom import Feed
from paperanchor.discovery.categories import category_id, trends
from paperanchor.errors import NotFound, PaperAnchorError, TooLarge, UpstreamError
from paperanchor.flight import SingleFlight
from paperanchor.refs import PaperRef, shown
from paperanchor.settings import Settings
from paperanchor.shapes import Citations, Metadata, SearchPage, Trends
from paperanchor.store import BestEffort, Store
from paperanchor.upstream import Answer, Gate, Upstream

log = logging.getLogger(__name__)

T = TypeVar("T")

ARXIV_API = "arXiv API"
SEMANTIC_SCHOLAR = "Semantic Scholar"
SEARCH_TTL_S = 3600.0  # SPEC §4 leaves it to us: a search's newest results may change hourly
TRENDS_TTL_S = 3600.0  # one search
CITATIONS_TTL_S = 86400.0  # SPEC §4: cached for a day
REFERENCES_TTL_S = 86400.0  # SPEC §11: a paper's references from S2, cached a day
# Papers whose outline metadata is queued or sent after their outline answered without it
# (sent 20 to a request, bounded by the timeouts); past this many, an outline does not queue
# another one and answers `metadata: null`.
MAX_BACKGROUND = 64
# Metadata outlines answered lately, held in memory: entries and how long one read back from
# the store is trusted (its remaining time there is unknown; one written here keeps its own).
METADATA_MEMO_ENTRIES = 4096
METADATA_MEMO_READ_S = 60.0
_ATOM = {"Accept": "application/atom+xml"}
# An error answer's body is read this far: arXiv's error feed is 1.3 kB, S2's error a line.
_ERROR_BYTES = 64 * 1024
# Entry format version, in every key: a change of shape changes the keys.
_ENTRY = "1"
ARXIV_LISTING = "arXiv listing"
# An abs page is 20-60 kB; a larger answer is not one (licence.ABS_PAGE_BYTES is read of it).
LISTING_BYTES = 1 << 20


class ListedLicence(TypedDict):
    """A paper's licence as its arXiv listing links to it, kept in the store."""

    paper: str
    license: str | None


def api_url(base: str, params: dict[str, str]) -> str:
    """The URL of one arXiv API request (the tests' replay is scripted with the same)."""
    return f"{base}?{urlencode(params, quote_via=quote, safe=':,')}"


def s2_url(base: str, path: str, params: dict[str, str]) -> str:
    """The URL of one Semantic Scholar request."""
    return f"{base}/{quote(path, safe='/:')}?{urlencode(params, quote_via=quote, safe=',')}"


class Discovery:
    """Metadata, search, citations and trends over one `Upstream` client and one store."""

    def __init__(
        self,
        settings: Settings,
        *,
        upstream: Upstream,
        store: Store,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.settings = settings
        self.upstream = upstream
        self.store = store
        self._kept = BestEffort(store)
        self._clock = clock or (lambda: datetime.now(UTC))
        self._arxiv_gate = Gate("arxiv-api", settings.arxiv_api_gap_s)
        self._s2_gate = Gate("semantic-scholar", settings.s2_gap)
        secret = settings.s2_api_key
        api_key = secret.get_secret_value() if secret is not None else None
        self._s2_headers = {"Accept": "application/json", **s2.headers(api_key)}
        self._flight: SingleFlight[str, Any] = SingleFlight()
        # the outlines' metadata requests: queued for the API's next turn, then sent (one
        # request per batch); each with the future its outlines wait on
        self._queued: dict[str, tuple[PaperRef, asyncio.Future[Metadata | None]]] = {}
        self._sent: dict[str, tuple[PaperRef, asyncio.Future[Metadata | None]]] = {}
        # idv -> (expiry on the monotonic clock, metadata): a warm outline reads no store
        self._memo: OrderedDict[str, tuple[float, Metadata]] = OrderedDict()
        self._batches: asyncio.Task[None] | None = None
        # paper -> the fetch of its references from S2, while it runs (cited_papers)
        self._references: dict[str, asyncio.Future[s2.CitedPapers]] = {}

    async def __aenter__(self) -> Discovery:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel the metadata fetches outlines left running (the HTTP client is the upstream's)."""
        if self._batches is not None:
            self._batches.cancel()
            await asyncio.gather(self._batches, return_exceptions=True)
        for _, answer in [*self._queued.values(), *self._sent.values()]:
            answer.cancel()
        for fetch in list(self._references.values()):
            fetch.cancel()
        await asyncio.gather(*self._references.values(), return_exceptions=True)
        self._references.clear()
        self._queued.clear()
        self._sent.clear()

    # -- what can be asked --------------------------------------------------------------------

    @property
    def asks_arxiv(self) -> bool:
        """Whether the arXiv API is asked at all (configured, and not offline)."""
        return bool(self.settings.arxiv_api_url) and not self.settings.offline

    def _no_arxiv(self, what: str) -> NotFound:
        if self.settings.offline:
            return NotFound(
                f"{what} is not in the cache, and offline mode (PAPERANCHOR_OFFLINE=1) asks "
                "nothing of the arXiv API"
            )
        return NotFound(f"{what} needs the arXiv API, and PAPERANCHOR_ARXIV_API_URL is empty")

    def _no_s2(self, what: str) -> NotFound:
        if self.settings.offline:
            return NotFound(
                f"{what} is not in the cache, and offline mode (PAPERANCHOR_OFFLINE=1) asks "
                "nothing of Semantic Scholar"
            )
        return NotFound(f"{what} needs Semantic Scholar, and PAPERANCHOR_S2_URL is empty")

    # -- metadata -----------------------------------------------------------------------------

    async def metadata(self, refs: Sequence[PaperRef]) -> dict[str, Metadata]:
        """The metadata of 1-20 papers by their `idv` as asked, in one API request for those
        not kept; a paper arXiv has no entry for is left out.

        A versioned reference gets that version's entry (arXiv answers `id_list=2104.12255v1`
        with v1's title, abstract and dates), a bare one the latest version's (SPEC §2: no
        version means the latest).
        """
        checked = query.id_list(list(refs))
        found: dict[str, Metadata] = {}
        missing: list[PaperRef] = []
        for ref in checked:
            kept = await self._read(_metadata_key(ref), Metadata, _metadata_of(ref))
            if kept is not None:
                found[ref.idv] = kept
            else:
                missing.append(ref)
        if not missing or not self.asks_arxiv:
            return found  # `missing_error` says why the others are absent
        if len(missing) == 1:
            (ref,) = missing
            fetched = await self._flight.run(_metadata_key(ref), lambda: self._fetch([ref]))
        else:
            fetched = await self._fetch(missing)
        return {**found, **fetched}

    async def metadata_of(self, ref: PaperRef) -> Metadata:
        """One paper's metadata; `NotFound` when arXiv has no entry for it."""
        found = await self.metadata([ref])
        if ref.idv not in found:
            raise self.missing_error([ref])
        return found[ref.idv]

    def missing_error(self, refs: Sequence[PaperRef]) -> NotFound:
        """Why `metadata` left these papers out: arXiv has no entry, or it was not asked."""
        names = ", ".join(ref.idv for ref in refs)
        if not self.asks_arxiv:
            return self._no_arxiv(f"The metadata of {names}")
        return NotFound(f"The arXiv API has no paper {names}")

    def kept_metadata(self, ref: PaperRef) -> bytes | None:
        """The store's raw metadata entry for `ref`, for `outline_metadata(kept=…)`: blocking,
        for a worker thread that reads the store anyway."""
        return None if ref.is_local else self._kept.get(_metadata_key(ref))

    async def outline_metadata(
        self, ref: PaperRef, within: float = math.inf, kept: tuple[bytes | None] | None = None
    ) -> Metadata | None:
        """The paper's metadata for its outline: kept, else fetched; None when it cannot be had.

        The fetch is queued for the API's next turn, when every paper queued by then goes out
        in one `id_list` request, and is kept for the next outline. An outline waits for it
        only when its answer can come `within` seconds: a turn further off than that answers
        None at once. It never raises: an outline answers without metadata rather than fail.
        `kept` holds the store's entry when the caller read it already (`kept_metadata`).
        """
        if ref.is_local:
            return None
        if (memo := self._recall(ref.idv)) is not None:
            return memo
        key = _metadata_key(ref)
        try:
            raw = kept[0] if kept is not None else await asyncio.to_thread(self._kept.get, key)
            found = await self._checked(raw, key, Metadata, _metadata_of(ref))
        except PaperAnchorError as exc:
            log.info("no metadata for the outline of %s: %s", ref.idv, exc.wire_text())
            return None
        if found is not None:
            self._remember(ref.idv, found, METADATA_MEMO_READ_S)
        if found is not None or not self.asks_arxiv:
            return found
        sent = ref.idv in self._sent
        turn = 0.0 if sent else self._arxiv_turn_in()
        answer = self._queue_metadata(ref)
        if answer is None:
            return None
        if not sent and turn > within:
            log.info("the metadata of %s waits %.1f s for the API's turn", ref.idv, turn)
            return None
        return await asyncio.shield(answer)

    def _arxiv_turn_in(self) -> float:
        return self.upstream.turn_in(self.settings.arxiv_api_url, self._arxiv_gate)

    def _queue_metadata(self, ref: PaperRef) -> asyncio.Future[Metadata | None] | None:
        """The future answer of `ref`'s metadata, queued for the next batch unless it is already;
        None when MAX_BACKGROUND fetches are queued or sent."""
        known = self._queued.get(ref.idv) or self._sent.get(ref.idv)
        if known is not None:
            return known[1]
        if len(self._queued) + len(self._sent) >= MAX_BACKGROUND:
            return None
        answer: asyncio.Future[Metadata | None] = asyncio.get_running_loop().create_future()
        self._queued[ref.idv] = (ref, answer)
        if self._batches is None or self._batches.done():
            self._batches = asyncio.ensure_future(self._send_batches())
        return answer

    async def _send_batches(self) -> None:
        """Send the queued papers' metadata requests, each batch when the API's turn comes."""
        while self._queued:
            # The queue fills while the gap runs; a request in flight or in line moves the
            # turn, so it is looked at again after each wait.
            while (wait := self._arxiv_turn_in()) > 0:
                await asyncio.sleep(wait)
            batch = list(self._queued.items())[: query.ID_LIST_MAX]
            for idv, queued in batch:
                del self._queued[idv]
                self._sent[idv] = queued
            found: dict[str, Metadata] = {}
            try:
                found = await self._fetch([ref for _, (ref, _) in batch])
            except PaperAnchorError as exc:
                log.info("no metadata for %d outlines: %s", len(batch), exc.wire_text())
            finally:
                for idv, (_, answer) in batch:
                    self._sent.pop(idv, None)
                    if not answer.done():
                        answer.set_result(found.get(idv))

    async def _fetch(self, refs: list[PaperRef]) -> dict[str, Metadata]:
        subject = refs[0].idv if len(refs) == 1 else f"{len(refs)} papers ({refs[0].idv}, …)"
        feed = await self._arxiv(query.id_list_params(refs), f"the metadata of {subject}")
        found: dict[str, Metadata] = {}
        for ref in refs:
            entry = _entry_for(feed, ref)
            if entry is not None:
                found[ref.idv] = entry
                await self._write(_metadata_key(ref), entry, self.settings.latest_ttl_s)
                self._remember(ref.idv, entry, self.settings.latest_ttl_s)
        return found

    # -- search and trends --------------------------------------------------------------------

    async def search(self, asked: query.ArxivQuery) -> SearchPage:
        """One page of an arXiv search (`query.search_query`), kept for an hour."""
        params = asked.params()
        key = f"search:{_ENTRY}:{_digest(params)}"
        kept = await self._read(key, SearchPage, lambda page: page["query"] == asked.search_query)
        if kept is not None:
            return kept
        what = f'The search "{shown(asked.search_query)}"'
        if not self.asks_arxiv:
            raise self._no_arxiv(what)

        async def fetch() -> SearchPage:
            feed = await self._arxiv(params, what[0].lower() + what[1:])
            page = atom.search_page(feed, asked.search_query, asked.limit)
            await self._write(key, page, SEARCH_TTL_S)
            return page

        found: SearchPage = await self._flight.run(key, fetch)
        return found

    async def trends(self, category: str, days: int | str | None = None) -> Trends:
        """Submissions per day and the top title terms of `category` over the last `days`."""
        now = self._clock()
        asked, window = query.trends_query(category, days, today=now.astimezone(UTC).date())
        params = asked.params()
        canonical = category_id(category)
        key = f"trends:{_ENTRY}:{_digest(params)}"
        kept = await self._read(key, Trends, lambda found: found["category"] == canonical)
        if kept is not None:
            return kept
        what = f"The trends of {canonical}"
        if not self.asks_arxiv:
            raise self._no_arxiv(what)

        async def fetch() -> Trends:
            feed = await self._arxiv(params, f"the trends of {canonical}")
            # counting 2,000 entries' titles takes about 30 ms: off the event loop
            found = await asyncio.to_thread(trends, feed, window, now, category=canonical)
            await self._write(key, found, TRENDS_TTL_S)
            return found

        result: Trends = await self._flight.run(key, fetch)
        return result

    # -- licences (SPEC §12) ------------------------------------------------------------------

    async def listing_licence(self, ref: PaperRef) -> str | None:
        """The licence `ref`'s arXiv listing (its abs page) links to, kept for
        PAPERANCHOR_LATEST_TTL_S; None when the listing names none or cannot be had now (an
        unknown licence, which is not kept)."""
        if ref.is_local:
            return None
        key = f"licence:{_ENTRY}:{ref.idv}"
        kept = await self._read(key, ListedLicence, lambda found: found["paper"] == ref.paper)
        if kept is not None:
            return kept["license"]
        base = self.settings.arxiv_abs_url
        if not base or self.settings.offline:
            return None

        async def fetch() -> str | None:
            url = f"{base}/{quote(ref.idv, safe='/')}"
            subject = f"the licence of {ref.idv}"
            try:
                answer = await self.upstream.get(
                    url, label=ARXIV_LISTING, subject=subject, limit=LISTING_BYTES
                )
            except PaperAnchorError as exc:
                log.info("no listing licence for %s: %s", ref.idv, exc.wire_text())
                return None
            if answer.status not in (200, 404):
                log.info("%s answered %d for %s", ARXIV_LISTING, answer.status, subject)
                return None
            found = licence.abs_page_licence(answer.body) if answer.status == 200 else None
            listed: ListedLicence = {"paper": ref.paper, "license": found}
            await self._write(key, listed, self.settings.latest_ttl_s)
            return found

        result: str | None = await self._flight.run(key, fetch)
        return result

    # -- citations ----------------------------------------------------------------------------

    async def citations(self, ref: PaperRef, limit: int | str | None = None) -> Citations:
        """Who cites `ref` (Semantic Scholar), its first `limit` citing papers; kept a day."""
        count = s2.citations_limit(limit)
        path, params = s2.citations_request(ref, count)
        key = f"citations:{_ENTRY}:{ref.paper}:{count}"
        kept = await self._read(key, Citations, lambda found: found["paper"] == ref.paper)
        if kept is not None:
            return kept
        what = f"The citations of {ref.paper}"
        if not self.settings.s2_url or self.settings.offline:
            raise self._no_s2(what)

        async def fetch() -> Citations:
            subject = f"arXiv:{ref.paper}"
            page = await self._s2(path, params, subject)
            # The page alone counts the citations when it is the last one (S2 says `next` when
            # there are more): a paper cited fewer than `limit` times costs one request.
            paper = b"{}"
            if _has_next(page):
                paper_path, paper_params = s2.paper_request(ref)
                paper = await self._s2(paper_path, paper_params, subject)
            found = s2.citations(ref, paper, page, count)
            await self._write(key, found, CITATIONS_TTL_S)
            return found

        result: Citations = await self._flight.run(key, fetch)
        return result

    # -- the arXiv ids of a paper's references (SPEC §11) -------------------------------------

    async def cited_papers(
        self, ref: PaperRef, within: float = math.inf
    ) -> tuple[s2.CitedPapers | None, bool]:
        """The references of `ref` S2 knows arXiv ids for, and whether they may still come.

        Kept a day, else fetched (one request per paper), waited for at most `within` seconds:
        past that, or when S2's turn is further off, the answer is (None, True) and the fetch
        goes on, kept for the next call. A local paper, offline or without S2: (None, False).
        It never raises: a failed fetch is logged, kept nowhere, and answers (None, True), as
        the next call asks again.
        """
        if ref.is_local or not self.settings.s2_url or self.settings.offline:
            return None, False
        key = f"s2refs:{_ENTRY}:{ref.paper}"
        try:
            kept = await self._read(key, s2.CitedPapers, lambda found: found["paper"] == ref.paper)
        except PaperAnchorError as exc:
            log.info("no kept references of %s: %s", ref.paper, exc.wire_text())
            kept = None
        if kept is not None:
            return kept, False
        fetch = self._references.get(ref.paper)
        if fetch is None:
            if len(self._references) >= MAX_BACKGROUND:
                return None, False
            fetch = asyncio.ensure_future(self._fetch_cited(ref, key))
            self._references[ref.paper] = fetch
            fetch.add_done_callback(lambda done: self._fetched(ref.paper, done))
        if self.upstream.turn_in(self.settings.s2_url, self._s2_gate) > within:
            return None, True
        try:
            wait = None if math.isinf(within) else within
            return await asyncio.wait_for(asyncio.shield(fetch), wait), False
        except TimeoutError:
            return None, True
        except PaperAnchorError:
            return None, True  # _fetched logs it

    def _fetched(self, paper: str, done: asyncio.Future[s2.CitedPapers]) -> None:
        self._references.pop(paper, None)
        if not done.cancelled() and (error := done.exception()) is not None:
            # nobody may be waiting any more: the failure is said here, once
            log.info("no references of %s from %s: %s", paper, SEMANTIC_SCHOLAR, error)

    async def _fetch_cited(self, ref: PaperRef, key: str) -> s2.CitedPapers:
        path, params = s2.references_request(ref)
        body = await self._s2(path, params, f"arXiv:{ref.paper}")
        found = await asyncio.to_thread(s2.cited_papers, ref, body)
        await self._write(key, found, REFERENCES_TTL_S)
        return found

    # -- upstream requests --------------------------------------------------------------------

    async def _arxiv(self, params: dict[str, str], subject: str) -> Feed:
        """One arXiv API request: its feed, or arXiv's error (BadRequest, NotFound)."""
        url = api_url(self.settings.arxiv_api_url, params)
        answer = await self._request(
            url, ARXIV_API, subject, atom.MAX_FEED_BYTES, _unended_feed, self._arxiv_gate, _ATOM
        )
        if answer.status not in (200, 400):
            raise UpstreamError(f"{ARXIV_API} answered {answer.status} for {subject}")
        # parsing 2,000 entries takes about 0.3 s: off the event loop. An error feed (arXiv
        # answers it with 400) raises arXiv's words as BadRequest or NotFound here.
        feed = await asyncio.to_thread(atom.parse_feed, answer.body)
        if answer.status == 400:
            raise UpstreamError(f"{ARXIV_API} answered 400 for {subject} without an error feed")
        return feed

    async def _s2(self, path: str, params: dict[str, str], subject: str) -> bytes:
        """One Semantic Scholar request: its JSON body, or S2's error in its words."""
        url = s2_url(self.settings.s2_url, path, params)
        answer = await self._request(
            url,
            SEMANTIC_SCHOLAR,
            subject,
            s2.MAX_ANSWER_BYTES,
            _unended_json,
            self._s2_gate,
            self._s2_headers,
        )
        s2.raise_for_status(answer.status, answer.body, subject)
        return answer.body

    async def _request(
        self,
        url: str,
        label: str,
        subject: str,
        limit: int,
        broken: Callable[[bytes], str | None],
        upstream: Gate,
        headers: dict[str, str],
    ) -> Answer:
        try:
            return await self.upstream.get(
                url,
                label=label,
                subject=subject,
                limit=limit,
                # an error answer is read whole: arXiv's error feed (400), S2's {"error": …}
                error_limit=_ERROR_BYTES,
                broken=broken,
                upstream=upstream,
                headers=headers,
            )
        except TooLarge:
            # not the caller's page being too large (too-large, 413): garbage from upstream
            raise UpstreamError(
                f"{label} answered {subject} with more than {limit:,} bytes"
            ) from None

    # -- the store ----------------------------------------------------------------------------

    def _recall(self, idv: str) -> Metadata | None:
        """Metadata held in memory for `idv`, while it lasts."""
        held = self._memo.get(idv)
        if held is None:
            return None
        if held[0] <= time.monotonic():
            del self._memo[idv]
            return None
        self._memo.move_to_end(idv)
        return held[1]

    def _remember(self, idv: str, metadata: Metadata, ttl: float) -> None:
        if ttl <= 0:
            return
        self._memo[idv] = (time.monotonic() + ttl, metadata)
        self._memo.move_to_end(idv)
        while len(self._memo) > METADATA_MEMO_ENTRIES:
            self._memo.popitem(last=False)

    async def _read(
        self, key: str, shape: type[T], belongs: Callable[[T], bool] | None = None
    ) -> T | None:
        """The entry kept under `key`, checked; None when there is none or it is not ours."""
        return await self._checked(
            await asyncio.to_thread(self._kept.get, key), key, shape, belongs
        )

    async def _checked(
        self, raw: bytes | None, key: str, shape: type[T], belongs: Callable[[T], bool] | None
    ) -> T | None:
        """The entry `raw` read from under `key`, checked (dropped from the store when bad)."""
        if raw is None:
            return None
        try:
            value = entries.decode(raw, key, shape)
            if belongs is not None and not belongs(value):
                raise entries.EntryError("it answers another request")
        except entries.EntryError as exc:
            log.warning("dropping cache entry %s: %s", key, exc)
            await asyncio.to_thread(self._kept.delete, key)
            return None
        return value

    async def _write(self, key: str, value: Any, ttl: float) -> None:
        if ttl <= 0:
            return
        raw = entries.encode(key, value)
        if raw is None:
            log.info("not caching %s: larger than %d bytes", key, entries.MAX_ENTRY_BYTES)
            return
        await asyncio.to_thread(self._kept.set, key, raw, ttl)


# -- helpers ---------------------------------------------------------------------------------


def _metadata_key(ref: PaperRef) -> str:
    return f"meta:{_ENTRY}:{ref.idv}"


def _metadata_of(ref: PaperRef) -> Callable[[Metadata], bool]:
    """Whether a kept entry is `ref`'s: its paper, and its version when one was asked for."""

    def belongs(metadata: Metadata) -> bool:
        if metadata["paper"] != ref.paper or metadata["latestVersion"] < 1:
            return False
        return ref.version is None or metadata["latestVersion"] == ref.version

    return belongs


def _entry_for(feed: Feed, ref: PaperRef) -> Metadata | None:
    """The feed's entry for `ref`: its version's when one was asked, else the latest's."""
    candidates = [entry for entry in feed.entries if entry["paper"] == ref.paper]
    if ref.version is not None:
        candidates = [entry for entry in candidates if entry["latestVersion"] == ref.version]
    return max(candidates, key=lambda entry: entry["latestVersion"], default=None)


def _digest(params: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:32]


def _unended_feed(body: bytes) -> str | None:
    """Why a 200 feed is not whole: it does not end with `</feed>` (a cut answer)."""
    if body.rstrip()[-7:] == b"</feed>":
        return None
    return f"the feed stops before its end ({len(body)} bytes, no </feed>)"


def _unended_json(body: bytes) -> str | None:
    if body.rstrip()[-1:] == b"}":
        return None
    return f"the JSON stops before its end ({len(body)} bytes)"


def _has_next(page: bytes) -> bool:
    try:
        value = json.loads(page[: s2.MAX_ANSWER_BYTES])
    except (ValueError, RecursionError):
        return False  # s2.citations says what is wrong with it
    return isinstance(value, dict) and "next" in value
