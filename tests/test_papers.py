"""A paper by reference: cache, single flight, fetch, parse (over the replay upstream)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path

import pytest

from paperanchor.errors import NotFound, ParseError
from paperanchor.flight import SingleFlight
from paperanchor.papers import HTML_PARSES, LoadedPaper, paper_codec
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.refs import PaperRef, parse_ref
from paperanchor.runtime import Runtime
from paperanchor.settings import Settings
from paperanchor.sources import FetchedPage, Sources
from paperanchor.store import DiskStore, PaperCache
from paperanchor.upstream import Upstream
from tests.replay import cache_entries, load, page, papers_of, slow

ARXIV_PAGE = "2501.11120v1.arxiv.html"
PAPER_V1 = f"paper:{PARSER_VERSION}:2501.11120v1"


# -- single flight ---------------------------------------------------------------------------


def test_a_flight_that_answers_early_finishes_its_work_when_no_waiter_is_left():
    finished = threading.Event()

    async def work(ready: Callable[[str], None]) -> str:
        def worker() -> str:
            ready("answer")  # back once the request that got it has ended
            time.sleep(0.05)  # the work after the answer (a store write)
            finished.set()
            return "answer"

        return await asyncio.to_thread(worker)

    async def main() -> tuple[str, bool, str]:
        flight: SingleFlight[str, str] = SingleFlight()
        answer = await asyncio.create_task(flight.answered("k", work))
        early = not finished.is_set()
        joined = await flight.answered("k", work)  # still running: its answer at once
        await flight.finish()
        return answer, early and finished.is_set() and len(flight) == 0, joined

    assert asyncio.run(main()) == ("answer", True, "answer")


def test_concurrent_callers_of_one_key_share_one_execution():
    calls = []

    async def work() -> str:
        calls.append(1)
        await asyncio.sleep(0.01)
        return "done"

    async def main() -> list[str]:
        flight: SingleFlight[str, str] = SingleFlight()
        results = await asyncio.gather(*(flight.run("k", work) for _ in range(10)))
        assert len(flight) == 0  # nothing remembered after completion
        results.append(await flight.run("k", work))
        return results

    assert asyncio.run(main()) == ["done"] * 11
    assert len(calls) == 2


def test_an_exception_reaches_every_waiter_and_is_not_remembered():
    calls = []

    async def fail() -> str:
        calls.append(1)
        await asyncio.sleep(0.01)
        raise NotFound("Unknown paper 1706.99999")

    async def main() -> list[BaseException | str]:
        flight: SingleFlight[str, str] = SingleFlight()
        first = await asyncio.gather(
            *(flight.run("k", fail) for _ in range(5)), return_exceptions=True
        )
        second = await asyncio.gather(flight.run("k", fail), return_exceptions=True)
        return [*first, *second]

    results = asyncio.run(main())
    assert all(isinstance(result, NotFound) for result in results)
    assert len(calls) == 2


def test_a_cancelled_waiter_does_not_cancel_the_shared_work():
    async def work() -> str:
        await asyncio.sleep(0.05)
        return "done"

    async def main() -> str:
        flight: SingleFlight[str, str] = SingleFlight()
        impatient = asyncio.ensure_future(flight.run("k", work))
        patient = asyncio.ensure_future(flight.run("k", work))
        await asyncio.sleep(0.01)
        impatient.cancel()
        return await patient

    assert asyncio.run(main()) == "done"


def test_the_work_is_cancelled_when_its_last_waiter_is():
    events: list[str] = []

    async def work() -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        return "done"

    async def main() -> str:
        flight: SingleFlight[str, str] = SingleFlight()
        waiters = [asyncio.ensure_future(flight.run("k", work)) for _ in range(3)]
        await asyncio.sleep(0.01)
        for waiter in waiters:
            waiter.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        await asyncio.sleep(0.01)
        assert events == ["cancelled"] and len(flight) == 0

        async def quick() -> str:
            return "fresh"

        # A caller arriving after the cancellation starts afresh instead of joining it.
        return await flight.run("k", quick)

    assert asyncio.run(main()) == "fresh"


# -- the library -----------------------------------------------------------------------------


def test_twenty_concurrent_requests_for_one_uncached_paper_make_one_upstream_get(replay, tmp_path):
    # A slow body keeps the fetch in flight while all twenty requests arrive.
    replay.script("/html/2501.11120v1", slow(replay.corpus_page(ARXIV_PAGE), 65_536, 0.02))

    async def twenty() -> tuple[list[LoadedPaper], int]:
        async with papers_of(replay.settings(tmp_path)) as library:
            papers = await asyncio.gather(
                *(library.load(parse_ref("2501.11120v1")) for _ in range(20))
            )
            return papers, library.fetches

    papers, fetches = asyncio.run(twenty())

    assert replay.paths() == ["/html/2501.11120v1"]
    assert fetches == 1
    assert all(paper is papers[0] for paper in papers)
    assert papers[0].idv == "2501.11120v1"
    assert set(cache_entries(tmp_path)) == {PAPER_V1}


class _CountingStore(DiskStore):
    """The disk store, counting its reads by key."""

    def __init__(self, directory: os.PathLike[str]) -> None:
        super().__init__(Path(directory))
        self.reads: list[str] = []

    def get(self, key: str) -> bytes | None:
        self.reads.append(key)
        return super().get(key)


def test_a_cold_load_looks_each_key_up_once_unless_a_paper_was_stored_meanwhile(replay, tmp_path):
    replay.script("/html/2501.11120v1", page(replay.corpus_page(ARXIV_PAGE)))
    ref = parse_ref("2501.11120v1")

    async def main() -> tuple[list[str], LoadedPaper, LoadedPaper, int]:
        store = _CountingStore(tmp_path / "store")
        settings = replay.settings(tmp_path)
        async with papers_of(settings, store=store) as library:
            before = library._stored
            first = await library.load(ref)
            reads = list(store.reads)
            # A load that missed the cache before that paper was stored, reaching its flight
            # only now (the race the second look is for): it is answered from the cache.
            late = await library._load_uncached(ref, before)
            return reads, first, late, library.fetches

    reads, first, late, fetches = asyncio.run(main())
    assert reads.count(PAPER_V1) == 1  # was 2: looked up again inside the flight
    assert reads.count("latest:2501.11120v1") == 1
    assert "missing:2501.11120v1" in reads  # a remembered not-found is still asked for
    assert late is first and fetches == 1
    assert replay.paths() == ["/html/2501.11120v1"]


class _HeldWrites(DiskStore):
    """The disk store, whose paper writes wait until `release` is set."""

    def __init__(self, directory: os.PathLike[str]) -> None:
        super().__init__(Path(directory))
        self.release = threading.Event()

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        if key.startswith("paper:"):
            assert self.release.wait(10)
        super().set(key, value, ttl)


def test_a_fetched_paper_is_answered_before_its_store_write_which_lands_right_after(
    replay, tmp_path
):
    replay.script("/html/2501.11120v1", page(replay.corpus_page(ARXIV_PAGE)))
    ref = parse_ref("2501.11120v1")

    async def main() -> tuple[LoadedPaper, LoadedPaper, bool, int, LoadedPaper | None]:
        store = _HeldWrites(tmp_path / "store")
        async with papers_of(replay.settings(tmp_path), store=store) as library:
            # answered while its write cannot land yet
            first = await asyncio.wait_for(library.load(ref), 10)
            # a request meanwhile joins it: no second fetch, the same paper
            again = await asyncio.wait_for(library.load(ref), 10)
            unwritten = store.get(PAPER_V1) is None
            store.release.set()
            await library.stored()
            held = library._recall(ref.idv)
            return first, again, unwritten, library.fetches, held

    first, again, unwritten, fetches, held = asyncio.run(main())
    assert unwritten and again is first and held is first and fetches == 1
    assert set(cache_entries(tmp_path / "store")) == {PAPER_V1}  # stored, nothing lost
    assert replay.paths() == ["/html/2501.11120v1"]


def test_a_cached_paper_is_served_without_an_upstream_request(replay, tmp_path):
    settings = replay.settings(tmp_path)
    first = asyncio.run(load(settings, "2501.11120"))
    assert replay.count() == 2

    # A new library over the same cache directory: the cache outlives the process.
    again = asyncio.run(load(settings, "2501.11120"))
    versioned = asyncio.run(load(settings, "arXiv:2501.11120v1"))

    assert replay.count() == 2
    assert again == versioned
    assert again.idv == first.idv and again.document == first.document
    assert set(cache_entries(tmp_path)) == {PAPER_V1, "latest:2501.11120"}


def test_a_corrupt_cache_entry_is_dropped_and_refetched_never_served(replay, tmp_path):
    settings = replay.settings(tmp_path)
    asyncio.run(load(settings, "2501.11120v1"))
    store = DiskStore(tmp_path)
    raw = store.get(PAPER_V1)
    assert raw is not None
    store.set(PAPER_V1, raw[: len(raw) // 2])
    store.close()

    loaded = asyncio.run(load(settings, "2501.11120v1"))

    assert loaded.idv == "2501.11120v1" and loaded.document.title.text.startswith("Tell me")
    assert replay.count() == 2
    store = DiskStore(tmp_path)
    try:
        cached = PaperCache(store, paper_codec()).get_paper("2501.11120v1", PARSER_VERSION)
    finally:
        store.close()
    assert isinstance(cached, LoadedPaper) and cached.document == loaded.document


def test_another_parser_versions_entries_are_ignored_and_rebuilt(replay, tmp_path):
    settings = replay.settings(tmp_path)

    async def load_with(parser_version: str) -> LoadedPaper:
        async with papers_of(settings, parser_version=parser_version) as library:
            return await library.load(parse_ref("2501.11120v1"))

    asyncio.run(load_with("old"))
    asyncio.run(load_with("new"))
    asyncio.run(load_with("new"))

    assert replay.count() == 2
    assert set(cache_entries(tmp_path)) == {"paper:old:2501.11120v1", "paper:new:2501.11120v1"}


def test_the_latest_version_is_looked_up_again_after_its_ttl(replay, tmp_path):
    settings = replay.settings(tmp_path, latest_ttl_s=1.5)  # two loads within it on a busy machine
    asyncio.run(load(settings, "2501.11120"))
    asyncio.run(load(settings, "2501.11120"))
    assert replay.count() == 2

    time.sleep(1.6)
    # The versioned paper is still cached; only "which version is latest" is asked again.
    assert set(cache_entries(tmp_path)) == {PAPER_V1}
    asyncio.run(load(settings, "2501.11120v1"))
    assert replay.count() == 2
    asyncio.run(load(settings, "2501.11120"))

    assert replay.paths()[2:] == ["/html/2501.11120", "/html/2501.11120v1"]
    assert set(cache_entries(tmp_path)) == {PAPER_V1, "latest:2501.11120"}


def test_a_page_the_parser_refuses_caches_nothing(replay, tmp_path):
    # It mentions ltx_document, so the source accepts it; the parser finds no document in it.
    replay.script(
        "/html/2401.00004v1", page(b"<!DOCTYPE html><html><body>ltx_document</body></html>")
    )

    with pytest.raises(ParseError, match="not a LaTeXML document"):
        asyncio.run(load(replay.settings(tmp_path), "2401.00004v1"))

    assert replay.count() == 1
    assert cache_entries(tmp_path) == {}


def test_a_local_document_is_parsed_again_only_when_its_bytes_change(replay, tmp_path, corpus):
    local = tmp_path / "local"
    local.mkdir()
    (local / "notes.html").symlink_to(
        corpus / "html" / "astronomical-data-ml-techniques.latexml.html"
    )
    settings = replay.settings(tmp_path / "cache", local_dir=local)
    parsed: list[str] = []

    def counting_parse(html: bytes, base_url: str) -> object:
        parsed.append(base_url)
        return parse_document(html, base_url)

    async def load_local() -> LoadedPaper:
        async with papers_of(settings, parse=counting_parse) as library:
            return await library.load(parse_ref("local/notes"))

    first = asyncio.run(load_local())
    second = asyncio.run(load_local())
    assert len(parsed) == 1 and second.document == first.document
    assert (first.paper, first.idv, first.source) == ("local/notes", "local/notes", "local")
    assert first.version is None and first.version_confirmed is False

    (local / "notes.html").unlink()
    (local / "notes.html").write_bytes(
        b'<!DOCTYPE html><html><head><title>T</title></head><body><article class="ltx_document">'
        b'<h1 class="ltx_title ltx_title_document">Edited</h1></article></body></html>'
    )
    edited = asyncio.run(load_local())

    assert len(parsed) == 2 and edited.document.title.text == "Edited"
    assert replay.requests == []
    assert all(
        key.startswith(f"paper:{PARSER_VERSION}:local-sha256:")
        for key in cache_entries(tmp_path / "cache")
    )


class CountingSources(Sources):
    """The real sources, counting the pages they are asked for (a local one is read each time)."""

    def __init__(self, settings: Settings, *, upstream: Upstream) -> None:
        super().__init__(settings, upstream=upstream)
        self.asked = 0

    async def local_pages(self, ref: PaperRef) -> AsyncGenerator[FetchedPage, None]:
        async for found in super().local_pages(ref):
            self.asked += 1
            yield found


def test_an_unchanged_local_file_is_neither_read_nor_counted_as_a_fetch_again(
    replay, tmp_path, corpus
):
    local = tmp_path / "local"
    local.mkdir()
    # A corpus page last changed long ago: its size and times can be trusted to name it.
    (local / "notes.html").symlink_to(corpus / "html" / ARXIV_PAGE)
    settings = replay.settings(tmp_path / "cache", local_dir=local)

    async def three_loads() -> list[tuple[int, int, int]]:
        counts = []
        for _ in range(2):  # two processes, one after the other, over the same cache
            async with papers_of(settings, sources=CountingSources.over) as library:
                for _ in range(3):
                    await library.load(parse_ref("local/notes"))
                sources = library.sources
                assert isinstance(sources, CountingSources)
                counts.append((library.fetches, library.cache_hits, sources.asked))
        return counts

    first, second = asyncio.run(three_loads())

    # (fetches, cache hits, pages read): parsed once; later requests read nothing. Before, each
    # request read and hashed the file, and counted as a fetch and a cache hit at once.
    assert first == (1, 2, 1)
    assert second == (0, 3, 1)  # the parse came from the cache: a hit, not a fetch


def test_a_local_file_edited_to_the_same_size_is_parsed_again(
    replay, tmp_path, corpus, monkeypatch
):
    from paperanchor import sources as sources_module

    monkeypatch.setattr(sources_module, "_RACY_S", 0.0)  # trust a fresh file's times at once
    local = tmp_path / "local"
    local.mkdir()
    path = local / "notes.html"
    before = b'<html><body><article class="ltx_document"><h1 class="ltx_title ltx_title_document">'
    path.write_bytes(before + b"First</h1></article></body></html>")
    settings = replay.settings(tmp_path / "cache", local_dir=local)

    async def loads() -> list[str]:
        async with papers_of(settings) as lib:
            titles = [(await lib.load(parse_ref("local/notes"))).document.title.text]
            times = path.stat()
            path.write_bytes(before + b"Other</h1></article></body></html>")
            # the same size and modification time: only the change time tells
            os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
            titles.append((await lib.load(parse_ref("local/notes"))).document.title.text)
            return titles

    assert asyncio.run(loads()) == ["First", "Other"]


def test_closing_the_papers_leaves_the_store_to_the_runtime_that_built_it(replay, tmp_path):
    store = DiskStore(tmp_path)

    async def main() -> bool:
        runtime = Runtime.build(replay.settings(tmp_path), store=store)
        await runtime.papers.load(parse_ref("2501.11120v1"))
        await runtime.papers.aclose()
        cache = PaperCache(store, paper_codec())
        kept = cache.get_paper("2501.11120v1", PARSER_VERSION) is not None  # still open
        await runtime.aclose()
        return kept

    assert asyncio.run(main())


def test_a_url_reference_is_fetched_from_the_configured_base_only(replay, loopback_only, tmp_path):
    loaded = asyncio.run(load(replay.settings(tmp_path), "https://arxiv.org/abs/2501.11120v1"))

    assert loaded == LoadedPaper(
        document=loaded.document,
        paper="2501.11120",
        idv="2501.11120v1",
        version=1,
        version_confirmed=True,
        source="arxiv",
        source_url=f"{replay.arxiv_url}/2501.11120v1",
    )
    assert replay.paths() == ["/html/2501.11120v1"] and loopback_only == []


def test_at_most_html_parses_pages_are_parsed_at_once(replay, tmp_path, corpus):
    # issue 21 #5: HTML parses had no slots of their own (three 50 MB pages at once: 3.5 GB)
    from tests.test_pdf_source import Gauge
    from tests.test_sources import _local_dir

    names = ["2401.16380v1", "2402.08939v1", "2403.16952v1", "1808.08002", "2309.15402"]
    corpus_names = [n if "v" in n else f"{n}.ar5iv" for n in names]
    files = {
        f"p{i}.html": f"{n}{'' if 'ar5iv' in n else '.arxiv'}.html"
        for i, n in enumerate(corpus_names)
    }
    settings = replay.settings(tmp_path / "cache", local_dir=_local_dir(tmp_path, corpus, files))
    gauge = Gauge(parse_document)

    async def five() -> list[LoadedPaper]:
        async with papers_of(settings, parse=gauge.parse) as library:
            return await asyncio.gather(
                *(library.load(parse_ref(f"local/p{i}")) for i in range(len(names)))
            )

    papers = asyncio.run(five())

    assert HTML_PARSES == 2
    assert gauge.started == 5 and gauge.most == HTML_PARSES
    assert all(paper.document.sections for paper in papers)
