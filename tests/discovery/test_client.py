"""The discovery client against the replay of the recorded arXiv API and Semantic Scholar
answers: one request for twenty papers, what is kept and for how long, entries that are not
ours, cut, oversized and error answers, offline mode, Semantic Scholar's key."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from paperanchor.discovery import query
from paperanchor.discovery.atom import parse_feed
from paperanchor.discovery.client import CITATIONS_TTL_S, SEARCH_TTL_S, Discovery, api_url, s2_url
from paperanchor.discovery.s2 import CITATION_FIELDS, citations_request, paper_request
from paperanchor.errors import BadRequest, NotFound, UpstreamError
from paperanchor.refs import parse_ref
from paperanchor.settings import Settings
from paperanchor.store import DiskStore
from paperanchor.upstream import Upstream
from tests.discovery.recorded import TESTING_100, atom, s2
from tests.replay import Reply, cache_entries, page

pytestmark = pytest.mark.usefixtures("corpus")

ABC = "arxivpy_2026_id_abc_s0_m100_b79c8dcf6bc3.xml"
ATOM = (("Content-Type", "application/atom+xml"),)


def run(settings: Settings, job: Callable[[Discovery], Awaitable[Any]], **options: Any) -> Any:
    """`job(discovery)` over a fresh upstream client and the settings' cache folder."""

    async def main() -> Any:
        upstream = Upstream(settings)
        store = DiskStore(settings.cache_dir)
        try:
            async with Discovery(settings, upstream=upstream, store=store, **options) as discovery:
                return await job(discovery)
        finally:
            await upstream.aclose()
            store.close()

    return asyncio.run(main())


def target(url: str) -> str:
    """The request target the replay sees for `url` (its path and query)."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def metadata_target(replay: Any, *papers: str) -> str:
    params = query.id_list_params(query.id_list(list(papers)))
    return target(api_url(replay.arxiv_api_url, params))


def api_requests(replay: Any) -> list[str]:
    return [path for path in replay.paths() if path.startswith("/api/query")]


# -- metadata --------------------------------------------------------------------------------


def test_twenty_papers_are_one_request_and_come_back_as_recorded(replay, tmp_path):
    replay.answer_ids_from_recordings()
    recorded = parse_feed(atom(TESTING_100)).entries[:20]
    refs = [parse_ref(entry["paper"]) for entry in recorded]
    settings = replay.settings(tmp_path, discovery=True)

    found = run(settings, lambda d: d.metadata(refs))
    again = run(settings, lambda d: d.metadata(refs))

    assert found == {entry["paper"]: entry for entry in recorded}
    assert again == found
    (asked,) = api_requests(replay)  # one request for twenty, and none the second time
    ids = ",".join(entry["paper"] for entry in recorded)
    assert asked == metadata_target(replay, *ids.split(","))
    assert "max_results=20" in asked


def test_more_than_twenty_papers_at_once_is_a_bad_request(replay, tmp_path):
    refs = [parse_ref(f"2101.{n:05d}") for n in range(1, 22)]

    with pytest.raises(BadRequest, match="At most 20 papers in one request"):
        run(replay.settings(tmp_path, discovery=True), lambda d: d.metadata(refs))
    assert replay.count() == 0


def test_a_versioned_id_gets_that_versions_entry_and_a_bare_one_the_latest(replay, tmp_path):
    replay.answer_ids_from_recordings()
    settings = replay.settings(tmp_path, discovery=True)

    versioned = run(settings, lambda d: d.metadata_of(parse_ref("1111.2011v2")))
    bare = run(settings, lambda d: d.metadata_of(parse_ref("hep-ex/0406020")))

    assert versioned["latestVersion"] == 2 and versioned["paper"] == "1111.2011"
    assert bare["paper"] == "hep-ex/0406020" and bare["title"] == "Sparticle Reconstruction at LHC"
    # kept by the reference as asked: a versioned id's entry is that version's
    assert {"meta:1:1111.2011v2", "meta:1:hep-ex/0406020"} <= set(cache_entries(tmp_path))


def test_metadata_is_kept_for_latest_ttl_searches_an_hour_citations_a_day(replay, tmp_path):
    script_citations(replay, "2304.05376", count=3)
    settings = replay.settings(tmp_path, discovery=True, latest_ttl_s=7200)

    async def job(d: Discovery) -> None:
        await d.metadata_of(parse_ref("2104.12255v1"))
        await d.search(query.search_query("testing", start=10))
        await d.citations(parse_ref("2304.05376"), 3)

    run(settings, job)

    lifetimes = cache_entries(tmp_path)
    (search,) = [key for key in lifetimes if key.startswith("search:")]
    assert 7100 < lifetimes["meta:1:2104.12255v1"] <= 7200  # type: ignore[operator]
    assert SEARCH_TTL_S - 100 < lifetimes[search] <= SEARCH_TTL_S  # type: ignore[operator]
    kept = lifetimes["citations:1:2304.05376:3"]
    assert CITATIONS_TTL_S - 100 < kept <= CITATIONS_TTL_S  # type: ignore[operator]


def test_an_entry_that_is_not_ours_is_dropped_and_the_paper_asked_again(replay, tmp_path):
    settings = replay.settings(tmp_path, discovery=True)
    store = DiskStore(tmp_path)
    crafted = {"key": "meta:1:2104.12255v1", "value": {"paper": "2104.12255", "title": 0}}
    store.set("meta:1:2104.12255v1", json.dumps(crafted).encode())
    # a well-formed entry of another paper, copied under this paper's key
    other = run(settings, lambda d: d.metadata_of(parse_ref("1111.2011v2")))
    store.set("meta:1:1202.0819", json.dumps({"key": "meta:1:1202.0819", "value": other}).encode())
    store.close()
    replay.reset()

    found = run(settings, lambda d: d.metadata_of(parse_ref("2104.12255v1")))
    copied = run(settings, lambda d: d.metadata_of(parse_ref("1202.0819")))

    assert found["title"] == "0" and copied["paper"] == "1202.0819"
    assert len(api_requests(replay)) == 2  # both asked again
    check = DiskStore(tmp_path)
    try:
        kept = json.loads(check.get("meta:1:2104.12255v1") or b"{}")
    finally:
        check.close()
    assert kept["value"] == found  # and replaced by the real answer


def test_a_feed_cut_before_its_end_is_retried(replay, tmp_path):
    whole = atom("atom-1202.0819.xml")
    replay.script(
        metadata_target(replay, "1202.0819"),
        Reply(200, whole[: len(whole) // 2], ATOM),  # a whole HTTP answer of half a feed
        Reply(200, whole, ATOM),
    )

    found = run(
        replay.settings(tmp_path, discovery=True), lambda d: d.metadata_of(parse_ref("1202.0819"))
    )

    assert found["paper"] == "1202.0819" and replay.count() == 2


def test_a_feed_cut_every_time_is_an_upstream_error_and_nothing_is_kept(replay, tmp_path):
    whole = atom("atom-1202.0819.xml")
    replay.script(metadata_target(replay, "1202.0819"), Reply(200, whole[:-20], ATOM))

    with pytest.raises(UpstreamError, match="the feed stops before its end"):
        run(
            replay.settings(tmp_path, discovery=True),
            lambda d: d.metadata_of(parse_ref("1202.0819")),
        )
    assert replay.count() == 3  # max_retries=2
    assert cache_entries(tmp_path) == {}


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, b"", ATOM, declared_length=17 << 20),  # said up front
        Reply(200, b"<feed>" + b" " * (17 << 20), ATOM, chunked=True),  # found out reading
    ],
    ids=["declared", "streamed"],
)
def test_an_answer_past_the_feed_bound_is_an_upstream_error(replay, tmp_path, reply):
    replay.script(metadata_target(replay, "1202.0819"), reply)

    with pytest.raises(UpstreamError, match="more than 16,777,216 bytes"):
        run(
            replay.settings(tmp_path, discovery=True),
            lambda d: d.metadata_of(parse_ref("1202.0819")),
        )
    assert replay.count() == 1  # not retried: it would be as large again


def test_arxivs_error_feed_is_a_bad_request_in_arxivs_words(replay, tmp_path):
    # arXiv answers an id it cannot read with this feed and a 400; parse_ref refuses "abc"
    # itself, so the recorded answer is served to a request we do send
    replay.script(metadata_target(replay, "1202.0819"), Reply(400, atom(ABC), ATOM))

    with pytest.raises(BadRequest) as refused:
        run(
            replay.settings(tmp_path, discovery=True),
            lambda d: d.metadata_of(parse_ref("1202.0819")),
        )

    assert refused.value.detail == "arXiv API: incorrect id format for abc"
    assert replay.count() == 1 and cache_entries(tmp_path) == {}


def test_an_unknown_id_is_not_found_and_an_unrecorded_request_an_upstream_error(replay, tmp_path):
    settings = replay.settings(tmp_path, discovery=True)
    # arXiv's answer for an id it has no paper of (recorded for 1234.1234, which we refuse
    # before asking: no id of that form exists)
    replay.script(metadata_target(replay, "2412.99999"), page(atom("empty-feed-1234.1234.xml")))

    with pytest.raises(NotFound, match=r"The arXiv API has no paper 2412\.99999"):
        run(settings, lambda d: d.metadata_of(parse_ref("2412.99999")))
    with pytest.raises(UpstreamError, match="arXiv API answered 404 for the metadata of 2401"):
        run(settings, lambda d: d.metadata_of(parse_ref("2401.00001")))


def test_offline_what_is_kept_is_served_and_nothing_is_asked(replay, tmp_path):
    run(replay.settings(tmp_path, discovery=True), lambda d: d.metadata_of(parse_ref("1202.0819")))
    replay.reset()
    offline = replay.settings(tmp_path, discovery=True, offline=True)

    kept = run(offline, lambda d: d.metadata_of(parse_ref("1202.0819")))
    with pytest.raises(NotFound) as missing:
        run(offline, lambda d: d.metadata_of(parse_ref("2104.12255v1")))
    with pytest.raises(NotFound) as search:
        run(offline, lambda d: d.search(query.search_query("testing")))

    assert kept["paper"] == "1202.0819"
    assert missing.value.detail == (
        "The metadata of 2104.12255v1 is not in the cache, and offline mode "
        "(PAPERANCHOR_OFFLINE=1) asks nothing of the arXiv API"
    )
    assert "offline mode" in search.value.detail
    assert replay.count() == 0


def test_with_an_empty_api_url_discovery_says_so(replay, tmp_path):
    off = replay.settings(tmp_path)  # discovery off: both URLs empty

    with pytest.raises(NotFound, match="PAPERANCHOR_ARXIV_API_URL is empty"):
        run(off, lambda d: d.search(query.search_query("testing")))
    with pytest.raises(NotFound, match="PAPERANCHOR_S2_URL is empty"):
        run(off, lambda d: d.citations(parse_ref("2304.05376")))
    assert replay.count() == 0


# -- search ------------------------------------------------------------------------------------


def test_searches_asked_twice_are_asked_once(replay, tmp_path):
    settings = replay.settings(tmp_path, discovery=True)
    asked = query.search_query("testing", start=20)

    async def twice_at_once(d: Discovery) -> list[Any]:
        return list(await asyncio.gather(d.search(asked), d.search(asked)))

    first, second = run(settings, twice_at_once)
    third = run(settings, lambda d: d.search(asked))

    assert first == second == third and first["start"] == 20 and len(first["hits"]) == 10
    assert len(api_requests(replay)) == 1  # one flight, then the cache


# -- citations (Semantic Scholar) ------------------------------------------------------------

WHOLE_PAPER = "danielnsilva_object_Paper.json"  # S2's paper object with 1,000 of its citations
PAPER = "paperqa_test_bulk_doi_search_00.json"  # 2304.05376: citationCount 500


def citing_page(count: int, *, more: bool) -> bytes:
    """A citations page of `count` recorded citing papers, with the fields we ask for.

    The recordings have no page for an arXiv id: the citing papers are those of the recorded
    paper object (a paper of its own), cut to the fields `s2.CITATION_FIELDS` names.
    """
    fields = CITATION_FIELDS.split(",")
    papers = json.loads(s2(WHOLE_PAPER))["citations"][:count]
    data = [{"citingPaper": {k: p.get(k) for k in ("paperId", *fields)}} for p in papers]
    return json.dumps({"offset": 0, **({"next": count} if more else {}), "data": data}).encode()


def script_citations(replay: Any, paper: str, count: int, *, more: bool = True) -> None:
    ref = parse_ref(paper)
    path, params = citations_request(ref, count)
    json_type = (("Content-Type", "application/json"),)
    replay.script(target(s2_url(replay.s2_url, path, params)),
                  Reply(200, citing_page(count, more=more), json_type))  # fmt: skip
    path, params = paper_request(ref)
    replay.script(target(s2_url(replay.s2_url, path, params)), Reply(200, s2(PAPER), json_type))


def test_citations_of_a_recorded_paper_give_its_count_and_citing_papers(replay, tmp_path):
    script_citations(replay, "2304.05376", count=20)
    settings = replay.settings(tmp_path, discovery=True, s2_api_key="k3y-of-ours")

    found = run(settings, lambda d: d.citations(parse_ref("2304.05376v2")))

    assert found["paper"] == "2304.05376" and found["count"] == 500  # the recorded paper's
    citing = json.loads(s2(WHOLE_PAPER))["citations"][:20]
    assert [c["title"] for c in found["citations"]] == [
        " ".join(p["title"].split()) for p in citing
    ]
    assert [c["arxiv"] for c in found["citations"]] == [
        (p["externalIds"] or {}).get("ArXiv") for p in citing
    ]
    assert all(
        c["url"] and c["url"].startswith("https://www.semanticscholar.org/")
        for c in found["citations"]
    )
    # the page, then the paper for its count; our key on both
    paths = replay.paths()
    assert [p.split("?")[0] for p in paths] == [
        "/graph/v1/paper/arXiv:2304.05376/citations",
        "/graph/v1/paper/arXiv:2304.05376",
    ]
    assert all(r.headers.get("x-api-key") == "k3y-of-ours" for r in replay.requests)


def test_a_paper_cited_less_than_the_limit_costs_one_request(replay, tmp_path):
    script_citations(replay, "2304.05376", count=7, more=False)

    found = run(
        replay.settings(tmp_path, discovery=True), lambda d: d.citations(parse_ref("2304.05376"), 7)
    )

    assert found["count"] == 7 and len(found["citations"]) == 7
    assert replay.count() == 1 and "x-api-key" not in replay.requests[0].headers


def test_semantic_scholars_not_found_is_not_found_in_its_words(replay, tmp_path):
    with pytest.raises(NotFound, match=r"Semantic Scholar answered 404 for arXiv:2304\.05376"):
        run(
            replay.settings(tmp_path, discovery=True),
            lambda d: d.citations(parse_ref("2304.05376")),
        )
    assert cache_entries(tmp_path) == {}


def test_semantic_scholar_has_a_gate_of_its_own(replay, tmp_path):
    script_citations(replay, "2304.05376", count=20)
    settings = replay.settings(tmp_path, discovery=True, s2_gap_s=0.3)

    run(settings, lambda d: d.citations(parse_ref("2304.05376")))

    first, second = replay.requests
    assert second.at - first.at >= 0.3


def test_trends_are_counted_from_one_request_over_the_days_asked(replay, tmp_path):
    from datetime import UTC, datetime

    now = datetime(2025, 4, 8, 12, tzinfo=UTC)
    asked, _ = query.trends_query("cs.LG", 30, today=now.date())
    replay.script(target(api_url(replay.arxiv_api_url, asked.params())), page(atom(TESTING_100)))

    found = run(
        replay.settings(tmp_path, discovery=True),
        lambda d: d.trends("cs.lg", 30),
        clock=lambda: now,
    )

    assert found["category"] == "cs.LG" and found["days"] == 30 and found["until"] == "2025-04-08"
    in_window = [
        entry
        for entry in parse_feed(atom(TESTING_100)).entries
        if "2025-03-10" <= entry["published"][:10] <= "2025-04-08"
    ]
    assert found["submissions"] == len(in_window) > 0
    assert replay.count() == 1
