"""Fetching over real HTTP from the replay upstream: sources, versions, faults, politeness.

Each scripted case asserts the answer, the upstream requests made, and what is cached after.
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
from pathlib import Path

import pytest
from pydantic import ValidationError

from paperanchor.errors import NotFound, TooLarge, Unavailable, UpstreamError
from paperanchor.parse import PARSER_VERSION
from paperanchor.refs import parse_ref
from paperanchor.settings import Settings
from paperanchor.sources import (
    FetchedPage,
    Sources,
    version_in_url,
)
from paperanchor.upstream import USER_AGENT, parse_retry_after
from tests.replay import (
    cache_entries,
    empty,
    huge,
    load,
    no_html,
    page,
    random_bytes,
    redirect,
    slow,
    status,
    truncated,
)

PAPER_V1 = f"paper:{PARSER_VERSION}:2501.11120v1"
ARXIV_PAGE = "2501.11120v1.arxiv.html"


async def fetch(settings: Settings, text: str) -> FetchedPage:
    sources = Sources(settings)
    try:
        return await sources.fetch(parse_ref(text))
    finally:
        await sources.aclose()


def only_missing(entries: dict[str, float | None], idv: str) -> bool:
    """Nothing is cached but the answer that `idv` exists nowhere, for NOT_FOUND_TTL_S (600 s)."""
    lifetime = entries.get(f"missing:{idv}")
    return set(entries) == {f"missing:{idv}"} and lifetime is not None and 0 < lifetime <= 600


# -- versions --------------------------------------------------------------------------------


def test_a_bare_id_follows_the_redirect_to_its_latest_version(replay, tmp_path):
    settings = replay.settings(tmp_path)

    loaded = asyncio.run(load(settings, "2501.11120"))

    assert (loaded.paper, loaded.idv, loaded.version) == ("2501.11120", "2501.11120v1", 1)
    assert loaded.version_confirmed and loaded.source == "arxiv"
    assert loaded.source_url == f"{replay.arxiv_url}/2501.11120v1"
    assert replay.paths() == ["/html/2501.11120", "/html/2501.11120v1"]
    entries = cache_entries(tmp_path)
    assert set(entries) == {PAPER_V1, "latest:2501.11120"}
    assert entries[PAPER_V1] is None  # a version never changes: kept forever
    assert 0 < entries["latest:2501.11120"] <= 86400


def test_a_bare_id_answered_without_redirect_takes_its_version_from_the_page(replay, tmp_path):
    # The corpus page carries <base href="/html/2501.11120v1/">.
    replay.script("/html/2501.11120", page(replay.corpus_page(ARXIV_PAGE)))

    loaded = asyncio.run(load(replay.settings(tmp_path), "2501.11120"))

    assert (loaded.idv, loaded.version, loaded.version_confirmed) == ("2501.11120v1", 1, True)
    assert replay.paths() == ["/html/2501.11120"]
    assert set(cache_entries(tmp_path)) == {PAPER_V1, "latest:2501.11120"}


def test_a_page_without_any_version_marker_leaves_the_version_unknown(replay, tmp_path):
    body = replay.corpus_page("submission-5393936.arxiv.html")
    replay.script("/html/2402.01234", page(body))

    loaded = asyncio.run(load(replay.settings(tmp_path, latest_ttl_s=600), "2402.01234"))

    assert (loaded.idv, loaded.version, loaded.version_confirmed) == ("2402.01234", None, False)
    assert replay.count() == 1
    entries = cache_entries(tmp_path)
    assert set(entries) == {f"paper:{PARSER_VERSION}:2402.01234"}
    assert 0 < entries[f"paper:{PARSER_VERSION}:2402.01234"] <= 600  # may change: not forever


def test_arxiv_without_html_falls_back_to_ar5iv_with_the_version_unconfirmed(replay, tmp_path):
    settings = replay.settings(tmp_path)

    loaded = asyncio.run(load(settings, "1808.08002v2"))

    # ar5iv keeps one rendering per paper: never reported as the v2 that was asked for.
    assert loaded.source == "ar5iv" and loaded.version_confirmed is False
    assert (loaded.idv, loaded.version) == ("1808.08002", None)
    assert loaded.source_url == f"{replay.ar5iv_url}/1808.08002"
    assert replay.paths() == ["/html/1808.08002v2", "/ar5iv/html/1808.08002"]
    entries = cache_entries(tmp_path)
    assert set(entries) == {f"paper:{PARSER_VERSION}:1808.08002", "latest:1808.08002v2"}
    assert all(0 < ttl <= 86400 for ttl in entries.values() if ttl is not None)
    assert None not in entries.values()

    again = asyncio.run(load(settings, "1808.08002v2"))

    assert again.source == "ar5iv" and replay.count() == 2


def test_an_unknown_paper_is_not_found_and_no_request_leaves_loopback(
    replay, loopback_only, tmp_path
):
    with pytest.raises(NotFound, match=r"^Unknown paper 1706\.99999$"):
        asyncio.run(load(replay.settings(tmp_path), "1706.99999"))

    # ar5iv answered with a redirect to https://arxiv.org/abs/1706.99999: recognised, not followed.
    assert replay.paths() == ["/html/1706.99999", "/ar5iv/html/1706.99999", "/pdf/1706.99999"]
    assert loopback_only == []
    assert only_missing(cache_entries(tmp_path), "1706.99999")


def test_a_paper_without_html_anywhere_and_no_pdf_says_so(replay, loopback_only, tmp_path):
    replay.script("/html/2401.00001", no_html("2401.00001"))

    with pytest.raises(
        NotFound, match=r"^No HTML rendering of 2401\.00001 on arXiv or ar5iv, and no PDF on arXiv$"
    ):
        asyncio.run(load(replay.settings(tmp_path), "2401.00001"))

    assert replay.paths() == ["/html/2401.00001", "/ar5iv/html/2401.00001", "/pdf/2401.00001"]
    assert loopback_only == [] and only_missing(cache_entries(tmp_path), "2401.00001")


def test_without_the_pdf_source_a_paper_without_html_says_only_that(replay, tmp_path):
    replay.script("/html/2401.00001", no_html("2401.00001"))

    with pytest.raises(NotFound, match=r"^No HTML rendering of 2401\.00001 on arXiv or ar5iv$"):
        asyncio.run(load(replay.settings(tmp_path, arxiv_pdf_url=""), "2401.00001"))

    assert replay.paths() == ["/html/2401.00001", "/ar5iv/html/2401.00001"]


@pytest.mark.parametrize(
    "ar5iv_reply",
    [
        empty(),
        page(b"<!DOCTYPE html><html><body><h1>ar5iv: conversion failed</h1></body></html>"),
        redirect("/abs/2401.00002"),  # an abstract page on the same host
    ],
    ids=["empty", "error-page", "abs-redirect"],
)
def test_an_ar5iv_answer_that_is_not_a_paper_counts_as_absent(replay, tmp_path, ar5iv_reply):
    replay.script("/ar5iv/html/2401.00002", ar5iv_reply)

    with pytest.raises(NotFound, match=r"2401\.00002"):
        asyncio.run(load(replay.settings(tmp_path), "2401.00002"))

    assert replay.paths() == ["/html/2401.00002", "/ar5iv/html/2401.00002", "/pdf/2401.00002"]
    assert only_missing(cache_entries(tmp_path), "2401.00002")


def test_a_redirect_off_the_upstream_host_is_not_followed(replay, loopback_only, tmp_path):
    replay.script("/html/2401.00003", redirect("https://mirror.example/html/2401.00003v1"))

    with pytest.raises(UpstreamError, match="off its host"):
        asyncio.run(load(replay.settings(tmp_path), "2401.00003"))

    assert replay.paths() == ["/html/2401.00003"]
    assert loopback_only == [] and cache_entries(tmp_path) == {}


@pytest.mark.parametrize(
    "location",
    [
        "http:\\\\127.0.0.1:9102\\x",  # a browser reads the backslashes as slashes
        "http://[::1",
        "javascript:alert(1)",
    ],
    ids=["backslashes", "unclosed-ipv6", "javascript"],
)
def test_a_redirect_to_something_that_is_not_a_url_is_an_upstream_error(
    replay, loopback_only, tmp_path, location
):
    replay.script("/html/2401.00021", redirect(location))

    with pytest.raises(UpstreamError, match="to an address that is not a URL"):
        asyncio.run(load(replay.settings(tmp_path), "2401.00021"))

    assert replay.paths() == ["/html/2401.00021"] and loopback_only == []


def test_a_huge_location_is_shortened_in_the_error(replay, tmp_path):
    replay.script("/html/2401.00022", redirect("https://mirror.example/html/" + "A" * 60_000))

    with pytest.raises(UpstreamError, match="off its host") as error:
        asyncio.run(load(replay.settings(tmp_path), "2401.00022"))

    assert len(str(error.value)) < 200  # was 60,146 characters


# -- retries ---------------------------------------------------------------------------------


def test_a_429_with_retry_after_is_waited_out_then_the_page_is_served(replay, tmp_path):
    replay.script("/html/2501.11120v1", status(429, 1), page(replay.corpus_page(ARXIV_PAGE)))

    loaded = asyncio.run(load(replay.settings(tmp_path), "2501.11120v1"))

    assert loaded.idv == "2501.11120v1"
    first, second = replay.requests
    assert second.at - first.at >= 1.0  # Retry-After: 1 honoured
    assert set(cache_entries(tmp_path)) == {PAPER_V1}


def test_503_twice_then_200_is_retried_to_success(replay, tmp_path):
    body = replay.corpus_page(ARXIV_PAGE)
    replay.script("/html/2501.11120v1", status(503), status(503), page(body))

    loaded = asyncio.run(load(replay.settings(tmp_path, max_retries=2), "2501.11120v1"))

    assert loaded.idv == "2501.11120v1"
    assert replay.count("/html/2501.11120v1") == 3
    assert set(cache_entries(tmp_path)) == {PAPER_V1}


def test_503_forever_is_unavailable_after_max_retries(replay, tmp_path):
    replay.script("/html/2501.11120v1", status(503))

    with pytest.raises(Unavailable, match="status 503 after 3 attempts"):
        asyncio.run(load(replay.settings(tmp_path, max_retries=2), "2501.11120v1"))

    # 1 + MAX_RETRIES requests, and ar5iv is not asked: arXiv's outage is not "no HTML".
    assert replay.paths() == ["/html/2501.11120v1"] * 3
    assert cache_entries(tmp_path) == {}


def test_a_retry_after_beyond_the_cap_gives_up_at_once_and_pauses_the_host(replay, tmp_path):
    replay.script("/html/2501.11120v1", status(429, 120))
    settings = replay.settings(tmp_path, backoff_cap_s=2)

    async def twice() -> list[BaseException]:
        sources = Sources(settings)
        errors = []
        try:
            for text in ("2501.11120v1", "2307.00235"):
                try:
                    await sources.fetch(parse_ref(text))
                except Unavailable as exc:
                    errors.append(exc)
        finally:
            await sources.aclose()
        return errors

    first, second = asyncio.run(twice())

    assert first.retry_after == 120
    assert second.retry_after is not None and 100 < second.retry_after <= 120
    assert replay.paths() == ["/html/2501.11120v1"]  # the second paper waited, unasked


def test_a_body_cut_short_is_an_error_then_the_next_good_fetch_succeeds(replay, tmp_path):
    body = replay.corpus_page(ARXIV_PAGE)
    replay.script("/html/2501.11120v1", truncated(body, sent=len(body) // 2))
    settings = replay.settings(tmp_path, max_retries=1)

    with pytest.raises(UpstreamError, match="broken response"):
        asyncio.run(load(settings, "2501.11120v1"))

    assert replay.count() == 2  # a transport error is retried
    assert cache_entries(tmp_path) == {}

    replay.script("/html/2501.11120v1", page(body))
    loaded = asyncio.run(load(settings, "2501.11120v1"))

    assert loaded.idv == "2501.11120v1" and replay.count() == 3
    assert set(cache_entries(tmp_path)) == {PAPER_V1}


def test_random_bytes_are_an_error_then_the_next_good_fetch_succeeds(replay, tmp_path):
    replay.script("/html/2501.11120v1", random_bytes(50_000))
    settings = replay.settings(tmp_path)

    with pytest.raises(UpstreamError, match="not HTML"):
        asyncio.run(load(settings, "2501.11120v1"))

    assert replay.count() == 1  # garbage is not retried
    assert cache_entries(tmp_path) == {}

    replay.script("/html/2501.11120v1", page(replay.corpus_page(ARXIV_PAGE)))
    loaded = asyncio.run(load(settings, "2501.11120v1"))

    assert loaded.version == 1 and replay.count() == 2
    assert set(cache_entries(tmp_path)) == {PAPER_V1}


def test_a_body_slower_than_the_timeout_is_unavailable(replay, tmp_path):
    replay.script("/html/2501.11120v1", slow(replay.corpus_page(ARXIV_PAGE), 16_384, 0.1))
    settings = replay.settings(tmp_path, timeout_s=0.5, max_retries=1)

    with pytest.raises(Unavailable, match=r"no complete answer within 0\.5 s after 2 attempts"):
        asyncio.run(load(settings, "2501.11120v1"))

    assert replay.count() == 2
    assert cache_entries(tmp_path) == {}


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("declared", id="content-length-over-the-cap"),
        pytest.param("streamed", id="chunked-stream-over-the-cap"),
    ],
)
def test_a_page_over_the_size_cap_is_too_large(replay, tmp_path, reply):
    big = (
        page(replay.corpus_page("1808.08002.ar5iv.html"))  # 2.5 MB
        if reply == "declared"
        else huge(3 * 1024 * 1024)
    )
    replay.script("/html/1808.08002v1", big)

    with pytest.raises(TooLarge, match="PAPERANCHOR_MAX_HTML_MB"):
        asyncio.run(load(replay.settings(tmp_path, max_html_mb=1), "1808.08002v1"))

    assert replay.count() == 1  # not retried, ar5iv not asked
    assert cache_entries(tmp_path) == {}


# -- politeness ------------------------------------------------------------------------------


PAGES = {
    "2501.11120v1": ARXIV_PAGE,
    "2402.01234v1": "submission-5393936.arxiv.html",
    "2211.01234v2": "split-cycle-axiomatic-characterization.arxiv.html",
}


def test_papers_fetched_back_to_back_arrive_at_least_min_gap_apart(replay, tmp_path):
    for idv, name in PAGES.items():
        replay.script(f"/html/{idv}", page(replay.corpus_page(name)))
    settings = replay.settings(tmp_path, min_gap_s=0.3)

    async def back_to_back() -> None:
        sources = Sources(settings)
        try:
            for idv in PAGES:
                await sources.fetch(parse_ref(idv))
        finally:
            await sources.aclose()

    asyncio.run(back_to_back())

    arrivals = [request.at for request in replay.requests]
    assert len(arrivals) == 3
    assert all(later - earlier >= 0.3 for earlier, later in itertools.pairwise(arrivals))


def test_concurrent_papers_are_serialised_per_host_with_the_gap(replay, tmp_path):
    for idv, name in PAGES.items():
        replay.script(f"/html/{idv}", page(replay.corpus_page(name)))
    settings = replay.settings(tmp_path, min_gap_s=0.3)

    async def together() -> list[FetchedPage]:
        sources = Sources(settings)
        try:
            return await asyncio.gather(*(sources.fetch(parse_ref(idv)) for idv in PAGES))
        finally:
            await sources.aclose()

    pages = asyncio.run(together())

    assert [fetched.found.idv for fetched in pages] == list(PAGES)
    arrivals = sorted(request.at for request in replay.requests)
    assert len(arrivals) == 3
    assert all(later - earlier >= 0.3 for earlier, later in itertools.pairwise(arrivals))


def test_requests_carry_a_descriptive_user_agent(replay, tmp_path):
    asyncio.run(fetch(replay.settings(tmp_path), "2501.11120v1"))

    (request,) = replay.requests
    assert request.headers["user-agent"] == USER_AGENT
    assert USER_AGENT.startswith("paperanchor/")


# -- configuration: which sources are asked ------------------------------------------------


def test_an_empty_base_url_disables_that_source(replay, tmp_path):
    fetched = asyncio.run(fetch(replay.settings(tmp_path, arxiv_html_url=""), "1808.08002"))

    assert fetched.source == "ar5iv"
    assert replay.paths() == ["/ar5iv/html/1808.08002"]


def test_with_no_source_configured_a_paper_is_not_found_without_requests(replay, tmp_path):
    settings = replay.settings(tmp_path, arxiv_html_url="", ar5iv_url="", arxiv_pdf_url="")

    with pytest.raises(NotFound, match="no network source is configured"):
        asyncio.run(fetch(settings, "2501.11120"))

    assert replay.requests == []


def test_offline_with_nothing_cached_is_a_clear_error_without_requests(replay, tmp_path):
    with pytest.raises(NotFound, match=r"offline mode \(PAPERANCHOR_OFFLINE=1\)"):
        asyncio.run(load(replay.settings(tmp_path, offline=True), "2501.11120"))

    assert replay.requests == []
    assert cache_entries(tmp_path) == {}


def test_offline_still_serves_what_is_cached(replay, tmp_path):
    asyncio.run(load(replay.settings(tmp_path), "2501.11120"))

    loaded = asyncio.run(load(replay.settings(tmp_path, offline=True), "2501.11120"))

    assert loaded.idv == "2501.11120v1"
    assert replay.count() == 2  # only the first, online load


# -- the local directory ---------------------------------------------------------------------


def _local_dir(tmp_path: Path, corpus: Path, files: dict[str, str | bytes]) -> Path:
    """A local directory: corpus pages and PDFs linked in place (never copied), or given bytes."""
    directory = tmp_path / "local"
    directory.mkdir()
    for name, content in files.items():
        target = directory / name
        if isinstance(content, bytes):
            target.write_bytes(gzip.compress(content) if name.endswith(".gz") else content)
        else:
            target.symlink_to(corpus / ("pdf" if content.endswith(".pdf") else "html") / content)
    return directory


_SECTION = (
    '<section class="ltx_section" id="S1"><h2 class="ltx_title">1 Introduction</h2>'
    '<div class="ltx_para" id="S1.p1"><p class="ltx_p">{text}</p></div></section>'
)


def _marked(idv: str, body_text: str = "An arXiv page.") -> bytes:
    return (
        f'<!DOCTYPE html><html><head><base href="/html/{idv}/"></head><body>'
        f'<article class="ltx_document">{_SECTION.format(text=body_text)}</article></body></html>'
    ).encode()


UNMARKED = (
    '<!DOCTYPE html><html><body><article class="ltx_document">'
    f"{_SECTION.format(text='A page that names no version.')}</article></body></html>"
).encode()


@pytest.mark.parametrize(
    ("files", "asked", "idv", "confirmed", "served_from"),
    [
        ({"2501.11120v1.html": ARXIV_PAGE}, "2501.11120v1", "2501.11120v1", True, "v1.html"),
        # a bare request takes the version from the file name…
        (
            {"2501.11120v1.html": "x", "2501.11120v3.html": "x"},
            "2501.11120",
            "2501.11120v3",
            True,
            "v3.html",
        ),
        # …else from the page's markers…
        (
            {"2501.11120.html": _marked("2501.11120v2")},
            "2501.11120",
            "2501.11120v2",
            True,
            "0.html",
        ),
        # …else it stays unknown
        ({"2501.11120.html": UNMARKED}, "2501.11120", "2501.11120", False, "0.html"),
        # <id>.html serves a versioned request when it does not name another version
        ({"2501.11120.html": UNMARKED}, "2501.11120v4", "2501.11120", False, "0.html"),
        (
            {"hep-th_9901001v2.html": UNMARKED},
            "hep-th/9901001v2",
            "hep-th/9901001v2",
            True,
            "2.html",
        ),
        ({"2501.11120v1.html.gz": UNMARKED}, "2501.11120v1", "2501.11120v1", True, ".html.gz"),
        ({"notes.html": UNMARKED}, "local/notes", "local/notes", False, "notes.html"),
        ({"notes.html.gz": UNMARKED}, "local/notes", "local/notes", False, "notes.html.gz"),
    ],
)
def test_the_local_directory_is_asked_first_and_makes_no_request(
    replay, tmp_path, corpus, files, asked, idv, confirmed, served_from
):
    files = {name: ARXIV_PAGE if value == "x" else value for name, value in files.items()}
    local = _local_dir(tmp_path, corpus, files)
    settings = replay.settings(tmp_path / "cache", local_dir=local)

    fetched = asyncio.run(fetch(settings, asked))
    loaded = asyncio.run(load(settings, asked))

    assert (loaded.source, loaded.idv, loaded.version_confirmed) == ("local", idv, confirmed)
    # the file's name only, never the server's folder; images resolve to this server's /files/
    assert fetched.source_url.endswith(served_from) and "/" not in fetched.source_url
    assert loaded.source_url == fetched.source_url
    assert fetched.base_url == f"http://127.0.0.1:8000/files/{fetched.source_url}"
    assert b"ltx_document" in fetched.html
    assert replay.requests == []


def test_a_local_file_of_another_version_is_skipped_for_the_network(replay, tmp_path, corpus):
    local = _local_dir(tmp_path, corpus, {"2501.11120.html": _marked("2501.11120v9")})

    loaded = asyncio.run(load(replay.settings(tmp_path, local_dir=local), "2501.11120v1"))

    assert loaded.source == "arxiv" and replay.paths() == ["/html/2501.11120v1"]


def test_a_version_named_only_in_the_body_text_is_not_the_pages_version(replay, tmp_path):
    # "an earlier version appeared as arXiv:2402.01234v3": a paragraph names a version, but only
    # the page's furniture (its <base href>, arXiv's watermark) says which version it is.
    body = UNMARKED.replace(
        b"A page that names no version.",
        b"An earlier version appeared as arXiv:2402.01234v3 [cs.CL] 1 Feb 2024.",
    )
    replay.script("/html/2402.01234", page(body))

    loaded = asyncio.run(load(replay.settings(tmp_path, latest_ttl_s=600), "2402.01234"))

    assert (loaded.idv, loaded.version, loaded.version_confirmed) == ("2402.01234", None, False)
    assert set(cache_entries(tmp_path)) == {f"paper:{PARSER_VERSION}:2402.01234"}


def test_the_watermark_of_a_2026_page_confirms_its_version(replay, tmp_path):
    # 2604.15597v1 has no <base href>; arXiv's watermark `arXiv:2604.15597v1 [cs.CL] …` names it
    replay.script("/html/2604.15597", page(replay.corpus_page("2604.15597v1.arxiv.html")))

    loaded = asyncio.run(load(replay.settings(tmp_path), "2604.15597"))

    assert (loaded.idv, loaded.version, loaded.version_confirmed) == ("2604.15597v1", 1, True)


def test_a_watermark_of_another_paper_is_no_evidence_of_this_ones_version(replay, tmp_path):
    replay.script("/html/2501.00001", page(replay.corpus_page("2604.15597v1.arxiv.html")))

    loaded = asyncio.run(load(replay.settings(tmp_path, latest_ttl_s=600), "2501.00001"))

    assert (loaded.idv, loaded.version_confirmed) == ("2501.00001", False)


def test_offline_serves_the_local_directory(replay, tmp_path, corpus):
    local = _local_dir(tmp_path, corpus, {"2501.11120v1.html": ARXIV_PAGE})
    settings = replay.settings(tmp_path / "cache", local_dir=local, offline=True)

    fetched = asyncio.run(fetch(settings, "2501.11120"))

    assert fetched.found.idv == "2501.11120v1" and replay.requests == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (gzip.compress(UNMARKED * 200)[:80], "is not a readable gzip file"),  # cut short
        (  # damaged in the middle: zlib's own error
            (lambda z: z[:20] + b"\xff" * 64 + z[84:])(gzip.compress(bytes(range(256)) * 400)),
            "is not a readable gzip file",
        ),
        (b"not gzip at all", "is not a readable gzip file"),
    ],
    ids=["truncated", "corrupt", "not-gzip"],
)
def test_a_broken_local_gz_file_is_an_upstream_error_that_names_the_file_not_its_folder(
    replay, tmp_path, content, message
):
    local = tmp_path / "local"
    local.mkdir()
    (local / "notes.html.gz").write_bytes(content)

    with pytest.raises(UpstreamError, match=message) as error:
        asyncio.run(fetch(replay.settings(tmp_path, local_dir=local), "local/notes"))

    assert "notes.html.gz" in str(error.value) and str(tmp_path) not in str(error.value)


def test_an_unreadable_local_file_names_the_file_not_its_folder(replay, tmp_path):
    local = tmp_path / "local"
    local.mkdir()
    # /proc/self/mem is a regular file that refuses to be read from its start (EIO), even for root.
    (local / "notes.html").symlink_to("/proc/self/mem")

    with pytest.raises(UpstreamError, match=r"^Cannot read the local file notes\.html: ") as error:
        asyncio.run(fetch(replay.settings(tmp_path, local_dir=local), "local/notes"))

    assert str(tmp_path) not in str(error.value) and "/proc" not in str(error.value)


def test_an_unknown_local_document_is_not_found(replay, tmp_path, corpus):
    local = _local_dir(tmp_path, corpus, {})

    with pytest.raises(NotFound, match=r"^Unknown local document local/missing"):
        asyncio.run(fetch(replay.settings(tmp_path, local_dir=local), "local/missing"))
    with pytest.raises(NotFound, match="PAPERANCHOR_LOCAL_DIR"):
        asyncio.run(fetch(replay.settings(tmp_path), "local/missing"))
    assert replay.requests == []


# -- pure helpers and settings -------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "paper", "version"),
    [
        ("https://arxiv.org/html/1706.03762v7", "1706.03762", 7),
        ("https://arxiv.org/html/1706.03762v7/", "1706.03762", 7),
        ("https://arxiv.org/html/hep-th/9901001v2", "hep-th/9901001", 2),
        ("https://arxiv.org/html/1706.03762", "1706.03762", None),
        ("https://arxiv.org/html/1706.037621v7", "1706.03762", None),  # another paper
    ],
)
def test_the_version_is_read_from_the_final_url(url, paper, version):
    assert version_in_url(url, paper) == version


def test_retry_after_is_read_as_seconds_or_an_http_date():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_settings_are_read_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PAPERANCHOR_MIN_GAP_S", "0.5")
    monkeypatch.setenv("PAPERANCHOR_AR5IV_URL", "")
    monkeypatch.setenv("PAPERANCHOR_OFFLINE", "1")
    monkeypatch.setenv("PAPERANCHOR_ARXIV_HTML_URL", "https://arxiv.example/html/")
    monkeypatch.setenv("PAPERANCHOR_LOCAL_DIR", "")

    settings = Settings(_env_file=None)

    assert settings.min_gap_s == 0.5 and settings.offline is True
    assert settings.ar5iv_url == "" and settings.local_dir is None
    assert settings.arxiv_html_url == "https://arxiv.example/html"
    assert settings.public_base == f"http://{settings.host}:{settings.port}"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("min_gap_s", -1, "PAPERANCHOR_MIN_GAP_S must be >= 0"),
        ("max_retries", -1, "PAPERANCHOR_MAX_RETRIES must be 0-20"),
        ("timeout_s", 0, "PAPERANCHOR_TIMEOUT_S must be a positive number"),
        ("max_html_mb", -5, "PAPERANCHOR_MAX_HTML_MB must be a positive number"),
        ("arxiv_html_url", "ftp://arxiv.org/html", "PAPERANCHOR_ARXIV_HTML_URL must be an http"),
        ("cache_url", "memcached://x", "PAPERANCHOR_CACHE_URL must be a redis:// URL"),
        ("rate_limit", "lots", "PAPERANCHOR_RATE_LIMIT must be"),
        ("down_s", -1, "PAPERANCHOR_DOWN_S must be a finite number >= 0"),
        ("down_s", float("inf"), "PAPERANCHOR_DOWN_S must be a finite number >= 0"),
        ("not_found_ttl_s", float("nan"), "PAPERANCHOR_NOT_FOUND_TTL_S must be a finite"),
        ("max_queue", 0, "PAPERANCHOR_MAX_QUEUE must be 1-100000"),
    ],
)
def test_a_setting_out_of_range_is_refused_with_its_variable_named(field, value, message):
    with pytest.raises(ValidationError, match=message):
        Settings(_env_file=None, **{field: value})


# -- failed renderings (contract §2): a conversion that died before the body is not a paper ------

FAILED_PAGE = "2608.30667v1.arxiv.html"


def _fixture_page(name: str) -> bytes:
    return (
        Path(__file__).resolve().parent.parent / "fixtures" / "html" / f"{name}.html"
    ).read_bytes()


def test_a_failed_arxiv_rendering_is_passed_over_for_a_good_ar5iv_one(replay, tmp_path):
    # arXiv serves the failed oxide conversion; ar5iv has our fixture paper `short`
    replay.script("/html/2409.00001v1", page(replay.corpus_page(FAILED_PAGE)))
    replay.script("/ar5iv/html/2409.00001", page(_fixture_page("short")))

    loaded = asyncio.run(load(replay.settings(tmp_path), "2409.00001v1"))

    assert loaded.source == "ar5iv" and loaded.document.quality == "ok"
    assert loaded.document.title.text == "Sparse Anchoring for Incremental Document Alignment"
    assert replay.paths() == ["/html/2409.00001v1", "/ar5iv/html/2409.00001"]
    # only the good rendering is cached, as ar5iv's (its version unconfirmed)
    assert set(cache_entries(tmp_path)) == {
        f"paper:{PARSER_VERSION}:2409.00001",
        "latest:2409.00001v1",
    }


def test_a_failed_rendering_no_source_betters_is_served_as_failed_and_never_cached(
    replay, tmp_path
):
    replay.script("/html/2608.30667", page(replay.corpus_page(FAILED_PAGE)))

    loaded = asyncio.run(load(replay.settings(tmp_path), "2608.30667"))
    again = asyncio.run(load(replay.settings(tmp_path), "2608.30667"))

    assert loaded.document.quality == "failed" and loaded.document.sections == ()
    assert (loaded.source, loaded.idv, loaded.version_confirmed) == ("arxiv", "2608.30667v1", True)
    assert again.document.quality == "failed"
    # asked of every source each time: nothing of a failed rendering is cached
    assert replay.paths() == ["/html/2608.30667", "/ar5iv/html/2608.30667", "/pdf/2608.30667"] * 2
    assert cache_entries(tmp_path) == {}


ABSTRACT_ONLY = (
    b"<!DOCTYPE html><html><head><title>Only an abstract</title></head><body>"
    b"<article class='ltx_document'><h1 class='ltx_title ltx_title_document'>Only an abstract"
    b"</h1><div class='ltx_abstract'><h6 class='ltx_title'>Abstract</h6><p class='ltx_p'>We "
    b"study revisions of preprints at length.</p></div><div class='ltx_para'><p class='ltx_p'>"
    b"August 24, 2026</p></div></article></body></html>"
)


def test_an_abstract_only_rendering_is_passed_over_for_a_whole_one(replay, tmp_path):
    replay.script("/html/2409.00002v1", page(ABSTRACT_ONLY))
    replay.script("/ar5iv/html/2409.00002", page(_fixture_page("short")))

    loaded = asyncio.run(load(replay.settings(tmp_path), "2409.00002v1"))

    assert loaded.source == "ar5iv" and loaded.document.quality == "ok"
    assert replay.paths() == ["/html/2409.00002v1", "/ar5iv/html/2409.00002"]


def test_an_abstract_only_rendering_no_source_betters_keeps_its_abstract(replay, tmp_path):
    replay.script("/html/2409.00003", page(ABSTRACT_ONLY))

    loaded = asyncio.run(load(replay.settings(tmp_path), "2409.00003"))

    assert loaded.document.quality == "failed"
    assert loaded.document.abstract is not None
    # the PDF was asked last, after ar5iv
    assert replay.paths() == ["/html/2409.00003", "/ar5iv/html/2409.00003", "/pdf/2409.00003"]


def test_a_failed_local_file_is_passed_over_for_the_network(replay, tmp_path, corpus):
    local = _local_dir(tmp_path, corpus, {"2501.11120v1.html": FAILED_PAGE})

    loaded = asyncio.run(load(replay.settings(tmp_path / "cache", local_dir=local), "2501.11120v1"))

    assert loaded.source == "arxiv" and loaded.document.quality == "degraded"
    assert replay.paths() == ["/html/2501.11120v1"]


# -- images of local pages (contract §3): a saved ar5iv page's site-relative images are ar5iv's ----


def _first_figure(document) -> dict:  # type: ignore[no-untyped-def, type-arg]
    from paperanchor.paper import LoadedPaper
    from paperanchor.service import Paper, figure

    return figure(Paper.open(LoadedPaper(document, "local/x", "local/x")), "F1")  # type: ignore[return-value]


def test_a_local_ar5iv_page_keeps_its_images_on_ar5iv(replay, tmp_path, corpus):
    local = _local_dir(tmp_path, corpus, {"2201.00020.html": "2201.00020.ar5iv.html"})

    loaded = asyncio.run(load(replay.settings(tmp_path / "cache", local_dir=local), "2201.00020"))

    assert loaded.source == "local"
    assert _first_figure(loaded.document)["images"] == [
        "https://ar5iv.labs.arxiv.org/html/2201.00020/assets/x1.png"
    ]


def test_an_ar5iv_page_that_names_itself_only_by_its_stylesheets_still_does(
    replay, tmp_path, corpus
):
    html = (corpus / "html" / "2201.00020.ar5iv.html").read_bytes()
    assert b"og:url" in html
    stripped = html.replace(b'property="og:url"', b'property="og:title"')
    local = _local_dir(tmp_path, corpus, {"2201.00020.html": stripped})

    loaded = asyncio.run(load(replay.settings(tmp_path / "cache", local_dir=local), "2201.00020"))

    assert _first_figure(loaded.document)["images"][0].startswith(
        "https://ar5iv.labs.arxiv.org/html/2201.00020/assets/"
    )
