"""Re-anchoring across editions (contract §10) through every door: a paragraph of one edition cited
in the other for each status, a deleted paragraph answered not-found with its closest passage,
twin paragraphs told apart by their context, a stored Cite re-anchored in another edition.
The editions are the constructed pairs of fixtures/editions, served as local documents."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import settings_for
from tests.api.live import LiveServer, live_server
from tests.api.test_mcp import call
from tests.conftest import FIXTURES, ROOT
from tests.replay import page

EDITIONS = FIXTURES / "editions" / "html"


@pytest.fixture(scope="module")
def editions_server(
    replay_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    pages = tmp_path_factory.mktemp("editions") / "html"
    shutil.copytree(EDITIONS, pages)
    cache = tmp_path_factory.mktemp("cache")
    with live_server(settings_for(replay_server, cache, local_dir=pages)) as live:
        yield live


@pytest.fixture
def client(editions_server: LiveServer) -> Iterator[httpx.Client]:
    with editions_server.client() as http:
        yield http


def _from(http: httpx.Client, case: str, anchor: str) -> httpx.Response:
    return http.get(f"/local/{case}-new/cite/{anchor}.json?from=local/{case}-old")


def test_a_paragraph_after_an_inserted_section_is_found_under_its_new_id_as_moved(
    client: httpx.Client,
) -> None:
    old = client.get("/local/insert-section-old/cite/S2.p1.json").json()
    answer = _from(client, "insert-section", "S2.p1").json()
    assert answer["anchor"] == "S3.p1" and answer["status"] == "moved"
    assert answer["text"] == old["text"] and answer["hash"] == old["hash"]
    assert answer["was"] == {
        "idv": "local/insert-section-old",
        "anchor": "S2.p1",
        "hash": old["hash"],
    }
    assert 0.9 <= answer["confidence"] <= 1
    assert answer["sectionPath"] == ["3 Related Work"]


def test_an_untouched_paragraph_is_same_and_a_revised_one_is_edited_with_its_new_text(
    client: httpx.Client,
) -> None:
    same = _from(client, "edit-sentence", "S1.p2").json()
    assert same["anchor"] == "S1.p2" and same["status"] == "same"
    old = client.get("/local/edit-sentence-old/cite/S1.p1.json").json()
    edited = _from(client, "edit-sentence", "S1.p1").json()
    assert edited["anchor"] == "S1.p1" and edited["status"] == "edited"
    assert edited["text"] != old["text"] and edited["was"]["hash"] == old["hash"]
    assert edited["confidence"] < same["confidence"]


def test_a_deleted_paragraph_is_not_found_naming_the_closest_passage_and_its_score(
    client: httpx.Client,
) -> None:
    response = _from(client, "delete-paragraph", "S1.p3")
    assert response.status_code == 404
    detail = response.json()["error"]["detail"]
    assert "S1.p3 of local/delete-paragraph-old" in detail
    assert "the closest passage is" in detail and "(score " in detail


def _shared_words(first: str, second: str) -> str:
    """The longest run of words both twins hold (the twins differ in a few words)."""
    words = first.split()
    best = ""
    for start in range(len(words)):
        for end in range(start + 3, len(words) + 1):
            run = " ".join(words[start:end])
            if run in second and len(run) > len(best):
                best = run
            elif run not in second:
                break
    return best


def test_twin_paragraphs_are_told_apart_by_their_prefix_and_suffix(
    client: httpx.Client,
) -> None:
    first = client.get("/local/twins-new/cite/S5.p3.json").json()
    second = client.get("/local/twins-new/cite/S5.p5.json").json()
    quote = _shared_words(first["text"], second["text"])
    assert len(quote) >= 40  # a passage both twins hold
    for twin in (first, second):
        found = client.get(
            "/local/twins-new/cite.json",
            params={"text": quote, "prefix": twin["prefix"], "suffix": twin["suffix"]},
        ).json()
        assert found["anchor"] == twin["anchor"] and found["status"] == "same"


def test_a_stored_cite_is_re_anchored_in_another_edition_by_its_text_and_context(
    client: httpx.Client,
) -> None:
    stored = client.get("/local/twins-old/cite/S5.p2.json").json()  # a twin, before the insert
    found = client.get(
        "/local/twins-new/cite.json",
        params={"text": stored["text"], "prefix": stored["prefix"], "suffix": stored["suffix"]},
    ).json()
    assert found["anchor"] == "S5.p3" and found["hash"] == stored["hash"]
    assert found["match"] == "exact" and found["confidence"] >= 0.9


def test_mcp_and_the_cli_re_anchor_as_rest_does(
    editions_server: LiveServer, client: httpx.Client, tmp_path: Path
) -> None:
    rest = _from(client, "insert-section", "S2.p1").json()
    arguments = {"paper": "local/insert-section-new", "anchor": "S2.p1"}
    mcp = call(
        f"{editions_server.url}/mcp", "cite", {**arguments, "from": "local/insert-section-old"}
    )
    assert mcp.is_error is False and mcp.structured_content == rest
    gone = call(
        f"{editions_server.url}/mcp",
        "cite",
        {
            "paper": "local/delete-paragraph-new",
            "anchor": "S1.p3",
            "from": "local/delete-paragraph-old",
        },
    )
    assert gone.is_error is True
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "paperanchor.cli",
            "cite",
            "local/insert-section-new",
            "S2.p1",
            "--from",
            "local/insert-section-old",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "PAPERANCHOR_LOCAL_DIR": str(EDITIONS),
            "PAPERANCHOR_OFFLINE": "1",
            "PAPERANCHOR_CACHE_DIR": str(tmp_path / "cache"),
        },
    )
    assert result.returncode == 0, result.stderr
    cli = json.loads(result.stdout)
    assert {k: v for k, v in cli.items() if k != "url"} == {
        k: v for k, v in rest.items() if k != "url"
    }


def test_an_edition_of_another_paper_is_a_bad_request(client: httpx.Client) -> None:
    response = client.get("/local/twins-new/cite/S5.p3.json?from=1706.03762v1")
    assert response.status_code == 400
    assert "another paper" in response.json()["error"]["detail"]


def test_a_paragraph_of_ar5iv_is_found_in_the_arxiv_rendering_cached_as_long_as_both_last(
    client: httpx.Client, replay: Any
) -> None:
    pairs = Path(os.environ.get("PAPERANCHOR_CORPUS", ROOT.parent / "shared" / "corpus")) / "pairs"
    replay.script("/html/2401.10225v1", page((pairs / "2401.10225v1.arxiv.html").read_bytes()))
    replay.script("/ar5iv/html/2401.10225", page((pairs / "2401.10225.ar5iv.html").read_bytes()))
    moved = client.get("/2401.10225v1/cite/S6.SS6.p2.json?from=ar5iv")
    assert moved.status_code == 200, moved.text
    answer = moved.json()
    assert answer["anchor"] == "S6.SS6.p3" and answer["status"] == "moved"
    assert answer["permalink"] == "https://arxiv.org/html/2401.10225v1#S6.SS6.p3"
    assert answer["textFragment"].startswith(answer["permalink"] + ":~:text=")
    # ar5iv's rendering may change: the answer is not kept as immutable, a plain cite is
    assert "immutable" not in moved.headers["cache-control"]
    plain = client.get("/2401.10225v1/cite/S6.SS6.p3.json")
    assert "immutable" in plain.headers["cache-control"]
