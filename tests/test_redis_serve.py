"""Two `paperanchor serve` processes sharing one Redis and one replay upstream (contract §2).

The servers and their Redis live for the module; each test asks for papers of its own (ids
scripted on the replay to corpus pages), so that no test finds another's papers cached. The
figures of each run (requests, statuses, upstream GETs, gaps) are printed: `pytest -s` shows them.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from paperanchor.parse import PARSER_VERSION
from tests.conftest import (
    ROOT,
    RedisServer,
    free_port,
    require_program,
    stop_process,
    wait_healthy,
)
from tests.replay import Replay, page, slow

MIN_GAP_S = 0.3
# A server killed holding a paper's fetch lock frees it this long after (renewed every third,
# so a server would lose a lock only by stalling for more than a second).
LEASE_S = 1.5
# Corpus pages the scripted ids answer with.
CORPUS_PAGES = [
    "2501.11120v1.arxiv.html",
    "submission-5393936.arxiv.html",
    "split-cycle-axiomatic-characterization.arxiv.html",
    "angular-momentum-evolution-cosmological-ic.arxiv.html",
    "ssh-electron-phonon-superconductivity.arxiv.html",
]


class Server:
    """`paperanchor serve` in a subprocess on a free loopback port, its log in a temporary file."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "paperanchor.cli", "serve", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )

    def wait_ready(self) -> None:
        wait_healthy(self.url, self.process, self.log)

    def kill(self) -> None:
        """kill -9: no shutdown, no lock released, nothing flushed."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        stop_process(self.process)
        self._log.close()

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read()


class Cluster:
    """The servers, their Redis, and the environment that makes another server join them."""

    def __init__(self, redis: RedisServer, env: dict[str, str]) -> None:
        self.redis = redis
        self.env = env
        self.servers: list[Server] = []

    def start(self, count: int) -> list[Server]:
        started = [Server(self.env) for _ in range(count)]
        self.servers += started
        for server in started:
            server.wait_ready()
        return started

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture(scope="module")
def cluster(replay_server: Replay, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    import shutil

    require_program(
        shutil.which("redis-server") is not None,
        "redis-server is not installed (apt-get install redis-server)",
    )
    redis = RedisServer(tmp_path_factory.mktemp("redis"))
    redis.start()
    base = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PAPERANCHOR_") and "proxy" not in name.lower()
    }
    env = {
        **base,
        **replay_server.environ(
            cache_url=redis.url,
            cache_dir=tmp_path_factory.mktemp("disk-fallback"),
            min_gap_s=MIN_GAP_S,
            rate_limit=0,
            lock_lease_s=LEASE_S,
        ),
    }
    group = Cluster(redis, env)
    try:
        group.start(2)
        yield group
    finally:
        group.stop()
        redis.stop()


def script_papers(replay: Replay, prefix: str, count: int, **slowly: Any) -> list[str]:
    """`count` new versioned ids on the arXiv-like route, one corpus page each."""
    idvs = [f"{prefix}.{number:05d}v1" for number in range(1, count + 1)]
    for idv, name in zip(idvs, itertools.cycle(CORPUS_PAGES), strict=False):
        body = replay.corpus_page(name)
        replay.script(f"/html/{idv}", slow(body, **slowly) if slowly else page(body))
    return idvs


async def get_all(urls: list[str]) -> list[httpx.Response | BaseException]:
    async with httpx.AsyncClient(timeout=60, trust_env=False) as client:
        return await asyncio.gather(*(client.get(url) for url in urls), return_exceptions=True)


def statuses(responses: list[httpx.Response | BaseException]) -> list[int | str]:
    return [r.status_code if isinstance(r, httpx.Response) else type(r).__name__ for r in responses]


def arrival_gaps(replay: Replay) -> list[float]:
    arrivals = [request.at for request in replay.requests]
    return [later - earlier for earlier, later in itertools.pairwise(arrivals)]


def test_forty_concurrent_requests_over_two_servers_make_one_upstream_get(cluster, replay):
    (idv,) = script_papers(replay, "2601", 1, chunk_size=65_536, delay=0.03)
    one, two = cluster.servers[:2]
    urls = [f"{(one, two)[n % 2].url}/{idv}/outline.json" for n in range(40)]

    started = time.monotonic()
    responses = asyncio.run(get_all(urls))
    elapsed = time.monotonic() - started

    codes = statuses(responses)
    print(f"\n40 requests over 2 servers in {elapsed:.2f} s: {sorted(set(codes))}, "
          f"upstream GETs {replay.paths()}")  # fmt: skip
    assert codes == [200] * 40
    bodies = {r.content for r in responses if isinstance(r, httpx.Response)}
    assert len(bodies) == 1  # the same Outline from both servers
    assert replay.paths() == [f"/html/{idv}"]


def test_five_papers_over_two_servers_reach_the_upstream_min_gap_apart(cluster, replay):
    idvs = script_papers(replay, "2602", 5)
    one, two = cluster.servers[:2]
    # Every paper asked of both servers at once, in opposite orders.
    urls = [f"{one.url}/{idv}/outline.json" for idv in idvs]
    urls += [f"{two.url}/{idv}/outline.json" for idv in reversed(idvs)]

    responses = asyncio.run(get_all(urls))

    codes, gaps = statuses(responses), arrival_gaps(replay)
    print(f"\n10 requests for 5 papers: {sorted(set(codes))}, {replay.count()} upstream GETs, "
          f"gaps {[round(gap, 3) for gap in gaps]} s (MIN_GAP_S={MIN_GAP_S})")  # fmt: skip
    assert codes == [200] * 10
    assert sorted(replay.paths()) == sorted(f"/html/{idv}" for idv in idvs)
    assert min(gaps) >= MIN_GAP_S, gaps


def test_restarting_redis_mid_run_gives_no_server_errors(cluster, replay):
    # Two new papers in every round, so that each round needs Redis: locks, turns, cache writes;
    # and every paper asked before, again, of both servers.
    idvs = script_papers(replay, "2603", 12)
    fresh = iter(idvs)
    one, two = cluster.servers[:2]
    redis = cluster.redis
    # What happens to Redis in the middle of each round.
    events = [None, redis.restart, redis.stop, None, redis.start, None]
    codes: list[int | str] = []
    asked: list[str] = []

    async def rounds() -> None:
        for event in events:
            asked.extend([next(fresh), next(fresh)])
            urls = [f"{server.url}/{idv}/outline.json" for idv in asked for server in (one, two)]
            answers = asyncio.ensure_future(get_all(urls))
            if event is not None:
                await asyncio.sleep(0.05)  # the requests are under way
                await asyncio.to_thread(event)
            codes.extend(statuses(await answers))
            if event == redis.start:
                await asyncio.sleep(1.2)  # the servers ask Redis again within a second

    asyncio.run(rounds())

    tally = dict(Counter(codes))
    print(f"\nRedis restarted, then stopped and started, under {len(codes)} requests for "
          f"{len(asked)} papers: {tally}, {replay.count()} upstream GETs")  # fmt: skip
    assert set(codes) == {200}
    # Back on Redis, which restarted empty: the last papers are cached there.
    assert {paper_key(idv) for idv in asked[-2:]} <= set(redis.all_keys())


def test_killing_one_server_mid_fetch_loses_nothing(cluster, replay):
    # Each fetch takes ~0.9 s, so that the kill lands in the middle of one.
    idvs = script_papers(replay, "2604", 4, chunk_size=65_536, delay=0.08)
    (doomed,) = cluster.start(1)
    survivor = cluster.servers[0]
    cached_first = False

    async def run() -> tuple[list[int | str], list[int | str]]:
        nonlocal cached_first
        async with httpx.AsyncClient(timeout=60, trust_env=False) as client:
            doomed_done = asyncio.gather(
                *(client.get(f"{doomed.url}/{idv}/outline.json") for idv in idvs),
                return_exceptions=True,
            )
            # The doomed server has fetched and cached one paper, and is fetching a second.
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if replay.count() >= 2:
                    first = replay.requests[0].path.removeprefix("/html/")
                    cached_first = paper_key(first) in cluster.redis.all_keys()
                    if cached_first:
                        break
                await asyncio.sleep(0.02)
            survivor_done = asyncio.gather(
                *(client.get(f"{survivor.url}/{idv}/outline.json") for idv in idvs),
                return_exceptions=True,
            )
            await asyncio.sleep(0.1)
            await asyncio.to_thread(doomed.kill)
            return statuses(await doomed_done), statuses(await survivor_done)

    started = time.monotonic()
    doomed_codes, survivor_codes = asyncio.run(run())
    elapsed = time.monotonic() - started
    again = statuses(asyncio.run(get_all([f"{survivor.url}/{idv}/outline.json" for idv in idvs])))

    paths = replay.paths()
    first, second = paths[0], paths[1]
    counts = {path.removeprefix("/html/"): paths.count(path) for path in dict.fromkeys(paths)}
    print(f"\nkill -9 of one server while it fetched {second}: its answers {doomed_codes}; the "
          f"survivor's {survivor_codes} in {elapsed:.2f} s; upstream GETs {counts}, "
          f"gaps {[round(gap, 3) for gap in arrival_gaps(replay)]} s")  # fmt: skip
    assert cached_first  # written by the doomed server before it died
    assert survivor_codes == [200] * 4 and again == [200] * 4
    keys = set(cluster.redis.all_keys())
    assert {paper_key(idv) for idv in idvs} <= keys
    # The fetch cut off by the kill is made again, once; nothing else is fetched twice.
    assert sorted(counts) == sorted(idvs)
    assert paths.count(second) == 2 and paths.count(first) == 1
    assert len(paths) == 5
    assert min(arrival_gaps(replay)) >= MIN_GAP_S


def paper_key(idv: str) -> str:
    return f"paperanchor:paper:{PARSER_VERSION}:{idv}"
