"""How often a request leaves the event loop for a worker thread (issue 20, "Fixed cost"):
each hop is a thread handoff and a loop wake-up that a small page's request pays in full."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pydantic
import pytest

from paperanchor import refs, service
from paperanchor.app import create_app
from tests.api.conftest import settings_for
from tests.replay import page

PAPER = "1111.2011v2"  # its metadata is recorded (corpus/atom)
PAGE = "2501.11120v1.arxiv.html"


def _outlines(
    replay: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, times: int, *, discovery: bool
) -> tuple[list[int], list[int]]:
    """Thread hops and reference parses of `times` outline requests of PAPER, one by one."""
    replay.script(f"/html/{PAPER}", page(replay.corpus_page(PAGE)))
    settings = settings_for(replay, tmp_path, discovery=discovery)("http://127.0.0.1:8000")
    app = create_app(settings)
    metadata: list[bool] = []
    hops = [0]
    parses = [0]
    to_thread = asyncio.to_thread
    parse_ref = refs.parse_ref

    async def counted(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        hops[0] += 1
        return await to_thread(func, *args, **kwargs)

    def parse_counted(text: str) -> refs.PaperRef:
        parses[0] += 1
        return parse_ref(text)

    async def main() -> tuple[list[int], list[int]]:
        per_hops, per_parses = [], []
        async with app.router.lifespan_context(app):
            await asyncio.sleep(0.3)  # the warm-up's own hops end before counting starts
            monkeypatch.setattr(asyncio, "to_thread", counted)
            monkeypatch.setattr(service, "parse_ref", parse_counted)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=settings.public_url) as http:
                for _ in range(times):
                    hops[0] = parses[0] = 0
                    answer = await http.get(f"/{PAPER}/outline.json")
                    assert answer.status_code == 200, answer.text
                    metadata.append(answer.json()["metadata"] is not None)
                    await asyncio.sleep(0.05)  # a trim started in the background is counted too
                    per_hops.append(hops[0])
                    per_parses.append(parses[0])
            monkeypatch.undo()
        if discovery:  # the later ones answer from what the first one kept
            assert metadata[1:] == [True] * (times - 1)
        return per_hops, per_parses

    return asyncio.run(main())


def test_a_cold_outline_takes_at_most_two_thread_hops(
    replay: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # store lookup with the not-found entry; parse, settle, store write, open, outline, trim
    hops, _ = _outlines(replay, tmp_path, monkeypatch, 1, discovery=False)
    assert hops[0] <= 2, hops


def test_a_warm_outline_with_metadata_takes_no_thread_hop(
    replay: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the first one also fetches the metadata (a feed parse and a store write of its own)
    hops, _ = _outlines(replay, tmp_path, monkeypatch, 3, discovery=True)
    assert hops[1:] == [0, 0], hops


def test_an_outline_request_parses_its_reference_once(
    replay: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, parses = _outlines(replay, tmp_path, monkeypatch, 2, discovery=True)
    assert parses == [1, 1]


def test_a_fresh_servers_first_request_finds_its_routes_built(
    replay: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # FastAPI builds each route's fields (pydantic adapters) when it first routes a request:
    # the server routes one itself at start, so that its first reader does not pay for it
    replay.script(f"/html/{PAPER}", page(replay.corpus_page(PAGE)))
    settings = settings_for(replay, tmp_path)("http://127.0.0.1:8000")
    app = create_app(settings)
    built = [0]
    init = pydantic.TypeAdapter.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        built[0] += 1
        init(self, *args, **kwargs)

    async def main() -> int:
        async with app.router.lifespan_context(app):
            monkeypatch.setattr(pydantic.TypeAdapter, "__init__", counted)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=settings.public_url) as http:
                answer = await http.get(f"/{PAPER}/outline.json")
            monkeypatch.undo()
            assert answer.status_code == 200, answer.text
        return built[0]

    with caplog.at_level(logging.ERROR, logger="paperanchor"):
        assert asyncio.run(main()) == 0
    # the request routed at start went through whole (its endpoint ran), logging nothing
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
