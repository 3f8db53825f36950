"""The replay upstream serves the recorded arXiv API and Semantic Scholar answers by request."""

from __future__ import annotations

import json

import httpx
import pytest

from paperanchor.discovery.query import id_list, id_list_params, search_query
from paperanchor.discovery.s2 import citations_request, paper_request
from paperanchor.refs import parse_ref
from tests.discovery.recorded import TESTING_100
from tests.replay import Recordings

pytestmark = pytest.mark.usefixtures("corpus")


def every_recording() -> list[str]:
    from tests.conftest import CORPUS

    return [recorded.file.name for recorded in Recordings(CORPUS).all]


@pytest.mark.parametrize("name", every_recording())
def test_every_recorded_answer_is_served_at_its_url_with_its_status(replay, name: str) -> None:  # type: ignore[no-untyped-def]
    (recorded,) = [r for r in replay.recordings.all if r.file.name == name]
    content = recorded.request_body.encode() if recorded.request_body else None
    with httpx.Client(base_url=replay.base_url, trust_env=False) as client:
        answer = client.request(recorded.method, recorded.target, content=content)
    assert answer.status_code == recorded.status
    assert answer.content == recorded.file.read_bytes()
    assert answer.headers["content-type"] == recorded.content_type


def test_the_atom_and_s2_corpora_are_indexed_whole(replay) -> None:  # type: ignore[no-untyped-def]
    files = {recorded.file.parent.name for recorded in replay.recordings.all}
    assert files == {"atom", "s2"}
    by_folder = {
        folder: sum(1 for r in replay.recordings.all if r.file.parent.name == folder)
        for folder in ("atom", "s2")
    }
    # every Atom file (38: 27 with a .meta.json, 11 by their feed's echo); every S2 answer
    # with a .meta.json (45; the 4 objects without a request are not served)
    assert by_folder == {"atom": 38, "s2": 45}


def get(url: str, params: dict[str, str]) -> httpx.Response:
    with httpx.Client(trust_env=False) as client:
        return client.get(url, params=params)


@pytest.mark.parametrize(
    ("start", "name"),
    [
        (0, "arxivpy_2026_q_testing_s0_m10_bc5a6c384fe9.xml"),
        (10, "arxivpy_2026_q_testing_s10_m10_34e56e15aaac.xml"),
        (20, "arxivpy_2026_q_testing_s20_m10_348a237fecab.xml"),
    ],
)
def test_our_search_requests_reach_the_recorded_pages(replay, start: int, name: str) -> None:  # type: ignore[no-untyped-def]
    answer = get(replay.arxiv_api_url, search_query("testing", start=start).params())
    assert answer.status_code == 200
    assert answer.content == (replay.recordings.corpus / "atom" / name).read_bytes()


def test_the_100_entry_feed_answers_a_request_for_100(replay) -> None:  # type: ignore[no-untyped-def]
    params = {**search_query("testing").params(), "max_results": "100"}
    answer = get(replay.arxiv_api_url, params)
    assert answer.content == (replay.recordings.corpus / "atom" / TESTING_100).read_bytes()


@pytest.mark.parametrize(
    ("paper", "name"),
    [
        ("astro-ph/0601001", "arxivpy_2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml"),
        ("hep-ex/0406020v1", "arxivpy_2026_id_hep-ex_0406020v1_s0_m100_84b15d66c0ce.xml"),
        ("2104.12255v1", "arxivpy_2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml"),
        ("1111.2011v2", "arxivpy_2016_id_list=1111.2011v2.xml"),
        ("1202.0819", "atom-1202.0819.xml"),
        ("1601.00001", "id_list-1601.00001.oldformat-2020.zoia.xml"),
    ],
)
def test_our_metadata_requests_reach_the_recorded_feed(replay, paper: str, name: str) -> None:  # type: ignore[no-untyped-def]
    answer = get(replay.arxiv_api_url, id_list_params(id_list([paper])))
    assert answer.status_code == 200
    assert answer.content == (replay.recordings.corpus / "atom" / name).read_bytes()


def test_the_abc_error_feed_is_served_with_status_400(replay) -> None:  # type: ignore[no-untyped-def]
    answer = get(replay.arxiv_api_url, {"id_list": "abc", "max_results": "1"})
    assert answer.status_code == 400 and b"incorrect id format for abc" in answer.content


def test_a_sorted_request_does_not_take_a_relevance_recording(replay) -> None:  # type: ignore[no-untyped-def]
    params = search_query("testing", sort="submitted").params()
    answer = get(replay.arxiv_api_url, params)
    assert answer.status_code == 404 and b"replay: no recorded answer for GET" in answer.content


def test_semantic_scholar_paths_are_served_as_recorded(replay) -> None:  # type: ignore[no-untyped-def]
    answer = get(
        replay.s2_url + "/paper/CorpusID:14514057/citations",
        {"fields": "title", "offset": "100", "limit": "100"},
    )
    assert answer.status_code == 200 and answer.json()["offset"] == 100
    missing = get(replay.s2_url + "/paper/0", {"fields": "t,i,t,l,e"})
    assert missing.status_code == 404 and missing.json() == {"error": "Paper with id 0 not found"}
    # our own request paths are well-formed for the replay: none is recorded for an arXiv id
    path, params = citations_request(parse_ref("2304.05376"))
    unrecorded = get(f"{replay.s2_url}/{path}", params)
    assert unrecorded.status_code == 404 and b"no recorded answer" in unrecorded.content
    assert paper_request(parse_ref("2304.05376"))[0] == "paper/arXiv:2304.05376"


def test_a_post_is_matched_on_its_json_body(replay) -> None:  # type: ignore[no-untyped-def]
    ids = ["CorpusId:470667", "10.2139/ssrn.2250500", "0f40b1f08821e22e859c6050916cec3667778613"]
    body = json.dumps({"ids": ids}, indent=2).encode()  # spaced otherwise than recorded
    with httpx.Client(trust_env=False) as client:
        ok = client.post(replay.s2_url + "/paper/batch", params={"fields": "authors"}, content=body)
        other = client.post(
            replay.s2_url + "/paper/batch", params={"fields": "authors"}, content=b'{"ids": []}'
        )
    assert ok.status_code == 200 and len(ok.json()) == 3
    assert other.status_code == 404
