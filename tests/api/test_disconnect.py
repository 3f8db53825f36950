"""Clients that hang up, against a real server: their fetches stop and leave the queue."""

from __future__ import annotations

import asyncio
import time

import httpx

from tests.api.conftest import settings_for
from tests.api.live import live_server
from tests.replay import page

GAP_S = 0.5


def test_requests_whose_clients_hang_up_stop_their_fetches_and_free_the_queue(replay, tmp_path):
    replay.script("/html/2501.11120v1", page(replay.corpus_page("2501.11120v1.arxiv.html")))
    settings = settings_for(replay, tmp_path, min_gap_s=GAP_S)

    with live_server(settings) as live:

        async def hang_up(number: int) -> str:
            # Twenty unknown papers: two upstream requests each, GAP_S apart, one host.
            async with httpx.AsyncClient(timeout=0.5, trust_env=False) as client:
                try:
                    await client.get(f"{live.url}/2605.{number:05d}/outline.json")
                except httpx.TimeoutException:
                    return "hung up"
                return "answered"

        async def main() -> tuple[list[str], float, int]:
            gone = await asyncio.gather(*(hang_up(number) for number in range(20)))
            sent_when_gone = replay.count()
            started = time.monotonic()
            async with httpx.AsyncClient(timeout=120, trust_env=False) as client:
                answer = await client.get(f"{live.url}/2501.11120v1/outline.json")
            assert answer.status_code == 200, answer.text
            return gone, time.monotonic() - started, replay.count() - sent_when_gone

        gone, waited, sent_after = asyncio.run(main())
        with live.client() as http:
            metrics = http.get("/metrics").text

    # Before: the forty fetches ran on (22 requests after the clients left, 1.5 s gap) and
    # the real request waited behind them (31 s).
    assert gone == ["hung up"] * 20
    assert sent_after <= 2, replay.paths()  # the request in flight, then the real one
    assert waited < 3 * GAP_S + 1
    assert 'status="499"' in metrics
