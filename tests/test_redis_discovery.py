"""The arXiv API's gap across two `paperanchor serve` processes sharing one Redis (contract §2:
arXiv asks for one request every three seconds across all of a user's machines), and the
searches they keep there.

The figures of each run (arrival gaps at the replay) are printed: `pytest -s` shows them.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import RedisServer, require_program
from tests.replay import Replay
from tests.test_redis_serve import Cluster, Server, get_all, statuses

API_GAP_S = 0.5
# Recorded pages of the "testing" search (start, limit 10): each costs one API request.
STARTS = [0, 5, 10, 20, 30, 40, 50]


def environment(replay: Replay, cache_dir: Path, **extra: Any) -> dict[str, str]:
    base = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PAPERANCHOR_") and "proxy" not in name.lower()
    }
    env = replay.environ(
        discovery=True, cache_dir=cache_dir, rate_limit=0, arxiv_api_gap_s=API_GAP_S, **extra
    )
    return {**base, **env}


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    require_program(
        shutil.which("redis-server") is not None,
        "redis-server is not installed (apt-get install redis-server)",
    )
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def api_arrivals(replay: Replay) -> list[float]:
    return [r.at for r in replay.requests if r.path.startswith("/api/query")]


def gaps(arrivals: list[float]) -> list[float]:
    return [round(b - a, 3) for a, b in itertools.pairwise(arrivals)]


def searches(servers: list[Any], starts: list[int]) -> list[str]:
    """One search per start, the servers taking turns."""
    return [
        f"{server.url}/search.json?q=testing&start={start}"
        for server, start in zip(itertools.cycle(servers), starts, strict=False)
    ]


def test_two_servers_keep_the_arxiv_api_gap_between_them_with_redis(
    redis, replay, tmp_path_factory
):
    cluster = Cluster(redis, environment(replay, tmp_path_factory.mktemp("d"), cache_url=redis.url))
    try:
        one, two = cluster.start(2)
        responses = asyncio.run(get_all(searches([one, two], STARTS)))
        arrivals = api_arrivals(replay)
        # every page again, each of the other server: Redis keeps what the first one fetched
        again = asyncio.run(get_all(searches([two, one], STARTS)))
    finally:
        cluster.stop()

    print(f"\n{len(STARTS)} searches over 2 servers sharing Redis: arXiv API requests "
          f"{gaps(arrivals)} s apart (PAPERANCHOR_ARXIV_API_GAP_S={API_GAP_S})")  # fmt: skip
    assert statuses(responses) == statuses(again) == [200] * len(STARTS)
    starts = sorted(r.json()["start"] for r in responses if isinstance(r, httpx.Response))
    assert starts == STARTS
    assert len(arrivals) == len(STARTS)  # one request a page, none for the second round
    assert min(gaps(arrivals)) >= API_GAP_S


def test_without_redis_each_server_keeps_only_its_own_gap(replay, tmp_path_factory):
    # the contrast: two processes with their own caches and gates send at once
    servers = [
        Server(environment(replay, tmp_path_factory.mktemp(name))) for name in ("one", "two")
    ]
    try:
        for server in servers:
            server.wait_ready()
        responses = asyncio.run(get_all(searches(servers, STARTS)))
    finally:
        for server in servers:
            server.stop()

    arrivals = api_arrivals(replay)
    print(f"\n{len(STARTS)} searches over 2 servers without Redis: arXiv API requests "
          f"{gaps(arrivals)} s apart")  # fmt: skip
    assert statuses(responses) == [200] * len(STARTS) and len(arrivals) == len(STARTS)
    assert min(gaps(arrivals)) < API_GAP_S  # each process alone: nothing holds them apart
