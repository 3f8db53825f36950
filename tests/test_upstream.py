"""Hostile and failing upstreams on loopback (upstream.py, through the library and sources).

Encodings, Retry-After values, cut bodies, hosts that cannot be reached and full queues; each
case asserts the answer, the requests sent and what is cached after, and bounds what it cost.
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
import socket
import time
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from paperanchor.errors import NotFound, TooLarge, Unavailable, UpstreamError
from paperanchor.papers import LoadedPaper, Papers
from paperanchor.parse import PARSER_VERSION
from paperanchor.refs import parse_ref
from paperanchor.settings import Settings
from paperanchor.sources import FetchedPage, Sources
from paperanchor.upstream import Gate, Upstream, parse_retry_after
from tests.conftest import free_port
from tests.replay import cache_entries, encoded, load, page, papers_of, redirect, status, unframed

ARXIV_PAGE = "2501.11120v1.arxiv.html"
PAPER_V1 = f"paper:{PARSER_VERSION}:2501.11120v1"
HOUR = 3600


def gzip_of_zeros(mib: int) -> bytes:
    """A gzip stream of `mib` MiB of zeros (about a thousandth of that in size)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"\0" * (1 << 20)
    return b"".join([*(packer.compress(zeros) for _ in range(mib)), packer.flush()])


def peak_bytes(job: Callable[[], Any]) -> tuple[Any, int]:
    """What `job()` returned or raised, and the peak of Python memory allocated meanwhile."""
    tracemalloc.start()
    try:
        try:
            outcome: Any = job()
        except Exception as exc:
            outcome = exc
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def library(settings: Settings) -> AbstractAsyncContextManager[Papers]:
    """The papers of a runtime of `settings` (runtime.py)."""
    return papers_of(settings)


async def in_library(settings: Settings, job: Callable[[Papers], Awaitable[Any]]) -> Any:
    async with library(settings) as lib:
        return await job(lib)


# -- encodings -------------------------------------------------------------------------------


def test_stacked_gzip_layers_are_refused_without_being_decoded(replay, tmp_path):
    # 64 MiB of zeros, gzipped twice: 0.3 KB on the wire. httpx decoded such a body whole
    # (a 6.8 KB one took 8.3 GB and froze the event loop for 37 s).
    bomb = gzip.compress(gzip_of_zeros(64))
    assert len(bomb) < 2048
    replay.script("/html/2501.11120v1", encoded(bomb, "gzip, gzip"))

    error, peak = peak_bytes(lambda: asyncio.run(load(replay.settings(tmp_path), "2501.11120v1")))

    assert isinstance(error, UpstreamError), error
    assert "stacked encodings (gzip, gzip)" in str(error)
    assert peak < 16 << 20, f"{peak / 2**20:.0f} MiB"
    assert replay.count() == 1  # garbage: not retried, and ar5iv is not asked
    assert cache_entries(tmp_path) == {}


def test_one_gzip_layer_is_decoded_and_the_size_cap_counts_decoded_bytes(replay, tmp_path):
    body = replay.corpus_page(ARXIV_PAGE)
    replay.script("/html/2501.11120v1", encoded(gzip.compress(body), "gzip"))
    replay.script("/html/2402.01234v1", encoded(gzip_of_zeros(64), "gzip"))  # 64 KB on the wire
    settings = replay.settings(tmp_path, max_html_mb=1)

    loaded = asyncio.run(load(settings, "2501.11120v1"))
    error, peak = peak_bytes(lambda: asyncio.run(load(settings, "2402.01234v1")))

    assert loaded.idv == "2501.11120v1" and loaded.document.title.text.startswith("Tell me")
    assert replay.requests[0].headers["accept-encoding"] == "gzip"
    assert isinstance(error, TooLarge) and "PAPERANCHOR_MAX_HTML_MB" in str(error)
    # decoded in bounded steps: about the cap (1 MiB) and one step, never the 64 MiB
    assert peak < 8 << 20, f"{peak / 2**20:.0f} MiB"
    assert set(cache_entries(tmp_path)) == {PAPER_V1}


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (encoded(b"\x1f\x8b\x08\x00" + b"\xff" * 400, "gzip"), "corrupt compressed body"),
        (encoded(b"<html><body>x</body></html>", "br"), "the encoding br, not gzip"),
        (encoded(b"<html><body>x</body></html>", "gzip,identity, deflate"), "stacked"),
    ],
    ids=["corrupt-gzip", "unasked-encoding", "stacked-with-identity"],
)
def test_a_body_in_a_broken_or_unasked_encoding_is_an_upstream_error(
    replay, tmp_path, reply, message
):
    replay.script("/html/2501.11120v1", reply)

    with pytest.raises(UpstreamError, match=message):
        asyncio.run(load(replay.settings(tmp_path), "2501.11120v1"))

    assert replay.count() == 1 and cache_entries(tmp_path) == {}


def test_a_gzip_stream_that_stops_early_is_a_broken_response(replay, tmp_path):
    whole = gzip.compress(replay.corpus_page(ARXIV_PAGE))
    replay.script("/html/2501.11120v1", encoded(whole[: len(whole) // 2], "gzip"))

    with pytest.raises(UpstreamError, match=r"broken response .*stops before its end"):
        asyncio.run(load(replay.settings(tmp_path, max_retries=1), "2501.11120v1"))

    assert replay.count() == 2  # a broken response is retried
    assert cache_entries(tmp_path) == {}


# -- pages cut short -------------------------------------------------------------------------


def test_a_page_cut_short_without_content_length_is_broken_and_never_cached(replay, tmp_path):
    body = replay.corpus_page(ARXIV_PAGE)
    cut = body[: body.index(b"ltx_document") + 4000]  # a LaTeXML page, one section's worth
    replay.script("/html/2501.11120v1", unframed(cut))
    settings = replay.settings(tmp_path, max_retries=1)

    with pytest.raises(UpstreamError, match=r"stops before its end \(\d+ bytes, no </html>"):
        asyncio.run(load(settings, "2501.11120v1"))

    assert replay.count() == 2 and cache_entries(tmp_path) == {}

    replay.script("/html/2501.11120v1", unframed(body))  # whole, though unframed: a paper
    loaded = asyncio.run(load(settings, "2501.11120v1"))

    assert loaded.version_confirmed and len(loaded.document.sections) > 1
    assert set(cache_entries(tmp_path)) == {PAPER_V1}


# -- Retry-After -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3", 3.0),
        ("0", 0.0),
        ("9" * 400, HOUR),  # became float('inf'): every later request answered 500
        ("315360000", HOUR),  # ten years
        ("Fri, 31 Dec 9999 23:59:59 GMT", HOUR),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # in the past
        ("-5", None),
        ("1.5", None),
        ("inf", None),
        ("nan", None),
        ("1e9", None),
        ("٣", None),  # a digit, but not an ASCII one
        ("soon", None),
        ("x" * 10_000, None),
        (None, None),
    ],
)
def test_retry_after_is_honoured_up_to_an_hour_and_anything_else_is_ignored(value, seconds):
    assert parse_retry_after(value) == seconds


@pytest.mark.parametrize("value", ["9" * 400, "315360000"], ids=["400-digits", "ten-years"])
def test_an_absurd_retry_after_pauses_the_host_for_an_hour_and_later_papers_get_a_503(
    replay, tmp_path, value
):
    from tests.api.conftest import settings_for
    from tests.api.live import live_server

    replay.script("/html/2401.00013", status(429, retry_after=value))
    with live_server(settings_for(replay, tmp_path)) as live, live.client() as http:
        first = http.get("/2401.00013/outline.json")
        second = http.get("/2501.11120v1/outline.json")  # another paper, same host

    for answer in (first, second):
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "unavailable"
        assert HOUR - 5 <= int(answer.headers["retry-after"]) <= HOUR
    assert replay.paths() == ["/html/2401.00013"]  # the second paper was not sent


def test_a_pause_in_redis_lasts_an_hour_at_most_even_one_an_older_server_left(
    replay, shared_redis, tmp_path
):
    replay.script("/html/2401.00013", status(503, retry_after="315360000"))
    settings = replay.settings(tmp_path, cache_url=shared_redis.url)
    pause = f"paperanchor:host:{replay.base_url}:pause"

    with pytest.raises(Unavailable):
        asyncio.run(load(settings, "2401.00013"))
    written = int(shared_redis.command("PTTL", pause).lstrip(":"))

    # A ten-year pause key, as the unclamped versions wrote them, survives a restart with AOF.
    shared_redis.command("SET", pause, "1", "PX", str(315360000 * 1000))
    with pytest.raises(Unavailable) as paused:
        asyncio.run(load(settings, "2501.11120v1"))
    shortened = int(shared_redis.command("PTTL", pause).lstrip(":"))

    assert HOUR * 1000 - 5000 < written <= HOUR * 1000
    assert paused.value.retry_after is not None and paused.value.retry_after <= HOUR
    assert shortened <= HOUR * 1000
    assert replay.paths() == ["/html/2401.00013"]


# -- hosts that cannot be reached ----------------------------------------------------------


def unreachable_settings(replay, tmp_path, arxiv: str, ar5iv: str, **overrides: Any) -> Settings:
    """The default politeness (3 s gap, 3 retries, 1 s backoff) with the given bases; the
    PDF on arXiv's host, as by default."""
    values: dict[str, Any] = {
        "arxiv_html_url": arxiv,
        "ar5iv_url": ar5iv,
        "arxiv_pdf_url": arxiv.rsplit("/", 1)[0] + "/pdf",
        "min_gap_s": 3,
        "max_retries": 3,
        "backoff_s": 1,
        "backoff_cap_s": 30,
        "timeout_s": 30,
    }
    values.update(overrides)
    settings: Settings = replay.settings(tmp_path, **values)
    return settings


def test_a_closed_port_is_tried_twice_then_the_host_fails_fast_while_down(replay, tmp_path):
    closed = f"http://127.0.0.1:{free_port()}/html"
    settings = unreachable_settings(replay, tmp_path, closed, replay.ar5iv_url, backoff_s=0.05)

    async def twice(lib: Papers) -> tuple[list[Any], list[float], int]:
        outcomes, times = [], []
        for text in ("1706.03762", "1706.03763"):
            started = time.monotonic()
            try:
                outcomes.append(await lib.load(parse_ref(text)))
            except Unavailable as exc:
                outcomes.append(exc)
            times.append(time.monotonic() - started)
        return outcomes, times, lib.sources.requests_sent

    (first, second), (took, again), sent = asyncio.run(in_library(settings, twice))

    assert isinstance(first, Unavailable) and isinstance(second, Unavailable)
    assert "is unreachable" in str(first) and "PAPERANCHOR_OFFLINE" not in str(first)
    assert "can be fetched again in 30 s" in str(first)
    assert first.retry_after is not None and 29 < first.retry_after <= 30
    assert second.retry_after is not None and 25 < second.retry_after <= 30
    assert sent == 2  # the first attempt and one retry; then nothing while the host is down
    assert took < 2 and again < 0.5  # no 3 s gap for connections that never connected
    assert replay.requests == []  # ar5iv is not asked when arXiv fails
    assert cache_entries(tmp_path) == {}  # "unreachable" is not remembered in the cache


def test_when_no_source_can_be_reached_the_error_suggests_offline_mode(
    replay, loopback_only, tmp_path
):
    # Names that do not resolve: the loopback guard answers their lookups, nothing leaves.
    settings = unreachable_settings(
        replay, tmp_path, "https://arxiv.invalid/html", "https://ar5iv.invalid/html"
    )

    async def three(lib: Papers) -> tuple[list[BaseException | LoadedPaper], float]:
        started = time.monotonic()
        papers = ("1706.03762", "1706.03763", "1706.03764")
        outcomes = await asyncio.gather(
            *(lib.load(parse_ref(text)) for text in papers), return_exceptions=True
        )
        return outcomes, time.monotonic() - started

    outcomes, took = asyncio.run(in_library(settings, three))

    assert all(isinstance(outcome, Unavailable) for outcome in outcomes), outcomes
    assert all("set PAPERANCHOR_OFFLINE=1" in str(outcome) for outcome in outcomes)
    assert took < 3  # was 33 s: twelve retries queued behind the 3 s gap
    looked_up = [attempt.replace("b'", "'") for attempt in loopback_only]
    assert set(looked_up) == {"lookup 'arxiv.invalid'", "lookup 'ar5iv.invalid'"}, loopback_only
    assert looked_up.count("lookup 'arxiv.invalid'") == 2  # was 16: four per paper
    assert replay.requests == []


def test_requests_failing_together_probe_the_other_source_once(replay, tmp_path):
    closed = f"http://127.0.0.1:{free_port()}/html"

    async def main() -> tuple[list[BaseException | LoadedPaper], int]:
        connections = 0

        async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            writer.close()

        listener = await asyncio.start_server(count, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        settings = unreachable_settings(
            replay, tmp_path, closed, f"http://127.0.0.1:{port}/ar5iv/html", backoff_s=0.01
        )
        async with listener, library(settings) as lib:
            outcomes = await asyncio.gather(
                *(lib.load(parse_ref(f"2605.{n:05d}")) for n in range(10)),
                return_exceptions=True,
            )
            return outcomes, connections

    outcomes, connections = asyncio.run(main())

    assert all(isinstance(outcome, Unavailable) for outcome in outcomes), outcomes
    assert not any("PAPERANCHOR_OFFLINE" in str(outcome) for outcome in outcomes)
    assert connections == 1  # one probe for ten failures, and no HTTP request


def test_every_source_at_a_closed_port_suggests_offline_mode_too(replay, tmp_path):
    settings = unreachable_settings(
        replay,
        tmp_path,
        f"http://127.0.0.1:{free_port()}/html",
        f"http://127.0.0.1:{free_port()}/ar5iv/html",
        backoff_s=0.05,
    )

    with pytest.raises(Unavailable, match="no network source can be reached"):
        asyncio.run(load(settings, "1706.03762"))


def test_a_host_that_never_accepts_the_connection_counts_as_unreachable(replay, tmp_path):
    # A full accept queue: the kernel drops further SYNs, as a firewall dropping packets does.
    with socket.socket() as blackhole, socket.socket() as first:
        blackhole.bind(("127.0.0.1", 0))
        blackhole.listen(0)
        first.connect(blackhole.getsockname())  # the one queued connection, never accepted
        port = blackhole.getsockname()[1]
        settings = unreachable_settings(
            replay, tmp_path, f"http://127.0.0.1:{port}/html", replay.ar5iv_url, timeout_s=2
        )

        started = time.monotonic()
        with pytest.raises(Unavailable, match=r"is unreachable \(ConnectTimeout\)"):
            asyncio.run(load(settings, "1706.03762"))
        took = time.monotonic() - started

    # two connection attempts of TIMEOUT_S / 2 each; before, four of TIMEOUT_S, plus backoff
    assert took < 4


def test_a_host_marked_down_is_tried_again_after_down_s(replay, tmp_path):
    settings = unreachable_settings(
        replay,
        tmp_path,
        f"http://127.0.0.1:{free_port()}/html",
        replay.ar5iv_url,
        backoff_s=0.01,
        down_s=0.3,
    )

    async def around(lib: Papers) -> list[int]:
        sent = []
        for pause in (0, 0, 0.4):
            await asyncio.sleep(pause)
            with pytest.raises(Unavailable):
                await lib.load(parse_ref("1706.03762"))
            sent.append(lib.sources.requests_sent)
        return sent

    assert asyncio.run(in_library(settings, around)) == [2, 2, 4]


# -- not found, remembered -------------------------------------------------------------------


def test_a_paper_that_exists_nowhere_is_remembered_for_not_found_ttl_s(replay, tmp_path):
    # long enough for three loads on a loaded machine (0.5 s was not, in a CI run)
    settings = replay.settings(tmp_path, not_found_ttl_s=3)

    for _ in range(3):
        with pytest.raises(NotFound, match=r"^Unknown paper 1706\.99999$"):
            asyncio.run(load(settings, "1706.99999"))
    assert replay.count() == 3  # arXiv, ar5iv and the PDF, once

    time.sleep(3.1)
    with pytest.raises(NotFound):
        asyncio.run(load(settings, "1706.99999"))
    assert replay.count() == 6


def test_not_found_is_remembered_across_processes_sharing_redis(replay, shared_redis, tmp_path):
    settings = replay.settings(tmp_path, cache_url=shared_redis.url)

    async def two() -> list[BaseException | LoadedPaper]:
        async with library(settings) as one, library(settings) as other:
            first = await asyncio.gather(one.load(parse_ref("2401.00001")), return_exceptions=True)
            second = await asyncio.gather(
                other.load(parse_ref("2401.00001")), return_exceptions=True
            )
            return [*first, *second]

    first, second = asyncio.run(two())

    assert isinstance(first, NotFound) and isinstance(second, NotFound)
    assert str(first) == str(second) == "Unknown paper 2401.00001"
    assert replay.count() == 3
    ttl = int(shared_redis.command("PTTL", "paperanchor:missing:2401.00001").lstrip(":"))
    assert 590_000 < ttl <= 600_000


def test_failures_other_than_not_found_are_not_remembered(replay, tmp_path):
    replay.script("/html/2501.11120v1", status(503), page(replay.corpus_page(ARXIV_PAGE)))
    settings = replay.settings(tmp_path, max_retries=0)

    with pytest.raises(Unavailable):
        asyncio.run(load(settings, "2501.11120v1"))
    loaded = asyncio.run(load(settings, "2501.11120v1"))

    assert loaded.idv == "2501.11120v1" and replay.count() == 2
    assert set(cache_entries(tmp_path)) == {PAPER_V1}


def test_a_local_file_added_after_a_not_found_is_served(replay, tmp_path, corpus):
    local = tmp_path / "local"
    local.mkdir()
    settings = replay.settings(tmp_path / "cache", local_dir=local)
    with pytest.raises(NotFound):
        asyncio.run(load(settings, "2401.00001v1"))
    replay.reset()

    (local / "2401.00001v1.html").symlink_to(corpus / "html" / ARXIV_PAGE)
    loaded = asyncio.run(load(settings, "2401.00001v1"))

    assert loaded.source == "local" and replay.requests == []


@pytest.mark.parametrize(
    "crafted",
    [b"Unknown paper 9999.99999", b"\xff\xfe", b"Unknown paper 2401.00001\n<script>", b"x" * 600],
)
def test_a_remembered_not_found_that_is_not_one_is_ignored(replay, tmp_path, crafted):
    from paperanchor.store import DiskStore

    store = DiskStore(tmp_path)
    store.set("missing:2401.00001", crafted, 600)
    store.close()

    with pytest.raises(NotFound, match=r"^Unknown paper 2401\.00001$"):
        asyncio.run(load(replay.settings(tmp_path), "2401.00001"))

    assert replay.count() == 3  # asked again


# -- bounded queues --------------------------------------------------------------------------


def test_a_hosts_queue_is_bounded_and_past_it_requests_fail_at_once(replay, tmp_path):
    idvs = [f"2605.{number:05d}v1" for number in range(1, 7)]
    for idv in idvs:
        replay.script(f"/html/{idv}", page(replay.corpus_page(ARXIV_PAGE)))
    settings = replay.settings(tmp_path, min_gap_s=0.2, max_queue=2)

    async def six() -> tuple[list[Any], list[float]]:
        sources = Sources(settings)
        started = time.monotonic()
        finished: list[float] = []

        async def one(idv: str) -> FetchedPage | BaseException:
            try:
                return await sources.fetch(parse_ref(idv))
            except Unavailable as exc:
                return exc
            finally:
                finished.append(time.monotonic() - started)

        try:
            return await asyncio.gather(*(one(idv) for idv in idvs)), finished
        finally:
            await sources.aclose()

    outcomes, finished = asyncio.run(six())

    refused = [outcome for outcome in outcomes if isinstance(outcome, Unavailable)]
    # one in flight and two waiting; the other three are refused before any request
    assert len(refused) == 3 and replay.count() == 3
    assert all("PAPERANCHOR_MAX_QUEUE" in str(error) for error in refused)
    assert all(error.retry_after is not None and error.retry_after >= 1 for error in refused)
    assert sorted(finished)[2] < 0.1  # the refusals come at once


# -- a service's own gate (the arXiv API, Semantic Scholar) ---------------------------------

API_GATE = Gate("arxiv-api", gap=0.4)


def test_a_service_with_its_own_gate_keeps_its_gap_apart_from_its_hosts(replay, tmp_path):
    # the replay is one host: the pages and the "API" share it, as arxiv.org's would not
    replay.script("/api/query?a", page(b"<feed/>"))
    replay.script("/html/x", page(b"<html></html>"))
    settings = replay.settings(tmp_path, min_gap_s=0)

    async def run() -> list[str]:
        polite = Upstream(settings)
        try:

            async def api() -> None:
                for _ in range(3):
                    await polite.get(
                        f"{replay.base_url}/api/query?a", label="API", subject="a", limit=1 << 20,
                        upstream=API_GATE, headers={"Accept": "application/atom+xml"},
                    )  # fmt: skip

            async def pages() -> None:
                await asyncio.sleep(0.05)  # the API's first request is in
                for _ in range(3):
                    await polite.get(f"{replay.base_url}/html/x", label="arXiv", subject="x",
                                     limit=1 << 20)  # fmt: skip

            await asyncio.gather(api(), pages())
            return [request.path for request in replay.requests]
        finally:
            await polite.aclose()

    paths = asyncio.run(run())

    api = [r.at for r in replay.requests if r.path.startswith("/api/")]
    pages = [r.at for r in replay.requests if r.path.startswith("/html/")]
    assert len(api) == 3 and len(pages) == 3
    assert min(b - a for a, b in itertools.pairwise(api)) >= API_GATE.gap
    # the pages did not wait behind the API's gap: all three came between its first two
    assert max(pages) < api[1], paths
    assert all(r.headers.get("accept") == "application/atom+xml"
               for r in replay.requests if r.path.startswith("/api/"))  # fmt: skip


def test_a_retry_after_of_a_service_pauses_that_service_only(replay, tmp_path):
    replay.script("/api/query?b", status(429, retry_after=3600))
    replay.script("/html/y", page(b"<html></html>"))
    settings = replay.settings(tmp_path)

    async def run() -> tuple[BaseException | None, BaseException | None, int]:
        polite = Upstream(settings)
        try:
            first: BaseException | None = None
            try:
                await polite.get(f"{replay.base_url}/api/query?b", label="arXiv API",
                                 subject="b", limit=1 << 20, upstream=API_GATE)  # fmt: skip
            except Unavailable as exc:
                first = exc
            again: BaseException | None = None
            try:
                await polite.get(f"{replay.base_url}/api/query?b", label="arXiv API",
                                 subject="b", limit=1 << 20, upstream=API_GATE)  # fmt: skip
            except Unavailable as exc:
                again = exc
            answer = await polite.get(f"{replay.base_url}/html/y", label="arXiv", subject="y",
                                      limit=1 << 20)  # fmt: skip
            return first, again, answer.status
        finally:
            await polite.aclose()

    first, again, page_status = asyncio.run(run())

    assert isinstance(first, Unavailable) and first.retry_after == 3600
    assert isinstance(again, Unavailable) and "asked us to pause" in str(again)
    assert page_status == 200  # the host's other service was not paused
    assert replay.paths() == ["/api/query?b", "/html/y"]  # the paused one sent nothing


# -- the retry layer: what composing retries with the gates could get wrong ----------------


async def polite_get(polite: Upstream, url: str, **options: Any) -> Any:
    """`polite.get(url)` with the arguments every case here shares; what it answered or raised."""
    try:
        return await polite.get(url, label="arXiv", subject="x", limit=1 << 20, **options)
    except Exception as exc:
        return exc


def test_a_retry_after_longer_than_the_timeout_is_waited_out_not_timed_out(replay, tmp_path):
    # TIMEOUT_S bounds one attempt; the wait the host asked for lies between two attempts
    replay.script("/html/later", status(429, retry_after=2), page(b"<html></html>"))
    settings = replay.settings(tmp_path, timeout_s=1, backoff_cap_s=3, min_gap_s=0)

    async def run() -> Any:
        polite = Upstream(settings)
        try:
            return await polite_get(polite, f"{replay.base_url}/html/later")
        finally:
            await polite.aclose()

    answer = asyncio.run(run())

    assert not isinstance(answer, Exception) and answer.status == 200
    first, second = (request.at for request in replay.requests)
    assert second - first >= 1.95  # the two seconds asked for, not the backoff's 0.01 s


def test_the_backoff_between_attempts_never_exceeds_the_cap(replay, tmp_path):
    # backoff_s alone would wait 10, 20 and 40 s: the cap bounds each wait, jitter included
    replay.script("/html/down", status(503))
    settings = replay.settings(
        tmp_path, max_retries=3, backoff_s=10, backoff_cap_s=0.2, min_gap_s=0
    )

    async def run() -> Any:
        polite = Upstream(settings)
        try:
            return await polite_get(polite, f"{replay.base_url}/html/down")
        finally:
            await polite.aclose()

    started = time.monotonic()
    failed = asyncio.run(run())
    took = time.monotonic() - started

    assert isinstance(failed, Unavailable)
    assert "status 503 after 4 attempts" in str(failed) and failed.retry_after is None
    assert replay.count("/html/down") == 4
    # three capped waits and four loopback requests; uncapped, the waits would average 35 s
    assert took < 3 * 0.2 + 3


def test_concurrent_requests_keep_their_own_count_of_attempts(replay, tmp_path):
    # Two requests retrying at once, each behind a gate of its own: neither's attempts count
    # against the other's (each `get` makes its own retrying object; none is kept per client).
    replay.script("/html/a", status(503))
    replay.script("/html/b", status(502), status(502), page(b"<html></html>"))
    settings = replay.settings(tmp_path, max_retries=2, min_gap_s=0)

    async def run() -> list[Any]:
        polite = Upstream(settings)
        try:
            return await asyncio.gather(
                polite_get(polite, f"{replay.base_url}/html/a", upstream=Gate("a", 0.05)),
                polite_get(polite, f"{replay.base_url}/html/b", upstream=Gate("b", 0.05)),
            )
        finally:
            await polite.aclose()

    failed, answer = asyncio.run(run())

    assert isinstance(failed, Unavailable) and "status 503 after 3 attempts" in str(failed)
    assert not isinstance(answer, Exception) and answer.status == 200
    assert replay.count("/html/a") == 3 and replay.count("/html/b") == 3


def test_each_redirect_hop_is_a_request_of_its_own_through_the_gate(replay, tmp_path):
    # Each hop waits for the host's gap and has its own retries: the first hop's 503 does not
    # use up the second's, and no hop goes ahead of the gap because it follows another.
    replay.script("/html/2501.11120", status(503), redirect("/html/2501.11120v1"))
    replay.script("/html/2501.11120v1", status(503), page(replay.corpus_page(ARXIV_PAGE)))
    settings = replay.settings(tmp_path, max_retries=1, min_gap_s=0.3)

    async def run() -> tuple[FetchedPage, int]:
        sources = Sources(settings)
        try:
            fetched = await sources.fetch(parse_ref("2501.11120"))
            return fetched, sources.requests_sent
        finally:
            await sources.aclose()

    fetched, sent = asyncio.run(run())

    assert fetched.found.idv == "2501.11120v1" and fetched.found_version == 1
    assert replay.paths() == ["/html/2501.11120"] * 2 + ["/html/2501.11120v1"] * 2
    assert sent == 4
    arrivals = [request.at for request in replay.requests]
    assert min(b - a for a, b in itertools.pairwise(arrivals)) >= 0.3
